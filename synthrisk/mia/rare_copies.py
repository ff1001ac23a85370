"""Copies of rare records: a count test that does not rest on ranks (issue #42, item 2).

The per-person exposure evidence (`exposure`) names members through conformal p-values against
the holdout's scores, and a conformal p-value against n holdout records is at least 1 / (n + 1):
Benjamini-Hochberg at rate q over m members names nobody unless about m / (q (n + 1)) of them
share the smallest p-values (23 at 1,000 members and 1,000 holdout records, q = 0.045). A release
that copies a handful of rare people, the ones easiest to recognise, slips under that.

This test reads the rare records only, and counts:
- *rare*: the `share` of the members and holdout records pooled that lie farthest (Gower) from
  every other pooled record, and every record tied with the last of them (the set is then a
  function of the pooled records alone: breaking the ties in a fixed order of positions would read
  which positions are members, and with many ties, as in all-categorical data, the test would no
  longer hold its level); the rule never reads who is a member;
- *matched*: a rare record with an exact copy in the release (Gower distance 0);
- when the release never saw the members, members and holdout records are exchangeable given the
  pooled records and the release, so the number of matched rare members given the matched rare
  records is hypergeometric (matched among the rare, members among the rare). The one-sided
  p-value P(X >= observed) is exact at any size, with ties and duplicates.

When it rejects at the caller's level, the matched rare members are the people the release gives
away; among them, the expected number of records matched by chance is about the number of matched
rare holdout records (by exchangeability), reported beside them.

Measured in `benchmarks/rare_copies_test.py` (see there). It sees exact copies only: an outlier
reproduced with one value changed escapes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import DataError
from .gower import GowerSpace, k_nearest, nearest_others

#: the share of the pooled real records read as rare
RARE_SHARE = 0.05
#: a Gower distance at most this is an exact copy (rounding of the scaled numeric columns)
EXACT = 1e-12
TEST = ("hypergeometric: matched rare members given the matched rare records, members among the rare (exact "
        "when the release never saw the members)")


@dataclass(frozen=True)
class RareCopies:
    """The test's counts and p-value, and the rare records (`records`: row_id, member, isolation,
    matched, and `position`: the record's place among the members and holdout pooled, members first)."""

    p_value: float
    n_rare: int
    n_rare_members: int
    member_matches: int
    holdout_matches: int
    share: float
    records: pd.DataFrame = field(repr=False)

    def matched_members(self) -> pd.DataFrame:
        """The rare members with an exact copy in the release (row_id, isolation)."""
        found = self.records[(self.records["member"] == 1) & self.records["matched"]]
        return found[[ROW_ID, "isolation"]].reset_index(drop=True)

    def to_json(self) -> dict:
        return {"p_value": self.p_value, "n_rare": self.n_rare, "n_rare_members": self.n_rare_members,
                "member_matches": self.member_matches, "holdout_matches": self.holdout_matches,
                "share": self.share, "test": TEST}


def rare_copies(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
                share: float = RARE_SHARE) -> RareCopies:
    """The count test of the module doc on typed frames (a `row_id` column is carried when given)."""
    if holdout is None or not len(holdout) or not len(members):
        raise DataError("rare copies: needs members and holdout records (records the generator never saw)")
    columns = list(schema.columns)
    real = pd.concat([members, holdout], ignore_index=True)[columns]
    space = GowerSpace.fit(real, schema)
    to_release, _ = k_nearest(real, synthetic[columns], space, 1)
    return count_test(nearest_others(real, space)[:, 0], to_release[:, 0], len(members),
                      np.concatenate([row_ids(members), row_ids(holdout)]), share=share)


def rare_positions(isolation: np.ndarray, share: float) -> np.ndarray:
    """The positions of the `share` most isolated records and of every record tied with the last of
    them, ascending (a function of the isolations alone, never of who is a member)."""
    k = max(1, int(round(share * len(isolation))))
    cut = np.sort(isolation)[::-1][k - 1]
    return np.flatnonzero(isolation >= cut)


def count_test(isolation: np.ndarray, to_release: np.ndarray, n_members: int, ids: np.ndarray, *,
               share: float = RARE_SHARE) -> RareCopies:
    """The test on distances already measured, members first: each pooled record's `isolation` (its
    distance to the nearest other real record; any function of the pooled records that never reads
    the labels keeps the test exact, so the per-person evidence passes its own, which also counts the
    auxiliary records) and its distance `to_release` (the nearest synthetic record), with its `ids`."""
    if not 0 < share <= 1:
        raise DataError(f"rare copies: share must be in (0, 1], got {share!r}")
    if not 0 < n_members < len(isolation):
        raise DataError("rare copies: needs members and holdout records (records the generator never saw)")
    chosen = rare_positions(np.asarray(isolation, dtype=float), share)
    matched = to_release[chosen] <= EXACT
    is_member = chosen < n_members
    member_matches, total = int((matched & is_member).sum()), int(matched.sum())
    p_value = float(hypergeom.sf(member_matches - 1, len(chosen), total, int(is_member.sum()))) if total else 1.0
    records = pd.DataFrame({ROW_ID: ids[chosen], "member": is_member.astype(int), "isolation": isolation[chosen],
                            "matched": matched, "position": chosen})
    return RareCopies(p_value, len(chosen), int(is_member.sum()), member_matches, total - member_matches, share,
                      records)
