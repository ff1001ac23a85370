"""The workflow's shadow-model membership inference stage: settings, the population plan, one block
of shadow fits, and the gathered tables and figures.

A config with a `shadow_mia:` block (config/audit.yaml) attacks each listed generator (names of the
config's `generators`) on `dataset`'s split for the first config seed, restricted to `columns`
(default: all). Jobs: one plan (targets and pools, synthrisk.shadow_mia.targets), then blocks of
`block` shadow datasets per (generator, role), each writing per dataset its status, membership
row, set features and every target's neighbourhood features (never synthetic records), then one
gather step that trains and judges a classifier per (generator, target).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from ..data.schema import DatasetSchema
from ..errors import ConfigError, DataError
from ..figures import save, subplots
from ..generators.base import BACKEND_ENVIRONMENTS, job_settings
from ..generators.memory import BetweenFits
from ..io import write_table_formats
from .attack import CHANCE, CONFIDENCE, FPRS, N_TREES, attack_target
from .features import BINS, RADII, FeatureMap
from .shadow import EVAL, ROLES, TRAIN, dataset_rows, fit_shadow, generator_seed, membership_matrix
from .targets import EVALUATION, OUTLIER, RANDOM, SHADOW, plan, pool_positions, targets_of

DEFAULTS = {
    "dataset": "adult",
    "columns": None,            # None: every column of the dataset's schema
    "generators": [],
    "n_outliers": 10,
    "n_random": 10,
    "neighbours": 5,            # k of the vulnerability score (Meeus et al.)
    "n_shadow_records": 1000,
    "shadow_datasets": 100,
    "eval_datasets": 60,
    "block": 20,
    "bins": BINS,
    "radii": list(RADII),
    "n_trees": N_TREES,
    "fprs": list(FPRS),
    "confidence": CONFIDENCE,
    "most_vulnerable": 3,
}
TARGETS_TABLE, GENERATORS_TABLE = "shadow_mia_targets", "shadow_mia"
#: the settings the plan job and a block job read (a block also reads its generator's spec and the
#: plan's file): what reruns them when changed (synthrisk.generators.base.job_settings)
PLAN_KEYS = ("columns", "n_outliers", "n_random", "neighbours", "seed")
BLOCK_KEYS = ("columns", "seed", "bins", "radii", "n_shadow_records", "shadow_datasets", "eval_datasets", "block")
#: population split files, in the order the plan lists their records
POPULATION_FILES = ("holdout", "aux")
STATUS_COLUMNS = ["role", "dataset", "generator", "seed", "status", "error", "fit_seconds", "sample_seconds"]
ROLE_POOL = {TRAIN: SHADOW, EVAL: EVALUATION}
#: level of the test that a generator's count of targets above chance beats chance
ALPHA = 0.05


def settings_from_config(block: dict | None, generators: dict, datasets: dict, seeds: list) -> dict:
    """The block with its defaults, checked against the config's generators, datasets and seeds."""
    block = dict(block or {})
    unknown = sorted(set(block) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"shadow_mia: unknown key(s) {unknown}; known: {sorted(DEFAULTS)}")
    settings = {**DEFAULTS, **block}
    if settings["dataset"] not in datasets:
        raise ConfigError(f"shadow_mia.dataset: {settings['dataset']!r} is not in datasets ({sorted(datasets)})")
    if not settings["generators"]:
        raise ConfigError("shadow_mia.generators: name at least one generator of the config's generators")
    for name in settings["generators"]:
        if name not in generators:
            raise ConfigError(f"shadow_mia.generators: {name!r} is not in generators (known: {sorted(generators)})")
        if generators[name].get("backend") in BACKEND_ENVIRONMENTS:
            raise ConfigError(f"shadow_mia.generators: {name!r} runs in its own environment "
                              f"({generators[name]['backend']}); the shadow stage fits in the main one only")
    for key, least in (("n_outliers", 0), ("n_random", 0), ("neighbours", 1), ("n_shadow_records", 2),
                       ("shadow_datasets", 4), ("eval_datasets", 4), ("block", 1), ("bins", 1), ("n_trees", 1),
                       ("most_vulnerable", 0)):
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(f"shadow_mia.{key}: must be an integer >= {least}, got {value!r}")
    if settings["n_outliers"] + settings["n_random"] < 1:
        raise ConfigError("shadow_mia.n_outliers, n_random: at least one target is needed")
    if settings["n_outliers"] + settings["n_random"] > settings["n_shadow_records"]:
        raise ConfigError(f"shadow_mia.n_shadow_records: {settings['n_shadow_records']} is fewer than the "
                          f"{settings['n_outliers'] + settings['n_random']} targets a dataset may hold")
    if not 0 < settings["confidence"] < 1:
        raise ConfigError(f"shadow_mia.confidence: must be in (0, 1), got {settings['confidence']}")
    if any(not 0 < f < 1 for f in settings["fprs"]):
        raise ConfigError(f"shadow_mia.fprs: every FPR must be in (0, 1), got {settings['fprs']}")
    if any(r < 0 for r in settings["radii"]):
        raise ConfigError(f"shadow_mia.radii: Gower radii must be >= 0, got {settings['radii']}")
    if not seeds:
        raise ConfigError("seeds: the shadow stage uses the first seed; the list is empty")
    settings["seed"] = int(seeds[0])
    settings["specs"] = {name: generators[name] for name in settings["generators"]}
    return settings


