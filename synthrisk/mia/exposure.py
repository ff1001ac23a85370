"""Per-person membership evidence: which training records does the release give away?

Every real record (members, holdout and auxiliary records pooled) gets a label-free exposure score,
how much closer the release comes to it than the other real records do:

    score(x) = log((d_real(x) + eps) / (d_release(x) + eps)),

with d_release the Gower distance to the nearest synthetic record and d_real the distance to the
nearest *other* real record. A copied rare record scores high (the release holds it, nobody else
in the population is near it); a common record with a twin in the population does not, although
its distance to the release is 0 too (a bare distance of 0 would tie every such record with the
copies). `eps` (EPSILON_SHARE of one column's mismatch) keeps exact matches finite.

Each member gets a conformal p-value of its score against the holdout records' scores: p = (1 +
#{holdout scores >= its score}) / (n + 1) (Bates, Candès, Lei, Romano & Sesia 2023, *Testing for
outliers with conformal p-values*). The score is a symmetric function of the pooled real records
and never reads who is a member, so under the null (a release that never saw the members: members
and holdout records exchangeable given the release) the p-values are valid and positively
dependent (PRDS), and Benjamini-Hochberg at level q names members with a false-discovery rate of
at most q, and names anyone with probability at most q. The auxiliary records enter the reference
(d_real) only, not the calibration: nothing checks that they are exchangeable with the members, and
calibrating on another population would make the members' p-values too small.

The null BH tests is "no membership signal", not "an effect below the policy threshold": a member
named is evidence that the release gives that person away, however small the average effect.

Resolution: the smallest conformal p-value is 1/(n + 1), so BH at q over m members names either
nobody or at least ceil(m / (q (n + 1))) members (`min_named`): a handful of copied records among
many members is seen by the average (the AUC beside it), not named by BH. When they are rare
records, the rare-copies count test (`synthrisk.mia.rare_copies`, `rare_level`) names them: it reads
the same distances (each record's isolation and its distance to the release), counts exact copies
among the most isolated records, members against holdout, and names the matched rare members when
it rejects. Anyone is then named in a release that never saw the members with probability at most
`fdr` + `rare_level`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import DataError
from ..stats.multiple_testing import benjamini_hochberg
from .gower import GowerSpace, k_nearest, nearest_others
from .metrics import auc_against_chance, tpr_at_fpr
from .rare_copies import RareCopies, count_test

#: the exposure score's floor on distances, as a share of one column's mismatch in Gower distance
EPSILON_SHARE = 0.01
SCORE_RULE = "log((distance to the nearest other real record + eps) / (distance to the nearest synthetic record + eps))"


@dataclass(frozen=True)
class ExposureResult:
    """The exposure attack on one release: the score read against the holdout (`judgement`: the AUC
    with its one-sided Mann-Whitney p-value and Hanley-McNeil interval, the members BH names at
    `fdr`), and the members the rare-copies test names beside them."""

    judgement: Judgement = field(repr=False)
    fdr: float
    #: row_id, member (1/0), score, p_value (members; NaN for calibration records), identified, and with
    #: the rare-copies test rare_copy_p (its p-value on the matched rare records) and rare_named
    records: pd.DataFrame = field(repr=False)
    #: the rare-copies test and the level it names at (None: not run)
    rare_level: float | None = None
    rare: RareCopies | None = field(default=None, repr=False)

    @property
    def auc(self) -> float:
        return self.judgement.auc

    @property
    def min_named(self) -> int:
        """BH names nobody or at least this many members: ceil(m / (q (n + 1)))."""
        return self.judgement.min_named

    @property
    def n_named_conformal(self) -> int:
        """The members Benjamini-Hochberg names (the rest of `n_identified` the rare-copies test names)."""
        return int(self.judgement.named.sum())

    @property
    def n_identified(self) -> int:
        return int(self.records["identified"].sum())

    def to_json(self) -> dict:
        """The keys every attack read through `judge_scores` shares, the members named by either test,
        and the score's rule and the rare-copies test."""
        return {**self.judgement.to_json(self.fdr), "n_identified": self.n_identified,
                "score_rule": SCORE_RULE, "epsilon_share": EPSILON_SHARE,
                "calibration": "the holdout records (the records the generator never saw)",
                "n_named_conformal": self.n_named_conformal, "rare_level": self.rare_level,
                "rare_copies": self.rare.to_json() if self.rare is not None else None}


