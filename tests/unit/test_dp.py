import dp_accounting
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from synthrisk.dp import Design, GaussianFamily, GLMFamily, clip_rows, dp_inference, gaussian_sigma, release_statistics
from synthrisk.dp import experiments as ex
from synthrisk.dp.frames import family_data
from synthrisk.dp.stage import DEFAULTS
from synthrisk.errors import ConfigError, DataError, DomainError


def glm_frame(kind: str, n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, 2, n)
    x2 = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    eta = -0.3 + 0.8 * x1 + 0.5 * (x2 == "b") - 0.4 * (x2 == "c")
    y = rng.binomial(1, 1 / (1 + np.exp(-eta))) if kind == "logistic" else rng.poisson(np.exp(eta))
    return pd.DataFrame({"x1": x1.astype(str), "x2": x2, "y": y})


# The public domain of glm_frame's columns (what a schema's `levels` declare).
LEVELS = {"x1": ["0", "1"], "x2": ["a", "b", "c"], "x3": ["0", "1"]}


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
    fam, data, _ = family_data(frame, kind, "y", ["x1", "x2"], LEVELS)
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
    fam, data, _ = family_data(frame, "logistic", "y", ["x1", "x2"], LEVELS)
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
    # docs/references.md: naive coverage of the Gaussian mean ~ 2 Phi(1.96 sqrt((1/n) / (2/n + sigma^2 / v))) - 1
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
                                     covariates=["x1", "x2"], levels=LEVELS, bootstrap_draws=50)
    out = result.to_json()
    for key in ("theta", "ci_low", "ci_high", "sigma", "naive_ci_low", "naive_ci_high"):
        assert key in out
    assert set(out["theta"]) == {"intercept", "x1[1]", "x2[b]", "x2[c]"}
    assert all(out["ci_low"][k] < out["theta"][k] < out["ci_high"][k] for k in out["theta"])
    assert reference["natural_clip"] == pytest.approx(2.0)


def test_same_seed_same_release():
    # the same release needs the same noise seed too: without one the noise is the OS's (tests/unit/test_dp_noise.py)
    a, _ = dp_inference(glm_frame("poisson"), "poisson", "y", 1.0, 1e-5, 10.0, ["x1", "x2"], LEVELS, seed=3,
                        bootstrap_draws=20, noise_seed=4)
    b, _ = dp_inference(glm_frame("poisson"), "poisson", "y", 1.0, 1e-5, 10.0, ["x1", "x2"], LEVELS, seed=3,
                        bootstrap_draws=20, noise_seed=4)
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
        dp_inference(glm_frame("logistic"), "logistic", "y", covariates=["x1"], levels=LEVELS, **args)


def test_bad_responses_and_sizes():
    frame = glm_frame("poisson")
    with pytest.raises(DataError, match="logistic family: response 'y' must be binary"):
        dp_inference(frame, "logistic", "y", 1.0, 1e-5, 2.0, covariates=["x1"], levels={**LEVELS, "y": ["0", "1", "2"]})
    with pytest.raises(DataError, match="poisson family: response 'y' must hold non-negative integers"):
        dp_inference(frame.assign(y=frame["y"] - 1), "poisson", "y", 1.0, 1e-5, 2.0, covariates=["x1"], levels=LEVELS)
    with pytest.raises(DataError, match="n = 20 records is too small .* need n >= "):
        dp_inference(frame.head(20), "poisson", "y", 0.1, 1e-5, 2.0, covariates=["x1"], levels=LEVELS)
    with pytest.raises(DataError, match="response column 'z' is not in the data"):
        dp_inference(frame, "poisson", "z", 1.0, 1e-5, 2.0)


def test_identifiability_is_decided_on_the_public_design_never_on_exact_cell_shares():
    frame = glm_frame("logistic")
    # Constant or collinear in the records but not in the public design: no exact-data check
    # before the release (it would leak); the analysis of the noisy release reports its validity.
    for data in (frame.assign(x1="1"), frame.assign(x3=frame["x1"])):
        result, _ = dp_inference(data, "logistic", "y", 1.0, 1e-5, 3.0, covariates=["x1", "x2", "x3"][:data.shape[1] - 1],
                                 levels=LEVELS, bootstrap_draws=20)
        assert isinstance(result.to_json()["valid"], bool)


