"""Distance to closest record (DCR) and nearest-neighbour distance ratio (NNDR) against a holdout.

For every synthetic record s, with the exact Gower distance of `synthrisk.mia.gower` (numeric
ranges from the real records given, members and holdout together, so both distances share one
scale):

- d_m(s), d_m2(s): distances to its nearest and second-nearest member;
- d_h(s), d_h2(s): the same for the holdout (real records of the same population that the
  generator never saw);
- closer to members: 1 if d_m < d_h, 0 if d_m > d_h, 1/2 on a tie (d_m = d_h, e.g. an exact copy
  of a record that is both a member and, duplicated, a holdout record). The share of synthetic
  records closer to members, ties counted half, is 0.5 when the generator is as close to records it
  never saw as to its training records, and 1 when it copies them;
- NNDR_m(s) = d_m / d_m2 (0/0 := 1: two identical nearest members single out no one record), and
  NNDR_h(s) against the holdout as the reference.

Equal sizes (the fair comparison). The nearest of n records is closer the larger n is, so
comparing against more members than holdout records makes synthetic data look closer to the
members even when it is not (a share above 0.5 under the null). SDMetrics' DCROverfittingProtection
compares the full sets (it only warns when the validation set is under half the training set) and,
with `num_rows_subsample`, draws the same number of rows from training and validation. Here the
larger of the two real sets is always subsampled (seeded) to the size of the smaller, so both
searches see equally many records and the share is 0.5 under the null whatever the split sizes.
The price: with more members than holdout records, a copy of a member left out of the subsample is
not seen as closer to the members, so the share's excess over 0.5 is diluted by n_holdout/n_members.
Give as many holdout records as members for full power. Distances, NNDR and `nearest_member` are
those within the compared subsample; the exact-copy counts below do not depend on it: they look
at every member and every holdout record.

Interval and test. Ties carry no information on which side is closer, so the one-sided test of
"closer to members more often than to the holdout" is the exact sign test on the untied records
(H0: P(closer to members | untied) = 1/2; p = P(Bin(n_untied, 1/2) >= n_closer)). The share with
ties counted half is 1/2 + (n_closer - n_farther) / (2 n), a linear map of the untied proportion
(ties held fixed), so the Wilson interval of the untied proportion is mapped onto it. Synthetic
records are independent draws from the fitted generator, so given the real data the indicators
are independent; the test is conditional on that fit and on these real records.

Exact copies: synthetic records identical to a member (every column equal, missing equal to
missing), counted against all members, and, as the reference a generator that never copies would
also reach by chance (Adult has duplicate records), identical to a holdout record.

The 2-nearest search is synthrisk.mia.gower's exact k-nearest search (k = 2), parallel over
synthetic records: reference records are grouped by categorical signature and a group whose
mismatch count exceeds the second-best distance so far is skipped whole; memory
O(n_synthetic + n_reference). Ties go to the lower reference index (the first two of a stable sort
by distance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError, DataError
from ..io import finite_or_null
from ..mia.gower import GowerSpace, k_nearest_encoded

LEVEL = 0.95
QUANTILES = {"p05": 0.05, "median": 0.5}
_SUBSAMPLE_STREAM = 0x444352  # "DCR": the equal-size subsample, independent of other seeded draws
_CAP_STREAM = 0x44435243  # "DCRC": the synthetic records scored above the cap
#: synthetic records searched at most (issue #28); beyond it a seeded sample is (`max_synthetic`)
DEFAULT_MAX_SYNTHETIC = 100_000
DISTANCE_NOTE = ("Gower (numeric |x - y| / range capped at 1, categorical mismatch, mean over columns); "
                 "numeric ranges from the members and holdout records given")


@dataclass(frozen=True)
class DcrResult:
    """`summary`: plain-JSON figures (see `to_json`); `records`: one row per synthetic record."""

    summary: dict
    records: pd.DataFrame

    def to_json(self) -> dict:
        """Plain JSON types. Keys: `share_closer_to_member` (ties half), `share_interval`
        {low, high, level, method}, `p_value_one_sided`, `test`, `n_closer_to_member`,
        `n_closer_to_holdout`, `n_ties`, `share_closer_to_member_strict` (ties count for the holdout, as
        SDMetrics counts them), `overfitting_protection` (SDMetrics' score min(2 (1 - share), 1) on the
        strict share), `dcr_member` / `dcr_holdout` {p05, median, mean}, `nndr_member` /
        `nndr_holdout` {p05, median, mean}, `nndr_privacy_loss` {value, se} (mean NNDR to the
        holdout minus to the members, SynthEval's sign), `exact_copies_member`,
        `exact_copies_holdout` and their `*_share`, the design (`n_synthetic`,
        `n_synthetic_total`, `max_synthetic`, `capped`, `subsample_note` (the synthetic records scored
        above the cap), `n_members_available`, `n_holdout_available`, `n_compared`, `subsampled`,
        `comparison_rule`, `tie_rule`, `nndr_rule`, `distance`, `seed`) and `unknown_level_share`."""
        return finite_or_null(self.summary)


def two_nearest(query: pd.DataFrame, reference: pd.DataFrame, space: GowerSpace,
                block_size: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(d1, i1, d2, i2): Gower distance to, and position in `reference` of, each query record's
    nearest and second-nearest reference record. Exact; ties go to the lower position. With one
    reference record d2 is inf and i2 is -1. Queries are processed in blocks (memory: the block's
    outputs); inside a block the work is spread over numba's threads."""
    if len(reference) == 0:
        raise DataError("two_nearest: the reference data has no records")
    q_num, q_cat = space.encode(query, "query data")
    r_num, r_cat = space.encode(reference, "reference data")
    return _two_nearest_encoded(q_num, q_cat, r_num, r_cat, space.n_columns, block_size)


def _two_nearest_encoded(q_num, q_cat, r_num, r_cat, n_columns, block_size=4096):
    """The k = 2 case of synthrisk.mia.gower's exact k-nearest search, as four vectors."""
    distance, index = k_nearest_encoded(q_num, q_cat, r_num, r_cat, 2, n_columns, block_size)
    return distance[:, 0], index[:, 0], distance[:, 1], index[:, 1]


def _row_keys(num: np.ndarray, cat: np.ndarray) -> list[bytes]:
    """One byte string per encoded record; equal strings = Gower distance 0 (missing numerics become
    +inf, which no conformed value can be, so missing equals missing and nothing else)."""
    rows = np.hstack([np.where(np.isnan(num), np.inf, num), cat.astype(np.float64)])
    rows = np.ascontiguousarray(rows + 0.0)  # + 0.0 turns -0.0 into 0.0
    return [row.tobytes() for row in rows]


def _quantiles(values: np.ndarray) -> dict:
    out = {name: float(np.quantile(values, q)) for name, q in QUANTILES.items()}
    out["mean"] = float(np.mean(values))
    return out


def _wilson(successes: int, n: int, level: float) -> tuple[float, float]:
    if n == 0:
        return 0.5, 0.5
    low, high = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    return float(low), float(high)


def _conform(frame, schema: DatasetSchema, name: str, minimum: int) -> pd.DataFrame:
    if frame is None:
        raise DataError(f"dcr: {name} is None; DCR needs {name} records")
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"dcr: {name} must be a pandas DataFrame, got {type(frame).__name__}")
    out = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=name)
    if len(out) < minimum:
        raise DataError(f"dcr: {name} has {len(out)} record(s); DCR and NNDR need at least {minimum} "
                        f"({'second-nearest distances' if minimum == 2 else 'one record to compare'})")
    return out.reset_index(drop=True)