def plan_settings(settings: dict) -> dict:
    return job_settings(settings, PLAN_KEYS)


def block_settings(settings: dict, generator: str) -> dict:
    return job_settings(settings, BLOCK_KEYS, generator)


def stage_schema(schema: DatasetSchema, settings: dict) -> DatasetSchema:
    """The dataset's schema restricted to the stage's columns (their levels and bounds kept)."""
    return schema.restricted(settings["columns"] or list(schema.columns), what="shadow_mia.columns")


def population_frames(frames: dict[str, pd.DataFrame], schema: DatasetSchema) -> dict[str, pd.DataFrame]:
    """The split files (with row_id) restricted to the stage schema's columns and typed by it."""
    out = {}
    for name in POPULATION_FILES:
        frame = frames[name]
        if "row_id" not in frame.columns:
            raise DataError(f"shadow_mia population ({name}.parquet): no row_id column; the split files of "
                            "synthrisk.data.split carry one")
        typed = schema.conform(frame[list(schema.columns)], what=f"shadow_mia population ({name}.parquet)")
        out[name] = typed.assign(row_id=frame["row_id"].to_numpy())
    return out


def run_plan(frames: dict[str, pd.DataFrame], schema: DatasetSchema, settings: dict) -> pd.DataFrame:
    """The targets job: the population plan (synthrisk.shadow_mia.targets.plan) of the split files."""
    schema = stage_schema(schema, settings)
    return plan(population_frames(frames, schema), schema, settings["n_outliers"], settings["n_random"],
                settings["neighbours"], settings["seed"])


def n_datasets(settings: dict, role: str) -> int:
    return settings["shadow_datasets"] if role == TRAIN else settings["eval_datasets"]


def n_blocks(settings: dict, role: str) -> int:
    return math.ceil(n_datasets(settings, role) / settings["block"])


def block_datasets(settings: dict, role: str, block: int) -> range:
    return range(block * settings["block"], min((block + 1) * settings["block"], n_datasets(settings, role)))


def target_columns(plan_frame: pd.DataFrame, feature_map: FeatureMap) -> list[str]:
    return [f"t{t}:{name}" for t in targets_of(plan_frame)["target"] for name in feature_map.target_feature_names()]


