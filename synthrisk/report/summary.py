"""The release decision in one table: risk (RAPID, membership inference) next to utility, fit time
and status, one row per dataset x generator, plus the risk-utility figure per dataset."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import read_json
from ..mia.metrics import relative_f1
from .figures import save, subplots
from .tables import write_table_formats

LOW_FPRS = ("1e-03", "1e-02", "1e-01")  # the MIA table's TPR columns, lowest first
PAIR = ["dataset", "generator"]


def generator_runs(status_paths) -> pd.DataFrame:
    """One row per generator run from the status JSONs of rule generate."""
    rows = []
    for path in status_paths:
        info = read_json(path)
        rows.append({"dataset": info["dataset"], "generator": info["generator"], "seed": info["seed"],
                     "backend": info.get("backend"), "status": info["status"], "error": info.get("error"),
                     "fit_seconds": info.get("fit_seconds"), "sample_seconds": info.get("sample_seconds"),
                     "dp_guarantee": (info.get("privacy") or {}).get("guarantee")})
    return pd.DataFrame(rows)


def utility_runs(paths) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, one row per run x target x efficacy metric)."""
    rows, efficacy = [], []
    for path in paths:
        info = read_json(path)
        key = {k: info[k] for k in ("dataset", "generator", "seed")}
        rows.append({**key, **{k: info.get(k) for k in ("status", "error", "quality", "column_shapes",
                                                        "column_pair_trends", "efficacy_ratio")}})
        efficacy.extend({**key, **row} for row in info.get("efficacy", []))
    return pd.DataFrame(rows), pd.DataFrame(efficacy)


