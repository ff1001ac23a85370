"""synthpop's disclosure measures (synthrisk.disclosure) against the R function itself and against a
brute-force count.

The expected numbers of the 10-record table below were printed by synthpop 1.9-2's `disclosure()`
(R/disclosure.R, run under R 4.2.2; synthpop is not installable here, so they are written in): the
hand derivation for `syn1` is in the comments. The brute-force reference recounts every measure
record by record, straight from the definitions, on random tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.disclosure import disclosure
from synthrisk.errors import ConfigError


def _table(rows: str) -> pd.DataFrame:
    a, b, t = zip(*[(r[0], np.nan if r[1] == "-" else float(r[1]), r[2]) for r in rows.split()])
    return pd.DataFrame({"a": a, "b": b, "t": t})


# keys a (text) and b (a number, one missing), target t
ORIGINAL = _table("x1P x1P x2Q y1P y1Q y2P z1Q z1Q w2P w-Q")
SYN1 = _table("x1P x1P x2Q y1Q y1Q z1Q z1Q z2P v1P w-P")
SYN2 = SYN1.assign(t=SYN1["t"].to_numpy()[::-1])

COLUMNS = ["UiO", "UiS", "UiOiS", "repU", "Dorig", "Dsyn", "iS", "DiS", "DiSCO", "DiSDiO", "max_denom",
           "mean_denom", "baseCAPd", "CAPd", "CAPs", "DCAP", "TCAP"]
# synthpop 1.9-2's output (NaN: not printed for that run)
R_OUTPUT = {
    "syn1": (SYN1, {}, [40, 40, 20, 20, 80, 100, 80, 80, 60, 50, 2, 1.5, 50, 90, 100, 60, 75]),
    "syn2": (SYN2, {}, [40, 40, 20, 20, 80, 100, 80, 80, 50, 40, 2, 5 / 3, 50, 90, 100, 50, 62.5]),
    "denom_lim": (SYN1, {"denom_lim": 1, "exclude_over_denom_lim": True},
                  [40, 40, 20, 20, 40, 40, 40, 40, 20, 10, 1, 1, 50, 50, 40, 10, 100]),
    "keys_na": (SYN1, {"use_keys_na": False},
                [30, 30, 10, 10, 70, 90, 70, 70, 60, 50, 2, 1.5] + [np.nan] * 5),
    "not_target": (SYN1, {"not_target_levels": ["Q"]},
                   [30, 30, 10, 0, 40, 50, 30, 30, 20, 20, 2, 2, 50, 50, 50, 20, 100]),
}


@pytest.mark.parametrize("case", list(R_OUTPUT))
def test_the_measures_are_synthpops_on_a_table_small_enough_to_check_by_hand(case):
    # syn1 by hand: the original q groups are x|1 {P,P}, x|2 {Q}, y|1 {P,Q}, y|2 {P}, z|1 {Q,Q}, w|2 {P},
    # w|Missing {Q}: four uniques (UiO 40 %). DiSCO: x|1 (2), x|2 (1), z|1 (2) and y|1's one Q record, as
    # the synthetic y|1 is all Q although the original y|1 is not homogeneous: 6 records (60 %).
    synthetic, settings, expected = R_OUTPUT[case]
    found = disclosure(ORIGINAL, synthetic, ["a", "b"], "t", **settings)
    values = {**found.identity, **found.attribute, **found.caps}
    for column, want in zip(COLUMNS, expected):
        if not np.isnan(want):
            assert values[column] == pytest.approx(want), (case, column)


def test_the_one_and_two_way_checks_flag_without_changing_a_number():
    found = disclosure(ORIGINAL, SYN1, ["a", "b"], "t", thresh_1way=(1, 50), thresh_2way=(1, 50))
    plain = disclosure(ORIGINAL, SYN1, ["a", "b"], "t")
    assert found.attribute == plain.attribute and found.identity == plain.identity
    one_way = found.checks["one_way"]
    assert (one_way["level"], one_way["n_disco"], one_way["total_disco"]) == ("Q", 4, 6) and one_way["flagged"]
    pairs = {(p["target_level"], p["key_level"]): p for p in found.checks["two_way"]}
    # P|x: 2 of the 3 original x records are P (66.7 %); Q|z: 2 of 2; the pairs on b are 3 of 6, not > 50
    assert set(pairs) == {("P", "x"), ("Q", "z")}
    assert pairs[("P", "x")]["pct"] == pytest.approx(200 / 3) and pairs[("Q", "z")]["pct"] == 100
    assert plain.checks["one_way"]["flagged"] is False and plain.checks["two_way"] == []


def _brute_force(original: pd.DataFrame, synthetic: pd.DataFrame, keys: list[str], target: str) -> dict:
    """The measures without exclusions, record by record, from the definitions."""
    def label(frame):
        return [tuple("Missing" if pd.isna(v) else (f"{v:.15g}" if isinstance(v, float) else str(v)) for v in row)
                for row in frame[keys].itertuples(index=False)]

    def value(frame):
        return ["Missing" if pd.isna(v) else str(v) for v in frame[target]]

    qo, to, qs, ts = label(original), value(original), label(synthetic), value(synthetic)
    n_o, n_s = len(qo), len(qs)
    group_o = {q: [t for q2, t in zip(qo, to) if q2 == q] for q in set(qo)}
    group_s = {q: [t for q2, t in zip(qs, ts) if q2 == q] for q in set(qs)}
    unique_o = [q for q, g in group_o.items() if len(g) == 1]
    out = {"UiO": 100 * len(unique_o) / n_o,
           "UiS": 100 * sum(len(g) == 1 for g in group_s.values()) / n_s,
           "UiOiS": 100 * sum(q in group_s for q in unique_o) / n_o,
           "repU": 100 * sum(len(group_s.get(q, [])) == 1 for q in unique_o) / n_o,
           "Dorig": 100 * sum(len(set(group_o[q])) == 1 for q in qo) / n_o,
           "Dsyn": 100 * sum(len(set(group_s[q])) == 1 for q in qs) / n_s,
           "iS": 100 * sum(q in group_s for q in qo) / n_o,
           "DiS": 100 * sum(q in group_s and len(set(group_s[q])) == 1 for q in qo) / n_o,
           "DiSCO": 100 * sum(q in group_s and set(group_s[q]) == {t} for q, t in zip(qo, to)) / n_o}
    out["DiSDiO"] = 100 * sum(q in group_s and set(group_s[q]) == {t} and len(set(group_o[q])) == 1
                              for q, t in zip(qo, to)) / n_o
    return out


@pytest.mark.parametrize("seed", range(5))
def test_every_measure_is_the_record_by_record_count(seed):
    rng = np.random.default_rng(seed)

    def draw(n):
        frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(18, 30, n).astype(float),
                              "region": rng.choice(list("abcd"), n), "y": rng.choice(["lo", "mid", "hi"], n, p=[.6, .3, .1])})
        frame.loc[rng.random(n) < 0.05, "age"] = np.nan
        frame.loc[rng.random(n) < 0.05, "y"] = None
        return frame

    original, synthetic = draw(300), draw(250)
    found = disclosure(original, synthetic, ["sex", "age", "region"], "y")
    expected = _brute_force(original, synthetic, ["sex", "age", "region"], "y")
    for name, want in expected.items():
        assert {**found.identity, **found.attribute}[name] == pytest.approx(want), name
    records = found.records
    assert 100 * records["unique_original"].mean() == pytest.approx(found.identity["UiO"])
    assert 100 * records["replicated_unique"].mean() == pytest.approx(found.identity["repU"])
    assert 100 * records["disco"].mean() == pytest.approx(found.attribute["DiSCO"])


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ConfigError, match="target 't' is among the keys"):
        disclosure(ORIGINAL, SYN1, ["a", "t"], "t")
    with pytest.raises(ConfigError, match=r"synthetic records lack the column\(s\) \['b'\]"):
        disclosure(ORIGINAL, SYN1.drop(columns="b"), ["a", "b"], "t")
    with pytest.raises(ConfigError, match="denom_lim must be a positive integer"):
        disclosure(ORIGINAL, SYN1, ["a", "b"], "t", denom_lim=0)
    with pytest.raises(ConfigError, match="'R' is not a level of the target 't'"):
        disclosure(ORIGINAL, SYN1, ["a", "b"], "t", not_target_levels=["R"])  # a misspelt level never stays in
    with pytest.raises(ConfigError, match="synthetic records are empty"):
        disclosure(ORIGINAL, SYN1.iloc[:0], ["a", "b"], "t")


def test_per_key_settings_follow_the_keys_as_given_and_values_match_across_file_types():
    # use_keys_na per key, keys given out of the data's order: b (the key with a missing value) is
    # the one left out, as synthpop's "keys_na" row
    swapped = disclosure(ORIGINAL, SYN1, ["b", "a"], "t", use_keys_na=[False, True])
    assert swapped.identity["UiO"] == pytest.approx(30) and swapped.attribute["DiSCO"] == pytest.approx(60)
    # a number written as a float in one file and as text in the other is one label, as in R
    as_text = SYN1.assign(b=SYN1["b"].map(lambda v: "-" if pd.isna(v) else f"{v:g}").replace("-", None))
    assert disclosure(ORIGINAL, as_text, ["a", "b"], "t").attribute == disclosure(ORIGINAL, SYN1, ["a", "b"], "t").attribute
    # target levels given as values of the target's own type
    numeric = ORIGINAL.assign(t=(ORIGINAL["t"] == "Q").astype(float))
    synthetic = SYN1.assign(t=(SYN1["t"] == "Q").astype(float))
    assert disclosure(numeric, synthetic, ["a", "b"], "t", not_target_levels=[1.0]).attribute["DiSCO"] == pytest.approx(20)
