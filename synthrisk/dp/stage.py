"""The workflow's dp stage: run one experiment, write its tables and its figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..figures import save, subplots
from ..io import write_table_formats
from ..stats.noise import check_noise_seed
from . import experiments as ex

DEFAULTS = {
    "families": ["gaussian", "logistic", "poisson"],
    "epsilons": [0.2, 0.5, 1.0, 2.0, 5.0],
    "delta": 1e-5,
    "reps": 200,
    "n": 2000,
    "n_grid": [500, 1000, 2000, 5000, 10000],
    "clip_multipliers": [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    "clip_epsilon": 1.0,
    "noise_aware_reps": 200,
    "bootstrap_reps": 50,
    "bootstrap_draws": 100,
    "census": {"n": 2000, "reps": 200},
    # None: the simulated releases' DP noise from the operating system's entropy (experiments module doc)
    "noise_seed": None,
}
COLORS = {"nonprivate": "0.5", "plugin_wald": "C0", "noise_aware_wald": "C2", "bootstrap": "C4", "naive": "C3"}


def settings_from_config(dp_config: dict | None) -> dict:
    settings = {**DEFAULTS, **(dp_config or {})}
    settings["census"] = {**DEFAULTS["census"], **(dp_config or {}).get("census", {})}
    settings["noise_seed"] = check_noise_seed(settings["noise_seed"], "dp.noise_seed")
    unknown = set(settings["families"]) - set(ex.simulation_setups())
    if unknown:
        raise ConfigError(f"dp.families: unknown {sorted(unknown)}; choose from {list(ex.simulation_setups())}")
    return settings


def run(experiment: str, settings: dict, seed: int, adult: pd.DataFrame | None = None,
        grid: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Tables of one experiment; the first is the raw result, the rest summaries. `variance` and
    `scaling` read the same Monte Carlo grid: pass it to compute it only once."""
    if experiment in ("variance", "scaling"):
        grid = ex.variance_grid(settings, seed) if grid is None else grid
        summary = ex.variance_summary(grid) if experiment == "variance" else ex.scaling_fit(grid)
        return {"results": grid, "summary": summary}
    if experiment == "coverage":
        return {"results": ex.coverage_study(settings, seed)}
    if experiment == "clipping":
        return {"results": ex.clipping_study(settings, seed)}
    if experiment == "census":
        if adult is None:
            raise ConfigError("the census experiment needs the Adult data")
        return {"results": ex.census_study(adult, settings, seed)}
    raise ConfigError(f"unknown dp experiment {experiment!r}; choose one of {list(ex.EXPERIMENTS)}")


def _errorbars(ax, part, x, label, color, logx=True):
    """Coverage over the valid intervals with Monte Carlo error bars; where some replicates had no
    interval, a dotted line of the same colour counts them as misses."""
    bars = ax.errorbar(part[x], part["coverage"], yerr=part["mc_error"], marker="o", ms=3, capsize=2,
                       label=label, color=color)
    if "coverage_invalid_as_miss" in part and (part["invalid"] > 0).any():
        ax.plot(part[x], part["coverage_invalid_as_miss"], ":", lw=1, color=bars.lines[0].get_color())
    if logx:
        ax.set_xscale("log")


def plot(experiment: str, tables: dict[str, pd.DataFrame], path) -> Path:
    results = tables["results"]
    families = list(dict.fromkeys(results["family"]))
    if experiment == "variance":
        fig, axes = subplots(len(families))
        summary = tables["summary"].set_index("family")
        for ax, family in zip(axes, families):
            part = results[results["family"] == family]
            ax.loglog(part["theoretical_variance"], part["empirical_variance"], "o", ms=4)
            lims = [part[["theoretical_variance", "empirical_variance"]].min().min(),
                    part[["theoretical_variance", "empirical_variance"]].max().max()]
            ax.plot(lims, lims, "k--", lw=0.8)
            ax.set(xlabel=r"theory: $J\,\mathrm{Cov}(s)\,J'/n + \sigma^2 J J'$", ylabel="empirical variance",
                   title=f"{family} ({part['parameter'].iloc[0]}), r = {summary.loc[family, 'pearson']:.3f}")
    elif experiment == "scaling":
        fig, axes = subplots(len(families))
        fits = tables["summary"].set_index("family")
        for ax, family in zip(axes, families):
            part = results[results["family"] == family]
            c1, c2, r2 = fits.loc[family, "c1"], fits.loc[family, "c2"], fits.loc[family, "r2_log"]
            for k, (eps, sub) in enumerate(part.groupby("epsilon")):
                ax.loglog(sub["n"], sub["mse"], "o", ms=4, color=f"C{k}", label=f"eps={eps:g}")
                grid = np.geomspace(sub["n"].min(), sub["n"].max(), 50)
                # At a fixed eps the release's sigma is (unit sigma) * 2B/n: sigma * n is constant.
                sigma = float((sub["sigma"] * sub["n"]).median()) / grid
                ax.loglog(grid, c1 / grid + c2 * sigma ** 2, "-", lw=0.8, color=f"C{k}")
            ax.set(xlabel="n", ylabel="MSE")
            ax.set_title(f"{family}: " + r"$c_1/n + c_2\sigma^2$" + f"\nc1 = {c1:.3g}, c2 = {c2:.3g}, "
                         + r"$R^2_{\log}$" + f" = {r2:.3f}", fontsize=9)
        axes[0].legend(fontsize=7)
    elif experiment in ("coverage", "census"):
        fig, axes = subplots(len(families))
        for ax, family in zip(axes, families):
            part = results[results["family"] == family]
            for interval, sub in part.groupby("interval", sort=False):
                _errorbars(ax, sub, "epsilon", interval, COLORS.get(interval))
            ax.axhline(0.95, color="k", lw=0.8, ls="--")
            ax.set(xlabel="epsilon", ylabel="coverage of valid 95% intervals", ylim=(0, 1.02),
                   title=f"{family} ({part['parameter'].iloc[0]})")
        axes[0].legend(fontsize=7)
    elif experiment == "clipping":
        fig, axes = subplots(2 * len(families), ncols=2)
        for k, family in enumerate(families):
            part = results[(results["family"] == family) & (results["interval"] == "plugin_wald")]
            axes[2 * k].loglog(part["clip"], part["mse"], "o-")
            axes[2 * k].set(xlabel="clip bound B", ylabel="MSE", title=f"{family}: MSE vs B")
            _errorbars(axes[2 * k + 1], part, "clip", "plug-in Wald", COLORS["plugin_wald"])
            axes[2 * k + 1].axhline(0.95, color="k", lw=0.8, ls="--")
            axes[2 * k + 1].set(xlabel="clip bound B", ylabel="coverage", ylim=(0, 1.02),
                                title=f"{family}: coverage vs B")
    else:
        raise ConfigError(f"unknown dp experiment {experiment!r}")
    return save(fig, path)


def write(experiment: str, tables: dict[str, pd.DataFrame], results_csv, tables_dir, figure) -> None:
    tables["results"].to_csv(results_csv, index=False)
    # Variances and MSEs span orders of magnitude: significant digits, not fixed decimals.
    formats = {"floatfmt": ".4g", "formats": ("csv", "md", "tex")}
    write_table_formats(tables["results"], Path(tables_dir) / f"dp_{experiment}", **formats)
    if "summary" in tables:
        write_table_formats(tables["summary"], Path(tables_dir) / f"dp_{experiment}_summary", **formats)
    plot(experiment, tables, figure)
