"""DP noise comes from the operating system's entropy unless a noise seed is set, and a release with
a known noise seed says it is not private (issue #27, item 5; synthrisk.stats.noise). Real generators and
mechanisms, no mocks."""

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import ROOT

from synthrisk.cli import main
from synthrisk.dp import dp_inference, release_statistics
from synthrisk.dp import experiments as ex
from synthrisk.dp.stage import DEFAULTS, settings_from_config
from synthrisk.epsilon_audit.canary import worst_case_canary
from synthrisk.epsilon_audit.experiment import WITH, canary_counts, nominal_privacy
from synthrisk.epsilon_audit.statistic import CANARY_CELLS, statistic_values
from synthrisk.epsilon_audit.validation import mst_spec, validation_data
from synthrisk.errors import ConfigError
from synthrisk.generators import make_generator
from synthrisk.generators.run import run_generator
from synthrisk.report.html import frame_html
from synthrisk.report.summary import _status, generator_runs
from synthrisk.stats.noise import DP_GUARANTEE, NOT_PRIVATE
from synthrisk.study.config import check_config

#: MST with few iterations: the tests compare releases, not their quality
ITERS = 30


@pytest.fixture(scope="module")
def small():
    """300 records of three simulated columns with public bounds (MST compiles at most 3 trees)."""
    return validation_data()


def mst(small, seed=0, **params):
    data, schema = small
    return make_generator({"backend": "mst", "params": {"epsilon": 1.0, "iters": ITERS, **params}},
                          seed=seed).fit(data, schema)


def released(generator) -> pd.DataFrame:
    """What a fitted MST gives with sample seed 0: the same for the same noisy measurements."""
    return generator.sample(300, 0)


# -- MST -----------------------------------------------------------------------------------------

def test_mst_noise_comes_from_the_os_unless_a_noise_seed_is_set(small):
    first, again = mst(small), mst(small)  # same data, same seed
    assert not released(first).equals(released(again))
    assert first.privacy()["guarantee"] == DP_GUARANTEE and first.privacy()["noise_seed"] is None

    seeded, repeated = mst(small, noise_seed=7), mst(small, noise_seed=7)
    pd.testing.assert_frame_equal(released(seeded), released(repeated))
    assert seeded.privacy()["guarantee"] == NOT_PRIVATE and seeded.privacy()["noise_seed"] == 7
    # the ordinary seed still drives sampling from the fitted model
    assert not seeded.sample(300, 0).equals(seeded.sample(300, 1))
    # another run seed derives other noise from the same noise seed: replicates never share noise
    assert not released(seeded).equals(released(mst(small, seed=1, noise_seed=7)))
    assert not released(seeded).equals(released(mst(small, noise_seed=8)))


def test_mst_with_other_faults_states_them_and_the_known_noise_seed():
    control = make_generator({"backend": "mst", "params": {"epsilon": 1.0, "noise_multiplier_scale": 0.5,
                                                           "domain": "from_data", "noise_seed": 3}})
    parts = control.privacy()["guarantee"].split("; ")
    assert parts[0].startswith("not DP") and parts[-1] == NOT_PRIVATE and len(parts) == 3


def test_generate_status_says_not_private_only_with_a_noise_seed(small):
    data, schema = small
    spec = {"backend": "mst", "params": {"epsilon": 1.0, "iters": ITERS}}
    _, status = run_generator("mst", spec, data, schema, 100, 0)
    assert status["status"] == "ok" and status["privacy"]["guarantee"] == DP_GUARANTEE
    seeded = {**spec, "params": {**spec["params"], "noise_seed": 7}}
    _, status = run_generator("mst", seeded, data, schema, 100, 0)
    assert status["status"] == "ok" and status["privacy"]["guarantee"] == NOT_PRIVATE
    assert status["privacy"]["noise_seed"] == 7