def _ids(frame: pd.DataFrame) -> np.ndarray:
    return frame[ROW_ID].to_numpy() if ROW_ID in frame.columns else np.arange(len(frame))


def dcr(members: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema,
        seed: int = 0, max_synthetic: int | None = DEFAULT_MAX_SYNTHETIC) -> DcrResult:
    """DCR share, interval and test, DCR quantiles, NNDR and exact copies (module docstring).

    `members`: the generator's training records; `holdout`: records of the same population it did
    not see; `synthetic`: the generator's output. A `row_id` column, when present, is carried into
    `records` (`nearest_member`, `nearest_holdout`); otherwise positions are used. The larger of
    members and holdout is subsampled with `seed` to the size of the smaller.

    With more than `max_synthetic` synthetic records (None: no cap), the nearest-record searches,
    the share, its interval and test, DCR and NNDR are those of a seeded sample of `max_synthetic`
    of them (`subsample_note` says so; the interval is the sample's); exact copies are still counted
    over every synthetic record. Below the cap nothing changes.
    """
    if max_synthetic is not None and (isinstance(max_synthetic, bool) or int(max_synthetic) != max_synthetic
                                      or max_synthetic < 1):
        raise ConfigError(f"dcr: max_synthetic must be a positive integer or null (no cap), got {max_synthetic}")
    typed_m = _conform(members, schema, "members", 2)
    typed_h = _conform(holdout, schema, "holdout", 2)
    typed_s = _conform(synthetic, schema, "synthetic", 1)
    unknown = schema.unknown_level_shares(pd.concat([typed_m, typed_h], ignore_index=True), typed_s,
                                          what="synthetic", reference="real records")
    n_compared = min(len(typed_m), len(typed_h))
    rng = np.random.default_rng([seed, _SUBSAMPLE_STREAM])
    member_pos, holdout_pos, subsampled = np.arange(len(typed_m)), np.arange(len(typed_h)), None
    if len(typed_m) > n_compared:
        member_pos, subsampled = np.sort(rng.permutation(len(typed_m))[:n_compared]), "members"
    elif len(typed_h) > n_compared:
        holdout_pos, subsampled = np.sort(rng.permutation(len(typed_h))[:n_compared]), "holdout"

    space = GowerSpace.fit(pd.concat([typed_m, typed_h], ignore_index=True), schema)
    m_num, m_cat = space.encode(typed_m, "members")
    h_num, h_cat = space.encode(typed_h, "holdout")
    s_num, s_cat = space.encode(typed_s, "synthetic")
    p = space.n_columns
    n_total, scored, note = len(typed_s), np.arange(len(typed_s)), None
    if max_synthetic is not None and n_total > max_synthetic:
        scored = np.sort(np.random.default_rng([seed, _CAP_STREAM]).permutation(n_total)[:int(max_synthetic)])
        note = (f"nearest records searched for {len(scored):,} of the {n_total:,} synthetic records (drawn at random, "
                "seeded; dcr.max_synthetic): the share closer to members, its interval and test, DCR and NNDR are "
                "that sample's; exact copies are counted over every synthetic record")
    q_num, q_cat = s_num[scored], s_cat[scored]
    dm1, im1, dm2, _ = _two_nearest_encoded(q_num, q_cat, m_num[member_pos], m_cat[member_pos], p)
    dh1, ih1, dh2, _ = _two_nearest_encoded(q_num, q_cat, h_num[holdout_pos], h_cat[holdout_pos], p)
    with np.errstate(invalid="ignore", divide="ignore"):
        nndr_m = np.where(dm2 > 0, dm1 / np.where(dm2 > 0, dm2, 1.0), 1.0)
        nndr_h = np.where(dh2 > 0, dh1 / np.where(dh2 > 0, dh2, 1.0), 1.0)

    closer = np.where(dm1 < dh1, 1.0, np.where(dm1 > dh1, 0.0, 0.5))
    n = len(closer)
    n_closer, n_farther = int(np.sum(closer == 1.0)), int(np.sum(closer == 0.0))
    n_ties, n_untied = n - n_closer - n_farther, n_closer + n_farther
    share = float(closer.mean())
    low, high = _wilson(n_closer, n_untied, LEVEL)

    def to_share(q):  # share = q n_untied / n + ties / (2 n): the untied interval, mapped linearly
        return q * n_untied / n + n_ties / (2 * n)

    p_value = float(binom.sf(n_closer - 1, n_untied, 0.5)) if n_untied else 1.0
    strict = n_closer / n

    keys_s = _row_keys(s_num, s_cat)
    member_keys, holdout_keys = set(_row_keys(m_num, m_cat)), set(_row_keys(h_num, h_cat))
    copy_m = np.fromiter((k in member_keys for k in keys_s), dtype=bool, count=n_total)
    copy_h = np.fromiter((k in holdout_keys for k in keys_s), dtype=bool, count=n_total)

    ids_m, ids_h = _ids(members)[member_pos], _ids(holdout)[holdout_pos]
    records = pd.DataFrame({
        "synthetic_index": scored, "nearest_member": ids_m[im1], "distance_member": dm1,
        "second_distance_member": dm2, "nndr_member": nndr_m, "nearest_holdout": ids_h[ih1],
        "distance_holdout": dh1, "second_distance_holdout": dh2, "nndr_holdout": nndr_h,
        "closer_to_member": closer, "exact_copy_member": copy_m[scored], "exact_copy_holdout": copy_h[scored],
    })
    nndr_loss = float(nndr_h.mean() - nndr_m.mean())
    nndr_se = float(np.sqrt(nndr_h.var(ddof=1) / n + nndr_m.var(ddof=1) / n)) if n > 1 else None
    summary = {
        "share_closer_to_member": share,
        "share_interval": {"low": to_share(low), "high": to_share(high), "level": LEVEL,
                           "method": "Wilson interval of the untied records' share closer to members, "
                                     "mapped to the ties-half scale with the ties held fixed"},
        "p_value_one_sided": p_value,
        "test": "exact sign test on untied records, H1: closer to members more often than to the holdout",
        "n_closer_to_member": n_closer, "n_closer_to_holdout": n_farther, "n_ties": n_ties,
        "share_closer_to_member_strict": strict,
        "overfitting_protection": min(2.0 * (1.0 - strict), 1.0),
        "dcr_member": _quantiles(dm1), "dcr_holdout": _quantiles(dh1),
        "nndr_member": _quantiles(nndr_m), "nndr_holdout": _quantiles(nndr_h),
        "nndr_privacy_loss": {"value": nndr_loss, "se": nndr_se},
        "exact_copies_member": int(copy_m.sum()), "exact_copies_holdout": int(copy_h.sum()),
        "exact_copies_member_share": float(copy_m.mean()), "exact_copies_holdout_share": float(copy_h.mean()),
        "n_synthetic": n, "n_synthetic_total": n_total, "max_synthetic": max_synthetic, "capped": note is not None,
        "subsample_note": note,
        "n_members_available": len(typed_m), "n_holdout_available": len(typed_h),
        "n_compared": n_compared, "subsampled": subsampled,
        "comparison_rule": ("equal sizes: the larger of members and holdout is subsampled (seeded) to the "
                            "smaller's size before the nearest-record searches; exact copies use all records"),
        "tie_rule": "a synthetic record as close to a member as to a holdout record counts half",
        "nndr_rule": "nearest / second-nearest distance per synthetic record; 0/0 := 1",
        "distance": DISTANCE_NOTE, "seed": int(seed), "unknown_level_share": unknown,
    }
    return DcrResult(finite_or_null(summary), records)
