"""The batched DP Monte Carlo against its per-repetition reference, and the exact record draws
against record-by-record sampling.

The coverage study analyses every repetition at once (lockstep L-BFGS-B, one Newton solve for all
bootstrap releases); dp.reference analyses them one at a time with scipy's minimize and one
bootstrap per release. With one random stream per repetition they must agree to the last bit.
The releases of the regression families are drawn through the counts of (cell, response) pairs
instead of record by record: the same law, checked here on single records and on sums.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import chi2

from synthrisk.dp import experiments as ex
from synthrisk.dp.inference import noise_aware, noise_aware_batch, noise_aware_objective, simulate_releases
from synthrisk.dp.lockstep import lbfgsb_lockstep
from synthrisk.dp.mechanism import clip_rows, gaussian_sigma
from synthrisk.dp.reference import coverage_rows_one_at_a_time
from synthrisk.dp.stage import DEFAULTS

FEW = {**DEFAULTS, "reps": 10, "noise_aware_reps": 10, "bootstrap_reps": 6, "bootstrap_draws": 30}


@pytest.mark.parametrize("name", ["gaussian", "logistic", "poisson"])
@pytest.mark.parametrize("eps", [0.2, 2.0])
def test_batched_coverage_equals_the_per_repetition_reference(name, eps):
    # eps = 0.2 at n = 1000 leaves Poisson and logistic releases without a plug-in solution, so the
    # skipped bootstraps and invalid intervals are compared too.
    setup = ex.simulation_setups()[name]
    with np.errstate(all="ignore"):
        batched = pd.DataFrame(ex.coverage_rows(setup, name, 1000, eps, setup.clip, FEW, np.random.default_rng(11)))
        one_by_one = pd.DataFrame(coverage_rows_one_at_a_time(setup, name, 1000, eps, setup.clip, FEW,
                                                              np.random.default_rng(11)))
    pd.testing.assert_frame_equal(batched, one_by_one, check_exact=True)
    assert list(batched["interval"]) == list(ex.INTERVALS)


def test_invalid_releases_reach_the_comparison():
    setup = ex.simulation_setups()["poisson"]
    with np.errstate(all="ignore"):
        rows = ex.coverage_rows(setup, "poisson", 1000, 0.2, setup.clip, FEW, np.random.default_rng(11))
    assert rows[0]["invalid_plugin"] > 0  # the equality test above covers releases without a solution


def test_clipped_coverage_equals_the_reference_when_the_clip_binds():
    setup = ex.simulation_setups()["poisson"]
    intervals = ("plugin_wald", "bootstrap", "naive")
    args = (setup, "poisson", 1000, 1.0, setup.clip * 0.1, FEW)
    with np.errstate(all="ignore"):
        batched = ex.coverage_rows(*args, np.random.default_rng(12), intervals=intervals)
        one_by_one = coverage_rows_one_at_a_time(*args, np.random.default_rng(12), intervals=intervals)
    pd.testing.assert_frame_equal(pd.DataFrame(batched), pd.DataFrame(one_by_one), check_exact=True)


@pytest.mark.parametrize("name", ["gaussian", "logistic", "poisson"])
def test_lockstep_lbfgsb_is_scipys_minimize(name):
    setup = ex.simulation_setups()[name]
    fam = setup.family
    sigma = gaussian_sigma(0.5, 1e-5, 2 * setup.clip / 1000)
    noisy, _ = simulate_releases(fam, setup.theta, 1000, setup.clip, sigma, np.random.default_rng(13), 8)
    start, _ = fam.solve(noisy)
    with np.errstate(all="ignore"):
        batched = noise_aware_batch(fam, noisy, 1000, sigma, start)
        for r in range(len(noisy)):
            assert np.array_equal(batched[r], noise_aware(fam, noisy[r], 1000, sigma, start[r]))
            # and noise_aware is scipy's minimize on the objective of that release alone
            free = minimize(lambda x, r=r: float(noise_aware_objective(fam, x[None], noisy[r:r + 1], 1000, sigma)[0]),
                            fam.theta_to_free(start[r]), method="L-BFGS-B").x
            assert np.array_equal(batched[r], fam.free_to_theta(free))


def test_lockstep_lbfgsb_on_a_known_minimum():
    centres = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]])

    def objective(x, rows):
        return np.sum((x - centres[rows]) ** 2 * [1.0, 10.0], axis=-1)

    np.testing.assert_allclose(lbfgsb_lockstep(objective, np.zeros((3, 2))), centres, atol=1e-4)


def _record_by_record(fam, theta, n, clip, rng, size):
    """The releases' clipped means drawn the way the records are: one at a time."""
    data = fam.sample(theta, n, rng, size=(size,))
    return clip_rows(fam.statistic(data), clip).mean(axis=-2)