def run_block(frames: dict[str, pd.DataFrame], schema: DatasetSchema, plan_frame: pd.DataFrame, settings: dict,
              generator: str, role: str, block: int) -> pd.DataFrame:
    """One block job: per shadow dataset of the block, its status, membership (`in:t`), set
    features (`set:...`) and target features (`t{t}:...`). A failed fit leaves its features NaN."""
    schema = stage_schema(schema, settings)
    population = population_frames(frames, schema)
    row_ids = np.concatenate([f["row_id"].to_numpy() for f in population.values()])
    if not np.array_equal(row_ids, plan_frame["row_id"].to_numpy()):
        raise DataError("shadow_mia plan (plan.parquet): its records are not the population's split files in "
                        "order; it was made from other split files: rerun the plan job")
    records = pd.concat([f.drop(columns="row_id") for f in population.values()], ignore_index=True)
    feature_map = FeatureMap.fit(schema, records, settings["bins"], settings["radii"])
    targets = targets_of(plan_frame)
    target_positions = targets.index.to_numpy()
    target_records = records.iloc[target_positions].reset_index(drop=True)
    membership = membership_matrix(n_datasets(settings, role), len(targets), settings["seed"], role)
    pool = pool_positions(plan_frame, ROLE_POOL[role])
    set_names = [f"set:{n}" for n in feature_map.set_feature_names()]
    target_names = target_columns(plan_frame, feature_map)
    rows = []
    memory = BetweenFits()  # a fit's leftover cycles freed before they pile up (synthrisk.generators.memory)
    for j in block_datasets(settings, role, block):
        positions = dataset_rows(pool, target_positions, membership[j], settings["n_shadow_records"],
                                 settings["seed"], role, j)
        seed = generator_seed(generator, role, j)
        synthetic, status = fit_shadow(generator, settings["specs"][generator], records.iloc[positions], schema, seed)
        row = {"role": role, "dataset": j, "generator": generator, "seed": seed, "status": status["status"],
               "error": status["error"], "fit_seconds": status["fit_seconds"],
               "sample_seconds": status["sample_seconds"]}
        row.update({f"in:{t}": int(m) for t, m in zip(targets["target"], membership[j], strict=True)})
        if status["status"] == "ok":
            try:
                features = dict(zip(set_names, feature_map.set_features(synthetic), strict=True))
                features.update(zip(target_names, feature_map.target_features(synthetic, target_records).ravel(),
                                    strict=True))
                row.update(features)
            except Exception as exc:  # noqa: BLE001 - a dataset whose features fail is recorded like a failed fit
                row.update(status="failed", error=f"features: {type(exc).__name__}: {exc}")
        rows.append(row)
        del synthetic
        memory.collect()
    columns = STATUS_COLUMNS + [f"in:{t}" for t in targets["target"]] + set_names + target_names
    return pd.DataFrame(rows).reindex(columns=columns)


# -- gather -------------------------------------------------------------------------------------

def target_matrix(frame: pd.DataFrame, target: int) -> tuple[np.ndarray, np.ndarray]:
    """(features, membership) of one target over a block frame's successful datasets."""
    columns = [c for c in frame.columns if c.startswith("set:") or c.startswith(f"t{target}:")]
    return frame[columns].to_numpy(dtype=float), frame[f"in:{target}"].to_numpy(dtype=int)