def test_a_release_without_public_levels_names_the_column_unless_opted_in():
    frame = glm_frame("logistic")
    with pytest.raises(DomainError, match="covariate 'x2' has no public levels"):
        dp_inference(frame, "logistic", "y", 1.0, 1e-5, 2.0, covariates=["x1", "x2"], levels={"x1": ["0", "1"]})
    strings = frame.assign(y=np.where(frame["y"] == 1, "yes", "no"))
    with pytest.raises(DomainError, match="logistic response 'y' has no public levels"):
        dp_inference(strings, "logistic", "y", 1.0, 1e-5, 2.0, covariates=["x1", "x2"], levels=LEVELS)
    public, _ = dp_inference(frame, "logistic", "y", 1.0, 1e-5, 2.0, ["x1", "x2"], LEVELS, bootstrap_draws=20)
    assert public.to_json()["guarantee"] == "(epsilon, delta)-DP"
    opted, _ = dp_inference(frame, "logistic", "y", 1.0, 1e-5, 2.0, ["x1", "x2"], bootstrap_draws=20,
                            domain="from_data")
    assert opted.to_json()["guarantee"] == "not DP: domain read from the data"


def test_design_cells_follow_levels():
    design = Design.from_levels({"a": ["0", "1"], "b": ["x", "y", "z"]})
    frame = pd.DataFrame({"a": ["1", "0"], "b": ["z", "y"]})
    cells = design.cell_index(frame)
    assert design.cell_labels[cells[0]] == ("1", "z") and design.cell_labels[cells[1]] == ("0", "y")
    assert design.names == ["intercept", "a[1]", "b[y]", "b[z]"]
    with pytest.raises(DataError, match="covariate 'b': values \\['w'\\] are not among its levels"):
        design.cell_index(pd.DataFrame({"a": ["1"], "b": ["w"]}))
    assert isinstance(GLMFamily("logistic", design.cells, design.names).dim, int)


