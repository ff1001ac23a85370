import dp_accounting
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from synthrisk.dp import Design, GaussianFamily, GLMFamily, clip_rows, dp_inference, gaussian_sigma, release_statistics
from synthrisk.dp import experiments as ex
from synthrisk.dp.frames import family_data
from synthrisk.dp.stage import DEFAULTS
from synthrisk.errors import ConfigError, DataError


def glm_frame(kind: str, n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, 2, n)
    x2 = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    eta = -0.3 + 0.8 * x1 + 0.5 * (x2 == "b") - 0.4 * (x2 == "c")
    y = rng.binomial(1, 1 / (1 + np.exp(-eta))) if kind == "logistic" else rng.poisson(np.exp(eta))
    return pd.DataFrame({"x1": x1.astype(str), "x2": x2, "y": y})


def numerical_jacobian(f, x, h=1e-6):
    base = f(x)
    out = np.empty((len(base), len(x)))
    for j in range(len(x)):
        step = np.zeros_like(x)
        step[j] = h
        out[:, j] = (f(x + step) - f(x - step)) / (2 * h)
    return out


def test_sigma_is_dp_accountings_analytic_gaussian_times_sensitivity():
    n, clip = 2500, 3.0
    sigma = gaussian_sigma(0.7, 1e-6, 2 * clip / n)
    assert sigma == pytest.approx(dp_accounting.get_sigma_gaussian(0.7, 1e-6) * 2 * clip / n, rel=1e-12)
    # and the noise really buys epsilon = 0.7 at that delta for unit sensitivity
    assert dp_accounting.get_epsilon_gaussian(sigma / (2 * clip / n), 1e-6) == pytest.approx(0.7, rel=1e-6)
    rng = np.random.default_rng(0)
    release = release_statistics(rng.normal(size=(n, 2)), 0.7, 1e-6, clip, rng, "gaussian")
    assert release.sigma == pytest.approx(sigma) and release.sensitivity == pytest.approx(2 * clip / n)


def test_clipping_bounds_every_record_and_keeps_short_ones():
    rng = np.random.default_rng(1)
    rows = rng.normal(scale=5, size=(1000, 4))
    clipped = clip_rows(rows, 2.0)
    assert np.linalg.norm(clipped, axis=1).max() <= 2.0 + 1e-12
    short = np.linalg.norm(rows, axis=1) <= 2.0
    assert np.array_equal(clipped[short], rows[short])
    long = ~short
    cosine = (clipped[long] * rows[long]).sum(1) / (np.linalg.norm(clipped[long], axis=1) * np.linalg.norm(rows[long], axis=1))
    assert np.allclose(cosine, 1.0)


@pytest.mark.parametrize("kind", ["logistic", "poisson"])
def test_noise_free_plugin_equals_statsmodels_glm(kind):
    frame = glm_frame(kind)
    fam, data, _ = family_data(frame, kind, "y", ["x1", "x2"])
    theta, valid = fam.solve(fam.statistic(data).mean(axis=0))
    assert valid
    X = fam.cells[data["cell"]]
    link = sm.families.Binomial() if kind == "logistic" else sm.families.Poisson()
    fit = sm.GLM(data["y"], X, family=link).fit(tol=1e-14)
    np.testing.assert_allclose(theta[fam.reported], fit.params, atol=1e-8)
    # ordinary Wald standard errors (sigma = 0) equal statsmodels' too
    from synthrisk.dp import wald
    _, _, _, se = wald(fam, theta, len(frame), 0.0)
    np.testing.assert_allclose(se, fit.bse, rtol=1e-6)


def test_noise_free_gaussian_plugin_is_sample_mean_and_mle_variance():
    y = np.random.default_rng(2).normal(3.0, 2.0, 5000)
    theta, _ = GaussianFamily().solve(GaussianFamily().statistic({"y": y}).mean(axis=0))
    np.testing.assert_allclose(theta, [y.mean(), y.var(ddof=0)], rtol=1e-10)


