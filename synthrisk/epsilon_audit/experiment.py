"""The audit experiment: N fits of a DP generator without the canary and N with it, and the
canary's cell counts of each fit (its one- and two-way marginals, synthrisk.epsilon_audit.statistic),
from which each test statistic is one number per fit (the module's docstring says which and why).

The world with the canary is the data's neighbour under the generator's own relation, the one its
privacy() states (synthrisk.epsilon_audit.neighbours): the canary in place of one record
(replace-one) or added to the data (add-remove). Both worlds sample as many synthetic rows.

Runs: run i of the world without the canary fits with seed 2 i, of the world with it with 2 i + 1,
and samples with that seed plus SAMPLE_SEED_OFFSET. Every fit draws its own DP noise: from the
operating system's entropy, or, when the spec sets `params.noise_seed`, from SeedSequence([noise_seed,
fit seed]) (synthrisk.stats.noise), distinct per fit and the same on every run of the same config. The first half of
each world's runs chooses the threshold, the second half evaluates it (synthrisk.epsilon_audit.bounds).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..generators.base import make_generator
from ..generators.memory import BetweenFits
from .bounds import CONFIDENCE, choose_threshold, epsilon_lower_bound, errors_at
from .canary import Canary, with_canary
from .neighbours import check_relation, declared_relation
from .statistic import CANARY_CELLS, MAMA_MIA, focal_weights, marginal_counts, marginals, statistic_values

WITHOUT, WITH = "without", "with"
WORLDS = (WITHOUT, WITH)
#: sampling seeds kept apart from the fit seeds (which derive the noise when a noise seed is set)
SAMPLE_SEED_OFFSET = 1_000_003


def fit_seed(world: str, run: int) -> int:
    if world not in WORLDS:
        raise ConfigError(f"privacy audit: world must be one of {list(WORLDS)}, got {world!r}")
    return 2 * int(run) + (world == WITH)


def nominal_privacy(spec: dict, name: str = "generator") -> dict:
    """The guarantee a generator spec claims ({epsilon, delta, neighbours, ...}); an error for one that
    claims none, or does not state the neighbour relation it is claimed for."""
    privacy = make_generator(spec, seed=0, name=name).privacy()
    if not privacy or "epsilon" not in privacy:
        raise ConfigError(f"generators.{name}: the privacy audit needs a DP generator (one whose privacy() "
                          "states epsilon and delta); this one promises no guarantee")
    if privacy.get("delta") is None:
        raise ConfigError(f"generators.{name}: its delta depends on the data it is fitted on; set params.delta "
                          "so that the audit has a nominal (epsilon, delta) to test")
    declared_relation(privacy, name)
    return privacy


def audited_relation(spec: dict, name: str = "generator", neighbours: str | None = None) -> str:
    """The neighbour relation an audit of `spec` builds: the one the generator's privacy() states.
    `neighbours`, when given, must be that one (an audit under another relation would judge the claim
    on pairs it was not made for); for a generator that claims no guarantee (the identity of a test)
    it says which relation to build."""
    privacy = make_generator(spec, seed=0, name=name).privacy()
    if not privacy:
        if neighbours is None:
            raise ConfigError(f"generators.{name}: claims no DP guarantee, so it states no neighbour relation; "
                              "say which to build (neighbours=...)")
        return check_relation(neighbours)
    own = declared_relation(privacy, name)
    if neighbours is not None and check_relation(neighbours) != own:
        raise ConfigError(f"generators.{name}: its accounting assumes {own} neighbours; an audit under "
                          f"{neighbours} would test another claim than the one it makes")
    return own


def canary_counts(spec: dict, data: pd.DataFrame, schema, canary: Canary, world: str, runs,
                  n_synthetic: int | None = None, name: str = "generator",
                  neighbours: str | None = None) -> pd.DataFrame:
    """The canary's count in every one- and two-way marginal (`statistic.marginal_counts`) of each run
    in `runs` of one world: fit on the data (in the world WITH, on its neighbour holding the canary
    under the generator's relation, `audited_relation`), sample `n_synthetic` rows (default: as many
    as the data has records), count. One row per run: column run, then a column per marginal."""
    relation = audited_relation(spec, name, neighbours)
    table = with_canary(data, canary, schema, relation) if world == WITH else data
    n_rows = len(data) if n_synthetic is None else int(n_synthetic)
    if n_rows < 1:
        raise ConfigError(f"privacy audit: n_synthetic must be >= 1, got {n_synthetic}")
    rows = []
    memory = BetweenFits()  # a fit's leftover cycles freed before they pile up (synthrisk.generators.memory)
    for run in runs:
        seed = fit_seed(world, run)
        generator = make_generator(spec, seed=seed, name=name).fit(table, schema)
        synthetic = generator.sample(n_rows, seed + SAMPLE_SEED_OFFSET)
        rows.append({"run": int(run), **marginal_counts(synthetic, canary, schema)})
        del generator, synthetic
        memory.collect()
    return pd.DataFrame(rows, columns=["run", *marginals(list(canary.cells))]).astype("int64")


@dataclass(frozen=True)
class AuditResult:
    """One generator's audit at one nominal (epsilon, delta)."""

    nominal_epsilon: float
    delta: float
    neighbours: str          # the relation of the two worlds, the generator's own (nominal_epsilon is under it)
    n_runs: int              # per world (with / without), calibration and evaluation together
    n_evaluation: int        # per world, the runs that judged the threshold
    threshold: float         # guess "canary in" when the statistic is >= threshold
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    confidence: float        # of this audit's bound (with the run-level correction: 1 - alpha / k)
    epsilon_lower: float
    flagged: bool            # epsilon_lower > nominal_epsilon: the guarantee is violated
    mean_without: float      # the statistic's mean over the runs without the canary
    mean_with: float         # and with it

    def to_dict(self) -> dict:
        return asdict(self)


