"""synthpop's measures as the audit reads them (synthrisk.measures.disclosure: `repu`, `disco`): the
groups of numeric columns, the per-record flags against a brute-force count, and the member
excess's test checked the way it is used: on simulated releases that never saw the members (its
level) and on releases that copy some of them (its power)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.data.schema import DatasetSchema
from synthrisk.data.split import ROW_ID
from synthrisk.disclosure.grouping import breaks, group_columns, grouped
from synthrisk.measures import MeasureInput, measure


def _population(rng, n: int) -> pd.DataFrame:
    """Keys that make about a third of the records unique, and a target tied to them."""
    a = rng.choice(list("abcdefgh"), n)
    b = rng.choice(list("pqrstu"), n, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    age = rng.integers(18, 90, n).astype(float)
    t = np.where(rng.random(n) < 0.7, np.where(np.isin(a, list("abcd")), "yes", "no"), rng.choice(["yes", "no"], n))
    return pd.DataFrame({"a": a, "b": b, "age": age, "t": t})


SCHEMA = DatasetSchema.infer(_population(np.random.default_rng(0), 100), sensitive="t", name="toy")


def _input(members, holdout, synthetic, seed=0) -> MeasureInput:
    members = members.reset_index(drop=True).assign(**{ROW_ID: np.arange(len(members))})
    holdout = holdout.reset_index(drop=True).assign(**{ROW_ID: len(members) + np.arange(len(holdout))})
    return MeasureInput(members=members, holdout=holdout, aux=holdout.iloc[:0],
                        synthetic=synthetic.reset_index(drop=True).assign(**{ROW_ID: np.arange(len(synthetic))}),
                        schema=SCHEMA, population_size=10 * len(members), seed=seed)


def test_groups_come_from_the_release_and_every_value_of_every_file_falls_in_one():
    release = pd.Series(np.arange(100, dtype=float))
    edges = breaks(release, 4)
    assert list(edges) == [0, 24.75, 49.5, 74.25, 99]  # R's quantile type 7 at 0, 1/4, ..., 1
    labels = grouped(pd.Series([-5.0, 0.0, 24.75, 99.0, 500.0, np.nan]), edges)
    assert list(labels[:5]) == ["[0, 24.75)", "[0, 24.75)", "[24.75, 49.5)", "[74.25, 99]", "[74.25, 99]"]
    assert labels.isna().iloc[5]
    frames, stated = group_columns({"x": pd.DataFrame({"v": [1.0, 2.0]})}, ["v"], pd.DataFrame({"v": release}), 4)
    assert stated == {"v": [0.0, 24.75, 49.5, 74.25, 99.0]} and list(frames["x"]["v"]) == ["[0, 24.75)"] * 2
    # a column with few values is read as it is; two distinct values give equal widths, not one group
    assert group_columns({"x": pd.DataFrame({"v": [1.0]})}, ["v"], pd.DataFrame({"v": [1.0, 2.0]}), 4)[1] == {}
    assert len(breaks(pd.Series([0.0] * 50 + [1.0] * 50), 4)) == 5


def test_the_flags_are_the_record_by_record_count_over_the_real_records():
    rng = np.random.default_rng(4)
    pop = _population(rng, 700)
    members, holdout, synthetic = pop.iloc[:200], pop.iloc[200:400], pop.iloc[400:].copy()
    synthetic.iloc[:40] = members.iloc[:40].to_numpy()  # copies of 40 members
    data = _input(members, holdout, synthetic)
    for name in ("repu", "disco"):
        m = measure(name)
        result = m.run(data, m.settings({"groups": 0}), None)
        real = pd.concat([data.members, data.holdout], ignore_index=True)
        key = real[["a", "b", "age"]].astype(str).agg("|".join, axis=1)
        syn_key = data.synthetic[["a", "b", "age"]].astype(str).agg("|".join, axis=1)
        if name == "repu":
            expected = [(key == k).sum() == 1 and (syn_key == k).sum() == 1 for k in key]
        else:
            expected = [(syn_key == k).any() and set(data.synthetic.loc[syn_key == k, "t"]) == {t}
                        for k, t in zip(key, real["t"])]
        flags = result.records
        assert list(flags["flagged"]) == expected, name
        attack = result.summary["attacks"][0]
        assert attack["member_hits"] == int(np.sum(expected[:200])) and attack["holdout_hits"] == int(np.sum(expected[200:]))
        assert attack["member_excess"] == pytest.approx((attack["member_hits"] - attack["holdout_hits"]) / 200)


def _p_values(rng, copies: float, runs: int, n: int = 150) -> dict[str, np.ndarray]:
    out = {"repu": [], "disco": []}
    for _ in range(runs):
        pop = _population(rng, 4 * n)
        members, holdout, synthetic = pop.iloc[:n], pop.iloc[n:2 * n], pop.iloc[2 * n:3 * n].copy()
        k = int(copies * n)
        if k:
            synthetic.iloc[:k] = members.sample(k, random_state=int(rng.integers(1 << 31))).to_numpy()
        data = _input(members, holdout, synthetic)
        for name in out:
            m = measure(name)
            out[name].append(m.run(data, m.settings({}), None).summary["attacks"][0]["member_excess_p_value"])
    return {name: np.asarray(p) for name, p in out.items()}


def test_the_member_excess_holds_its_level_on_releases_that_never_saw_the_members_and_finds_copies():
    # 300 null releases: the rejection rate at 0.05 must stay within 2.6 standard errors above 0.05
    # (a test too lenient by half, 0.075, would pass this check only about 1 time in 100)
    null = _p_values(np.random.default_rng(11), 0.0, 300)
    for name, p in null.items():
        assert np.mean(p <= 0.05) <= 0.05 + 2.6 * np.sqrt(0.05 * 0.95 / 300), name
        assert np.mean(p <= 0.5) > 0.3, name  # and it is not blind: about half fall below 0.5
    # a release of which 30 % are member copies: repU counts only the copies of members unique among the
    # real records (about 90 % found at this size), DiSCO every copy whose key group it makes homogeneous
    copied = _p_values(np.random.default_rng(12), 0.3, 40)
    for name, p in copied.items():
        assert np.mean(p <= 0.05) >= 0.8, name


def test_groups_never_share_a_label_and_bad_settings_are_refused_where_they_enter():
    dates = pd.Series(20200101 + np.arange(31), dtype=float)
    edges = breaks(dates, 20)
    assert grouped(dates, edges).nunique() == len(edges) - 1 == 20
    from synthrisk.errors import ConfigError

    for bad in ({"groups": 1}, {"groups": -1}, {"denom_lim": 0}, {"not_target_levels": ["x"]}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            measure("disco").settings(bad)
