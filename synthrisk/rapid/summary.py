"""Aggregate per-run RAPID results into tables and figures (mean and spread over seeds).

Two readings of one attacker, named apart:
- population-level inference: RAPID (as published) against its chance floor, which counts what the
  synthetic data teach about anyone of the population (a release with no member in it scores the
  same); `verdict` of rapid_max, `rapid_*` and `excess_*` columns;
- member excess: RAPID on the members minus the same fitted attacker's RAPID on holdout records the
  generator never saw, the part that is specific to the members (`member_*` columns; not
  available without a holdout).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import save, subplots
from ..stats.multiple_testing import holm_rejects, merged_p_value
from .attackers import CALIBRATED, base_attacker
from .core import ALPHA

KEYS = ["dataset", "generator", "sensitive", "attacker"]



def mean_spread(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, standard deviation, min and max of `value` over seeds, with the seed count."""
    grouped = frame.groupby(by, sort=True)[value]
    out = grouped.agg(mean="mean", sd="std", min="min", max="max", n_seeds="count").reset_index()
    return out.rename(columns={c: f"{value}_{c}" for c in ("mean", "sd", "min", "max")})

def collect(summaries: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, curves, attribution) from the runs' summaries (each run's JSON as a dict)."""
    runs, curves, attribution = [], [], []
    for info in summaries:
        key = {k: info[k] for k in KEYS + ["seed"]}
        runs.append({**key, "status": info["status"], "error": info.get("error"),
                     "rapid": info.get("rapid"), "ci_low": info.get("ci_low"),
                     "ci_high": info.get("ci_high"), "p_value": info.get("p_value"),
                     "rapid_null": info.get("rapid_null"),
                     "chance_floor": info.get("chance_floor", info.get("rapid_null")),
                     "null_test": info.get("null_test"),
                     "n_records": info.get("n_records"), "kind": info.get("kind"),
                     **{c: info.get(c) for c in MEMBER_FIELDS}})
        for point in info.get("curve", []):
            threshold = point.get("tau", point.get("epsilon"))
            curves.append({**key, "threshold": threshold, "rapid": point["rapid"]})
        for row in info.get("attribution", []):
            attribution.append({**key, **row})
    return _with_member_fields(pd.DataFrame(runs)), pd.DataFrame(curves), pd.DataFrame(attribution)


# per-run member-excess fields of RapidResult.to_json() (None without a holdout)
MEMBER_FIELDS = ["rapid_holdout", "member_excess", "member_excess_ci_low", "member_excess_ci_high",
                 "member_excess_p_value"]


def _with_member_fields(runs: pd.DataFrame) -> pd.DataFrame:
    """`runs` with the member-excess fields as numbers (NaN: no holdout, or a run from before them)."""
    return runs.assign(**{c: pd.to_numeric(runs[c], errors="coerce") if c in runs else np.nan
                          for c in MEMBER_FIELDS})


REPLICATE = ["dataset", "generator", "sensitive", "seed"]
TARGET = ["dataset", "generator", "sensitive"]
NO_ATTACKER = "no attacker beats chance"


def _holm_per_replicate(runs: pd.DataFrame, p_column: str, alpha: float) -> pd.Series:
    """Holm's rejections of `p_column` over the attacker suite run on the same synthetic data and
    sensitive attribute (one family of tests per replicate); runs without a p-value: False."""
    out = pd.Series(False, index=runs.index)
    tested = runs[runs["status"].eq("ok") & runs[p_column].notna()]
    for _, group in tested.groupby(REPLICATE):
        out.loc[group.index] = holm_rejects(group[p_column].to_numpy(float), alpha)
    return out


def beats_chance(runs: pd.DataFrame, alpha: float = ALPHA) -> pd.Series:
    """Whether each run's attacker beats chance after Holm's correction over the attacker suite."""
    return _holm_per_replicate(runs, "p_value", alpha)


def member_excess_significant(runs: pd.DataFrame, alpha: float = ALPHA) -> pd.Series:
    """Whether each run's member excess is above 0 after Holm's correction over the attacker suite
    (runs without a holdout: False)."""
    return _holm_per_replicate(_with_member_fields(runs), "member_excess_p_value", alpha)


NO_HOLDOUT = "not available (no holdout records)"
NO_MEMBER_EXCESS = "no member excess: the inference is population-level"
MEMBER_EXCESS = "members inferred more often than holdout records"


def member_excess_part(ok: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x generator x sensitive attribute: the member excess, measured like RAPID_max.
    In each replicate the largest member excess among the attackers whose excess is significant
    (Holm over the suite); over replicates its mean (0 when none is in any replicate, NaN without a
    holdout), the replicates with one, and `member_verdict`."""
    ok = _with_member_fields(ok)
    ok = ok.assign(member_significant=member_excess_significant(ok))
    rows = []
    for key, group in ok.groupby(TARGET):
        tested = group[group["member_excess_p_value"].notna()]
        n = tested[["seed"]].drop_duplicates().shape[0]
        best = (tested[tested["member_significant"]].sort_values(["member_excess", "attacker"], ascending=[False, True])
                .groupby("seed").head(1))
        k = len(best)
        if n == 0:
            verdict = NO_HOLDOUT
        elif k == 0:
            verdict = NO_MEMBER_EXCESS
        else:
            verdict = MEMBER_EXCESS + ("" if k == n else f" in {k}/{n} seeds")
        rows.append({**dict(zip(TARGET, key)),
                     "member_excess_max_mean": np.nan if n == 0 else (best["member_excess"].mean() if k else 0.0),
                     "n_seeds_member_excess": k, "member_verdict": verdict})
    return pd.DataFrame(rows, columns=TARGET + ["member_excess_max_mean", "n_seeds_member_excess", "member_verdict"])


