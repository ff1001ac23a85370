"""The workflow's privacy-audit stage: settings, one block of fits, and the gathered table and figure.

A config with a `epsilon_audit:` block (config/audit.yaml) audits each listed generator at each
listed epsilon (its `params.epsilon` replaced): `runs` fits per world (with / without the canary),
`block` fits per job, on the first `n_records` records of `dataset`'s real.parquet restricted to
`columns`. `generators` names entries of the config's `generators` or of `controls`, audit-only
specs (the under-noised MST, a synthcity DP plugin) that the rest of the run never sees.

A generator with an environment of its own (synthcity's plugins) fits its blocks there
(scripts/epsilon_audit_fits_isolated.py); `run_block` is the same job in either environment.
The canary's cells are the generator's own discretised domain when it has one (MST's `bins`),
otherwise MST's public discretisation at its default bin count: the cells the statistic counts
are then fixed by the schema's public metadata, whatever the generator does inside. The world with
the canary follows the generator's own neighbour relation (synthrisk.epsilon_audit.neighbours),
which its block jobs are given, so that a generator whose relation changes is fitted anew.

Statistics (synthrisk.epsilon_audit.statistic): every generator is audited by the canary's cells;
an MST generator also by the statistic after MAMA-MIA, read from the same fits, its bound a row of its own
beside the first. The blocks keep the canary's count in every marginal, so that the table reads both,
and MAMA-MIA's focal points are found when the table is made, on the audited records.

Multiplicity (synthrisk.epsilon_audit.bounds): the table holds k bounds, one per (generator, epsilon,
statistic). With `family_wise: true` (the default) each bound is at 1 - (1 - confidence) / k, so that
all the table's flags hold together at `confidence`; `family_wise: false` leaves each at
`confidence`. The table states both levels (columns `confidence`, per bound, and
`family_confidence`, with `bounds` = k), and so do the figure and the summary line.
"""

from __future__ import annotations

import math

import pandas as pd

from ..errors import ConfigError
from ..figures import save, subplots
from ..generators.base import job_settings, make_generator
from ..generators.mst import DEFAULT_BINS
from ..io import write_table_formats
from .bounds import CONFIDENCE, family_confidence, per_audit_confidence
from .canary import worst_case_canary
from .experiment import WORLDS, audit_statistics, audited_relation, canary_counts, nominal_privacy, statistics_for
from .statistic import CANARY_CELLS, MAMA_MIA, STATISTICS, focal_weights, statistic_values
from .validation import COLUMNS, N_RECORDS, N_RUNS, SYNTHETIC_PER_RECORD

DEFAULTS = {
    "dataset": "simulation",
    "columns": COLUMNS,
    "n_records": N_RECORDS,
    "generators": [],
    "controls": {},
    "epsilons": [1.0],
    "runs": N_RUNS,
    "block": 100,
    "synthetic_per_record": SYNTHETIC_PER_RECORD,
    "confidence": CONFIDENCE,
    # each bound at 1 - (1 - confidence) / k, k the run's (generator, epsilon, statistic) bounds (module doc)
    "family_wise": True,
}
TABLE = "epsilon_audit"
#: the settings a block of fits reads (besides its generator's spec): what reruns it when changed
BLOCK_KEYS = ("dataset", "columns", "n_records", "runs", "block", "synthetic_per_record")


def settings_from_config(block: dict | None, generators: dict, datasets: dict) -> dict:
    """The block with its defaults, checked against the config's generators and datasets."""
    settings = {**DEFAULTS, **(block or {})}
    if settings["dataset"] not in datasets:
        raise ConfigError(f"epsilon_audit.dataset: {settings['dataset']!r} is not in datasets "
                          f"({sorted(datasets)}); the audit reads its real.parquet")
    known = {**generators, **settings["controls"]}
    for name in settings["generators"]:
        if name not in known:
            raise ConfigError(f"epsilon_audit.generators: {name!r} is neither in generators nor in "
                              f"epsilon_audit.controls (known: {sorted(known)})")
    if settings["runs"] < 2:
        raise ConfigError(f"epsilon_audit.runs: needs at least 2 fits per world, got {settings['runs']}")
    if not isinstance(settings["family_wise"], bool):
        raise ConfigError(f"epsilon_audit.family_wise: true or false, got {settings['family_wise']!r}")
    settings["specs"] = {name: known[name] for name in settings["generators"]}
    for name in settings["generators"]:  # a generator that claims no (epsilon, delta): refused here, not in a job
        nominal_privacy(settings["specs"][name], name)
        for epsilon in settings["epsilons"]:
            nominal_privacy(audited_spec(settings, name, epsilon), name)
    return settings


