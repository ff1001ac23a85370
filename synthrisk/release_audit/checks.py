"""What the audit checks about the records themselves before any measure runs, on the conformed
files (after one canonical typing, so that a blank cell cannot make 1 and 1.0 two levels).

A membership verdict compares the release's closeness to the members with its closeness to the
holdout; it means something only when the holdout holds *other* people *of the same population*.
So:
- holdout records that also occur, value for value, in the training file are counted against
  random splits of the pooled records into files of the same sizes (what two draws of one population
  share); an excess is refused: a holdout that half-overlaps the members shrinks every risk silently;
- copies of one record inside the holdout are counted the same way (400 copies of one non-member
  are one piece of evidence, not 400);
- a classifier told to separate members from holdout records (no synthetic data involved) tests
  that both come from one population; when it can, every verdict read against the holdout (membership, the
  control-set attacks, RAPID's member excess) is marked unreliable.
Files too small for any verdict are refused; small ones are noted."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import DataError

#: fewer records than this in any file: no measure can say anything, the audit refuses
MIN_RECORDS = 20
#: fewer than this: the audit runs, and the page says the intervals are wide
FEW_RECORDS = 200
#: an excess of repeated records is refused when its permutation p-value is at most this (every one of
#: PERMUTATIONS random splits of the pooled records repeats less) and the excess share is above
#: MATERIAL_EXCESS (natural repeats of common records are not an error)
PERMUTATIONS = 999
REPEAT_P = 1.0 / (PERMUTATIONS + 1)
MATERIAL_EXCESS = 0.01
#: level of the same-population test, and the largest sample per file its classifier sees
SAME_POPULATION_LEVEL = 1e-3
SAME_POPULATION_MAX = 50_000


class RecordCheckError(DataError):
    """The holdout overlaps the training records, or repeats its own, more than random splits of
    the pooled records do: the audit refuses the files (a random split is refused at p <= 0.001)."""


@dataclass(frozen=True)
class Repeats:
    """`count` of `n` records that repeat a record of `against`, and the share expected by chance."""

    count: int
    n: int
    expected_share: float
    p_value: float

    @property
    def share(self) -> float:
        return self.count / self.n if self.n else 0.0

    @property
    def excessive(self) -> bool:
        return self.p_value <= REPEAT_P and self.share - self.expected_share > MATERIAL_EXCESS


def record_keys(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """One 64-bit hash per record over `columns` (missing values hash alike)."""
    return pd.util.hash_pandas_object(frame[columns].astype(object), index=False).to_numpy()


def _permutation_repeats(train_keys: np.ndarray, holdout_keys: np.ndarray, statistics: dict, seed: int) -> dict:
    """Each `statistic(train_codes, holdout_codes, n_codes)` of `statistics` on the files as given,
    against its distribution when the pooled records are split at random into files of the same
    sizes (one set of PERMUTATIONS splits serves every statistic): {name: Repeats}.

    Records of a population repeat in clumps (one common record type occurs many times), so a
    binomial count over records would call natural variation an excess; exchanging the records
    between the two files is the null "both files are draws of one population", exactly."""
    codes, _ = pd.factorize(np.concatenate([train_keys, holdout_keys]))
    n_codes, n_train, n = int(codes.max()) + 1, len(train_keys), len(holdout_keys)
    observed = {name: statistic(codes[:n_train], codes[n_train:], n_codes) for name, statistic in statistics.items()}
    rng = np.random.default_rng([seed, 0x52455054])  # "REPT"
    null = {name: np.empty(PERMUTATIONS) for name in statistics}
    for b in range(PERMUTATIONS):
        shuffled = rng.permutation(codes)
        for name, statistic in statistics.items():
            null[name][b] = statistic(shuffled[:n_train], shuffled[n_train:], n_codes)
    expected = _expected_from_train(codes[:n_train], n, n_codes, rng)
    return {name: Repeats(count=int(observed[name]), n=n, expected_share=expected[name],
                          p_value=float((1 + np.sum(null[name] >= observed[name])) / (PERMUTATIONS + 1)))
            for name in statistics}


#: random subsets of the training records that estimate the repeat share expected in a holdout
EXPECTED_DRAWS = 20


def _expected_from_train(train: np.ndarray, n_holdout: int, n_codes: int, rng) -> dict:
    """The shares expected for a clean holdout, from the training records alone, so that a holdout
    contaminated with training records (or with copies of its own) does not inflate its own
    yardstick: `in_first`, the share of training records that occur again among the other training
    records (each one is a draw of the population checked against the rest); `repeated`, the share
    of records repeating another in random subsets of the training records of the holdout's size
    (all of them when the holdout is larger)."""
    counts = np.bincount(train, minlength=n_codes)
    in_first = float((counts[train] > 1).mean()) if len(train) else 0.0
    size = min(n_holdout, len(train))
    shares = [_repeated(None, rng.choice(train, size=size, replace=False), n_codes) / size
              for _ in range(EXPECTED_DRAWS)] if size else [0.0]
    return {"in_first": in_first, "repeated": float(np.mean(shares))}


def _in_train(train, holdout, n_codes) -> int:
    """Records of the second file that occur in the first."""
    return int((np.bincount(train, minlength=n_codes) > 0)[holdout].sum())


def _repeated(train, holdout, n_codes) -> int:
    """Records of the second file that repeat another of the same file."""
    return int((np.bincount(holdout, minlength=n_codes)[holdout] > 1).sum())


def overlaps(first: pd.DataFrame, second: pd.DataFrame, columns: list[str], seed: int = 0) -> dict:
    """Of `second`'s records: those found value for value in `first` (`in_first`) and those that repeat
    another record of `second` (`repeated`), each tested against random splits of the pooled records,
    with the share expected for a clean file estimated from `first` alone."""
    return _permutation_repeats(record_keys(first, columns), record_keys(second, columns),
                                {"in_first": _in_train, "repeated": _repeated}, seed)


def check_sizes(counts: dict[str, tuple[str, int]]) -> list[str]:
    """Refuse a file with fewer than MIN_RECORDS records; notes for those under FEW_RECORDS.
    `counts`: {role: (path, records)}."""
    notes = []
    for role, (path, n) in counts.items():
        if n < MIN_RECORDS:
            raise DataError(f"{path}: has {n} record(s); the audit needs at least {MIN_RECORDS} in the {role} file "
                            "(with fewer, no attack or interval says anything about the release)")
        if n < FEW_RECORDS:
            notes.append(f"the {role} file ({path}) has only {n} records: intervals are wide and an audit this small "
                         "detects only large leaks")
    return notes


def check_blank_columns(real: pd.DataFrame, synthetic: pd.DataFrame, columns: list[str], path: str) -> None:
    """A synthetic column that is blank in every row while the real one is not: the release carries
    nothing for it, and every measure would silently leave it out."""
    for column in columns:
        if synthetic[column].isna().all() and real[column].notna().any():
            raise DataError(f"{path}: column '{column}' is blank in every row while the real records have values; "
                            "the release carries nothing for it: regenerate it, or list the column under the "
                            "schema's 'drop'")


def same_population(members: pd.DataFrame, holdout: pd.DataFrame, schema: DatasetSchema, seed: int) -> dict:
    """Can a classifier tell members from holdout records? Gradient boosting fitted on one half of each
    file, AUC on the other half, with the one-sided Mann-Whitney p-value (exact under the null that both
    files come from one population: the evaluation half is independent of the fit)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    columns = list(schema.columns)

    def take(frame):
        index = rng.permutation(len(frame))[:SAME_POPULATION_MAX]
        return frame.iloc[np.sort(index)][columns]

    a, b = take(members), take(holdout)
    pooled = pd.concat([a, b], ignore_index=True)
    features = pd.DataFrame(index=pooled.index)
    for column in columns:
        if schema.is_categorical(column):
            codes = pooled[column].astype("category").cat.codes.astype(float)
            features[column] = codes.where(codes >= 0, np.nan)
        else:
            features[column] = pooled[column].astype(float)
    labels = np.r_[np.ones(len(a)), np.zeros(len(b))]
    half = np.zeros(len(pooled), dtype=bool)
    for label in (0, 1):
        where = np.flatnonzero(labels == label)
        half[rng.choice(where, size=len(where) // 2, replace=False)] = True
    categorical = [schema.is_categorical(c) and pooled[c].nunique() <= 255 for c in columns]
    model = HistGradientBoostingClassifier(max_iter=100, categorical_features=np.array(categorical),
                                           random_state=seed)
    model.fit(features[half], labels[half])
    scores = model.predict_proba(features[~half])[:, 1]
    held = labels[~half]
    if held.min() == held.max():
        return {"auc": None, "p_value": None, "level": SAME_POPULATION_LEVEL, "differs": False, "n_evaluated": 0}
    auc = float(roc_auc_score(held, scores))
    p = float(stats.mannwhitneyu(scores[held == 1], scores[held == 0], alternative="greater").pvalue)
    return {"auc": auc, "p_value": p, "level": SAME_POPULATION_LEVEL, "differs": p < SAME_POPULATION_LEVEL,
            "n_evaluated": int(len(held))}


#: a level held by at least this share of one file's records and never by the other's is named as
#: a difference of formatting (a spelling, a code) when the two files can be told apart
FORMATTING_SHARE = 0.02


def formatting_differences(members: pd.DataFrame, holdout: pd.DataFrame, schema: DatasetSchema,
                           paths: dict) -> list[str]:
    """How the two real files write columns differently, after the typing pass: levels that one file
    holds in at least FORMATTING_SHARE of its records and the other never, and numeric columns that
    one file writes in whole numbers and the other with fractions, or at another scale (the medians
    a factor of 10 or more apart). One sentence per column; empty when none is found."""
    hints = []
    files = {paths["train"]: members, paths["holdout"]: holdout}
    for column in schema.columns:
        if schema.is_categorical(column):
            for (name, frame), (_, other) in ((a, b) for a in files.items() for b in files.items() if a[0] != b[0]):
                values = frame[column].dropna()
                alone = values[~values.isin(set(other[column].dropna()))]
                if len(values) and len(alone) / len(values) >= FORMATTING_SHARE:
                    shown = [str(v) for v in alone.value_counts().index[:3]]
                    hints.append(f"column '{column}': {len(alone) / len(values):.0%} of {name} hold level(s) {shown} "
                                 "the other file never has")
            continue
        first, second = (frame[column].dropna().astype(float) for frame in files.values())
        if not len(first) or not len(second):
            continue
        fractions = [float((v != np.round(v)).mean()) for v in (first, second)]
        if min(fractions) == 0 and max(fractions) >= 0.5:
            hints.append(f"column '{column}': one file holds whole numbers only, the other mostly fractions (rounded "
                         "in one of them?)")
        medians = sorted(abs(float(v.median())) for v in (first, second))
        if medians[0] > 0 and medians[1] / medians[0] >= 10:
            hints.append(f"column '{column}': the medians are {medians[1] / medians[0]:.0f} times apart (other "
                         "units?)")
    return hints


def record_checks(members: pd.DataFrame, holdout: pd.DataFrame, schema: DatasetSchema, paths: dict,
                  seed: int) -> tuple[dict, list[str]]:
    """The holdout's overlap with the training records, its own repeats and the same-population test:
    (the figures for the page, notes); an excessive overlap or repeat is refused, naming the files."""
    columns = [c for c in schema.columns if c != ROW_ID]
    found = overlaps(members, holdout, columns, seed)
    overlap, repeats = found["in_first"], found["repeated"]
    train, held = paths["train"], paths["holdout"]
    if overlap.excessive:
        raise RecordCheckError(
            f"{held}: {overlap.count} of {overlap.n} holdout records ({overlap.share:.1%}) also occur, value for value, "
            f"in {train}, against {overlap.expected_share:.1%} expected for a draw of the same population (the share of "
            f"training records that occur again among the other training records; permutation p = "
            f"{overlap.p_value:.2g}); the holdout must hold people the generator never saw: remove the training "
            "records from it")
    if repeats.excessive:
        raise RecordCheckError(
            f"{held}: {repeats.count} of {repeats.n} holdout records ({repeats.share:.1%}) are copies of another holdout "
            f"record, against {repeats.expected_share:.1%} in as many training records (permutation p = "
            f"{repeats.p_value:.2g}); copies of one person would count as independent evidence: remove the repeated "
            "records")
    population = same_population(members, holdout, schema, seed)
    notes = []
    if overlap.count:
        notes.append(f"{overlap.count} of {overlap.n} holdout records also occur value for value in the training file "
                     f"({overlap.share:.1%}; {overlap.expected_share:.1%} expected by chance)")
    if population["differs"]:
        hints = formatting_differences(members, holdout, schema, paths)
        population["formatting"] = hints
        found_by = (f"a classifier tells training from holdout records (AUC {population['auc']:.3f}, p = "
                    f"{population['p_value']:.2g} < {SAME_POPULATION_LEVEL:g})")
        if hints:
            notes.append(f"{found_by}, and the two files write some columns differently: {'; '.join(hints)}. Write "
                         "both files alike (the same codes, units and rounding) and rerun; until then every verdict "
                         "read against the holdout is unreliable")
        else:
            notes.append(f"{found_by}: they do not look like draws of one population, so every membership verdict "
                         "below is unreliable")
    figures = {"holdout_in_train": overlap.count, "holdout_in_train_share": overlap.share,
               "holdout_in_train_expected": overlap.expected_share, "holdout_repeats": repeats.count,
               "holdout_repeats_expected": repeats.expected_share, "same_population": population}
    return figures, notes


def aux_checks(members: pd.DataFrame, holdout: pd.DataFrame, aux: pd.DataFrame, schema: DatasetSchema,
               paths: dict) -> dict:
    """The auxiliary records must be other people than the members and the holdout: an excess of
    records shared with either is refused (the same rule as the holdout's)."""
    columns = [c for c in schema.columns if c != ROW_ID]
    found = {}
    for role, frame in (("train", members), ("holdout", holdout)):
        overlap = overlaps(frame, aux, columns)["in_first"]
        if overlap.excessive:
            raise DataError(
                f"{paths['aux']}: {overlap.count} of {overlap.n} auxiliary records ({overlap.share:.1%}) also occur, "
                f"value for value, in {paths[role]}, against {overlap.expected_share:.1%} expected for a draw of the same "
                f"population (permutation p = {overlap.p_value:.2g}); the "
                "auxiliary records must be people outside both the training and the holdout file")
        found[f"aux_in_{role}"] = overlap.count
    return found