def gather(blocks: dict[tuple[str, str], list[pd.DataFrame]], plan_frame: pd.DataFrame,
           settings: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per target, per generator) tables from the blocks (keys: generator, role)."""
    targets = targets_of(plan_frame)
    rows, fits = [], {}
    for generator in settings["generators"]:
        frames = {role: pd.concat(blocks[generator, role], ignore_index=True).sort_values("dataset")
                  for role in ROLES}
        ok = {role: frame[frame["status"] == "ok"] for role, frame in frames.items()}
        done = pd.concat(ok.values())
        fits[generator] = {"fits_ok": len(done), "fits_failed": sum(len(frames[r]) - len(ok[r]) for r in ROLES),
                           "fit_seconds_median": _median(done["fit_seconds"]),
                           "fit_sample_seconds_total": float((done["fit_seconds"] + done["sample_seconds"]).sum())}
        for _, target in targets.iterrows():
            t = int(target["target"])
            train_x, train_y = target_matrix(ok[TRAIN], t)
            eval_x, eval_y = target_matrix(ok[EVAL], t)
            result = attack_target(train_x, train_y, eval_x, eval_y, settings["n_trees"], settings["seed"],
                                   settings["fprs"], settings["confidence"])
            rows.append({"generator": generator, "target": t, "kind": target["kind"], "file": target["file"],
                         "row": int(target["row"]), "row_id": int(target["row_id"]),
                         "vulnerability": float(target["vulnerability"]), **result})
    per_target = pd.DataFrame(rows)
    return per_target, per_generator(per_target, fits, settings)


def record_name(row) -> str:
    """How a record is named in tables: its split file and position there (no values)."""
    return f"{row['file']}:{row['row']}"


def _median(values: pd.Series) -> float:
    """The median of the values present; NaN (without numpy's empty-slice warning) when none are."""
    present = values.dropna()
    return float(present.median()) if len(present) else np.nan


def count_beats_chance(above: int, n: int, confidence: float) -> float:
    """One-sided binomial p-value of `above` of `n` blind targets' intervals lying wholly above 0.5,
    each with probability (1 - confidence) / 2."""
    return float(binomtest(above, n, (1 - confidence) / 2, alternative="greater").pvalue) if n else np.nan


def per_generator(per_target: pd.DataFrame, fits: dict, settings: dict) -> pd.DataFrame:
    """Per generator: the fits, the median AUC and the targets above chance (all, outliers, random)
    over the targets that could be measured, read against two references: the count expected by
    chance alone (each interval misses 0.5 from above with probability (1 - confidence) / 2 when
    the attack is blind; `p_above_chance` is the binomial test of the count against it) and its
    mirror, the intervals wholly below 0.5 (a blind attack puts as many there; on the blind
    controls DeLong's interval misses 0.5 somewhat more often than its nominal rate). The most
    vulnerable records (highest AUC among those above chance) are named only when the count beats
    both references; otherwise no record is singled out."""
    rows = []
    for generator, part in per_target.groupby("generator", sort=False):
        measured = part[part["auc"].notna()]
        above, below = int(measured["above_chance"].astype(bool).sum()), int(measured["below_chance"].astype(bool).sum())
        p_value = count_beats_chance(above, len(measured), settings["confidence"])
        row = {"generator": generator, **fits[generator], "n_targets": len(part), "n_measured": len(measured),
               "n_out_eval": int(part["n_out"].max()), "median_auc": _median(part["auc"]),
               "above_chance": above, "below_chance": below,
               "expected_above_by_chance": len(measured) * (1 - settings["confidence"]) / 2,
               "p_above_chance": p_value,
               "share_above_chance": above / len(measured) if len(measured) else np.nan}
        for kind, label in ((OUTLIER, "outliers"), (RANDOM, "random")):
            subset = measured[measured["kind"] == kind]
            row[f"median_auc_{label}"] = _median(subset["auc"])
            row[f"share_above_chance_{label}"] = (subset["above_chance"].astype(bool).mean() if len(subset)
                                                  else np.nan)
        beats_chance = len(measured) > 0 and p_value <= ALPHA and above > below
        vulnerable = measured[measured["above_chance"].astype(bool)].sort_values(["auc", "target"],
                                                                                 ascending=[False, True])
        top = vulnerable.head(settings["most_vulnerable"]) if beats_chance else vulnerable.iloc[:0]
        row["most_vulnerable"] = ("; ".join(f"{record_name(r)} ({r['kind']}, AUC {r['auc']:.2f})"
                                            for _, r in top.iterrows())
                                  or (f"none: {above} above chance is not more than chance gives"
                                      f" ({below} below, binomial p {p_value:.2g})" if len(measured)
                                      else "no target measured"))
        rows.append(row)
    return pd.DataFrame(rows)


def plot_auc(per_target: pd.DataFrame, path, confidence: float = CONFIDENCE) -> None:
    """Per-target AUC with its interval, by generator, outliers and random targets side by side; the
    dashed line is chance."""
    generators = list(dict.fromkeys(per_target["generator"]))
    fig, (ax,) = subplots(1, width=max(5.0, 1.4 * len(generators) + 2), height=4.0)
    styles = {OUTLIER: ("tab:red", -0.18, "outlier targets"), RANDOM: ("tab:blue", 0.18, "random targets")}
    for kind, (colour, shift, label) in styles.items():
        part = per_target[per_target["kind"] == kind]
        if part.empty:
            continue
        for k, generator in enumerate(generators):
            rows = part[part["generator"] == generator]
            x = k + shift + np.linspace(-0.12, 0.12, len(rows)) if len(rows) > 1 else np.full(len(rows), k + shift)
            ax.errorbar(x, rows["auc"], yerr=[rows["auc"] - rows["auc_low"], rows["auc_high"] - rows["auc"]],
                        fmt="o", ms=3, lw=0.8, color=colour, label=label if k == 0 else None)
    ax.axhline(CHANCE, color="k", ls="--", lw=1, label="chance (AUC 0.5)")
    ax.set_xticks(range(len(generators)), generators, rotation=20)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel(f"AUC per target ({confidence:.0%} DeLong interval)")
    ax.legend(fontsize=7, loc="lower left")
    save(fig, path)


def plot_vulnerable(per_target: pd.DataFrame, path) -> None:
    """Per target: the number of generators on which its AUC interval lies above chance."""
    counts = (per_target.assign(above_chance=per_target["above_chance"].astype(bool))
              .groupby(["target", "kind", "file", "row"], sort=False)["above_chance"].sum()
              .reset_index().sort_values(["above_chance", "target"], ascending=[False, True]))
    n_generators = per_target["generator"].nunique()
    fig, (ax,) = subplots(1, width=max(5.0, 0.28 * len(counts) + 1.5), height=3.8)
    colours = ["tab:red" if kind == OUTLIER else "tab:blue" for kind in counts["kind"]]
    ax.bar(range(len(counts)), counts["above_chance"], color=colours)
    ax.set_xticks(range(len(counts)), [record_name(r) for _, r in counts.iterrows()], rotation=90, fontsize=6)
    ax.set_yticks(range(n_generators + 1))
    ax.set_ylabel("generators with AUC above chance")
    ax.set_xlabel("target (split file:row)")
    ax.set_title("red: outlier targets, blue: random targets", fontsize=8)
    save(fig, path)


def write(per_target: pd.DataFrame, generators: pd.DataFrame, settings: dict, tables_dir, auc_figure,
          vulnerable_figure) -> None:
    write_table_formats(per_target, f"{tables_dir}/{TARGETS_TABLE}")
    write_table_formats(generators, f"{tables_dir}/{GENERATORS_TABLE}")
    plot_auc(per_target, auc_figure, settings["confidence"])
    plot_vulnerable(per_target, vulnerable_figure)


def summary_line(generators: pd.DataFrame) -> str:
    parts = [f"{r['generator']}: median AUC {r['median_auc']:.2f}, {r['above_chance']}/{r['n_targets']} targets "
             f"above chance, {r['fits_failed']} failed fits" for _, r in generators.iterrows()]
    return "; ".join(parts)


def run_all(frames: dict[str, pd.DataFrame], schema: DatasetSchema, settings: dict) -> tuple[pd.DataFrame, ...]:
    """The whole stage in this process, job by job as the workflow runs it: (plan, per target, per
    generator). For tests and small studies; the workflow spreads the blocks over jobs."""
    plan_frame = run_plan(frames, schema, settings)
    blocks = {(generator, role): [run_block(frames, schema, plan_frame, settings, generator, role, b)
                                  for b in range(n_blocks(settings, role))]
              for generator in settings["generators"] for role in ROLES}
    return (plan_frame, *gather(blocks, plan_frame, settings))
