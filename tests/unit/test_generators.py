import numpy as np
import pandas as pd
import pytest

from synthrisk.data import split_real
from synthrisk.errors import ConfigError
from synthrisk.generators import backends, make_generator
from synthrisk.generators.run import run_generator

FAST = {
    "cart": {"backend": "cart"},
    "identity": {"backend": "identity"},
    "independent": {"backend": "independent"},
    "gaussian_copula": {"backend": "sdv", "model": "GaussianCopulaSynthesizer"},
    "tvae": {"backend": "sdv", "model": "TVAESynthesizer", "params": {"epochs": 2}},
    # a noise seed: without one MST's noise comes from the operating system (tests/unit/test_dp_noise.py)
    "mst": {"backend": "mst", "params": {"epsilon": 2.0, "iters": 200, "noise_seed": 5}},
}


@pytest.fixture(scope="module")
def adult_train(adult):
    return split_real(adult, 800, 10, 0, seed=0)["train"].drop(columns="row_id")


def check_output_schema(synthetic, train, schema, n):
    assert list(synthetic.columns) == list(train.columns)
    assert synthetic.dtypes.equals(train.dtypes)
    assert len(synthetic) == n
    for column in schema.categorical:
        # A generator may use the public domain (DP ones read it only from there), never more.
        allowed = set(train[column].dropna()) | set(schema.levels.get(column, []))
        assert set(synthetic[column].dropna()) <= allowed, column
    for column, (low, high) in schema.bounds.items():
        values = synthetic[column].dropna().astype(float)
        assert values.between(min(low, train[column].min()), max(high, train[column].max())).all(), column


@pytest.mark.parametrize("name", list(FAST))
def test_output_schema_and_determinism(name, adult_train, adult_schema):
    first = make_generator(FAST[name], seed=3).fit(adult_train, adult_schema).sample(500, seed=3)
    check_output_schema(first, adult_train, adult_schema, 500)
    again = make_generator(FAST[name], seed=3).fit(adult_train, adult_schema).sample(500, seed=3)
    pd.testing.assert_frame_equal(first, again)


@pytest.mark.parametrize("name", ["cart", "independent", "identity", "mst"])
def test_missing_values_are_reproduced(name, mixed, mixed_schema):
    synthetic = make_generator(FAST[name], seed=0).fit(mixed, mixed_schema).sample(2000, seed=1)
    check_output_schema(synthetic, mixed, mixed_schema, 2000)
    for column in ("num", "cnt", "cat"):
        assert 0.03 < synthetic[column].isna().mean() < 0.2, column


def test_identity_releases_the_members(adult_train, adult_schema):
    out = make_generator(FAST["identity"]).fit(adult_train, adult_schema).sample(len(adult_train), 0)
    def key(f):
        return f.astype(str).apply("|".join, axis=1).sort_values().tolist()

    assert key(out) == key(adult_train)


def test_cart_keeps_relationships_independent_breaks_them(sim_schema):
    from synthrisk.data import load_dataset

    real = load_dataset(sim_schema).iloc[:3000]
    def corr(f):
        return f["x1"].corr(f["y_cont"])

    cart = make_generator(FAST["cart"], seed=0).fit(real, sim_schema).sample(3000, 0)
    indep = make_generator(FAST["independent"], seed=0).fit(real, sim_schema).sample(3000, 0)
    assert abs(corr(cart) - corr(real)) < 0.1
    assert abs(corr(indep)) < 0.06


def test_unknown_backend_is_a_config_error():
    with pytest.raises(ConfigError, match="generators.mine.backend: unknown generator backend 'nope'"):
        make_generator({"backend": "nope"}, name="mine")
    assert {"cart", "sdv", "identity", "independent"} <= set(backends())


def test_failures_and_timeouts_are_recorded_not_raised(adult_train, adult_schema):
    synthetic, status = run_generator("bad", {"backend": "sdv", "model": "NoSuchSynthesizer"},
                                      adult_train, adult_schema, 100, 0)
    assert status["status"] == "failed" and "NoSuchSynthesizer" in status["error"]
    assert len(synthetic) == 0 and list(synthetic.columns) == list(adult_train.columns)
    spec = {"backend": "sdv", "model": "CTGANSynthesizer", "params": {"epochs": 500}, "timeout": 1.0}
    _, status = run_generator("slow", spec, adult_train, adult_schema, 100, 0)
    assert status["status"] == "failed" and "time limit" in status["error"]
    _, status = run_generator("ok", FAST["cart"], adult_train, adult_schema, 100, 0)
    assert status["status"] == "ok" and status["versions"]["scikit-learn"]
    assert status["fit_seconds"] >= 0 and status["n_rows"] == 100


@pytest.mark.slow  # two MST fits of their own compiled programs: `make test-all` and CI run it
def test_mst_keeps_strong_relationships_only_with_enough_budget(sim_schema):
    from synthrisk.data import load_dataset

    real = load_dataset(sim_schema).iloc[:4000]

    # y_cat and y_cont share the latent outcome: the strongest pair, an edge of any good tree.
    def association(frame):
        return pd.crosstab(pd.qcut(frame["y_cont"].astype(float), 4), frame["y_cat"], normalize="index").std().mean()

    # Fixed noise seeds: with noise from the OS, one draw in several at epsilon 0.05 kept some of the
    # association by chance; the test is about the budget, not about one draw of the noise.
    loose = make_generator({"backend": "mst", "params": {"epsilon": 50.0, "iters": 300, "noise_seed": 1}},
                           seed=0).fit(real, sim_schema)
    tight = make_generator({"backend": "mst", "params": {"epsilon": 0.05, "iters": 300, "noise_seed": 1}},
                           seed=0).fit(real, sim_schema)
    assert ("y_cat", "y_cont") in loose.tree_ or ("y_cont", "y_cat") in loose.tree_
    strong = association(loose.sample(4000, 0))
    weak = association(tight.sample(4000, 0))
    assert strong > 0.8 * association(real)
    assert weak < 0.7 * strong


def test_mst_needs_a_valid_epsilon():
    with pytest.raises(ConfigError, match="params.epsilon is required"):
        make_generator({"backend": "mst"})
    with pytest.raises(ConfigError, match="epsilon must be"):
        make_generator({"backend": "mst", "params": {"epsilon": -1}})


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.1, 0.5])
def test_leaky_releases_the_configured_share_of_members_verbatim(adult, adult_schema, fraction):
    members = adult_schema.conform(adult.sample(2000, random_state=1).reset_index(drop=True))
    synthetic = make_generator({"backend": "leaky", "params": {"fraction": fraction}}, seed=0).fit(
        members, adult_schema).sample(2000, seed=3)
    assert list(synthetic.columns) == list(members.columns) and len(synthetic) == 2000
    # Each released copy is a member; independent draws match a whole member row only by chance.
    member_rows = set(map(tuple, members.astype(str).to_numpy()))
    copied = np.mean([tuple(r) in member_rows for r in synthetic.astype(str).to_numpy()])
    assert fraction <= copied <= fraction + 0.01
    with pytest.raises(ConfigError, match="fraction"):
        make_generator({"backend": "leaky", "params": {"fraction": 1.5}}, seed=0)
