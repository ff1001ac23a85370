"""The calibration study's result as the audit quotes it: the calibrated size nearest to the
audited file's, the smallest share of member copies the verdict detected with 80 % power, and its
false-positive rate on the nulls (synthrisk.measures.calibrated_power)."""

import pandas as pd

from synthrisk.measures.calibrated_power import COLUMNS, published, statement
from synthrisk.study.calibration import publish_table


def _rates(n: int, powers: dict[float, float], null_rate: float = 0.02) -> pd.DataFrame:
    rows = [{"dataset": "adult", "n": n, "release": f"copies_{share:g}", "risk": "membership",
             "attack": "(risk verdict)", "splits": 200, "rate": rate, "rate_low": rate - 0.05, "rate_high": rate + 0.05}
            for share, rate in powers.items()]
    rows += [{"dataset": "adult", "n": n, "release": release, "risk": "membership", "attack": "(risk verdict)",
              "splits": 200, "rate": null_rate * k, "rate_low": 0.0, "rate_high": null_rate * k + 0.02}
             for k, release in enumerate(["population", "cart", "holdout"], start=1)]
    rows.append({"dataset": "adult", "n": n, "release": "copies_0.1", "risk": "membership", "attack": "dcr",
                 "splits": 200, "rate": 1.0, "rate_low": 0.9, "rate_high": 1.0})
    return pd.DataFrame(rows)


def test_statement_quotes_the_nearest_calibrated_size_and_the_worst_null():
    table = publish_table(pd.concat([_rates(1000, {0.01: 0.1, 0.05: 0.85, 0.1: 1.0}),
                                     _rates(10000, {0.01: 0.9, 0.05: 1.0})], ignore_index=True), "abc1234")
    assert list(table.columns) == COLUMNS and len(table) == 5  # per-attack rows are not published
    near_1k = statement("membership", 2500, table=table)
    assert "1,000 training records" in near_1k and "5 % of the records" in near_1k and "85 % of splits" in near_1k
    assert "6.0 % of splits" in near_1k  # the worst of the three nulls (holdout: 3 x 0.02)
    near_10k = statement("membership", 5000, table=table)
    assert "10,000 training records" in near_10k and "1 % of the records" in near_10k
    assert statement("linkability", 1000, table=table) is None


def test_a_verdict_that_never_reaches_the_power_says_so():
    table = publish_table(_rates(1000, {0.1: 0.3, 0.2: 0.6}), "abc1234")
    sentence = statement("membership", 1000, table=table)
    assert "did not reach 80% power" in sentence and "60 % of splits at 20 % copies" in sentence


def test_the_published_table_is_well_formed():
    table = published()
    assert list(table.columns) == COLUMNS
    if len(table):
        assert table["power"].between(0, 1).all() and (table["splits"] > 0).all()
        assert table.groupby(["dataset", "n", "risk"])["share"].apply(lambda s: s.is_monotonic_increasing).all()