def test_cli_generate_mst_twice_gives_different_files_and_a_noise_seed_marks_it_not_private(small, tmp_path,
                                                                                           monkeypatch):
    data, schema = small
    data.to_csv(tmp_path / "train.csv", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema.to_dict()))
    # The command's own function, in this process: a new process would compile MST's JAX programs
    # again for each call (seconds each), and the entry point is run as a program elsewhere.
    monkeypatch.chdir(tmp_path)

    def generate(name, params):
        out = tmp_path / f"{name}.parquet"
        code = main(["generate", "--generator", "mst", "--params", json.dumps({"epsilon": 1.0, "iters": ITERS, **params}),
                     "--train", "train.csv", "--schema", "schema.yaml", "--n", "300", "--seed", "3",
                     "--out", out.name])
        assert code == 0
        return out.read_bytes(), json.loads(out.with_suffix(".json").read_text())

    (first, status), (again, _) = generate("a", {}), generate("b", {})
    assert first != again
    assert status["privacy"]["guarantee"] == DP_GUARANTEE
    # the noise seed reaches the fit (same noise from it: test_mst_noise_comes_from_the_os_unless_...)
    _, seeded_status = generate("c", {"noise_seed": 7})
    assert seeded_status["privacy"]["guarantee"] == NOT_PRIVATE and seeded_status["privacy"]["noise_seed"] == 7


# -- the run summary and the report -------------------------------------------------------------

def test_summary_says_not_private_when_any_run_knew_its_noise_seed(tmp_path):
    paths = []
    for seed, guarantee in enumerate([DP_GUARANTEE, NOT_PRIVATE]):
        path = tmp_path / f"seed{seed}.json"
        path.write_text(json.dumps({"dataset": "d", "generator": "mst", "seed": seed, "backend": "mst",
                                    "status": "ok", "fit_seconds": 1.0, "privacy": {"guarantee": guarantee}}))
        paths.append(path)
    summary = _status(generator_runs(paths))
    assert summary.loc[0, "dp_guarantee"] == NOT_PRIVATE
    assert NOT_PRIVATE in frame_html(summary)  # the report's summary table shows the column as it is
    assert _status(generator_runs(paths[:1])).loc[0, "dp_guarantee"] == DP_GUARANTEE


# -- the epsilon audit ---------------------------------------------------------------------------

def test_audit_fits_draw_independent_noise_reproducible_with_a_noise_seed(small):
    data, schema = small
    canary = worst_case_canary(data, schema, bins=16)
    # under-noised, so that the canary's counts are far from 0 and vary with the noise
    spec = mst_spec(0.05)
    spec["params"]["iters"] = ITERS
    seeded = {**spec, "params": {**spec["params"], "noise_seed": 11}}
    # Eight fits each: one fit's canary count takes only a few values (three fits twice from the OS
    # once gave equal counts by chance), eight all equal by chance is below 1e-4.
    counts = {key: statistic_values(canary_counts(s, data, schema, canary, WITH, range(8)), CANARY_CELLS)
              for key, s in (("os", spec), ("os again", spec), ("seeded", seeded), ("seeded again", seeded))}
    assert not np.array_equal(counts["os"], counts["os again"])
    np.testing.assert_array_equal(counts["seeded"], counts["seeded again"])
    assert len(set(counts["seeded"])) > 1  # every fit its own noise, not one noise reused
    assert nominal_privacy(seeded)["guarantee"].endswith(NOT_PRIVATE)
    assert not nominal_privacy(mst_spec(1.0))["guarantee"].endswith(NOT_PRIVATE)


# -- the DP sufficient-statistics release -------------------------------------------------------

def _frame(n=2000):
    rng = np.random.default_rng(0)
    x1 = rng.choice(["0", "1"], n)
    return pd.DataFrame({"x1": x1, "y": rng.binomial(1, np.where(x1 == "1", 0.6, 0.3))})


LEVELS = {"x1": ["0", "1"]}


def test_dp_release_noise_comes_from_the_os_unless_a_noise_seed_is_set():
    args = (_frame(), "logistic", "y", 1.0, 1e-5, 2.0, ["x1"], LEVELS)
    first, again = (dp_inference(*args, seed=3, bootstrap_draws=20)[0].to_json() for _ in "ab")
    assert first["theta"] != again["theta"]
    assert first["guarantee"] == DP_GUARANTEE and first["noise_seed"] is None
    seeded, repeated = (dp_inference(*args, seed=3, bootstrap_draws=20, noise_seed=5)[0].to_json() for _ in "ab")
    assert seeded == repeated
    assert seeded["guarantee"] == NOT_PRIVATE and seeded["noise_seed"] == 5
    other_seed = dp_inference(*args, seed=4, bootstrap_draws=20, noise_seed=5)[0].to_json()
    assert other_seed["theta"] != seeded["theta"]
    opted = dp_inference(*args[:-1], seed=3, bootstrap_draws=20, noise_seed=5, domain="from_data")[0].to_json()
    assert opted["guarantee"] == f"not DP: domain read from the data; {NOT_PRIVATE}"
    # the mechanism itself, without a generator given: fresh entropy every call
    stats = np.ones((500, 2))
    assert not np.array_equal(*(release_statistics(stats, 1.0, 1e-5, 2.0, None, "gaussian").noisy_mean for _ in "ab"))