def exposure_scores(real: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema) -> np.ndarray:
    """The exposure score of every record of `real` (conformed, without row ids) against `synthetic`."""
    return Distances.of(real, synthetic, schema).scores()


@dataclass(frozen=True)
class Distances:
    """Each real record's Gower distance to the nearest other real record (`isolation`) and to the
    nearest synthetic record (`to_release`): the exposure score's two parts, and the rare-copies
    test's."""

    isolation: np.ndarray
    to_release: np.ndarray
    eps: float

    @classmethod
    def of(cls, real: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema) -> Distances:
        columns = list(schema.columns)
        space = GowerSpace.fit(real[columns], schema)
        to_release, _ = k_nearest(real[columns], synthetic[columns], space, 1)
        return cls(nearest_others(real[columns], space)[:, 0], to_release[:, 0], EPSILON_SHARE / space.n_columns)

    def scores(self) -> np.ndarray:
        return np.log((self.isolation + self.eps) / (self.to_release + self.eps))


def conformal_p_values(scores: np.ndarray, calibration: np.ndarray) -> np.ndarray:
    """(1 + #{calibration >= score}) / (n + 1) for each score: a valid p-value of "this record is
    exchangeable with the calibration records", higher scores more suspicious."""
    ordered = np.sort(np.asarray(calibration, dtype=float))
    at_least = len(ordered) - np.searchsorted(ordered, np.asarray(scores, dtype=float), side="left")
    return (1.0 + at_least) / (len(ordered) + 1.0)


@dataclass(frozen=True)
class Judgement:
    """Members' scores read against the holdout's: the AUC with its one-sided Mann-Whitney p-value
    and Hanley-McNeil interval, each member's conformal p-value, whom Benjamini-Hochberg names at
    the false-discovery rate, and the fewest it names when it names anyone."""

    auc: float
    p_value: float
    ci_low: float
    ci_high: float
    member_p_values: np.ndarray
    named: np.ndarray
    min_named: int
    #: the holdout records the members were read against
    n_calibration: int
    #: the score's TPR at each low FPR (`synthrisk.mia.metrics.LOW_FPRS`) the holdout resolves
    tpr_at_fpr: dict[str, float]

    def to_json(self, fdr: float) -> dict:
        """The summary keys every attack read this way shares (its measure adds its own)."""
        return {"auc": self.auc, "auc_p_value": self.p_value, "auc_ci_low": self.ci_low, "auc_ci_high": self.ci_high,
                "n_members": len(self.named), "n_calibration": self.n_calibration, "fdr": fdr,
                "n_identified": int(self.named.sum()), "min_named": self.min_named, "tpr_at_fpr": self.tpr_at_fpr}


def judge_scores(member_scores, holdout_scores, fdr: float) -> Judgement:
    """The per-person evidence of a label-blind score (higher: more like a member): exact when the
    scores of members and holdout records are exchangeable, as in a release that never saw the
    members (module doc)."""
    from sklearn.metrics import roc_auc_score

    members, holdout = np.asarray(member_scores, dtype=float), np.asarray(holdout_scores, dtype=float)
    m, n = len(members), len(holdout)
    p_values = conformal_p_values(members, holdout)
    named = benjamini_hochberg(p_values, fdr)
    auc = float(roc_auc_score(np.r_[np.ones(m), np.zeros(n)], np.r_[members, holdout]))
    test = auc_against_chance(auc, m, n)
    return Judgement(auc, test["p_value"], test["ci_low"], test["ci_high"], p_values, named,
                     int(np.ceil(m / (fdr * (n + 1)))), n, tpr_at_fpr(members, holdout))


