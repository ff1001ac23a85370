"""Utility next to risk as a measure: ML efficacy per sensitive attribute (train on synthetic,
test on the holdout, against train on real) and SDMetrics' quality score. On by default: a risk
figure is read against the utility it buys.

Summary JSON: `UtilityResult.to_json()` (quality, column_shapes, column_pair_trends,
efficacy_ratio, efficacy). Per-record table: none; the efficacy table (target, metric, synthetic,
real, ratio) takes its place."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..settings import setting
from ..utility.settings import DEFAULT_MAX_RECORDS
from .base import Measure, MeasureResult, NotApplicable, WorkflowOutputs
from .registry import register_measure

PAIR = ["dataset", "generator"]
SCORES = ["quality", "column_shapes", "column_pair_trends", "efficacy_ratio"]


def _summary_columns(tables) -> pd.DataFrame | None:
    utility = tables["utility"]
    if utility.empty:
        return None
    picked = {f"{score}_{s}": score + ("" if s == "mean" else "_sd")
              for score in ("quality", "efficacy_ratio") for s in ("mean", "sd")}
    return utility[PAIR + list(picked)].rename(columns=picked)


@register_measure
class Utility(Measure):
    name = "utility"
    title = "Utility"
    risk = None
    record_columns = ("target", "metric", "synthetic", "real", "ratio")
    order = 30
    default_on = True
    outputs = WorkflowOutputs(tables=("utility", "utility_efficacy"), summary=_summary_columns,
                              summary_labels={"quality": "quality", "efficacy_ratio": "efficacy"})
    utility_metric = ("SDMetrics quality", "quality")

    @dataclass(frozen=True)
    class Settings:
        max_records: int | None = setting(DEFAULT_MAX_RECORDS, "records of each file the quality and efficacy "
                                          "read at most (a seeded sample beyond; null: no cap)", minimum=1)

    def run(self, data, settings, unit):
        from ..utility import utility

        if data.holdout.empty:
            raise NotApplicable("ML efficacy is tested on holdout records (non-members); none were given")
        result = utility(data.members, data.synthetic, data.holdout, schema=data.schema, seed=data.seed,
                         max_records=settings.max_records)
        print(result.efficacy.to_string(index=False))
        print(result.fidelity)
        return MeasureResult(result.to_json(), result.efficacy)

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs, efficacy = _collect(summaries)
        by_target = (efficacy.groupby(PAIR + ["target", "metric"])[["synthetic", "real", "ratio"]].mean().reset_index()
                     if len(efficacy) else pd.DataFrame(columns=PAIR + ["target", "metric", "synthetic", "real", "ratio"]))
        return {"utility": utility_table(runs), "utility_efficacy": by_target}

    def utility(self, tables) -> dict | None:
        """The scores (means of the one run, without the `_mean`), the sentence and the efficacy per
        target, or None when the run gave no quality score."""
        table = tables.get("utility")
        if table is None or table.empty or pd.isna(table.get("quality_mean", pd.Series([float("nan")])).iloc[0]):
            return None
        scores = {c[: -len("_mean")]: table[c].iloc[0] for c in table if c.endswith("_mean")}
        efficacy = tables["utility_efficacy"].drop(columns=PAIR, errors="ignore")
        ratio = scores.get("efficacy_ratio")
        sentence = (f"Quality {scores['quality']:.2f} (SDMetrics: 1 = the release's columns and pairs of columns are "
                    "distributed as in the training records)")
        sentence += (f"; a model trained on the release predicts the sensitive attribute(s) on the holdout with "
                     f"{100 * ratio:.0f}% of the score of one trained on the real records."
                     if pd.notna(ratio) else ".")
        return {**scores, "meaning": sentence, "efficacy": efficacy.to_dict("records")}


def _collect(summaries: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per run x target x efficacy metric) from the runs' summaries."""
    rows, efficacy = [], []
    for info in summaries:
        key = {k: info[k] for k in ("dataset", "generator", "seed")}
        rows.append({**key, **{k: info.get(k) for k in ["status", "error"] + SCORES}})
        efficacy.extend({**key, **row} for row in info.get("efficacy", []))
    return pd.DataFrame(rows), pd.DataFrame(efficacy)


def utility_table(utility: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd over seeds of each utility score per dataset x generator (successful runs)."""
    ok = utility[utility["status"] == "ok"] if len(utility) else utility
    if ok.empty:
        return pd.DataFrame(columns=PAIR + [f"{c}_{s}" for c in SCORES for s in ("mean", "sd")])
    ok = ok.astype({c: float for c in SCORES})  # null (undefined) in the JSON -> NaN
    table = ok.groupby(PAIR)[SCORES].agg(["mean", "std"])
    table.columns = [f"{c}_{'mean' if s == 'mean' else 'sd'}" for c, s in table.columns]
    return table.reset_index()