def test_cli_dp_twice_differs_unless_a_noise_seed_is_set(tmp_path, monkeypatch, capsys):
    _frame().to_csv(tmp_path / "data.csv", index=False)
    monkeypatch.chdir(tmp_path)  # the command's function in this process; tests/unit/test_dp.py runs the program
    common = ["dp", "--data", "data.csv", "--family", "logistic", "--response", "y", "--epsilon", "1",
              "--delta", "1e-5", "--clip", "2"]

    def release(*extra):
        assert main([*common, "--bootstrap", "20", "--domain", "from_data", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    first, again = release(), release()
    assert first["theta"] != again["theta"]
    seeded, repeated = release("--noise-seed", "9"), release("--noise-seed", "9")
    assert seeded == repeated and seeded["guarantee"].endswith(NOT_PRIVATE)
    with pytest.raises(SystemExit) as refused:
        main([*common, "--noise-seed", "-1"])
    assert refused.value.code != 0 and "--noise-seed" in capsys.readouterr().err


def test_dp_experiments_noise_is_reproducible_only_with_the_dp_blocks_noise_seed():
    small = {**DEFAULTS, "families": ["gaussian"], "epsilons": [1.0], "reps": 12, "n": 300,
             "noise_aware_reps": 0, "bootstrap_reps": 0, "n_grid": [300, 600]}
    os_noise = [ex.coverage_study(small, seed=0) for _ in "ab"]
    assert not os_noise[0].equals(os_noise[1])
    seeded = settings_from_config({**small, "noise_seed": 3})
    pd.testing.assert_frame_equal(ex.coverage_study(seeded, seed=0), ex.coverage_study(seeded, seed=0))
    pd.testing.assert_frame_equal(ex.variance_grid(seeded, seed=0), ex.variance_grid(seeded, seed=0))
    # the same noise seed with another run seed: other noise
    assert not ex.variance_grid(seeded, seed=0)["mse"].equals(ex.variance_grid(seeded, seed=1)["mse"])


def test_batched_coverage_equals_the_reference_with_a_noise_generator_of_its_own():
    from synthrisk.dp.reference import coverage_rows_one_at_a_time

    few = {**DEFAULTS, "reps": 8, "noise_aware_reps": 4, "bootstrap_reps": 3, "bootstrap_draws": 20}
    setup = ex.simulation_setups()["logistic"]
    args = (setup, "logistic", 1000, 1.0, setup.clip, few)
    with np.errstate(all="ignore"):
        batched = ex.coverage_rows(*args, np.random.default_rng(1), noise_rng=np.random.default_rng(2))
        one_by_one = coverage_rows_one_at_a_time(*args, np.random.default_rng(1), noise_rng=np.random.default_rng(2))
        shared = ex.coverage_rows(*args, np.random.default_rng(1))
    pd.testing.assert_frame_equal(pd.DataFrame(batched), pd.DataFrame(one_by_one), check_exact=True)
    assert not pd.DataFrame(batched).equals(pd.DataFrame(shared))  # the noise really comes from noise_rng


# -- bad noise seeds are refused, naming the key ------------------------------------------------

@pytest.mark.parametrize("value", [-1, 1.5, 7.0, "7", True])
def test_a_bad_noise_seed_is_refused_naming_the_key(value):
    with pytest.raises(ConfigError, match=r"mst generator: params\.noise_seed must be a non-negative integer"):
        make_generator({"backend": "mst", "params": {"epsilon": 1.0, "noise_seed": value}})
    with pytest.raises(ConfigError, match=r"dp\.noise_seed must be a non-negative integer"):
        settings_from_config({"noise_seed": value})
    with pytest.raises(ConfigError, match=r"^noise_seed must be a non-negative integer"):
        dp_inference(_frame(), "logistic", "y", 1.0, 1e-5, 2.0, ["x1"], LEVELS, noise_seed=value)
    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "mst", "params": {"epsilon": 1.0, "noise_seed": value}}}}
    with pytest.raises(ConfigError, match=r"generators\.g\.params\.noise_seed must be a non-negative integer"):
        check_config(base)
    base["generators"]["g"]["params"]["noise_seed"] = 1
    base["dp"] = {"noise_seed": value}
    with pytest.raises(ConfigError, match=r"config: dp\.noise_seed must be"):
        check_config(base)
    del base["dp"]
    base["epsilon_audit"] = {"controls": {"c": {"backend": "mst", "params": {"noise_seed": value}}}}
    with pytest.raises(ConfigError, match=r"epsilon_audit\.controls\.c\.params\.noise_seed must be"):
        check_config(base)


