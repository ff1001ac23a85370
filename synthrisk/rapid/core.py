"""RAPID: share of real records whose sensitive attribute an attacker, trained on synthetic data
only, infers from their quasi-identifiers (Templ, Thees & Müller 2026, arXiv:2602.09235)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from ..data.encoding import numeric_values
from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..data.subgroups import attribute_risk
from ..errors import ConfigError, DataError
from ..stats.proportions import MEMBER_EXCESS_CI, MEMBER_EXCESS_TEST, member_excess_test
from ..stats.sampling import sample_positions
from .attackers import CALIBRATED, CALIBRATION_FOLDS, base_attacker, informative_features, make_attacker, model_frame
from .scores import CATEGORICAL_METHODS, CONTINUOUS_ERRORS, at_risk, categorical_scores, class_shares, continuous_errors
from .settings import DEFAULT_NULL_REFITS, RapidSettings

_SUBSAMPLE_STREAM = 0x52415044  # "RAPD": the size caps' draws, independent of the permutations

THRESHOLD_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
ALPHA = 0.05  # level of the permutation test that says whether an attacker beats chance


MIN_NULL_REFITS = 3


def _refit_p_value(observed: float, refits: np.ndarray) -> float | None:
    """One-sided p-value of `observed` against K refit-null draws: the draws are too few to rank
    against (p >= 1/(K + 1)), so the null is taken as normal with their mean and sd and
    `observed` treated as one more draw (Student t, K - 1 df: a prediction interval). When the
    draws do not vary (a pruned tree that keeps its root on permuted data) the refit null is a
    point: an attacker at or below it does not beat it (p = 1; a tree whose root predicts the
    majority class can score above the label-permutation floor without learning anything), and
    one above it is judged by the label test alone (None)."""
    k = len(refits)
    spread = float(refits.std(ddof=1)) * np.sqrt(1 + 1 / k) if k > 1 else 0.0
    if spread <= 0:
        return 1.0 if k and observed <= float(refits.mean()) + 1e-12 else None
    return float(student_t.sf((observed - refits.mean()) / spread, df=k - 1))


def _refit_null(observed: float, draw, max_refits: int) -> tuple[np.ndarray, float | None]:
    """Refit-null draws and p-value. Refits stop early, after at least MIN_NULL_REFITS, once the
    p-value is below ALPHA / 100 (far beyond any correction for a suite of attackers): an attacker
    far above its null gains nothing from more refits, and the refits are the cost."""
    draws = []
    for k in range(max_refits):
        draws.append(draw(k))
        if len(draws) >= MIN_NULL_REFITS:
            p = _refit_p_value(observed, np.array(draws))
            if p is not None and p < ALPHA / 100:
                break
    draws = np.array(draws)
    return draws, _refit_p_value(observed, draws)


def _categorical_scorer(model, attacker, sensitive, x_syn, y_syn, labels, shares, method):
    """The attacker fitted on (x_syn, y_syn), as `scorer(x) -> score(codes)`: the fitted model
    predicts the records `x` once, and `score` gives their scores for true class codes `codes`
    (indices into `labels`, whose shares b are `shares`)."""
    fitted = len(np.unique(y_syn)) >= 2
    if fitted:
        if attacker.endswith(CALIBRATED):
            # Cross-fitted calibration needs every class in every fold.
            rarest = pd.Series(y_syn).value_counts()
            if rarest.min() < 2:
                raise DataError(f"attacker {attacker!r}: class {rarest.idxmin()!r} of '{sensitive}' has "
                                f"{rarest.min()} synthetic record(s); calibration needs at least 2")
            model.named_steps["model"].cv = int(min(CALIBRATION_FOLDS, rarest.min()))
        model.fit(x_syn, y_syn)

    def scorer(x):
        n = len(x)
        if fitted:
            proba, classes = model.predict_proba(x), model.classes_
        else:
            # Nothing to learn: the attacker can only predict the one class it saw.
            classes, proba = np.unique(y_syn), np.ones((n, 1))
        lookup = {c: k for k, c in enumerate(classes)}
        # A class never seen in the synthetic data gets probability 0 from the attacker.
        column_of_label = np.array([lookup.get(label, -1) for label in labels])
        rows = np.arange(n)

        def score(codes: np.ndarray) -> np.ndarray:
            index = column_of_label[codes]
            g = np.where(index >= 0, proba[rows, np.maximum(index, 0)], 0.0)
            return categorical_scores(g, shares[codes], method, proba, index)

        return score

    return scorer


def _continuous_scorer(model, x_syn, y_syn, error, delta):
    """The attacker fitted on (x_syn, y_syn), as `scorer(x) -> score(values)`."""
    keep = ~np.isnan(y_syn)
    model.fit(x_syn[keep], y_syn[keep])

    def scorer(x):
        yhat = model.predict(x)

        def score(values: np.ndarray) -> np.ndarray:
            # A missing true value cannot be inferred to within a tolerance: infinite error.
            return np.where(np.isnan(values), np.inf, continuous_errors(values, yhat, error, delta))

        return score

    return scorer


@dataclass
class RapidResult:
    rapid: float
    n_records: int
    n_at_risk: int
    ci_low: float
    ci_high: float
    sensitive: str
    attacker: str
    kind: str                 # "categorical" or "continuous"
    method: str               # categorical method or continuous error
    threshold: float          # tau (categorical) or epsilon (continuous)
    p_value: float | None
    n_permutations: int
    rapid_null: float | None  # mean RAPID with labels permuted: the floor an attacker reaches by chance
    curve: pd.DataFrame       # columns: threshold, rapid
    records: pd.DataFrame     # row_id, score, at_risk (no raw values)
    attribution: pd.DataFrame = field(default_factory=pd.DataFrame)
    # share of synthetic values per categorical column whose level the real data do not have
    unknown_level_share: dict = field(default_factory=dict)
    p_value_labels: float | None = None   # label-permutation test (attacker's function fixed)
    p_value_refit: float | None = None    # refit null (sensitive column permuted in the synthetic data)
    n_null_refits: int = 0
    rapid_null_refit: float | None = None
    n_records_total: int | None = None      # real records given (n_records of them scored)
    n_train: int | None = None              # synthetic records the attacker learned from
    n_synthetic_total: int | None = None    # synthetic records given
    subsample_note: str | None = None       # what the size caps changed, for the report; None: nothing
    # The same fitted attacker on holdout records the generator never saw (None: no holdout given).
    # RAPID counts population-level inference (what the synthetic data teach about anyone from the
    # population) together with member-specific inference; the member excess is the latter.
    rapid_holdout: float | None = None
    n_holdout: int = 0                      # holdout records scored
    n_holdout_at_risk: int = 0
    n_holdout_total: int | None = None      # holdout records given
    member_excess: float | None = None      # rapid - rapid_holdout
    member_excess_ci_low: float | None = None
    member_excess_ci_high: float | None = None
    member_excess_p_value: float | None = None  # one-sided: members inferred more often than the holdout
    holdout_records: pd.DataFrame = field(default_factory=pd.DataFrame)  # row_id, score, at_risk

    @property
    def chance_floor(self) -> float | None:
        """What an attacker reaches without information: the label-permutation mean, or the
        refit-null mean when refits ran and it is higher."""
        floors = [f for f in (self.rapid_null, self.rapid_null_refit) if f is not None]
        return max(floors) if floors else None

    @property
    def null_test(self) -> str:
        if self.p_value is None:
            return "none"
        if self.n_null_refits == 0:
            return "labels"
        return "labels + refit" if self.p_value_refit is not None else "labels (refit null degenerate)"

    @property
    def beats_chance(self) -> bool | None:
        """Whether this attacker alone beats chance (permutation p <= 0.05); None without a test.
        Over a suite of attackers the summary corrects for multiplicity (rapid.summary)."""
        return None if self.p_value is None else bool(self.p_value <= ALPHA)

    @property
    def verdict(self) -> str:
        """RAPID against chance: inference from the quasi-identifiers, population-level and
        member-specific together (`member_verdict` separates the members' part)."""
        if self.p_value is None:
            return "not tested against chance"
        if self.beats_chance:
            return f"beats chance (p = {self.p_value:.3g})"
        return f"does not beat chance (p = {self.p_value:.3g}): RAPID is at its chance floor"

    @property
    def member_excess_significant(self) -> bool | None:
        """Whether members are inferred more often than holdout records (one-sided p <= 0.05; over
        a suite of attackers the summary corrects with Holm); None without a holdout."""
        return None if self.member_excess_p_value is None else bool(self.member_excess_p_value <= ALPHA)

    @property
    def member_verdict(self) -> str:
        if self.member_excess is None:
            return ("member excess not available: no holdout records, so RAPID (population-level and "
                    "member-specific inference together) is read against its chance floor")
        shown = (f"member excess {self.member_excess:.3f} [{self.member_excess_ci_low:.3f}, "
                 f"{self.member_excess_ci_high:.3f}], p = {self.member_excess_p_value:.3g}")
        if self.member_excess_significant:
            return f"members inferred more often than holdout records ({shown})"
        return (f"no member excess ({shown}): members are inferred no more often than holdout records the "
                "generator never saw; RAPID is population-level inference")

    def to_json(self) -> dict:
        """The JSON of docs/design.md (`rapid`, `n_records`, `n_at_risk`, `tau`, `attacker`, `sensitive`,
        `curve`) plus the interval, the test and the settings. For a continuous attribute `tau` is
        null, `epsilon` holds the tolerance and curve entries are {epsilon, rapid}."""
        name = "tau" if self.kind == "categorical" else "epsilon"
        return {
            "rapid": self.rapid, "n_records": self.n_records, "n_at_risk": self.n_at_risk,
            "tau": self.threshold if self.kind == "categorical" else None,
            "epsilon": self.threshold if self.kind == "continuous" else None,
            "attacker": self.attacker, "sensitive": self.sensitive, "kind": self.kind,
            "method": self.method, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "ci_method": "wilson", "p_value": self.p_value, "n_permutations": self.n_permutations,
            "rapid_null": self.rapid_null,
            "chance_floor": self.chance_floor,
            "rapid_excess": None if self.chance_floor is None else self.rapid - self.chance_floor,
            "null_test": self.null_test,
            "beats_chance": self.beats_chance, "verdict": self.verdict,
            "p_value_labels": self.p_value_labels, "p_value_refit": self.p_value_refit,
            "n_null_refits": self.n_null_refits, "rapid_null_refit": self.rapid_null_refit,
            "base_attacker": base_attacker(self.attacker), "calibrated": self.attacker.endswith(CALIBRATED),
            "curve": [{name: float(t), "rapid": float(r)}
                      for t, r in zip(self.curve["threshold"], self.curve["rapid"])],
            "unknown_level_share": dict(self.unknown_level_share),
            "n_records_total": self.n_records_total, "n_train": self.n_train,
            "n_synthetic_total": self.n_synthetic_total, "capped": self.subsample_note is not None,
            "subsample_note": self.subsample_note,
            "rapid_holdout": self.rapid_holdout, "n_holdout": self.n_holdout,
            "n_holdout_at_risk": self.n_holdout_at_risk, "n_holdout_total": self.n_holdout_total,
            "member_excess": self.member_excess, "member_excess_ci_low": self.member_excess_ci_low,
            "member_excess_ci_high": self.member_excess_ci_high,
            "member_excess_ci_method": None if self.member_excess is None else MEMBER_EXCESS_CI,
            "member_excess_p_value": self.member_excess_p_value,
            "member_excess_test": None if self.member_excess is None else MEMBER_EXCESS_TEST,
            "member_excess_significant": self.member_excess_significant, "member_verdict": self.member_verdict,
        }


def _check_inputs(real, synthetic, schema: DatasetSchema, sensitive: str):
    if sensitive not in schema.columns:
        raise ConfigError(f"sensitive attribute '{sensitive}' is not a column of schema {schema.origin}")
    if sensitive in schema.quasi_identifiers:
        raise ConfigError(f"'{sensitive}' is a quasi-identifier in {schema.origin}; the attacker already knows it")
    ids = row_ids(real)
    # Conformance names missing and unknown columns per file and drops the schema's `drop` columns
    # from whichever file has them.
    real = schema.conform(real.drop(columns=[ROW_ID], errors="ignore"), what="real data")
    synthetic = schema.conform(synthetic.drop(columns=[ROW_ID], errors="ignore"), what="synthetic data")
    if len(real) == 0 or len(synthetic) == 0:
        raise DataError(f"RAPID needs records: real has {len(real)}, synthetic {len(synthetic)}")
    unknown = schema.unknown_level_shares(real, synthetic)
    if not schema.is_categorical(sensitive):
        # A missing value is no value to infer (real) or to learn from (synthetic).
        if real[sensitive].isna().all():
            raise DataError(f"real data: continuous sensitive attribute '{sensitive}' is missing in all "
                            f"{len(real)} records: RAPID is undefined (there is no true value to infer); "
                            "attack another attribute or supply its values")
        if synthetic[sensitive].isna().all():
            raise DataError(f"synthetic data: continuous sensitive attribute '{sensitive}' is missing in all "
                            f"{len(synthetic)} records: the attacker has no value to learn from, so RAPID is "
                            "undefined; check the generator's output")
    return real, synthetic, ids, unknown


def _check_holdout(holdout: pd.DataFrame, schema: DatasetSchema, sensitive: str):
    """The holdout conformed to the schema, with its row ids; refused when it has no record or no
    value of a continuous sensitive attribute (nothing to compare the members with)."""
    ids = row_ids(holdout)
    holdout = schema.conform(holdout.drop(columns=[ROW_ID], errors="ignore"), what="holdout data")
    if len(holdout) == 0:
        raise DataError("holdout data: no records; pass holdout=None to run RAPID without the member excess")
    if not schema.is_categorical(sensitive) and holdout[sensitive].isna().all():
        raise DataError(f"holdout data: continuous sensitive attribute '{sensitive}' is missing in all "
                        f"{len(holdout)} records: the member excess is undefined (no true value to infer)")
    return holdout, ids


def _holdout_codes(y_holdout: np.ndarray, labels: np.ndarray, shares: np.ndarray, n_real: int):
    """(labels, shares, codes of the holdout records): the members' labels and shares b, extended by
    any class the holdout has and no member has. Such a class gets b = 0.5 / n_real (below the share
    of one member), so a holdout record is scored by the same function as a member."""
    known = set(labels)
    extra = np.array([c for c in pd.unique(y_holdout) if c not in known], dtype=labels.dtype)
    labels = np.concatenate([labels, extra]) if len(extra) else labels
    shares = np.concatenate([shares, np.full(len(extra), 0.5 / n_real)]) if len(extra) else shares
    position = {c: k for k, c in enumerate(labels)}
    return labels, shares, np.array([position[c] for c in y_holdout], dtype=int)


def rapid(
    real: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame | None = None, *, schema: DatasetSchema,
    sensitive: str, attacker: str = "rf", tau: float = RapidSettings.tau, epsilon: float = RapidSettings.epsilon,
    method: str = RapidSettings.method, error: str = RapidSettings.error, delta: float = 0.01,
    n_permutations: int = RapidSettings.permutations, n_trees: int = RapidSettings.n_trees,
    seed: int = 0, n_jobs: int = 1, attribution: bool = True, null_refits: int = DEFAULT_NULL_REFITS,
    max_train: int | None = RapidSettings.max_train, max_records: int | None = RapidSettings.max_records,
) -> RapidResult:
    """RAPID of `synthetic` for `sensitive`, attacking the `real` records (pass the members).

    Against chance: `n_permutations` label permutations give the chance floor and a first
    p-value; an attacker that passes it is refitted `null_refits` times on the synthetic data with
    the sensitive column permuted, and the reported `p_value` is the larger of the two tests'
    (0 refits: the label test alone, which is too lenient when the quasi-identifiers predict the
    sensitive attribute in the real data).

    `real` may carry a `row_id` column (the split files do); it is copied into the per-record
    table so that records can be traced without copying any of their values.

    Size caps (None: none): with more than `max_train` synthetic records the attacker (and every
    refit) learns from `max_train` of them drawn at random; with more than `max_records` real
    records that many drawn at random are scored, so RAPID, its interval and its tests are those of
    the sample (an unbiased estimate of the share over all records; each record's b_i still comes
    from all of them). The draws are seeded and separate from the tests' permutations, so below the
    caps nothing changes. `subsample_note` says what was capped.

    `holdout` (optional): records of the members' population that the generator never saw. The
    attacker fitted for RAPID (no refit) scores them by the same rule (b_i: the members' class
    shares), giving `rapid_holdout`, the population-level inference, and `member_excess` =
    rapid - rapid_holdout, what the attacker infers about members beyond what it infers about anyone
    of the population, with Newcombe's interval and an exact one-sided permutation p-value
    (`member_excess_test`). Both rates use all the records scored on their side (at most
    `max_records` each): a share at risk does not depend on how many records it is taken over, so
    equal sizes are not needed, and subsampling the larger side would only widen the interval.
    Without a holdout these are None.
    """
    if not 0.0 <= tau <= 1.0:
        raise ConfigError(f"tau must be in [0, 1], got {tau}")
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ConfigError(f"epsilon must be > 0 and finite, got {epsilon}")
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations or n_permutations < 0:
        raise ConfigError(f"permutations must be an integer >= 0, got {n_permutations}")
    if isinstance(n_trees, bool) or int(n_trees) != n_trees or n_trees < 1:
        raise ConfigError(f"n_trees must be an integer >= 1, got {n_trees}")
    if isinstance(null_refits, bool) or int(null_refits) != null_refits or null_refits < 0:
        raise ConfigError(f"null_refits must be an integer >= 0, got {null_refits}")
    for name, cap in (("max_train", max_train), ("max_records", max_records)):
        if cap is not None and (isinstance(cap, bool) or int(cap) != cap or cap < 2):
            raise ConfigError(f"{name} must be an integer >= 2 or null (no cap), got {cap}")
    real, synthetic, record_ids, unknown = _check_inputs(real, synthetic, schema, sensitive)
    if holdout is not None:
        holdout, holdout_ids = _check_holdout(holdout, schema, sensitive)
    all_real, n_real_total, n_synthetic_total = real, len(real), len(synthetic)
    picker = np.random.default_rng([seed, _SUBSAMPLE_STREAM])
    notes, real_pos = [], None
    if max_train is not None and len(synthetic) > max_train:
        synthetic = synthetic.iloc[sample_positions(picker, len(synthetic), max_train)]
        notes.append(f"the attacker learned from {len(synthetic):,} of the {n_synthetic_total:,} synthetic records "
                     "(drawn at random, seeded; rapid.max_train): an attacker using the whole release may infer "
                     "more, e.g. from records it copies, and the interval does not include that")
    if max_records is not None and len(real) > max_records:
        real_pos = sample_positions(picker, len(real), max_records)
        real, record_ids = real.iloc[real_pos], record_ids[real_pos]
        notes.append(f"RAPID is the share at risk among {len(real):,} of the {n_real_total:,} real records, drawn at "
                     "random (seeded; rapid.max_records); its interval and tests are that sample's")
    n_holdout_total = None if holdout is None else len(holdout)
    if holdout is not None and max_records is not None and len(holdout) > max_records:
        # drawn after the members' and the synthetic records' draws, which stay as without a holdout
        holdout_pos = sample_positions(picker, len(holdout), max_records)
        holdout, holdout_ids = holdout.iloc[holdout_pos], holdout_ids[holdout_pos]
        notes.append(f"the member excess compares them with {len(holdout):,} of the {n_holdout_total:,} holdout "
                     "records, drawn at random (seeded; rapid.max_records)")
    categorical = schema.is_categorical(sensitive)
    if categorical and method not in CATEGORICAL_METHODS:
        raise ConfigError(f"method {method!r} unknown; choose one of {list(CATEGORICAL_METHODS)}")
    if not categorical and error not in CONTINUOUS_ERRORS:
        raise ConfigError(f"error {error!r} unknown; choose one of {list(CONTINUOUS_ERRORS)}")
    # A numeric quasi-identifier with no value in the synthetic records the attacker learns from
    # (for a continuous target: those with a value of it) teaches it nothing: left out.
    learning = synthetic if categorical else synthetic[synthetic[sensitive].notna()]
    features = informative_features(learning, schema, list(schema.quasi_identifiers))
    x_syn, x_real = model_frame(synthetic, schema, features), model_frame(real, schema, features)
    rng = np.random.default_rng(seed)

    def fitted_attacker(y_syn: np.ndarray, model_seed: int):
        """scorer(x) -> score(truth) of the attacker fitted on the synthetic quasi-identifiers and `y_syn`."""
        model = make_attacker(attacker, schema, features, categorical, seed=model_seed, n_trees=n_trees,
                              n_jobs=n_jobs)
        if categorical:
            return _categorical_scorer(model, attacker, sensitive, x_syn, y_syn, labels, shares, method)
        return _continuous_scorer(model, x_syn, y_syn, error, delta)

    if categorical:
        y_syn = model_frame(synthetic, schema, [sensitive])[sensitive].to_numpy()
        # b_i: the true class's share among all real records, scored or not
        y_real = model_frame(all_real, schema, [sensitive])[sensitive].to_numpy()
        labels, truth, shares = class_shares(y_real, sensitive)
        truth = truth if real_pos is None else truth[real_pos]
        if holdout is not None:
            labels, shares, truth_holdout = _holdout_codes(
                model_frame(holdout, schema, [sensitive])[sensitive].to_numpy(), labels, shares, n_real_total)
        threshold, method_name = tau, method
    else:
        y_syn = numeric_values(synthetic[[sensitive]])[:, 0]
        truth = numeric_values(real[[sensitive]])[:, 0]
        if holdout is not None:
            truth_holdout = numeric_values(holdout[[sensitive]])[:, 0]
        threshold, method_name = epsilon, error
    fitted = fitted_attacker(y_syn, seed)
    score = fitted(x_real)

    scores = score(truth)
    flags = at_risk(scores, threshold, categorical)
    n_at_risk = int(flags.sum())
    low, high = proportion_confint(n_at_risk, len(flags), alpha=0.05, method="wilson")
    # Wilson's bounds at 0 or n are the point estimate up to rounding (1 - 1e-16): keep it inside.
    low, high = min(low, n_at_risk / len(flags)), max(high, n_at_risk / len(flags))
    curve = pd.DataFrame({
        "threshold": THRESHOLD_GRID,
        "rapid": [float(at_risk(scores, t, categorical).mean()) for t in THRESHOLD_GRID],
    })
    observed = float(flags.mean())
    p_value = p_labels = p_refit = rapid_null = refit_null = None
    n_refits = 0
    if n_permutations:
        # Labels permuted with predictions fixed: the null of no link between what the attacker
        # predicts for a record and that record's own value. Its mean is the chance floor: an
        # over-confident attacker puts some records above tau by chance alone, and RAPID -
        # rapid_null is the part that is not chance.
        null = np.array([at_risk(score(rng.permutation(truth)), threshold, categorical).mean()
                         for _ in range(n_permutations)])
        p_labels = p_value = float((1 + (null >= observed).sum()) / (1 + n_permutations))
        rapid_null = float(null.mean())
        if null_refits and p_labels <= ALPHA:
            # That test holds the attacker's function fixed. When the quasi-identifiers predict
            # the sensitive attribute in the real data, a function learned from synthetic data
            # that carry no information still lines up with the truth by luck, for all records at
            # once: the label null is then too narrow (seen on `independent` simulation data,
            # p = 0.001). The refit null asks whether the synthetic data carry information: the
            # same attacker refitted on synthetic data whose sensitive column is permuted. Its
            # mean is then the chance floor too (the label floor can be biased when the model's
            # confidence varies with the quasi-identifiers), whichever is higher.
            refits, p_refit = _refit_null(observed, lambda k: at_risk(
                fitted_attacker(rng.permutation(y_syn), seed + 1 + k)(x_real)(truth), threshold, categorical).mean(),
                max(int(null_refits), MIN_NULL_REFITS))
            refit_null, n_refits = float(refits.mean()), len(refits)
            p_value = p_labels if p_refit is None else max(p_labels, p_refit)
    records = pd.DataFrame({ROW_ID: record_ids, "score": scores, "at_risk": flags})
    result = RapidResult(
        rapid=float(flags.mean()), n_records=len(flags), n_at_risk=n_at_risk,
        ci_low=float(low), ci_high=float(high), sensitive=sensitive, attacker=attacker,
        kind="categorical" if categorical else "continuous", method=method_name,
        threshold=float(threshold), p_value=p_value, n_permutations=n_permutations, rapid_null=rapid_null,
        curve=curve, records=records, p_value_labels=p_labels, p_value_refit=p_refit,
        n_null_refits=n_refits, rapid_null_refit=refit_null, unknown_level_share=unknown,
        n_records_total=n_real_total, n_train=len(synthetic), n_synthetic_total=n_synthetic_total,
        subsample_note="; ".join(notes) if notes else None,
    )
    if holdout is not None:
        # The same fitted attacker (no refit) on records the generator never saw.
        holdout_scores = fitted(model_frame(holdout, schema, features))(truth_holdout)
        holdout_flags = at_risk(holdout_scores, threshold, categorical)
        n_holdout_at_risk = int(holdout_flags.sum())
        result.rapid_holdout, result.n_holdout = float(holdout_flags.mean()), len(holdout_flags)
        result.n_holdout_at_risk, result.n_holdout_total = n_holdout_at_risk, n_holdout_total
        for name, value in member_excess_test(n_at_risk, len(flags), n_holdout_at_risk, len(holdout_flags)).items():
            setattr(result, name, value)
        result.holdout_records = pd.DataFrame({ROW_ID: holdout_ids, "score": holdout_scores, "at_risk": holdout_flags})
    if attribution:
        result.attribution = attribute_risk(real, flags, schema)
    return result