def test_fisher_information_matches_numerical_hessian():
    y = np.random.default_rng(3).normal(1.0, 1.5, 4000)
    gauss = GaussianFamily()
    mle, _ = gauss.solve(gauss.statistic({"y": y}).mean(axis=0))

    def gradient(theta):
        return numerical_jacobian(lambda t: np.array([gauss.log_likelihood(t, {"y": y})]), theta)[0]

    hessian = numerical_jacobian(gradient, mle, h=1e-4)
    np.testing.assert_allclose(-hessian, gauss.fisher_information(mle), rtol=1e-3, atol=1e-6)

    frame = glm_frame("logistic")
    fam, data, _ = family_data(frame, "logistic", "y", ["x1", "x2"])
    theta, _ = fam.solve(fam.statistic(data).mean(axis=0))
    beta = theta[fam.reported]

    def glm_gradient(b):
        return numerical_jacobian(lambda bb: np.array([fam.log_likelihood(np.concatenate([theta[:fam.n_cells], bb]),
                                                                          data)]), b)[0]

    glm_hessian = numerical_jacobian(glm_gradient, beta, h=1e-4)
    np.testing.assert_allclose(-glm_hessian, fam.fisher_information(theta), rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("name", ["gaussian", "logistic", "poisson"])
def test_jacobian_is_the_derivative_of_the_solution_map(name):
    setup = ex.simulation_setups()[name]
    fam = setup.family
    m = fam.mean_map(setup.theta)
    numeric = numerical_jacobian(lambda mm: fam.solve(mm)[0][fam.reported], m, h=1e-7)
    np.testing.assert_allclose(fam.jacobian(setup.theta), numeric, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["gaussian", "logistic", "poisson"])
def test_statistic_covariance_matches_simulation(name):
    setup = ex.simulation_setups()[name]
    fam = setup.family
    stats = fam.statistic(fam.sample(setup.theta, 200_000, np.random.default_rng(4)))
    np.testing.assert_allclose(np.cov(stats.T), fam.stat_cov(setup.theta), atol=0.02 * np.abs(fam.stat_cov(setup.theta)).max())


def test_gaussian_calibrated_wald_covers_and_naive_does_not():
    settings = {**DEFAULTS, "reps": 600, "noise_aware_reps": 0, "bootstrap_reps": 0}
    setup = ex.simulation_setups()["gaussian"]
    rows = {r["interval"]: r for r in ex.coverage_rows(setup, "gaussian", 2000, 0.5, setup.clip, settings,
                                                        np.random.default_rng(5))}
    assert 0.92 <= rows["plugin_wald"]["coverage"] <= 0.98
    assert 0.92 <= rows["nonprivate"]["coverage"] <= 0.98
    assert rows["naive"]["coverage"] < 0.5


def test_naive_coverage_follows_the_closed_form():
    # REFERENCES.md: naive coverage of the Gaussian mean ~ 2 Phi(1.96 sqrt((1/n) / (2/n + sigma^2 / v))) - 1
    from scipy.stats import norm
    settings = {**DEFAULTS, "reps": 2000, "noise_aware_reps": 0, "bootstrap_reps": 0}
    setup = ex.simulation_setups()["gaussian"]
    rows = {r["interval"]: r for r in ex.coverage_rows(setup, "gaussian", 2000, 2.0, setup.clip, settings,
                                                        np.random.default_rng(6))}
    sigma, n = rows["naive"]["sigma"], 2000
    expected = 2 * norm.cdf(1.96 * np.sqrt((1 / n) / (2 / n + sigma ** 2 / 1.0))) - 1
    assert rows["naive"]["coverage"] == pytest.approx(expected, abs=0.035)


def test_dp_inference_on_a_frame_reports_every_interval():
    result, reference = dp_inference(glm_frame("logistic"), "logistic", "y", 2.0, 1e-5, 2.0,
                                     covariates=["x1", "x2"], bootstrap_draws=50)
    out = result.to_json()
    for key in ("theta", "ci_low", "ci_high", "sigma", "naive_ci_low", "naive_ci_high"):
        assert key in out
    assert set(out["theta"]) == {"intercept", "x1[1]", "x2[b]", "x2[c]"}
    assert all(out["ci_low"][k] < out["theta"][k] < out["ci_high"][k] for k in out["theta"])
    assert reference["natural_clip"] == pytest.approx(2.0)


def test_same_seed_same_release():
    a, _ = dp_inference(glm_frame("poisson"), "poisson", "y", 1.0, 1e-5, 10.0, ["x1", "x2"], seed=3,
                        bootstrap_draws=20)
    b, _ = dp_inference(glm_frame("poisson"), "poisson", "y", 1.0, 1e-5, 10.0, ["x1", "x2"], seed=3,
                        bootstrap_draws=20)
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epsilon": 0.0}, ConfigError, "epsilon must be"),
    ({"epsilon": -1.0}, ConfigError, "epsilon must be"),
    ({"delta": 1.0}, ConfigError, "delta must be in \\(0, 1\\)"),
    ({"delta": 0.0}, ConfigError, "delta must be in \\(0, 1\\)"),
    ({"clip": 0.0}, ConfigError, "clip bound B"),
])
def test_bad_privacy_parameters(kwargs, error, match):
    args = {"epsilon": 1.0, "delta": 1e-5, "clip": 2.0, **kwargs}
    with pytest.raises(error, match=match):
        dp_inference(glm_frame("logistic"), "logistic", "y", covariates=["x1"], **args)