def test_the_config_schema_accepts_noise_seeds_and_refuses_bad_ones():
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "mst", "params": {"epsilon": 1.0, "noise_seed": 7}}},
            "dp": {"noise_seed": 0}, "epsilon_audit": {"controls": {"c": {"backend": "mst",
                                                                          "params": {"noise_seed": None}}}}}
    jsonschema.validate(base, schema)
    check_config(base)
    places = (lambda c: c["generators"]["g"]["params"], lambda c: c["dp"],
              lambda c: c["epsilon_audit"]["controls"]["c"]["params"])
    for place in places:
        for bad in (-1, 1.5, "7"):
            broken = json.loads(json.dumps(base))
            place(broken)["noise_seed"] = bad
            with pytest.raises(jsonschema.ValidationError) as error:
                jsonschema.validate(broken, schema)
            assert list(error.value.path)[-1] == "noise_seed"


def test_synthcity_dp_plugins_seed_their_noise_apart_and_say_so():
    """Without synthcity installed: the seeds the wrapper gives synthcity, and its privacy()."""
    def plugin(name, seed=0, **params):
        return make_generator({"backend": "synthcity", "plugin": name, "params": params}, seed=seed)

    assert plugin("adsgan", seed=4).fit_seed() == 4 and plugin("adsgan").privacy() is None
    # a DP plugin's fit seed (synthcity's noise) is fresh entropy, not the ordinary seed
    assert len({plugin("privbayes", seed=4).fit_seed() for _ in range(4)}) > 1
    seeded = plugin("privbayes", seed=4, epsilon=1.0, noise_seed=5)
    assert seeded.fit_seed() == plugin("privbayes", seed=4, noise_seed=5).fit_seed() != plugin(
        "privbayes", seed=5, noise_seed=5).fit_seed()
    assert seeded.sample_seed(9) == 9  # PrivBayes samples from its fitted network: post-processing
    assert seeded.privacy()["guarantee"].endswith(NOT_PRIVATE) and "noise_seed" not in seeded.params
    assert not plugin("privbayes").privacy()["guarantee"].endswith(NOT_PRIVATE)
    # AIM runs its mechanism in generate: its sampling seed is a noise seed too
    aim = plugin("aim", noise_seed=5)
    assert aim.sample_seed(9) == plugin("aim", noise_seed=5).sample_seed(9) != 9
    assert len({plugin("aim").sample_seed(9) for _ in range(4)}) > 1
    with pytest.raises(ConfigError, match=r"synthcity backend: params\.noise_seed applies only to the DP plugins"):
        plugin("adsgan", noise_seed=1)
    with pytest.raises(ConfigError, match=r"synthcity backend: params\.noise_seed must be a non-negative integer"):
        plugin("dpgan", noise_seed=-3)


# -- the shipped configs ------------------------------------------------------------------------

def _is_dp(spec: dict) -> bool:
    from synthrisk.generators.synthcity import DP_PLUGINS

    return spec.get("backend") == "mst" or (spec.get("backend") == "synthcity" and spec.get("plugin") in DP_PLUGINS)


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml", "synthcity.yaml", "audit.yaml", "audit_aim.yaml",
                                  "audit_synthcity.yaml"])
def test_shipped_configs_set_noise_seeds_so_their_tables_repeat(name):
    config = yaml.safe_load((ROOT / "config" / name).read_text())
    specs = {**(config.get("generators") or {}), **((config.get("epsilon_audit") or {}).get("controls") or {})}
    dp_specs = {g: s for g, s in specs.items() if _is_dp(s)}
    for generator, spec in dp_specs.items():
        assert isinstance(spec["params"].get("noise_seed"), int), (name, generator)
    seeds = [s["params"]["noise_seed"] for s in dp_specs.values()]
    assert len(seeds) == len(set(seeds)), name  # no two generators of one config share their noise
    if "dp" in config:
        assert isinstance(config["dp"].get("noise_seed"), int), name
    check_config(config)