def rapid_max_table(runs: pd.DataFrame) -> pd.DataFrame:
    """RAPID_max per dataset x generator x sensitive attribute, measured against chance.

    In each replicate RAPID_max is the largest RAPID among the attackers that beat chance (Holm
    over the suite); its chance floor is that attacker's (`chance_floor`: the label-permutation
    mean, or the refit-null mean when higher) and the excess the difference. Over replicates:
    RAPID_max, floor and excess are means over the replicates where an attacker beats chance, so
    that rapid_max_mean - null_mean = excess_mean; a target where none does in any replicate has
    no RAPID_max and excess 0. Also: which attacker attained the maximum in how many replicates,
    the test behind the verdict, and the verdict. This is population-level inference (see the
    module's docstring); the member excess beside it is `member_excess_part`'s.
    """
    ok = runs[runs["status"] == "ok"]
    targets = runs[TARGET].drop_duplicates()
    if ok.empty:
        return targets.assign(verdict="failed").reset_index(drop=True)
    ok = ok.assign(significant=beats_chance(ok))
    replicates = ok.groupby(REPLICATE).size().rename("n").reset_index()
    winners = (ok[ok["significant"]].sort_values(["rapid", "attacker"], ascending=[False, True])
               .groupby(REPLICATE).head(1)[REPLICATE + ["attacker", "rapid", "chance_floor", "null_test"]])
    per_seed = replicates.merge(winners, on=REPLICATE, how="left")
    tested = ok.groupby(TARGET)["p_value"].apply(lambda p: p.notna().any())
    rows = []
    for key, group in per_seed.groupby(TARGET):
        beat = group.dropna(subset=["rapid"])
        n, k = len(group), len(beat)
        if not tested.get(key, False):
            verdict = "not tested against chance"
        elif k == 0:
            verdict = NO_ATTACKER
        else:
            verdict = "beats chance" if k == n else f"beats chance in {k}/{n} seeds"
            if beat["null_test"].ne("labels + refit").any():  # no refits, or a point refit null
                verdict += " (label-permutation test only)"
        rows.append({
            **dict(zip(TARGET, key)),
            "rapid_max_mean": beat["rapid"].mean() if k else np.nan,
            "rapid_max_sd": beat["rapid"].std() if k > 1 else (0.0 if k else np.nan),
            "null_mean": beat["chance_floor"].mean() if k else np.nan,
            "excess_mean": (beat["rapid"] - beat["chance_floor"]).mean() if k else 0.0,
            "n_seeds": n, "n_seeds_beating_chance": k,
            "most_successful_attacker": ", ".join(f"{a} ({c}/{n})" for a, c in beat["attacker"].value_counts().items())
                                        if k else None,
            "verdict": verdict,
        })
    table = targets.merge(pd.DataFrame(rows), on=TARGET, how="left").merge(member_excess_part(ok), on=TARGET,
                                                                            how="left")
    table["verdict"] = table["verdict"].fillna("failed")
    return table.sort_values(["dataset", "sensitive", "generator"]).reset_index(drop=True)