def test_bad_responses_and_sizes():
    frame = glm_frame("poisson")
    with pytest.raises(DataError, match="logistic family: response 'y' must be binary"):
        dp_inference(frame, "logistic", "y", 1.0, 1e-5, 2.0, covariates=["x1"])
    with pytest.raises(DataError, match="poisson family: response 'y' must hold non-negative integers"):
        dp_inference(frame.assign(y=frame["y"] - 1), "poisson", "y", 1.0, 1e-5, 2.0, covariates=["x1"])
    with pytest.raises(DataError, match="n = 20 records is too small .* need n >= "):
        dp_inference(frame.head(20), "poisson", "y", 0.1, 1e-5, 2.0, covariates=["x1"])
    with pytest.raises(DataError, match="response column 'z' is not in the data"):
        dp_inference(frame, "poisson", "z", 1.0, 1e-5, 2.0)


def test_singular_fisher_information_names_the_covariate():
    frame = glm_frame("logistic")
    with pytest.raises(DataError, match="covariate 'x1\\[1\\]' is constant"):
        dp_inference(frame.assign(x1="1"), "logistic", "y", 1.0, 1e-5, 2.0, covariates=["x1", "x2"],
                     levels={"x1": ["0", "1"]})
    twin = frame.assign(x3=frame["x1"])
    with pytest.raises(DataError, match="collinear"):
        dp_inference(twin, "logistic", "y", 1.0, 1e-5, 3.0, covariates=["x1", "x2", "x3"])


def test_design_cells_follow_levels():
    design = Design.from_levels({"a": ["0", "1"], "b": ["x", "y", "z"]})
    frame = pd.DataFrame({"a": ["1", "0"], "b": ["z", "y"]})
    cells = design.cell_index(frame)
    assert design.cell_labels[cells[0]] == ("1", "z") and design.cell_labels[cells[1]] == ("0", "y")
    assert design.names == ["intercept", "a[1]", "b[y]", "b[z]"]
    with pytest.raises(DataError, match="covariate 'b': values \\['w'\\] are not among its levels"):
        design.cell_index(pd.DataFrame({"a": ["1"], "b": ["w"]}))
    assert isinstance(GLMFamily("logistic", design.cells, design.names).dim, int)


def test_cli_prints_the_design_json(tmp_path):
    import json
    import subprocess
    import sys

    glm_frame("logistic").to_csv(tmp_path / "data.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "synthrisk.cli", "dp", "--data", str(tmp_path / "data.csv"),
                           "--family", "logistic", "--response", "y", "--epsilon", "1", "--delta", "1e-5",
                           "--clip", "2", "--bootstrap", "20", "--json"], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert {"theta", "ci_low", "ci_high", "sigma", "naive_ci_low", "naive_ci_high"} <= set(out)
    assert "nonprivate_reference" not in out  # the non-private numbers only on request
    bad = subprocess.run([sys.executable, "-m", "synthrisk.cli", "dp", "--data", str(tmp_path / "data.csv"),
                          "--family", "poisson", "--response", "x2", "--epsilon", "1", "--delta", "1e-5",
                          "--clip", "2"], capture_output=True, text=True)
    assert bad.returncode != 0 and "response 'x2' must be numeric" in bad.stderr and "Traceback" not in bad.stderr
