"""The release decision in one table: every measure's risk and utility columns, one verdict per
risk type, fit time and status, one row per dataset x generator; plus the risk-utility figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..figures import save, subplots
from ..io import TableFolder, read_json, write_table_formats
from ..measures.verdict import collect_evidence, risk_table, verdict_columns
from ..stats.noise import is_broken

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


def _status(runs: pd.DataFrame) -> pd.DataFrame:
    def describe(group: pd.DataFrame) -> pd.Series:
        failed = group[group["status"] != "ok"]
        text = "ok" if failed.empty else f"failed {len(failed)}/{len(group)}: {failed['error'].iloc[0]}"
        # "not DP: ..." or "not private: noise seed is known" wins over a DP claim: any such run voids it.
        guarantees = sorted(group["dp_guarantee"].dropna().unique(), key=lambda g: not is_broken(g))
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


def summary_table(measures: dict, tables_dir, generators: pd.DataFrame, specs: dict) -> pd.DataFrame:
    """One row per configured dataset x generator, failed ones included (their metrics empty): the
    generator's status, then each measure's summary columns (`Measure.outputs`) in the measures' order, then one
    verdict per risk type (synthrisk.measures.verdict)."""
    table = _status(generators)
    table["backend"] = table["generator"].map(lambda g: specs[g]["backend"])
    table["epsilon"] = table["generator"].map(lambda g: dp_epsilon(specs[g]))
    for measure in measures.values():
        part = measure.outputs.summary_columns(TableFolder(tables_dir))
        if part is not None and len(part):
            table = table.merge(part, on=PAIR, how="left")
    verdicts = verdict_columns(pd.read_csv(Path(tables_dir) / "risk.csv"))
    if verdicts is not None:
        table = table.merge(verdicts, on=PAIR, how="left")
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
        for _family, line in private[private["epsilon"].notna()].groupby("family"):
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


def plot_evidence(evidence: pd.DataFrame, specs: dict, dataset: str, path, policy=None) -> Path:
    """Every attack against its own reference, one panel per risk type: the excess of its value
    over the reference (chance floor, 0.5, control set) per generator; filled markers beat the
    reference (Holm over the risk's attacks at the policy's level; over seeds, twice the median p-value),
    open ones do not."""
    from ..measures.base import RISKS
    from ..measures.verdict import beats

    data = evidence[evidence["dataset"] == dataset]
    risks = [r for r in RISKS if r in set(data["risk"])]
    fig, axes = subplots(max(len(risks), 1), width=4.6, height=0.35 * len(specs) + 1.6, ncols=min(max(len(risks), 1), 2))
    generators = [g for g in specs if g in set(data["generator"])]
    for ax, risk in zip(axes, risks):
        part = data[data["risk"] == risk].assign(beats=lambda d: beats(d, policy))
        for k, ((_measure, attack), rows) in enumerate(part.groupby(["measure", "attack"], sort=True)):
            y = rows["generator"].map({g: i for i, g in enumerate(generators)}).to_numpy(float) + (k % 5 - 2) * 0.08
            excess = rows["value"].astype(float) - rows["reference"].astype(float)
            colour = f"C{k % 10}"
            ax.scatter(excess[rows["beats"]], y[rows["beats"].to_numpy()], color=colour, s=18, label=f"{attack}")
            ax.scatter(excess[~rows["beats"]], y[~rows["beats"].to_numpy()], facecolors="none", edgecolors=colour, s=18)
        ax.axvline(0, color="k", lw=0.8, ls="--")
        ax.set_yticks(range(len(generators)), generators, fontsize=7)
        ax.set(xlabel="value - reference (filled: beats it)", title=RISKS[risk])
        ax.legend(fontsize=5, loc="lower right")
    fig.suptitle(f"{dataset}: every attack against its reference point")
    return save(fig, path)


def write_summary(measures: dict, status_paths, specs: dict, tables_dir, figures_dir, policy=None) -> pd.DataFrame:
    """risk.csv (one verdict per dataset x generator x risk), summary.csv, the risk-utility and
    the evidence figures, from the tables the measures' summaries wrote to `tables_dir`."""
    tables_dir = Path(tables_dir)
    evidence = collect_evidence(measures, TableFolder(tables_dir))
    write_table_formats(risk_table(evidence, policy), tables_dir / "risk", formats=("csv", "md", "tex"))
    summary = summary_table(measures, tables_dir, generator_runs(status_paths), specs)
    write_table_formats(summary, tables_dir / "summary", formats=("csv", "md", "tex"))
    for dataset in sorted(summary["dataset"].unique()):
        plot_risk_utility(summary, specs, dataset, Path(figures_dir) / f"risk_utility_{dataset}.png")
        plot_evidence(evidence, specs, dataset, Path(figures_dir) / f"risk_evidence_{dataset}.png", policy)
    return summary