def block_settings(settings: dict, generator: str) -> dict:
    """What one block job of `generator` is given (synthrisk.generators.base.job_settings), with the neighbour
    relation of the generator's accounting: the blocks are fitted on it, and rerun if it changes."""
    return {**job_settings(settings, BLOCK_KEYS, generator),
            "neighbours": audited_relation(settings["specs"][generator], generator)}


def epsilon_label(epsilon: float) -> str:
    """How an epsilon is written in file names (1 -> "1", 0.5 -> "0.5")."""
    return f"{float(epsilon):g}"


def audited_spec(settings: dict, generator: str, epsilon: float) -> dict:
    spec = dict(settings["specs"][generator])
    spec["params"] = {**(spec.get("params") or {}), "epsilon": float(epsilon)}
    return spec


def n_blocks(settings: dict) -> int:
    return math.ceil(settings["runs"] / settings["block"])


def block_runs(settings: dict, block: int) -> range:
    return range(block * settings["block"], min((block + 1) * settings["block"], settings["runs"]))


def audit_data(real: pd.DataFrame, schema, settings: dict) -> tuple[pd.DataFrame, object]:
    """The audited records (the first `n_records` of `real` on the audit's columns) and the schema
    restricted to those columns."""
    schema = schema.restricted(list(settings["columns"]), what="epsilon_audit.columns")
    data = schema.conform(real.loc[:, list(schema.columns)].head(settings["n_records"]).reset_index(drop=True),
                          what=f"epsilon_audit: dataset {settings['dataset']!r}")
    return data, schema


def canary_bins(spec: dict, generator: str) -> int:
    """The bin count of the canary's cells: the generator's own (MST's `bins`), or MST's default for
    a generator without a discretised domain of its own (module doc)."""
    return int(getattr(make_generator(spec, name=generator), "bins", None) or DEFAULT_BINS)


def run_block(real: pd.DataFrame, schema, settings: dict, generator: str, epsilon: float, world: str,
              block: int) -> pd.DataFrame:
    """The canary's marginal counts of one block of fits of one world: column run, then a column per
    marginal (synthrisk.epsilon_audit.experiment.canary_counts)."""
    data, schema = audit_data(real, schema, settings)
    spec = audited_spec(settings, generator, epsilon)
    nominal_privacy(spec, generator)
    canary = worst_case_canary(data, schema, canary_bins(spec, generator))
    # the relation the workflow planned the block for; canary_counts refuses it unless it is the generator's
    return canary_counts(spec, data, schema, canary, world, block_runs(settings, block),
                         n_synthetic=settings["synthetic_per_record"] * len(data), name=generator,
                         neighbours=settings.get("neighbours"))


def block_job(real_path, schema_path, settings: dict, generator: str, epsilon: float, world: str, block: int,
              output) -> None:
    """One audit job, in whichever environment its generator runs: `run_block` from the files to the
    block's CSV."""
    from ..data import load_schema
    from ..io import read_table, write_table

    frame = run_block(read_table(real_path), load_schema(schema_path), settings, generator, float(epsilon), world,
                      int(block))
    print(frame.describe().to_string())
    write_table(frame, output)


def n_bounds(settings: dict) -> int:
    """k: the bounds of the run, the family the correction is over: per (generator, epsilon), one per
    statistic that audits the generator (`experiment.statistics_for`)."""
    return sum(len(statistics_for(settings["specs"][g])) for g in settings["generators"]) * len(settings["epsilons"])


def focal_weights_of(real: pd.DataFrame, schema, settings: dict) -> dict[tuple[str, float], dict[str, int]]:
    """The weights after MAMA-MIA (statistic.focal_weights) for every (generator, epsilon) it audits, found on
    the audited records, the world without the canary."""
    data, schema = audit_data(real, schema, settings)
    return {(g, float(e)): focal_weights(audited_spec(settings, g, e), data, schema)
            for g in settings["generators"] if MAMA_MIA in statistics_for(settings["specs"][g])
            for e in settings["epsilons"]}


def _counts(blocks: dict, generator: str, epsilon: float) -> dict[str, pd.DataFrame]:
    """Each world's blocks of one (generator, epsilon) as one table of runs, refused when any two of
    its blocks, in either world, count different marginals (a block of an older format left among
    new ones)."""
    frames = {world: blocks[generator, epsilon, world] for world in WORLDS}
    columns = {tuple(f.columns) for world in WORLDS for f in frames[world]}
    if len(columns) != 1:
        raise ConfigError(f"epsilon_audit: {generator} at ε {epsilon:g}: its blocks count different marginals "
                          f"({sorted(columns)}); rerun its blocks")
    return {world: pd.concat(frames[world], ignore_index=True).sort_values("run") for world in WORLDS}


