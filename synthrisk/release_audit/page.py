"""The audit's self-contained HTML page: the figures as data URIs, no script, no external asset,
so it opens anywhere and can be mailed to whoever decides on the release. It shows the audit's
JSON (`report.build`) and the figures that the measures' own summaries draw (`figures`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import yaml

from ..measures.base import TPR_LABELS
from ..report.html import data_uri, frame_html
from ..report.summary import plot_evidence
from ..report.verdicts import LEVEL_CSS, level_class, verdict_matrix_html
from ..stats.proportions import clopper_pearson
from .named import MIN_SUBGROUP
from .run import DATASET, RELEASE

# Figures of the page: (file stem in the work folder, title, caption); a figure whose measure did not
# run is left out.
FIGURES = [
    (f"risk_evidence_{DATASET}", "Every attack against its reference",
     "For each risk type, every attack's value minus its reference point (chance floor, AUC 0.5, or the same "
     "attack on holdout records). Filled markers beat their reference by the attack's own test; open ones do not. "
     "Right of the dashed line is more than the reference, but only a filled marker is evidence of risk."),
    (f"rapid_attribution_{DATASET}", "Who carries the attribute-inference risk",
     "How much of the variation in which training records are inferred correctly each quasi-identifier explains "
     "(η²: 0 = the risk is spread evenly over its groups, 1 = it decides who is at risk)."),
    (f"rapid_curves_{DATASET}", "Attribute inference against the confidence threshold",
     "Share of training records whose sensitive value the first attacker infers above each confidence threshold "
     "(categorical) or within each tolerance (numeric); the audit's verdict reads it at the default threshold."),
    (f"mia_roc_{DATASET}", "Membership inference: ROC on log scales",
     "True positive rate (training records flagged) against false positive rate (other people flagged); the "
     "dashed diagonal is a coin toss. The low false-positive end matters most: it is where an attacker can be "
     "confident about a few people."),
]


def figures(runs: list, measures: dict, found) -> dict[str, bytes]:
    """The page's figures, file stem -> PNG bytes, drawn in memory (`synthrisk.figures.rendered`):
    every measure's own (its `draw`, from its runs' summaries and the tables) and the evidence figure."""
    from ..figures import rendered

    folder = Path("figures")  # a name only: nothing is written
    with rendered() as drawn:
        for name, (measure, settings) in measures.items():
            summaries = [r.summary for r in runs if r.measure_name == name]
            if summaries:
                measure.draw(summaries, found.tables, folder, settings)
        if len(found.evidence):
            plot_evidence(found.evidence, {RELEASE: {}}, DATASET, folder / f"risk_evidence_{DATASET}.png", found.policy)
    return drawn


def _measures_frame(measures: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"measure": m["title"], "risk": m["risk"] or "utility", "status": m["status"],
                          "verdict or reason": (m["verdict"] or m["reason"] or "")
                          + (f" (sampled: {m['subsample_note']})" if m.get("subsample_note") else ""),
                          "seconds": m["seconds"]}
                         for m in measures])


def _reported_frame(reported: dict) -> pd.DataFrame:
    """A measure's own numbers (`Measure.reported`) as a table."""
    frame = pd.DataFrame(reported["rows"])
    if "p-value" in frame:  # an exact p-value is never 0: small ones in powers of ten, not as dust
        frame["p-value"] = frame["p-value"].map(lambda p: "–" if pd.isna(p) else f"{p:.2g}")
    return frame


def tpr_with_interval(tpr, n_scored) -> str:
    """A TPR with its 95 % Clopper-Pearson interval over the members it was read on ("–": none)."""
    if tpr is None or pd.isna(tpr) or n_scored is None or pd.isna(n_scored) or n_scored < 1:
        return "–"
    n = int(round(n_scored))
    low, high = clopper_pearson(int(round(tpr * n)), n, 0.95)
    return f"{tpr:.3f} ({low:.3f}–{high:.3f})"


def _evidence_frame(evidence: list[dict]) -> pd.DataFrame:
    columns = ["risk", "measure", "attack", "metric", "value", "reference", "ci_low", "ci_high", "n_seeds_beating"]
    frame = pd.DataFrame(evidence, columns=columns).rename(columns={"n_seeds_beating": "beats reference"})
    frame["beats reference"] = frame["beats reference"].map(lambda v: "yes" if v else "no")
    for column, label in TPR_LABELS.items():
        frame[label] = [tpr_with_interval(e.get(column), e.get("n_scored")) for e in evidence]
    return frame


def _risk_rows(risks: list[dict]) -> pd.DataFrame:
    """The audit's risk entries as rows of the verdict matrix (one release; unmeasured risks left out)."""
    rows = [{"dataset": DATASET, "generator": RELEASE, "risk": r["risk"], "level": r["level"], "verdict": r["verdict"],
             **{k: (r.get("strongest_attack") or {}).get(k) for k in ("attack", "value", "reference", "ci_low", "ci_high")}}
            for r in risks if r["measured"]]
    return pd.DataFrame(rows, columns=["dataset", "generator", "risk", "level", "verdict", "attack", "value",
                                       "reference", "ci_low", "ci_high"])


def _frames(report: dict) -> dict[str, pd.DataFrame]:
    """The page's tables as frames, by their table id: the measures, the evidence, the efficacy (with
    utility) and each measure's own numbers (`reported-NAME-table`)."""
    frames = {"measures": _measures_frame(report["measures"]), "evidence": _evidence_frame(report["evidence"])}
    if report["utility"]:
        frames["efficacy"] = pd.DataFrame(report["utility"]["efficacy"])
    frames.update({f"reported-{m['measure']}-table": _reported_frame(m["reported"])
                   for m in report["measures"] if m.get("reported")})
    return frames


def render(report: dict, runs: list, measures: dict, found) -> str:
    """The page of the audit's JSON (`report.build`), with the figures drawn from its `runs` and their
    `summary.Summary` (`found`): first its content as frames, then as HTML."""
    import jinja2

    frames, matrix = _frames(report), _risk_rows(report["risks"])
    drawn = figures(runs, measures, found)
    tables = {table_id: frame_html(frame, table_id=table_id) for table_id, frame in frames.items()}
    shown = [{"name": stem, "title": title, "caption": caption, "src": data_uri(drawn[stem])}
             for stem, title, caption in FIGURES if stem in drawn]
    reported = [{"measure": m["measure"], "title": m["title"], "caption": m["reported"]["caption"],
                 "table": tables[f"reported-{m['measure']}-table"], "notes": m["reported"]["notes"]}
                for m in report["measures"] if m.get("reported")]
    utility = report["utility"]
    # why utility is missing: the reasons of the measures that are not risks
    utility_reason = "; ".join(m["reason"] for m in report["measures"] if m["risk"] is None and m["reason"]) or None
    env = jinja2.Environment(loader=jinja2.PackageLoader("synthrisk.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    page = env.get_template("audit.html.j2").render(
        **{k: report[k] for k in ("inputs", "schema", "risks", "criteria", "release", "seconds", "seed", "versions",
                                  "policy")},
        reported=reported,
        verdicts=verdict_matrix_html(matrix, table_id="verdict-matrix"),
        level_css=LEVEL_CSS, level_class=level_class,
        utility=utility,
        min_subgroup=MIN_SUBGROUP,
        utility_reason=utility_reason,
        efficacy=tables.get("efficacy", ""),
        measures=tables["measures"],
        evidence=tables["evidence"],
        figures=shown,
        schema_yaml=yaml.safe_dump(report["schema"], sort_keys=False),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
    return page