def summarise(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per attacker table, RAPID_max table); failed runs stay visible through `status`."""
    seeds = runs.groupby(KEYS)["seed"].count().rename("n_runs")
    ok = runs[runs["status"] == "ok"]
    ok = _with_member_fields(ok)
    ok = ok.assign(significant=beats_chance(ok), excess=ok["rapid"] - ok["chance_floor"],
                   member_significant=member_excess_significant(ok)) if len(ok) else ok
    table = mean_spread(ok, KEYS, "rapid") if len(ok) else pd.DataFrame(columns=KEYS)
    extra = ok.groupby(KEYS).agg(rapid_null_mean=("rapid_null", "mean"), chance_floor_mean=("chance_floor", "mean"),
                                 excess_mean=("excess", "mean"),
                                 p_value_max=("p_value", "max"),
                                 n_seeds_beating_chance=("significant", "sum"),
                                 ci_low_min=("ci_low", "min"),
                                 ci_high_max=("ci_high", "max"),
                                 # the member excess (NaN without a holdout): interval widest over seeds
                                 rapid_holdout_mean=("rapid_holdout", "mean"),
                                 member_excess_mean=("member_excess", "mean"),
                                 member_excess_ci_low_min=("member_excess_ci_low", "min"),
                                 member_excess_ci_high_max=("member_excess_ci_high", "max"),
                                 member_excess_p_value_merged=("member_excess_p_value", merged_p_value),
                                 n_seeds_member_excess=("member_significant", "sum")).reset_index() if len(ok) else None
    table = seeds.reset_index().merge(table, on=KEYS, how="left")
    if extra is not None:
        table = table.merge(extra, on=KEYS, how="left")
        table = table.merge(calibration_part(table), on=KEYS, how="left")
    table["n_seeds"] = table["n_seeds"].fillna(0).astype(int)
    table["status"] = np.where(table["n_seeds"] == table["n_runs"], "ok",
                               "failed " + (table["n_runs"] - table["n_seeds"]).astype(str) + "/" + table["n_runs"].astype(str))
    return table.sort_values(KEYS).reset_index(drop=True), rapid_max_table(runs)


def calibration_part(table: pd.DataFrame) -> pd.DataFrame:
    """For an attacker run with and without calibration (`rf` and `rf_cal`): how much of its raw
    RAPID is over-confidence, i.e. RAPID(rf) - RAPID(rf_cal), on the raw attacker's row."""
    calibrated = table[table["attacker"].str.endswith(CALIBRATED)]
    part = calibrated.assign(attacker=calibrated["attacker"].map(base_attacker))[KEYS + ["rapid_mean"]]
    merged = table[KEYS + ["rapid_mean"]].merge(part, on=KEYS, suffixes=("", "_calibrated"))
    merged["calibration_part"] = merged["rapid_mean"] - merged["rapid_mean_calibrated"]
    return merged[KEYS + ["rapid_mean_calibrated", "calibration_part"]]


