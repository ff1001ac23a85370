"""Aggregate per-run membership-inference results: tables and the log-log ROC and F1-vs-τ figures.

Every hard-label figure carries its τ rule (`tau_rule`): `label-free: ...` rows are what an
attacker can do without membership labels; the `*_oracle_tau` attacks pick the grid τ with the
best F1 on the true labels (`oracle: ...`), an upper bound no attacker attains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import save, subplots
from ..stats.multiple_testing import holm_rejects, merged_p_value
from .metrics import LOW_FPRS, auc_against_chance, naive_f1, relative_f1, tpr_against_chance

PAIR = ["dataset", "generator"]
ALPHA = 0.05  # level of the tests against chance (Holm over the run's attacks and statistics)
TESTED_FPR = "1e-02"  # the low FPR whose TPR is tested against chance next to the AUC

ATTACKS = {"kde_true": "KDE (true distribution)", "kde_realistic": "KDE (realistic), label-free τ",
           "kde_realistic_oracle_tau": "KDE (realistic), oracle τ",
           "method1": "Method 1 (fixed threshold), label-free τ",
           "method1_oracle_tau": "Method 1 (fixed threshold), oracle τ"}
GRID_ATTACKS = {"kde_realistic": "KDE (realistic)", "method1": "Method 1 (fixed threshold)"}
GRID_RULE = "fixed: each tau of the grid"
DESIGN = ["member_share", "member_share_target", "n_aux_members"]


def collect(summaries: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """(one row per run x attack x τ rule, F1 per threshold, the runs' summaries) from the runs'
    summaries (each run's JSON as a dict)."""
    rows, grid, infos = [], [], []
    for info in summaries:
        infos.append(info)
        key = {k: info[k] for k in ("dataset", "generator", "seed")}
        if info["status"] != "ok":
            rows.append({**key, "attack": "kde_true", "status": "failed", "error": info.get("error")})
            continue
        design = {k: info.get(k) for k in DESIGN}
        attacks = {"kde_true": info, "kde_realistic": info.get("realistic") or {},
                   "kde_realistic_oracle_tau": info.get("realistic_oracle_tau") or {},
                   "method1": info["baseline"], "method1_oracle_tau": info.get("baseline_oracle_tau") or {}}
        for attack, metrics in attacks.items():
            if attack.startswith("kde_realistic") and not info.get("realistic"):
                continue  # no aux set: the realistic attack did not run
            tpr = metrics.get("tpr_at_fpr", {})
            test = (auc_against_chance(metrics["auc"], info["n_members"], info["n_non_members"])
                    if metrics.get("auc") is not None else {})
            rows.append({**key, "attack": attack, "tau_rule": metrics.get("tau_rule"), "status": "ok",
                         "auc": metrics.get("auc"), "f1": metrics.get("f1"), "f1_relative": metrics.get("f1_relative"),
                         "precision": metrics.get("precision"), "recall": metrics.get("recall"),
                         "tau": metrics.get("tau"), "tpr_at_1e-01": tpr.get("1e-01"),
                         "tpr_at_1e-02": tpr.get("1e-02"), "tpr_at_1e-03": tpr.get("1e-03"),
                         "fpr_floor": metrics.get("fpr_floor"), "n_members": info.get("n_members"),
                         "n_non_members": info.get("n_non_members"), **design,
                         "auc_p_value": test.get("p_value"), "auc_ci_low": test.get("ci_low"),
                         "auc_ci_high": test.get("ci_high"),
                         "tpr_p_value": tpr_against_chance(tpr.get(TESTED_FPR), float(TESTED_FPR),
                                                           info["n_members"], info["n_non_members"])
                         if metrics.get("auc") is not None else None})
        for point in info["by_threshold"]:
            grid.append({**key, "tau": point["tau"], "attack": "method1", "tau_rule": GRID_RULE,
                         "f1": point["method1"]["f1"], "member_share": info.get("member_share")})
            if point.get("realistic"):
                grid.append({**key, "tau": point["tau"], "attack": "kde_realistic", "tau_rule": GRID_RULE,
                             "f1": point["realistic"]["f1"], "member_share": info.get("member_share")})
    return pd.DataFrame(rows), pd.DataFrame(grid), infos


def auc_beats_chance(runs: pd.DataFrame, alpha: float = ALPHA, columns=("auc_p_value", "tpr_p_value")) -> pd.Series:
    """Whether each attack beats chance: its AUC above 0.5 (Mann-Whitney, one-sided) or its TPR at
    FPR 1e-2 above that FPR (beta-binomial, `tpr_against_chance`), after Holm's correction over
    every attack x statistic run on the same synthetic data (one family of tests per run). The
    TPR test catches a leak of a few records, which moves the AUC by little."""
    out = pd.Series(False, index=runs.index)
    for _, group in runs.groupby(["dataset", "generator", "seed"]):
        tests = [(index, p) for column in columns if column in group
                 for index, p in pd.to_numeric(group[column], errors="coerce").dropna().items()]
        if not tests:
            continue
        rejected = holm_rejects([p for _, p in tests], alpha)
        for (index, _), hit in zip(tests, rejected):
            out.loc[index] |= bool(hit)
    return out


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean (and sd) over seeds per dataset x generator x attack; the τ rule and the attack set's
    member share (achieved and target) next to every F1."""
    metrics = ["auc", "f1", "f1_relative", "precision", "recall", "tau", "tpr_at_1e-01", "tpr_at_1e-02",
               "tpr_at_1e-03", "n_members"]
    keys = ["dataset", "generator", "attack"]
    total = runs[runs["attack"] == "kde_true"].groupby(["dataset", "generator"])["seed"].count().rename("n_runs")
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        table = total.reset_index().assign(attack="kde_true", n_seeds=0)
    else:
        ok = ok.assign(**{m: pd.to_numeric(ok[m], errors="coerce") for m in metrics + DESIGN + ["auc_p_value"]})
        agg = {f"{m}_mean": (m, "mean") for m in metrics}
        agg.update({f"{m}_sd": (m, "std") for m in ("auc", "f1", "tpr_at_1e-01", "tpr_at_1e-02", "tpr_at_1e-03")})
        agg.update({"tau_rule": ("tau_rule", "first"), "fpr_floor": ("fpr_floor", "max"),
                    "member_share": ("member_share", "mean"), "member_share_target": ("member_share_target", "mean"),
                    "n_aux_members": ("n_aux_members", "mean"), "n_seeds": ("seed", "count")})
        ok = ok.assign(beats_chance=auc_beats_chance(ok))
        agg.update({"auc_ci_low_min": ("auc_ci_low", "min"), "auc_ci_high_max": ("auc_ci_high", "max"),
                    "auc_p_value_merged": ("auc_p_value", merged_p_value),
                    "n_seeds_beating_chance": ("beats_chance", "sum")})
        table = ok.groupby(keys).agg(**agg).reset_index()
        table["f1_naive"] = naive_f1(table["member_share"])
        table = table.merge(total.reset_index(), on=["dataset", "generator"], how="outer")
    table["n_seeds"] = table["n_seeds"].fillna(0).astype(int)
    table["status"] = np.where(table["n_seeds"] == table["n_runs"], "ok",
                               "failed " + (table["n_runs"] - table["n_seeds"]).astype(str) + "/" + table["n_runs"].astype(str))
    table["attack"] = table["attack"].fillna("kde_true")
    first = keys + ["tau_rule"] if "tau_rule" in table else keys
    table = table[first + [c for c in table if c not in first]]
    return table.sort_values(keys).reset_index(drop=True)


def plot_roc(infos: list[dict], dataset: str, path) -> Path:
    """Log-log ROC of the true-distribution KDE attack, one curve per generator (first seed)."""
    fig, axes = subplots(1, width=5.5, height=4.5)
    ax = axes[0]
    seen = set()
    floor = 1e-3
    for info in sorted(infos, key=lambda i: (i["generator"], i["seed"])):
        if info["dataset"] != dataset or info["status"] != "ok" or info["generator"] in seen:
            continue
        seen.add(info["generator"])
        roc = info["roc"]["kde_true"]
        fpr, tpr = np.array(roc["fpr"]), np.array(roc["tpr"])
        keep = fpr > 0
        floor = min(floor, info["fpr_floor"])
        ax.plot(fpr[keep], tpr[keep], label=f"{info['generator']} (AUC {info['auc']:.2f})", drawstyle="steps-post")
    grid = np.logspace(np.log10(floor), 0, 50)
    ax.plot(grid, grid, "k--", lw=0.8, label="chance")
    ax.set(xscale="log", yscale="log", xlim=(floor, 1), ylim=(floor, 1.05),
           xlabel=f"false positive rate (resolvable down to {floor:.0e})", ylabel="true positive rate",
           title=f"{dataset}: membership inference ROC (KDE, true distribution)")
    ax.legend(fontsize=7)
    return save(fig, path)


def plot_f1_grid(grid: pd.DataFrame, dataset: str, path, runs: pd.DataFrame | None = None) -> Path:
    """F1 over the τ grid (mean over seeds): each curve's maximum is the oracle-τ F1 (picked with the
    labels). Crosses: the label-free τ each attacker picks and its F1 (mean over seeds); dotted line:
    the F1 of calling every record a member, 2t / (1 + t)."""
    data = grid[grid["dataset"] == dataset] if len(grid) else grid
    generators = sorted(data["generator"].unique()) if len(data) else ["(none)"]
    chosen = (runs[(runs["dataset"] == dataset) & (runs["status"] == "ok")]
              if runs is not None and len(runs) and "tau" in runs else None)
    fig, axes = subplots(len(generators), width=3.6, height=3.0)
    for ax, generator in zip(axes, generators):
        part = data[data["generator"] == generator] if len(data) else data
        # no grid at all when every run of the dataset failed or was skipped: an empty panel
        for index, (attack, line) in enumerate(part.groupby("attack") if len(part) else []):
            mean = line.groupby("tau")["f1"].mean()
            colour = f"C{index}"
            ax.plot(mean.index, mean.to_numpy(), marker=".", color=colour, label=f"{GRID_ATTACKS[attack]} (max: oracle τ)")
            if chosen is not None:
                picked = chosen[(chosen["generator"] == generator) & (chosen["attack"] == attack)]
                picked = picked.dropna(subset=["tau", "f1"])
                if len(picked):
                    ax.plot(picked["tau"].astype(float).mean(), picked["f1"].astype(float).mean(), "x", ms=8,
                            color=colour, label=f"{GRID_ATTACKS[attack]}: label-free τ")
        if len(part):
            share = part["member_share"].astype(float).mean()
            ax.axhline(naive_f1(share), color="k", ls=":", lw=0.8, label=f"all members, t = {share:.3g}")
        ax.set(xlabel="distance threshold τ", ylabel="F1", ylim=(0, 1.02),
               title=f"{dataset}: {generator}")
        ax.legend(fontsize=6)
    return save(fig, path)


def tables(summaries: list[dict]) -> dict[str, pd.DataFrame]:
    """`mia` (per dataset x generator x attack over seeds: `summarise`) and `mia_thresholds` (F1
    per threshold of the label-free attacks), from the runs' summaries."""
    runs, grid, _ = collect(summaries)
    columns = ["dataset", "generator", "attack", "tau_rule", "tau", "f1", "member_share"]
    thresholds = (grid.groupby(["dataset", "generator", "attack", "tau_rule", "tau"])[["f1", "member_share"]].mean()
                  .reset_index()[columns] if len(grid) else pd.DataFrame(columns=columns))
    return {"mia": summarise(runs), "mia_thresholds": thresholds}


def draw(summaries: list[dict], figures_dir) -> None:
    """Per dataset, the ROC curves and the F1 grid over thresholds."""
    runs, grid, infos = collect(summaries)
    for dataset in sorted({i["dataset"] for i in infos}):
        plot_roc(infos, dataset, Path(figures_dir) / f"mia_roc_{dataset}.png")
        plot_f1_grid(grid, dataset, Path(figures_dir) / f"mia_f1_{dataset}.png", runs)



def low_fpr_column(mia: pd.DataFrame) -> str:
    """The lowest FPR whose TPR the attack records resolve (at least one false positive possible)."""
    floor = mia["fpr_floor"].max() if "fpr_floor" in mia and mia["fpr_floor"].notna().any() else 1e-1
    for fpr in LOW_FPRS:
        if float(fpr) >= floor:
            return fpr
    return LOW_FPRS[-1]


def best_f1(thresholds: pd.DataFrame, mia: pd.DataFrame) -> pd.DataFrame:
    """F1 of the realistic KDE attack and of Method 1 at their oracle τ (the grid τ with the best
    mean-over-seeds F1 on the true labels, which no attacker can pick) and at their label-free τ
    (the rule in `mia.csv`'s `tau_rule`), each also as the gain over calling every record a member,
    whose F1 is 2t/(1 + t) for the member share t of the attack set (`mia_member_share`)."""
    best = thresholds.groupby(PAIR + ["attack"])["f1"].max().unstack("attack")
    share = mia.dropna(subset=["member_share"]).groupby("dataset")["member_share"].mean()
    t = best.index.get_level_values("dataset").map(share).to_numpy(dtype=float)
    out = pd.DataFrame(index=best.index)
    for attack in ("kde_realistic", "method1"):
        values = best[attack] if attack in best else pd.Series(np.nan, index=best.index)
        out[f"mia_f1_oracle_tau_{attack}"] = values
        out[f"mia_f1_gain_oracle_tau_{attack}"] = relative_f1(values, t)
    if "f1_mean" in mia:
        free = mia[mia["attack"].isin(["kde_realistic", "method1"])].set_index(PAIR + ["attack"])
        for attack in ("kde_realistic", "method1"):
            part = free.xs(attack, level="attack") if attack in free.index.get_level_values("attack") else None
            for column, source in ((f"mia_f1_label_free_tau_{attack}", "f1_mean"),
                                   (f"mia_f1_gain_label_free_tau_{attack}", "f1_relative_mean")):
                out[column] = part[source].reindex(out.index) if part is not None else np.nan
    return out.reset_index()


def summary_columns(mia: pd.DataFrame, thresholds: pd.DataFrame) -> pd.DataFrame | None:
    """Per dataset x generator: the true-distribution KDE attack's AUC and TPR at the lowest FPR
    the dataset's attack sets resolve (`mia_low_fpr`), the member share, and the F1 figures of
    `best_f1`."""
    parts = []
    for dataset, part in mia.groupby("dataset"):
        fpr = low_fpr_column(part)
        pivot = part.pivot_table(index="generator", columns="attack",
                                 values=["auc_mean", "auc_sd", f"tpr_at_{fpr}_mean", f"tpr_at_{fpr}_sd"])
        columns = {("auc_mean", "kde_true"): "mia_auc", ("auc_sd", "kde_true"): "mia_auc_sd",
                   (f"tpr_at_{fpr}_mean", "kde_true"): "mia_tpr_low_fpr",
                   (f"tpr_at_{fpr}_sd", "kde_true"): "mia_tpr_low_fpr_sd"}
        picked = pd.DataFrame({new: pivot[old] if old in pivot else np.nan for old, new in columns.items()},
                              index=pivot.index).reset_index()
        picked["dataset"], picked["mia_low_fpr"] = dataset, float(fpr)
        if "member_share" in part:  # the attack set's member share (El Emam: the sampling fraction)
            shares = part[part["attack"] == "kde_true"].set_index("generator")["member_share"]
            picked["mia_member_share"] = picked["generator"].map(shares)
        parts.append(picked)
    if not parts:
        return None
    table = pd.concat(parts, ignore_index=True)
    table = table[PAIR + [c for c in table if c not in PAIR]]
    if len(thresholds):
        table = table.merge(best_f1(thresholds, mia), on=PAIR, how="left")
    return table