@pytest.mark.parametrize("name, clip", [("logistic", 1.2), ("logistic", 2.0), ("poisson", 3.0), ("poisson", 15.0)])
def test_one_record_drawn_through_counts_has_the_law_of_a_record(name, clip):
    # n = 1: the release is one record's clipped statistic, a discrete law; compare the frequencies
    # of its values to those of records drawn one by one (chi-square on the pooled table).
    setup = ex.simulation_setups()[name]
    fam = setup.family
    draws = 40_000
    counted = fam.clipped_mean_statistic(setup.theta, 1, clip, np.random.default_rng(14), (draws,))
    direct = _record_by_record(fam, setup.theta, 1, clip, np.random.default_rng(15), draws)
    values, index = np.unique(np.round(np.concatenate([counted, direct]), 9), axis=0, return_inverse=True)
    table = np.stack([np.bincount(index[:draws], minlength=len(values)),
                      np.bincount(index[draws:], minlength=len(values))])
    table = table[:, table.sum(0) >= 10]  # pool-free chi-square on the cells with data
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    statistic = ((table - expected) ** 2 / expected).sum()
    assert chi2.sf(statistic, table.shape[1] - 1) > 1e-3
    assert len(values) > 2 and np.all(np.linalg.norm(counted, axis=-1) <= clip + 1e-12)


@pytest.mark.parametrize("name, clip", [("gaussian", 1.5), ("logistic", 1.2), ("poisson", 3.0)])
def test_clipped_mean_of_many_records_has_the_right_mean_and_covariance(name, clip):
    # The mean of n clipped records: mean m and covariance C/n, with m and C those of one clipped
    # record (estimated from 200,000 records drawn one by one).
    setup = ex.simulation_setups()[name]
    fam = setup.family
    one = clip_rows(fam.statistic(fam.sample(setup.theta, 200_000, np.random.default_rng(16))), clip)
    m, cov = one.mean(axis=0), np.cov(one.T)
    n, draws = 50, 20_000
    means = fam.clipped_mean_statistic(setup.theta, n, clip, np.random.default_rng(17), (draws,))
    se = np.sqrt(np.diag(cov) / n / draws)
    assert np.all(np.abs(means.mean(axis=0) - m) < 4.5 * se + 1e-12)
    np.testing.assert_allclose(np.cov(means.T) * n, cov, atol=0.06 * np.abs(cov).max())


def test_large_poisson_rates_fall_back_to_record_draws():
    # A bootstrap from a wild estimate can have rates in the thousands: too wide to histogram.
    setup = ex.simulation_setups()["poisson"]
    fam = setup.family
    theta = setup.theta.copy()
    theta[fam.n_cells] = 8.0  # intercept: rate e^8 ~ 3000
    means = fam.clipped_mean_statistic(theta, 20, 15.0, np.random.default_rng(18), (5,))
    assert means.shape == (5, fam.dim) and np.all(np.isfinite(means))
    assert np.all(np.linalg.norm(means, axis=-1) <= 15.0 + 1e-9)