def plot_rapid_max(rapid_max: pd.DataFrame, dataset: str, path) -> Path:
    data = rapid_max[rapid_max["dataset"] == dataset]
    sensitives = sorted(data["sensitive"].unique())
    fig, axes = subplots(len(sensitives), width=5.0)
    for ax, sensitive in zip(axes, sensitives):
        rows = data[data["sensitive"] == sensitive].sort_values("rapid_max_mean", na_position="first")
        y = np.arange(len(rows))
        ax.barh(y, rows["rapid_max_mean"].fillna(0), xerr=rows["rapid_max_sd"].fillna(0), color="tab:red", alpha=0.75)
        ax.set_yticks(y, rows["generator"])
        floor = rows["null_mean"].to_numpy(float)
        if np.isfinite(floor).any():
            ax.scatter(floor[np.isfinite(floor)], y[np.isfinite(floor)], marker="|", color="k", s=250, zorder=3,
                       label="chance floor (permuted labels)")
            ax.legend(fontsize=7, loc="lower right")
        for position, (value, verdict) in enumerate(zip(rows["rapid_max_mean"], rows["verdict"])):
            if pd.isna(value):
                ax.text(0.01, position, verdict, va="center", fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_xlabel("RAPID_max over attackers that beat chance (Holm)")
        ax.set_title(f"{dataset}: {sensitive}")
    return save(fig, path)


def plot_curves(curves: pd.DataFrame, runs: pd.DataFrame, dataset: str, attacker: str, path) -> Path:
    data = curves[(curves["dataset"] == dataset) & (curves["attacker"] == attacker)]
    sensitives = sorted(data["sensitive"].unique()) or ["(none)"]
    fig, axes = subplots(len(sensitives), width=4.6)
    for ax, sensitive in zip(axes, sensitives):
        part = data[data["sensitive"] == sensitive]
        mean = part.groupby(["generator", "threshold"])["rapid"].mean().reset_index()
        for generator, line in mean.groupby("generator"):
            ax.plot(line["threshold"], line["rapid"], marker=".", label=generator)
        kind = runs.loc[(runs["dataset"] == dataset) & (runs["sensitive"] == sensitive), "kind"].dropna()
        ax.set_xlabel("tolerance ε (relative error)" if len(kind) and kind.iloc[0] == "continuous" else "threshold τ")
        ax.set_ylabel("RAPID")
        ax.set_ylim(0, 1)
        ax.set_title(f"{dataset}: {sensitive} ({attacker})")
        ax.legend(fontsize=7)
    return save(fig, path)


def plot_attribution(attribution: pd.DataFrame, dataset: str, attacker: str, path) -> Path:
    data = attribution[(attribution["dataset"] == dataset) & (attribution["attacker"] == attacker)]
    panels = sorted(data["sensitive"].unique()) or ["(none)"]
    fig, axes = subplots(len(panels), width=5.5, height=4.0)
    for ax, sensitive in zip(axes, panels):
        part = data[data["sensitive"] == sensitive]
        eta = (part.drop_duplicates(["generator", "seed", "quasi_identifier"])
                   .groupby(["quasi_identifier", "generator"])["eta2"].mean().unstack())
        if len(eta):
            eta = eta.loc[eta.mean(axis=1).sort_values().index]
            eta.plot.barh(ax=ax, width=0.8)
        ax.set_xlabel("η² of the at-risk flag on the quasi-identifier's groups")
        ax.set_title(f"{dataset}: who carries the {sensitive} risk ({attacker})")
        ax.legend(fontsize=6)
    return save(fig, path)


def top_subgroups(attribution: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """The n riskiest subgroups (over seeds) per dataset x generator x sensitive x attacker."""
    if attribution.empty:
        return attribution
    grouped = (attribution.groupby(KEYS + ["quasi_identifier", "group"])
               .agg(n=("n", "sum"), n_at_risk=("n_at_risk", "sum"), eta2=("eta2", "mean")).reset_index())
    grouped["rapid"] = grouped["n_at_risk"] / grouped["n"]
    return (grouped.sort_values("rapid", ascending=False).groupby(KEYS).head(n)
            .sort_values(KEYS + ["rapid"], ascending=[True] * len(KEYS) + [False]).reset_index(drop=True))


def tables(summaries: list[dict]) -> dict[str, pd.DataFrame]:
    """`rapid` and `rapid_max` (`summarise`), the top subgroups (`rapid_attribution`) and the mean
    curves (`rapid_curves`), from the runs' summaries."""
    runs, curves, attribution = collect(summaries)
    table, rapid_max = summarise(runs)
    curve_table = (curves.groupby(KEYS + ["threshold"])["rapid"].agg(["mean", "std"]).reset_index()
                   if len(curves) else curves)
    return {"rapid": table, "rapid_max": rapid_max, "rapid_attribution": top_subgroups(attribution),
            "rapid_curves": curve_table}


def draw(summaries: list[dict], rapid_max: pd.DataFrame, figures_dir, figure_attacker: str) -> dict[str, Path]:
    """Per dataset, RAPID_max, the curves and the attribution of `figure_attacker`."""
    runs, curves, attribution = collect(summaries)
    figures_dir = Path(figures_dir)
    written = {}
    for dataset in sorted(runs["dataset"].unique()):
        written[f"max_{dataset}"] = plot_rapid_max(rapid_max, dataset, figures_dir / f"rapid_max_{dataset}.png")
        written[f"curves_{dataset}"] = plot_curves(curves, runs, dataset, figure_attacker,
                                                   figures_dir / f"rapid_curves_{dataset}.png")
        written[f"attribution_{dataset}"] = plot_attribution(attribution, dataset, figure_attacker,
                                                             figures_dir / f"rapid_attribution_{dataset}.png")
    return written


def plot_simulation(study: pd.DataFrame, strength_path, curve_path) -> None:
    at_default = study[study["is_default_threshold"]]
    sensitives = sorted(study["sensitive"].unique())
    fig, axes = subplots(len(sensitives), width=4.6)
    for ax, sensitive in zip(axes, sensitives):
        part = at_default[at_default["sensitive"] == sensitive]
        for attacker, line in part.groupby("attacker"):
            agg = line.groupby("strength")["rapid"].agg(["mean", "std"]).reset_index()
            ax.errorbar(agg["strength"], agg["mean"], yerr=agg["std"].fillna(0), marker="o", capsize=2, label=attacker)
        ax.set_xlabel("dependence strength (corr. of QI index and latent)")
        ax.set_ylabel("RAPID")
        ax.set_ylim(0, 1)
        ax.set_title(f"simulation: {sensitive}")
        ax.legend(fontsize=7)
    save(fig, strength_path)
    attacker = sorted(study["attacker"].unique())[0] if "rf" not in set(study["attacker"]) else "rf"
    fig, axes = subplots(len(sensitives), width=4.6)
    for ax, sensitive in zip(axes, sensitives):
        part = study[(study["sensitive"] == sensitive) & (study["attacker"] == attacker)]
        for strength, line in part.groupby("strength"):
            agg = line.groupby("threshold")["rapid"].mean()
            ax.plot(agg.index, agg.to_numpy(), label=f"strength {strength:g}")
        ax.set_xlabel("threshold τ" if part["kind"].iloc[0] == "categorical" else "tolerance ε")
        ax.set_ylabel("RAPID")
        ax.set_ylim(0, 1)
        ax.set_title(f"simulation threshold curves: {sensitive} ({attacker})")
        ax.legend(fontsize=7)
    save(fig, curve_path)
