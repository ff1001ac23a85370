"""Holm's correction (synthrisk.stats.multiple_testing) against statsmodels' `multipletests`, the
library it stands in for, on random families with ties, zeros and ones."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from synthrisk.stats.multiple_testing import holm_adjusted, holm_rejects


@pytest.fixture
def statsmodels_without_gc(monkeypatch):
    """statsmodels' Holm runs `gc.collect()` on every call (the reason synthrisk has its own), a
    third of a second each in a process that holds torch and jax; the answers do not depend on it."""
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.mark.parametrize("seed", range(20))
def test_holm_agrees_with_statsmodels(seed, statsmodels_without_gc):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 12))
    p = rng.choice([rng.uniform(0, 0.1), rng.uniform(0, 1), 0.0, 1.0, 0.01], size=m)
    p = np.where(rng.uniform(size=m) < 0.5, rng.uniform(0, 0.2, size=m), p)
    for alpha in (0.01, 0.05, 0.2):
        rejected, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
        np.testing.assert_allclose(holm_adjusted(p), adjusted, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(holm_rejects(p, alpha), rejected)


def test_holm_is_step_down_and_refuses_untested_hypotheses():
    # 0.01 * 3 <= 0.05 rejects; 0.03 * 2 > 0.05 stops the procedure, so 0.04 is kept too
    assert holm_rejects([0.04, 0.01, 0.03], 0.05).tolist() == [False, True, False]
    with pytest.raises(ValueError, match="NaN"):
        holm_adjusted([0.01, np.nan])


@pytest.mark.parametrize("seed", range(20))
def test_benjamini_hochberg_agrees_with_statsmodels(seed):
    from synthrisk.stats.multiple_testing import benjamini_hochberg

    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(1, 300))
    p = np.where(rng.uniform(size=m) < 0.2, rng.uniform(0, 0.002, size=m), rng.uniform(size=m))
    p[rng.uniform(size=m) < 0.1] = 1 / 1001  # ties, as conformal p-values have
    for q in (0.0125, 0.05, 0.2):
        rejected, _, _, _ = multipletests(p, alpha=q, method="fdr_bh")
        np.testing.assert_array_equal(benjamini_hochberg(p, q), rejected)


def test_twice_the_median_merges_seeds_validly():
    from synthrisk.stats.multiple_testing import merged_p_value

    assert merged_p_value([0.03]) == 0.03 and np.isnan(merged_p_value([]))
    assert merged_p_value([0.01, 0.02, 0.9]) == pytest.approx(0.04)
    # Under the null, with seeds that share their data (dependent p-values), the merged p-value is
    # below a level at most that often.
    rng = np.random.default_rng(0)
    shared = rng.uniform(size=(20000, 1))
    p = np.clip(shared + rng.normal(0, 0.05, size=(20000, 5)), 0, 1)
    merged = np.array([merged_p_value(row) for row in p])
    assert (merged <= 0.05).mean() <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 20000)
