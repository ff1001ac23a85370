"""Aggregate per-run membership-inference results: tables and the log-log ROC and F1-vs-τ figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import read_json
from ..report.figures import save, subplots
from ..report.tables import write_table_formats

ATTACKS = {"kde_true": "KDE (true distribution)", "kde_realistic": "KDE (realistic)",
           "method1": "Method 1 (fixed threshold)"}


def collect(paths) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """(one row per run x attack, F1 per threshold, raw run JSONs)."""
    rows, grid, infos = [], [], []
    for path in paths:
        info = read_json(path)
        infos.append(info)
        key = {k: info[k] for k in ("dataset", "generator", "seed")}
        if info["status"] != "ok":
            rows.append({**key, "attack": "kde_true", "status": "failed", "error": info.get("error")})
            continue
        attacks = {"kde_true": info, "kde_realistic": info.get("realistic") or {}, "method1": info["baseline"]}
        for attack, metrics in attacks.items():
            tpr = metrics.get("tpr_at_fpr", {})
            rows.append({**key, "attack": attack, "status": "ok", "auc": metrics.get("auc"),
                         "f1": metrics.get("f1"), "f1_relative": metrics.get("f1_relative"),
                         "precision": metrics.get("precision"), "tau": metrics.get("tau"),
                         "tpr_at_1e-01": tpr.get("1e-01"), "tpr_at_1e-02": tpr.get("1e-02"),
                         "tpr_at_1e-03": tpr.get("1e-03"), "fpr_floor": metrics.get("fpr_floor"),
                         "n_members": metrics.get("n_members"), "n_non_members": metrics.get("n_non_members")})
        for point in info["by_threshold"]:
            grid.append({**key, "tau": point["tau"], "attack": "method1", "f1": point["method1"]["f1"]})
            if point.get("realistic"):
                grid.append({**key, "tau": point["tau"], "attack": "kde_realistic", "f1": point["realistic"]["f1"]})
    return pd.DataFrame(rows), pd.DataFrame(grid), infos


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    metrics = ["auc", "f1", "f1_relative", "precision", "tpr_at_1e-01", "tpr_at_1e-02", "tpr_at_1e-03"]
    keys = ["dataset", "generator", "attack"]
    total = runs[runs["attack"] == "kde_true"].groupby(["dataset", "generator"])["seed"].count().rename("n_runs")
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        table = total.reset_index().assign(attack="kde_true", n_seeds=0)
    else:
        ok = ok.assign(member_share=ok["n_members"] / (ok["n_members"] + ok["n_non_members"]))
        agg = {f"{m}_mean": (m, "mean") for m in metrics}
        agg.update({f"{m}_sd": (m, "std") for m in ("auc", "tpr_at_1e-01", "tpr_at_1e-02", "tpr_at_1e-03")})
        agg.update({"fpr_floor": ("fpr_floor", "max"), "member_share": ("member_share", "mean"),
                    "n_seeds": ("seed", "count")})
        table = ok.groupby(keys).agg(**agg).reset_index()
        table = table.merge(total.reset_index(), on=["dataset", "generator"], how="outer")
    table["n_seeds"] = table["n_seeds"].fillna(0).astype(int)
    table["status"] = np.where(table["n_seeds"] == table["n_runs"], "ok",
                               "failed " + (table["n_runs"] - table["n_seeds"]).astype(str) + "/" + table["n_runs"].astype(str))
    table["attack"] = table["attack"].fillna("kde_true")
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


def plot_f1_grid(grid: pd.DataFrame, dataset: str, path) -> Path:
    data = grid[grid["dataset"] == dataset] if len(grid) else grid
    generators = sorted(data["generator"].unique()) if len(data) else ["(none)"]
    fig, axes = subplots(len(generators), width=3.6, height=3.0)
    for ax, generator in zip(axes, generators):
        part = data[data["generator"] == generator] if len(data) else data
        for attack, line in part.groupby("attack"):
            mean = line.groupby("tau")["f1"].mean()
            ax.plot(mean.index, mean.to_numpy(), marker=".", label=ATTACKS[attack])
        ax.set(xlabel="distance threshold τ", ylabel="F1", ylim=(0, 1.02), title=f"{dataset}: {generator}")
        ax.legend(fontsize=6)
    return save(fig, path)


def write_summary(paths, tables_dir, figures_dir) -> None:
    runs, grid, infos = collect(paths)
    write_table_formats(summarise(runs), Path(tables_dir) / "mia", formats=("csv", "md", "tex"))
    if len(grid):
        write_table_formats(grid.groupby(["dataset", "generator", "attack", "tau"])["f1"].mean().reset_index(),
                            Path(tables_dir) / "mia_thresholds")
    else:
        write_table_formats(pd.DataFrame(columns=["dataset", "generator", "attack", "tau", "f1"]),
                            Path(tables_dir) / "mia_thresholds")
    for dataset in sorted({i["dataset"] for i in infos}):
        plot_roc(infos, dataset, Path(figures_dir) / f"mia_roc_{dataset}.png")
        plot_f1_grid(grid, dataset, Path(figures_dir) / f"mia_f1_{dataset}.png")