def gather(blocks: dict[tuple[str, float, str], list[pd.DataFrame]], settings: dict,
           weights: dict[tuple[str, float], dict[str, int]]) -> pd.DataFrame:
    """One row per (generator, epsilon, statistic): the audit of its blocks' counts (keys: generator,
    epsilon, world) by that statistic, the one after MAMA-MIA with its `weights` (`focal_weights_of`), the bound
    at the per-audit level (module doc), with the family's level and size beside it."""
    k = n_bounds(settings)
    level = per_audit_confidence(settings["confidence"], k, settings["family_wise"])
    rows = []
    for generator in settings["generators"]:
        for epsilon in settings["epsilons"]:
            spec = audited_spec(settings, generator, epsilon)
            privacy = nominal_privacy(spec, generator)
            counts = _counts(blocks, generator, epsilon)
            for statistic in statistics_for(spec):
                mine = weights.get((generator, float(epsilon))) if statistic == MAMA_MIA else None
                result = audit_statistics(statistic_values(counts["without"], statistic, mine),
                                          statistic_values(counts["with"], statistic, mine), privacy["epsilon"],
                                          privacy["delta"], level, neighbours=audited_relation(spec, generator))
                rows.append({"generator": generator, "statistic": STATISTICS[statistic],
                             "guarantee": privacy.get("guarantee"), **result.to_dict(), "bounds": k,
                             "family_confidence": family_confidence(level, k),
                             "correction": "bonferroni" if settings["family_wise"] else "none"})
    return pd.DataFrame(rows)


def level_text(table: pd.DataFrame) -> str:
    """The levels of the table's bounds, in words: per audit, and for all of its flags together."""
    row = table.iloc[0]
    k = int(row["bounds"])
    if k == 1:
        return f"one bound, at {row['confidence']:.1%}"
    correction = "Bonferroni" if row["correction"] == "bonferroni" else "no correction"
    return (f"each of the {k} bounds at {row['confidence']:.2%} ({correction}): "
            f"all together at ≥ {row['family_confidence']:.1%}")


def plot(table: pd.DataFrame, path) -> None:
    """epsilon_lower against the nominal epsilon; flagged audits (above the diagonal) in red."""
    fig, (ax,) = subplots(1, width=5.0, height=4.2)
    for (generator, statistic), part in table.groupby(["generator", "statistic"], sort=False):
        ax.plot(part["nominal_epsilon"], part["epsilon_lower"], "o-" if statistic == STATISTICS[CANARY_CELLS] else "s--",
                label=f"{generator} ({statistic})")
    flagged = table[table["flagged"]]
    ax.scatter(flagged["nominal_epsilon"], flagged["epsilon_lower"], s=120, facecolors="none", edgecolors="red",
               label="flagged: ε_lower > nominal")
    top = max(float(table["nominal_epsilon"].max()), float(table["epsilon_lower"].max())) * 1.1
    ax.plot([0, top], [0, top], "k:", lw=1, label="ε_lower = nominal")
    ax.set_xlabel("nominal ε")
    ax.set_ylabel(f"ε_lower (Clopper-Pearson, {table['confidence'].iloc[0]:.2%} per audit)")
    ax.set_title(level_text(table), fontsize=7)
    ax.set_xlim(0, top)
    ax.set_ylim(-0.03 * top, top)  # a little below 0: the many audits at epsilon_lower = 0 stay visible
    ax.legend(fontsize=7)
    save(fig, path)


def write(table: pd.DataFrame, tables_dir, figure) -> None:
    write_table_formats(table, f"{tables_dir}/{TABLE}", floatfmt=".4g")  # delta is 1e-06, not 0.000
    plot(table, figure)


def summary_line(table: pd.DataFrame) -> str:
    flagged = table[table["flagged"]]
    names = [f"{g} at ε={e:g} ({t})"
             for g, e, t in zip(flagged["generator"], flagged["nominal_epsilon"], flagged["statistic"], strict=True)]
    return (f"{len(table)} bounds, {len(flagged)} flagged" + (f": {', '.join(names)}" if names else "")
            + f"; largest ε_lower {table['epsilon_lower'].max():.3f}; {level_text(table)}")