def test_cli_prints_the_design_json(tmp_path, capsys):
    import json
    import subprocess
    import sys

    from synthrisk.cli import main

    glm_frame("logistic").to_csv(tmp_path / "data.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "synthrisk.cli", "dp", "--data", str(tmp_path / "data.csv"),
                           "--family", "logistic", "--response", "y", "--epsilon", "1", "--delta", "1e-5",
                           "--clip", "2", "--bootstrap", "20", "--domain", "from_data", "--json"],
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert {"theta", "ci_low", "ci_high", "sigma", "naive_ci_low", "naive_ci_high"} <= set(out)
    assert "nonprivate_reference" not in out  # the non-private numbers only on request
    assert out["guarantee"] == "not DP: domain read from the data"
    schema = {"name": "toy", "source": {"path": "data.csv"}, "quasi_identifiers": ["x1"], "sensitive": ["y"],
              "columns": {"x1": {"type": "categorical", "levels": ["0", "1"]},
                          "x2": {"type": "categorical", "levels": ["a", "b", "c"]}, "y": {"type": "integer"}}}
    (tmp_path / "schema.yaml").write_text(__import__("yaml").safe_dump(schema))
    # The same command's function in this process (a new process costs seconds of imports).
    common = ["dp", "--data", str(tmp_path / "data.csv"), "--family", "logistic", "--response", "y",
              "--epsilon", "1", "--delta", "1e-5", "--clip", "2"]
    assert main([*common, "--bootstrap", "20", "--schema", str(tmp_path / "schema.yaml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["guarantee"] == "(epsilon, delta)-DP"
    assert main(common) != 0 and "covariate 'x1' has no public levels" in capsys.readouterr().err
    bad = subprocess.run([sys.executable, "-m", "synthrisk.cli", "dp", "--data", str(tmp_path / "data.csv"),
                          "--family", "poisson", "--response", "x2", "--epsilon", "1", "--delta", "1e-5",
                          "--clip", "2", "--domain", "from_data"], capture_output=True, text=True)
    assert bad.returncode != 0 and "response 'x2' must be numeric" in bad.stderr and "Traceback" not in bad.stderr


def _scaling_grid(c1=2.0, c2=3.0, clip=20.0, delta=1e-5):
    """An exact grid MSE = c1/n + c2 sigma^2 with the analytic Gaussian mechanism's sigma."""
    rows = []
    for n in (500, 2000, 10000):
        for eps in (0.1, 0.5, 2.0, 10.0):
            sigma = gaussian_sigma(eps, delta, 2 * clip / n)
            rows.append({"family": "gaussian", "parameter": "mean", "n": n, "epsilon": eps, "sigma": sigma,
                         "clip": clip, "delta": delta, "mse": c1 / n + c2 * sigma ** 2,
                         "sampling_variance": c1 / n, "theoretical_variance": c1 / n + c2 * sigma ** 2})
    return pd.DataFrame(rows)


def test_scaling_fit_regresses_on_the_noise_variance():
    grid = _scaling_grid()
    # The premise: sigma * n * eps is not constant in eps, so 1/(n eps)^2 is not the noise variance.
    scaled = (grid["sigma"] * grid["n"] * grid["epsilon"]).to_numpy()
    assert scaled.max() / scaled.min() > 1.3
    fit = ex.scaling_fit(grid).iloc[0]
    assert fit["c1"] == pytest.approx(2.0, rel=1e-6) and fit["c2"] == pytest.approx(3.0, rel=1e-6)
    assert fit["c1_theory"] == pytest.approx(2.0) and fit["c2_theory"] == pytest.approx(3.0)
    assert fit["r2_log"] == pytest.approx(1.0, abs=1e-9) and fit["max_abs_log_error"] < 1e-6
    assert fit["crossover_n_at_eps1"] == pytest.approx(3.0 * gaussian_sigma(1.0, 1e-5, 40.0) ** 2 / 2.0, rel=1e-6)


def test_scaling_fit_is_repeated_on_the_cells_where_every_release_has_a_solution():
    # Cells whose MSE comes from the few releases with a solution (here: saturated at 5) break the
    # law on every cell; the fit on the cells without invalid releases recovers it exactly.
    grid = _scaling_grid().assign(invalid=0)
    broken = grid["sigma"] == grid["sigma"].max()
    grid.loc[broken, "mse"], grid.loc[broken, "invalid"] = 5.0, 900
    fit = ex.scaling_fit(grid).iloc[0]
    assert fit["cells_all_valid"] == len(grid) - broken.sum()
    assert fit["c1_all_valid"] == pytest.approx(2.0, rel=1e-6) and fit["c2_all_valid"] == pytest.approx(3.0, rel=1e-6)
    assert fit["r2_log_all_valid"] == pytest.approx(1.0, abs=1e-9) and fit["r2_log"] < 0.999


def test_scaling_and_variance_figures_say_what_is_computed(monkeypatch, tmp_path):
    from synthrisk.dp import stage

    figures = []
    monkeypatch.setattr(stage, "save", lambda fig, path: figures.append(fig))
    grid = _scaling_grid().assign(empirical_variance=lambda g: g["mse"])
    stage.plot("scaling", {"results": grid, "summary": ex.scaling_fit(grid)}, tmp_path / "s.png")
    ax = figures[-1].axes[0]
    assert "sigma^2" in ax.get_title()
    for line in ax.get_lines()[1::2]:  # the fitted law passes through the exact grid's points
        x, y = line.get_xdata(), line.get_ydata()
        exact = grid[np.isclose(grid["n"], x[0]) & np.isclose(grid["mse"], y[0], rtol=1e-6)]
        assert len(exact) == 1, (x[0], y[0])
    stage.plot("variance", {"results": grid, "summary": ex.variance_summary(grid)}, tmp_path / "v.png")
    label = figures[-1].axes[0].get_xlabel()
    assert "Cov}(s)" in label and "\\sigma^2 J J'" in label and "I^" not in label


def _infeasible_logistic():
    """A logistic release whose noisy mean has no solution: the y-total exceeds the cell shares."""
    setup = ex.simulation_setups()["logistic"]
    fam = setup.family
    noisy = fam.mean_map(setup.theta).copy()
    noisy[fam.n_cells] = 1.5  # mean of y over all records > 1: outside the mean space
    return setup, fam, noisy


def test_bootstrap_is_skipped_for_a_release_without_solution():
    from synthrisk.dp import bootstrap, plugin

    setup, fam, noisy = _infeasible_logistic()
    theta, valid = plugin(fam, noisy)
    assert not valid
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    boot = bootstrap(fam, theta, 2000, setup.clip, 0.01, rng, draws=20, valid=bool(valid))
    assert not boot.valid and boot.solved == 0 and np.isnan(boot.low).all() and np.isnan(boot.high).all()
    assert rng.bit_generator.state == state  # skipped: nothing was simulated from the diverged fit
    broken = fam.mean_map(setup.theta) * np.nan
    assert not bootstrap(fam, broken, 2000, setup.clip, 0.01, rng, draws=20).valid
    good = bootstrap(fam, setup.theta, 2000, setup.clip, 0.01, rng, draws=40)
    beta = setup.theta[fam.reported]
    assert good.valid and good.solved == 40 and np.all(good.low < beta) and np.all(beta < good.high)


def test_analysis_of_a_release_without_solution_flags_its_bootstrap():
    from synthrisk.dp import Release, analyse

    setup, fam, noisy = _infeasible_logistic()
    release = Release(noisy_mean=noisy, n=2000, epsilon=1.0, delta=1e-5, clip=setup.clip,
                      sigma=gaussian_sigma(1.0, 1e-5, 2 * setup.clip / 2000), family="logistic")
    with np.errstate(all="ignore"):
        result = analyse(fam, release, np.random.default_rng(8), bootstrap_draws=20)
    out = result.to_json()
    assert out["valid"] is False and out["bootstrap_valid"] is False
    assert out["bootstrap_ci_low"] is None and out["bootstrap_ci_high"] is None


def test_coverage_counts_invalid_releases_apart_from_the_coverage():
    # Poisson at eps = 0.2, n = 2000: about a third of the releases have no plug-in solution.
    settings = {**DEFAULTS, "reps": 60, "noise_aware_reps": 0, "bootstrap_reps": 60, "bootstrap_draws": 20}
    setup = ex.simulation_setups()["poisson"]
    with np.errstate(all="ignore"):
        rows = {r["interval"]: r for r in ex.coverage_rows(setup, "poisson", 2000, 0.2, setup.clip, settings,
                                                            np.random.default_rng(9),
                                                            intervals=("plugin_wald", "bootstrap"))}
    plug, boot = rows["plugin_wald"], rows["bootstrap"]
    assert plug["invalid_plugin"] > 0
    # every release without a solution is skipped by the bootstrap, never turned into an interval
    assert boot["bootstrap_skipped"] == plug["invalid_plugin"] == plug["invalid"]
    assert boot["invalid"] == boot["bootstrap_skipped"] + boot["bootstrap_flagged"]
    for row in (plug, boot):
        assert row["valid_reps"] + row["invalid"] == row["reps"] == 60
        assert row["invalid_share"] == pytest.approx(row["invalid"] / 60)
        # coverage over the valid intervals; counting the invalid ones as misses gives the old number
        assert row["coverage"] * row["valid_reps"] == pytest.approx(row["coverage_invalid_as_miss"] * 60)
        assert row["mc_error"] == pytest.approx(
            1.96 * np.sqrt(row["coverage"] * (1 - row["coverage"]) / row["valid_reps"]), abs=1e-5)
