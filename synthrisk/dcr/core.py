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

Test: a permutation test of the member/holdout labels. The null is that the synthetic records do
not depend on which of the pooled real records (the n compared members and the n compared holdout
records) were the members; given the pooled and the synthetic records, every labelling of the
pooled records with n members is then equally likely, and the share is a function of the labelling.
The synthetic records are independent given one labelling, but not over labellings: many synthetic
records can share one nearest real record, and relabelling it moves all of them at once. The share's
spread over splits is therefore wider than the binomial spread of independent records that the
exact sign test assumes, which rejects too often when synthetic records crowd on fewer real ones:
15-17 % at a nominal 5 % in benchmarks/dcr_null.py with 3,000 synthetic records on 300 + 300 real
ones, where the permutation test rejects 5 %.

- One exact k-nearest search of every synthetic record over the pooled records (k = TIE_K[0] = 8;
  the records whose 8 nearest are all at the nearest distance are searched again with k = 64) gives
  its tie set T_s, the pooled records at its minimal distance. Under a labelling L its indicator is
  1 if all of T_s are members, 0 if none is, 1/2 if mixed: the d_m < d_h / > / = rule above. The
  share under L is then a weighted sum: (sum_r w_r L_r + the tied records' indicators) / n_synthetic,
  w_r the number of synthetic records whose unique nearest is r (`NearestTies.scores`).
- A tie set that still fills k = 64 (`nearest_real.saturated`; the true set may be larger) counts 1
  under a relabelling when the 64 records seen are all members and 1/2 otherwise, never 0: at least
  its true value under every labelling, so relabelled shares can only be larger and the p-value can
  only grow (conservative). The observed share is exact in every case: it comes from the two
  searches above, with which the tie sets agree under the true labelling (tested).
- B = `permutations` relabellings (seeded, uniform over the labellings with n members). Only the
  pooled records that are some synthetic record's nearest matter: the number of members among them
  is drawn from its hypergeometric law, then which of them they are, uniformly, which is a full
  relabelling seen on those records; cost O(B x such records), not O(B x real records).
- p = (1 + #{relabelled share >= observed share}) / (B + 1), one-sided (H1: closer to members more
  often than to the holdout). It is a valid p-value for any B; its floor is 1 / (B + 1) (0.001 at
  the default B = 999), however strong the evidence. `p_value_sign_test` keeps the exact sign test
  on the untied records (p = P(Bin(n_untied, 1/2) >= n_closer)) for comparison only.

Interval: share +- z_0.975 x the sd of the relabelled shares, clipped to [0, 1]. Under the null the
relabelled shares have mean 1/2 (equal sizes) and their sd is the spread of the share over splits
of the pooled records, synthetic records sharing a nearest record included, so it is the share's
standard error under the null (the interval covered 0.5 in 93.5-95.5 % of the simulated null
replications, benchmarks/dcr_null.py); away from the null it is the null spread used as an
approximate standard error. `null_sd` gives it beside the binomial sd sqrt(n_untied) / (2 n) that
the sign test assumes. With B = 1 there is no sd: the interval is [0, 1].

Exact copies: synthetic records identical to a member (every column equal, missing equal to
missing), counted against all members, and, as the reference a generator that never copies would
also reach by chance (Adult has duplicate records), identical to a holdout record.

The searches are synthrisk.mia.gower's exact k-nearest search (k = 2 against the members and
against the holdout; k = 8, then 64, against the pooled records), parallel over synthetic records:
reference records are grouped by categorical signature and a group whose mismatch count exceeds the
k-th best distance so far is skipped whole; memory O(n_synthetic x k + n_reference). Ties go to the
lower reference index (the first k of a stable sort by distance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import ConfigError, DataError
from ..io import finite_or_null
from ..mia.gower import GowerSpace, k_nearest_encoded
from ..stats.sampling import sample_positions

LEVEL = 0.95
QUANTILES = {"p05": 0.05, "median": 0.5}
_SUBSAMPLE_STREAM = 0x444352  # "DCR": the equal-size subsample, independent of other seeded draws
_CAP_STREAM = 0x44435243  # "DCRC": the synthetic records scored above the cap
_PERMUTATION_STREAM = 0x44435250  # "DCRP": the member/holdout relabellings of the permutation test
#: synthetic records searched at most (issue #28); beyond it a seeded sample is (`max_synthetic`)
DEFAULT_MAX_SYNTHETIC = 100_000
#: relabellings of the pooled real records in the permutation test (p-value floor 1 / (B + 1))
DEFAULT_PERMUTATIONS = 999
#: k of the pooled nearest search, then of the re-search of the records whose tie set filled k
TIE_K = (8, 64)
_CHUNK_CELLS = 2_000_000  # permutations are scored in chunks of about this many label cells
DISTANCE_NOTE = ("Gower (numeric |x - y| / range capped at 1, categorical mismatch, mean over columns); "
                 "numeric ranges from the members and holdout records given")


@dataclass(frozen=True)
class DcrResult:
    """`summary`: plain-JSON figures (see `to_json`); `records`: one row per synthetic record."""

    summary: dict
    records: pd.DataFrame

    def to_json(self) -> dict:
        """Plain JSON types. Keys: `share_closer_to_member` (ties half), `share_interval`
        {low, high, level, method} (share +- z x the permutation sd), `p_value_one_sided` (the
        permutation test's), `test`, `permutations`, `null_sd` {permutation, binomial} (the share's sd
        under the null: over relabellings, and as the sign test assumes it), `p_value_sign_test` and
        `sign_test` (the exact sign test, for comparison only), `nearest_real` {distinct, tied,
        saturated} (pooled real records that are a synthetic record's nearest, synthetic records
        with more than one, those whose tie set filled the search), `n_closer_to_member`,
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


@dataclass(frozen=True)
class NearestTies:
    """Each synthetic record's tie set: the pooled real records at its minimal distance.

    Pooled positions are renumbered 0..len(pooled)-1 over `pooled`, the positions (in the pooled
    real records) of those that are some synthetic record's nearest. `weights[j]`: synthetic records
    whose nearest is pooled[j] alone. `groups`: (sets, counts, saturated) per tie-set size m >= 2 and
    saturation: `sets` (G, m) the distinct tie sets, `counts` (G,) the synthetic records having each;
    `saturated`: the sets filled the search (the true set may be larger), scored conservatively."""

    pooled: np.ndarray
    weights: np.ndarray
    groups: tuple
    n_tied: int
    n_saturated: int

    def scores(self, labels: np.ndarray) -> np.ndarray:
        """Twice the number of synthetic records closer to members (ties half) under each row of
        `labels` (c, len(pooled)): 1 = member, 0 = holdout. A synthetic record counts 2 when all of
        its tie set are members, 0 when none is, 1 when mixed; a saturated set counts 2 when all of
        the records seen are members and 1 otherwise, never 0 (at least its true value)."""
        labels = np.asarray(labels, dtype=np.float64)
        score = 2.0 * (labels @ self.weights)
        for sets, counts, saturated in self.groups:
            inside = labels[:, sets].sum(axis=2)
            value = np.where(inside == sets.shape[1], 2.0, np.where((inside == 0) & (not saturated), 0.0, 1.0))
            score += value @ counts
        return score


def nearest_ties(q_num, q_cat, r_num, r_cat, n_columns: int, ks: tuple[int, ...] = TIE_K) -> NearestTies:
    """The tie sets of each query record among the reference (pooled) records: an exact k-nearest
    search with k = ks[0], the records whose k nearest are all tied searched again with the next k;
    sets still full at the last k are flagged saturated."""
    n_ref = len(r_num)
    rows, found = np.arange(len(q_num)), []
    for step, k in enumerate(ks):
        k = min(k, n_ref)
        distance, index = k_nearest_encoded(q_num[rows], q_cat[rows], r_num, r_cat, k, n_columns)
        full = (distance[:, -1] == distance[:, 0]) & (k < n_ref)
        last = step == len(ks) - 1
        keep = ~full | last
        found.append((distance[keep], index[keep], full[keep]))
        rows = rows[~keep]
        if not len(rows):
            break
    weights = np.zeros(n_ref)
    by_shape: dict[tuple[int, bool], list[np.ndarray]] = {}
    n_tied = n_saturated = 0
    for distance, index, full in found:
        size = (distance == distance[:, :1]).sum(axis=1)
        single = size == 1
        weights += np.bincount(index[single, 0], minlength=n_ref)
        n_tied += int(np.sum(~single))
        n_saturated += int(np.sum(full))
        for m in np.unique(size[~single]):
            for saturated in (False, True):
                chosen = (size == m) & (full == saturated)
                if chosen.any():
                    by_shape.setdefault((int(m), saturated), []).append(np.sort(index[chosen, :m], axis=1))
    used = [np.flatnonzero(weights)] + [np.concatenate(parts).ravel() for parts in by_shape.values()]
    pooled = np.unique(np.concatenate(used))
    position = np.full(n_ref, -1, dtype=np.int64)
    position[pooled] = np.arange(len(pooled))
    groups = []
    for (_, saturated), parts in sorted(by_shape.items()):
        sets, counts = np.unique(np.concatenate(parts), axis=0, return_counts=True)
        groups.append((position[sets], counts.astype(np.float64), saturated))
    return NearestTies(pooled, weights[pooled], tuple(groups), n_tied, n_saturated)


def permutation_scores(ties: NearestTies, n_members: int, n_pooled: int, permutations: int,
                       rng: np.random.Generator) -> np.ndarray:
    """`ties.scores` under `permutations` random labellings of the n_pooled real records with
    n_members members (uniform over such labellings). Only the records in `ties.pooled` matter: the
    number of members among them is hypergeometric, and given it which of them are is uniform."""
    t = len(ties.pooled)
    cells = max(t, sum(sets.size for sets, _, _ in ties.groups), 1)
    chunk = int(max(1, min(permutations, _CHUNK_CELLS // cells)))
    out = np.empty(permutations)
    for start in range(0, permutations, chunk):
        c = min(chunk, permutations - start)
        drawn = rng.hypergeometric(n_members, n_pooled - n_members, t, size=c) if t else np.zeros(c, dtype=int)
        labels = np.empty((c, t))
        for row in range(c):  # the records ranked below `drawn` in a uniform random order are the members
            np.less(rng.permutation(t), drawn[row], out=labels[row])
        out[start:start + c] = ties.scores(labels)
    return out


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



def _positive_int(value, name: str, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or int(value) != value or value < 1:
        raise ConfigError(f"dcr: {name} must be a positive integer{' or null (no cap)' if allow_none else ''}, "
                          f"got {value}")


def dcr(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
        seed: int = 0, max_synthetic: int | None = DEFAULT_MAX_SYNTHETIC,
        permutations: int = DEFAULT_PERMUTATIONS) -> DcrResult:
    """DCR share, permutation test and interval, DCR quantiles, NNDR and exact copies (module docstring).

    `members`: the generator's training records; `holdout`: records of the same population it did
    not see; `synthetic`: the generator's output. A `row_id` column, when present, is carried into
    `records` (`nearest_member`, `nearest_holdout`); otherwise positions are used. The larger of
    members and holdout is subsampled with `seed` to the size of the smaller. `permutations`: the
    number B of member/holdout relabellings of the test (seeded with `seed`).

    With more than `max_synthetic` synthetic records (None: no cap), the nearest-record searches,
    the share, its interval and test, DCR and NNDR are those of a seeded sample of `max_synthetic`
    of them (`subsample_note` says so; the interval is the sample's); exact copies are still counted
    over every synthetic record. Below the cap nothing changes.
    """
    _positive_int(max_synthetic, "max_synthetic", allow_none=True)
    _positive_int(permutations, "permutations", allow_none=False)
    permutations = int(permutations)
    typed_m = _conform(members, schema, "members", 2)
    typed_h = _conform(holdout, schema, "holdout", 2)
    typed_s = _conform(synthetic, schema, "synthetic", 1)
    unknown = schema.unknown_level_shares(pd.concat([typed_m, typed_h], ignore_index=True), typed_s,
                                          what="synthetic", reference="real records")
    n_compared = min(len(typed_m), len(typed_h))
    rng = np.random.default_rng([seed, _SUBSAMPLE_STREAM])
    member_pos, holdout_pos, subsampled = np.arange(len(typed_m)), np.arange(len(typed_h)), None
    if len(typed_m) > n_compared:
        member_pos, subsampled = sample_positions(rng, len(typed_m), n_compared), "members"
    elif len(typed_h) > n_compared:
        holdout_pos, subsampled = sample_positions(rng, len(typed_h), n_compared), "holdout"

    space = GowerSpace.fit(pd.concat([typed_m, typed_h], ignore_index=True), schema)
    m_num, m_cat = space.encode(typed_m, "members")
    h_num, h_cat = space.encode(typed_h, "holdout")
    s_num, s_cat = space.encode(typed_s, "synthetic")
    p = space.n_columns
    n_total, scored, note = len(typed_s), np.arange(len(typed_s)), None
    if max_synthetic is not None and n_total > max_synthetic:
        scored = sample_positions(np.random.default_rng([seed, _CAP_STREAM]), n_total, max_synthetic)
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
    strict = n_closer / n
    p_sign = float(binom.sf(n_closer - 1, n_untied, 0.5)) if n_untied else 1.0

    # The permutation test: members (the first n_compared) and holdout pooled, one tie-set search.
    pool_num = np.concatenate([m_num[member_pos], h_num[holdout_pos]])
    pool_cat = np.concatenate([m_cat[member_pos], h_cat[holdout_pos]])
    ties = nearest_ties(q_num, q_cat, pool_num, pool_cat, p)
    null = permutation_scores(ties, n_compared, 2 * n_compared, permutations,
                              np.random.default_rng([seed, _PERMUTATION_STREAM]))
    observed = 2 * n_closer + n_ties
    p_value = float((1 + np.sum(null >= observed)) / (permutations + 1))
    null_sd = float(null.std(ddof=1) / (2 * n)) if permutations > 1 else float("nan")
    z = float(norm.ppf(0.5 + LEVEL / 2))
    low, high = max(0.0, share - z * null_sd), min(1.0, share + z * null_sd)

    keys_s = _row_keys(s_num, s_cat)
    member_keys, holdout_keys = set(_row_keys(m_num, m_cat)), set(_row_keys(h_num, h_cat))
    copy_m = np.fromiter((k in member_keys for k in keys_s), dtype=bool, count=n_total)
    copy_h = np.fromiter((k in holdout_keys for k in keys_s), dtype=bool, count=n_total)

    ids_m, ids_h = row_ids(members)[member_pos], row_ids(holdout)[holdout_pos]
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
        "share_interval": {"low": low, "high": high, "level": LEVEL,
                           "method": f"share +- {z:.3f} x the sd of the share over the {permutations} member/holdout "
                                     "relabellings of the permutation test (the spread over splits of the real "
                                     "records, synthetic records sharing a nearest record included), clipped to [0, 1]"},
        "p_value_one_sided": p_value,
        "test": (f"permutation test: the member/holdout labels of the {2 * n_compared} compared real records relabelled "
                 f"at random {permutations} times (as many members as before), share recomputed from each synthetic "
                 "record's nearest real records; p = (1 + #{relabelled share >= observed}) / (B + 1); "
                 "H1: closer to members more often than to the holdout"),
        "permutations": permutations,
        "null_sd": {"permutation": null_sd, "binomial": float(np.sqrt(n_untied) / (2 * n))},
        "p_value_sign_test": p_sign,
        "sign_test": ("exact sign test on untied records (treats synthetic records as independent given one split; "
                      "for comparison only, too small a spread when synthetic records share nearest records)"),
        "nearest_real": {"distinct": int(len(ties.pooled)), "tied": ties.n_tied, "saturated": ties.n_saturated},
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