def utility_table(utility: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd over seeds of each utility score per dataset x generator (successful runs)."""
    columns = ["quality", "column_shapes", "column_pair_trends", "efficacy_ratio"]
    ok = utility[utility["status"] == "ok"] if len(utility) else utility
    if ok.empty:
        return pd.DataFrame(columns=PAIR + [f"{c}_{s}" for c in columns for s in ("mean", "sd")])
    ok = ok.astype({c: float for c in columns})  # null (undefined) in the JSON -> NaN
    table = ok.groupby(PAIR)[columns].agg(["mean", "std"])
    table.columns = [f"{c}_{'mean' if s == 'mean' else 'sd'}" for c, s in table.columns]
    return table.reset_index()


def _status(runs: pd.DataFrame) -> pd.DataFrame:
    def describe(group: pd.DataFrame) -> pd.Series:
        failed = group[group["status"] != "ok"]
        text = "ok" if failed.empty else f"failed {len(failed)}/{len(group)}: {failed['error'].iloc[0]}"
        # "not DP: domain read from the data" wins over a DP claim: any such run voids it.
        guarantees = sorted(group["dp_guarantee"].dropna().unique(), key=lambda g: not g.startswith("not DP"))
        return pd.Series({"status": text, "n_seeds_ok": len(group) - len(failed),
                          "fit_seconds": group["fit_seconds"].mean(),
                          "dp_guarantee": guarantees[0] if guarantees else None})
    if "dp_guarantee" not in runs:
        runs = runs.assign(dp_guarantee=None)
    columns = ["status", "error", "fit_seconds", "dp_guarantee"]
    return runs.groupby(PAIR)[columns].apply(describe).reset_index()


def dp_epsilon(spec: dict) -> float | None:
    """The privacy budget of a DP generator (its `epsilon` parameter), None for a non-private one."""
    value = (spec.get("params") or {}).get("epsilon")
    return float(value) if value is not None else None


def dp_family(spec: dict) -> str:
    """Generators that differ only in ε form one line in the risk-utility figure."""
    return "/".join(str(spec[k]) for k in ("backend", "model", "plugin") if spec.get(k))


def low_fpr_column(mia: pd.DataFrame) -> str:
    """The lowest FPR whose TPR the attack records resolve (at least one false positive possible)."""
    floor = mia["fpr_floor"].max() if "fpr_floor" in mia and mia["fpr_floor"].notna().any() else 1e-1
    for fpr in LOW_FPRS:
        if float(fpr) >= floor:
            return fpr
    return LOW_FPRS[-1]


def _merge_dataset_columns(table: pd.DataFrame, part: pd.DataFrame) -> pd.DataFrame:
    """Merge one dataset's columns into the table, filling the rows of that dataset only."""
    table = table.merge(part, on=PAIR, how="left", suffixes=("", "_new"))
    for column in [c for c in table if c.endswith("_new")]:
        table[column[:-4]] = table[column[:-4]].combine_first(table.pop(column))
    return table


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


def rapid_columns(rapid_max: pd.DataFrame) -> pd.DataFrame:
    """RAPID per dataset x generator against chance: the largest RAPID_max over the sensitive
    attributes (attackers that beat chance only) with its sd, chance floor and excess (all three
    of that attribute; excess 0 when no attacker beats chance for any), one verdict per sensitive
    attribute, and RAPID_max per attribute."""
    rows = []
    for key, group in rapid_max.groupby(PAIR):
        best = group.dropna(subset=["rapid_max_mean"])
        best = best.loc[best["rapid_max_mean"].idxmax()] if len(best) else None
        rows.append({**dict(zip(PAIR, key)),
                     "rapid_max": np.nan if best is None else best["rapid_max_mean"],
                     "rapid_max_sd": np.nan if best is None else best["rapid_max_sd"],
                     "rapid_chance_floor": np.nan if best is None else best["null_mean"],
                     "rapid_excess": 0.0 if best is None else best["excess_mean"],
                     "rapid_verdict": "; ".join(f"{r.sensitive}: {r.verdict}" for r in group.itertuples()),
                     **{f"rapid_max[{r.sensitive}]": r.rapid_max_mean for r in group.itertuples()}})
    return pd.DataFrame(rows)


def summary_table(rapid_max: pd.DataFrame, mia: pd.DataFrame, thresholds: pd.DataFrame, utility: pd.DataFrame,
                  generators: pd.DataFrame, specs: dict) -> pd.DataFrame:
    """`utility` is `utility_table`'s mean and sd per dataset x generator."""
    """One row per configured dataset x generator, failed ones included (their metrics empty)."""
    table = _status(generators)
    table["backend"] = table["generator"].map(lambda g: specs[g]["backend"])
    table["epsilon"] = table["generator"].map(lambda g: dp_epsilon(specs[g]))
    if len(rapid_max):
        table = table.merge(rapid_columns(rapid_max), on=PAIR, how="left")
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
        table = _merge_dataset_columns(table, picked)
    if len(thresholds):
        table = _merge_dataset_columns(table, best_f1(thresholds, mia))
    if len(utility):
        picked = {f"{score}_{s}": score + ("" if s == "mean" else "_sd")
                  for score in ("quality", "efficacy_ratio") for s in ("mean", "sd")}
        table = table.merge(utility[PAIR + list(picked)].rename(columns=picked), on=PAIR, how="left")
    first = PAIR + ["backend", "epsilon", "dp_guarantee", "status", "n_seeds_ok", "fit_seconds"]
    table = table[first + [c for c in table if c not in first]]
    order = {g: i for i, g in enumerate(specs)}
    table = table.sort_values(["dataset", "generator"], key=lambda s: s.map(order) if s.name == "generator" else s)
    return table.reset_index(drop=True)


def plot_risk_utility(summary: pd.DataFrame, specs: dict, dataset: str, path) -> Path:
    """Rows: utility measure (x); columns: risk measure (y). Points are generators (mean ± sd over
    seeds); generators of one DP family are joined in order of ε."""
    data = summary[summary["dataset"] == dataset]
    risks = [("rapid_excess", None, "RAPID_max excess over chance (0: no attacker beats it)"),
             ("mia_auc", "mia_auc_sd", "MIA AUC (KDE, true distribution)"),
             ("mia_tpr_low_fpr", "mia_tpr_low_fpr_sd", "MIA TPR at the lowest resolvable FPR")]
    utilities = [("quality", "quality_sd", "SDMetrics quality score"),
                 ("efficacy_ratio", "efficacy_ratio_sd", "ML efficacy (synthetic / real)")]
    fig, axes = subplots(len(risks) * len(utilities), width=4.4, height=3.6, ncols=len(risks))
    colours = {g: f"C{i % 10}" for i, g in enumerate(data["generator"])}
    for index, ax in enumerate(axes):
        (x, x_sd, x_label), (y, y_sd, y_label) = utilities[index // len(risks)], risks[index % len(risks)]
        if x not in data or y not in data:
            ax.text(0.5, 0.5, "not measured", ha="center", transform=ax.transAxes)
            continue
        for row in data.itertuples(index=False):
            row = row._asdict()
            if pd.isna(row[x]) or pd.isna(row[y]):
                continue
            ax.errorbar(row[x], row[y], xerr=np.nan_to_num(row.get(x_sd, 0)), yerr=np.nan_to_num(row.get(y_sd, 0)),
                        fmt="o", color=colours[row["generator"]], capsize=2, label=row["generator"])
        private = data.assign(family=data["generator"].map(lambda g: dp_family(specs[g])))
        for family, line in private[private["epsilon"].notna()].groupby("family"):
            line = line.dropna(subset=[x, y]).sort_values("epsilon")
            ax.plot(line[x], line[y], "-", color="0.4", lw=1, zorder=0)
            for _, point in line.iterrows():
                ax.annotate(f"ε={point['epsilon']:g}", (point[x], point[y]), fontsize=6,
                            xytext=(3, 3), textcoords="offset points")
        if y == "mia_auc":
            ax.axhline(0.5, color="k", ls="--", lw=0.8)
        ax.set(xlabel=x_label, ylabel=y_label, ylim=(0, 1.02))
        if index == 0:
            ax.legend(fontsize=6, loc="best")
    fig.suptitle(f"{dataset}: risk against utility (up = more risk, right = more utility)")
    return save(fig, path)


def write_summary(rapid_max_path, mia_path, thresholds_path, utility_paths, status_paths, specs: dict,
                  tables_dir, figures_dir) -> pd.DataFrame:
    runs, efficacy = utility_runs(utility_paths)
    utility = utility_table(runs)
    summary = summary_table(pd.read_csv(rapid_max_path), pd.read_csv(mia_path), pd.read_csv(thresholds_path),
                            utility, generator_runs(status_paths), specs)
    tables_dir = Path(tables_dir)
    write_table_formats(summary, tables_dir / "summary", formats=("csv", "md", "tex"))
    write_table_formats(utility, tables_dir / "utility", formats=("csv", "md", "tex"))
    by_target = (efficacy.groupby(PAIR + ["target", "metric"])[["synthetic", "real", "ratio"]].mean().reset_index()
                 if len(efficacy) else pd.DataFrame(columns=PAIR + ["target", "metric", "synthetic", "real", "ratio"]))
    write_table_formats(by_target, tables_dir / "utility_efficacy", formats=("csv", "md", "tex"))
    for dataset in sorted(summary["dataset"].unique()):
        plot_risk_utility(summary, specs, dataset, Path(figures_dir) / f"risk_utility_{dataset}.png")
    return summary