def _typed(frame: pd.DataFrame, schema: DatasetSchema, what: str) -> pd.DataFrame:
    return schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=what)


def exposure(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
             aux: pd.DataFrame | None = None, fdr: float = 0.045,
             rare_level: float | None = 0.0025) -> ExposureResult:
    """Score every member and holdout record (the auxiliary records, when given, join the real records
    each score is measured against), give each member its conformal p-value against the holdout's
    scores, and name the members Benjamini-Hochberg rejects at false-discovery rate `fdr`; with
    `rare_level`, also the matched members of the rare-copies count test when it rejects at that level
    (`synthrisk.mia.rare_copies`). Defaults: the default policy's
    (`synthrisk.measures.policy.Policy.naming_fdr` and `rare_copies_level`)."""
    if not 0 < fdr < 1:
        raise DataError(f"exposure: fdr must be in (0, 1), got {fdr!r}")
    if rare_level is not None and not 0 < rare_level < 1:
        raise DataError(f"exposure: rare_level must be in (0, 1), got {rare_level!r}")
    if holdout is None or not len(holdout):
        raise DataError("exposure: needs holdout records (records the generator never saw) to calibrate against")
    reference = [aux] if aux is not None and len(aux) else []
    real = pd.concat([_typed(members, schema, "members"), _typed(holdout, schema, "holdout")]
                     + [_typed(a, schema, "auxiliary records") for a in reference], ignore_index=True)
    distances = Distances.of(real, _typed(synthetic, schema, "synthetic"), schema)
    scores = distances.scores()
    m, n = len(members), len(holdout)
    judged = judge_scores(scores[:m], scores[m:m + n], fdr)
    ids = np.concatenate([row_ids(members), row_ids(holdout)])
    records = member_records(ids[:m], ids[m:], scores[:m + n], judged)
    rare = None
    if rare_level is not None:
        # The isolation counts the auxiliary records too: still blind to who is a member, so exact.
        rare = count_test(distances.isolation[:m + n], distances.to_release[:m + n], m, ids)
        records = with_rare_copies(records, rare, rare_level)
    return ExposureResult(judged, fdr, records, rare_level, rare)


def with_rare_copies(records: pd.DataFrame, rare: RareCopies, level: float) -> pd.DataFrame:
    """`records` (members then holdout, in the pooled order the test read) with `rare_copy_p` (the
    count test's p-value on the rare records with an exact copy in the release, NaN elsewhere) and
    `rare_named` (the matched rare members the test names when it rejects at `level`, and
    Benjamini-Hochberg does not), who join the `identified`. Marked by position, not by row id: a
    member and a holdout record may carry the same id."""
    is_matched = np.zeros(len(records), dtype=bool)
    is_matched[rare.records.loc[rare.records["matched"], "position"].to_numpy(int)] = True
    before = records["identified"].to_numpy(bool)
    rare_named = is_matched & (records["member"].to_numpy() == 1) & ~before & (rare.p_value <= level)
    return records.assign(identified=before | rare_named, rare_copy_p=np.where(is_matched, rare.p_value, np.nan),
                          rare_named=rare_named)


def member_records(member_ids, holdout_ids, scores, judged: Judgement) -> pd.DataFrame:
    """The per-record table of a judged score: row_id, member (1/0), score, p_value (members; NaN for
    the holdout), identified."""
    m, n = len(member_ids), len(holdout_ids)
    return pd.DataFrame({ROW_ID: np.concatenate([member_ids, holdout_ids]),
                         "member": np.r_[np.ones(m, dtype=int), np.zeros(n, dtype=int)], "score": scores,
                         "p_value": np.r_[judged.member_p_values, np.full(n, np.nan)],
                         "identified": np.r_[judged.named, np.zeros(n, dtype=bool)]})