def audit_statistics(without: np.ndarray, with_: np.ndarray, nominal_epsilon: float, delta: float,
                     confidence: float = CONFIDENCE, *, neighbours: str) -> AuditResult:
    """Threshold on the first half of each world's runs, epsilon_lower on the second half; the worlds
    were neighbours under `neighbours`, the relation `nominal_epsilon` is stated for."""
    check_relation(neighbours)
    without, with_ = np.asarray(without, dtype=float), np.asarray(with_, dtype=float)
    if not (np.isfinite(without).all() and np.isfinite(with_).all()):
        # a run that is neither above nor below the threshold would count as no error
        raise ConfigError("privacy audit: a run's statistic is not a finite number")
    if len(without) != len(with_) or len(without) < 2:
        raise ConfigError(f"privacy audit: needs the same number (>= 2) of runs with and without the canary, got "
                          f"{len(with_)} with and {len(without)} without")
    half = len(without) // 2
    threshold = choose_threshold(without[:half], with_[:half], delta, confidence)
    evaluation_without, evaluation_with = without[half:], with_[half:]
    false_positives, false_negatives = errors_at(threshold, evaluation_without, evaluation_with)
    bound = epsilon_lower_bound(false_positives, len(evaluation_without), false_negatives, len(evaluation_with),
                                delta, confidence)
    return AuditResult(
        nominal_epsilon=float(nominal_epsilon), delta=float(delta), neighbours=neighbours, n_runs=len(without),
        n_evaluation=len(evaluation_without), threshold=threshold, false_positives=false_positives,
        false_negatives=false_negatives, fpr_upper=bound.fpr_upper, fnr_upper=bound.fnr_upper,
        confidence=bound.confidence, epsilon_lower=bound.epsilon_lower,
        flagged=bool(bound.epsilon_lower > nominal_epsilon),
        mean_without=float(without.mean()), mean_with=float(with_.mean()))


def statistics_for(spec: dict) -> tuple[str, ...]:
    """The statistics that audit a generator: the canary's cells always, and after MAMA-MIA when it is MST."""
    from ..mia.mama_mia import is_mst

    return (CANARY_CELLS, MAMA_MIA) if is_mst(spec) else (CANARY_CELLS,)


def audit_generator(spec: dict, data: pd.DataFrame, schema, canary: Canary, n_runs: int,
                    n_synthetic: int | None = None, confidence: float = CONFIDENCE,
                    name: str = "generator", statistics: tuple[str, ...] = (CANARY_CELLS,),
                    first_run: int = 0) -> dict[str, AuditResult]:
    """The whole audit of one generator spec in this process: n_runs fits per world (runs first_run,
    first_run + 1, ...), neighbours under the generator's own relation, then each statistic's bound
    at the (epsilon, delta) the generator claims, all read from the same fits. The focal points
    (after MAMA-MIA) are found on `data`, the world without the canary, before any fit."""
    privacy = nominal_privacy(spec, name)
    relation = declared_relation(privacy, name)
    weights = focal_weights(spec, data, schema) if MAMA_MIA in statistics else None
    runs = range(int(first_run), int(first_run) + int(n_runs))
    counts = {world: canary_counts(spec, data, schema, canary, world, runs, n_synthetic, name, relation)
              for world in WORLDS}
    return {statistic: audit_statistics(statistic_values(counts[WITHOUT], statistic, weights),
                                        statistic_values(counts[WITH], statistic, weights),
                                        privacy["epsilon"], privacy["delta"], confidence, neighbours=relation)
            for statistic in statistics}
