"""Fits in a generator's own environment (`synthrisk.generators.environment_fits`): one process of that
environment's interpreter serves every fit over a pipe. This interpreter stands for the environment (the
server needs only synthrisk's dependencies), so a fit there must be the fit here, a dying process must be
a failed fit and not a lost audit, and the shadow-model attack refitting there must find what it finds
here."""

from __future__ import annotations

import datetime
import json
import sys
import textwrap

import pandas as pd
import pytest
from helpers import small_records, small_schema

from synthrisk.data.schema import DatasetSchema
from synthrisk.generators.environment_fits import DEATHS, EnvironmentFits
from synthrisk.generators.run import fit_in_environment, run_generator
from synthrisk.measures.base import GeneratorInHand, MeasureInput
from synthrisk.measures.registry import measure

CART = {"backend": "cart"}


@pytest.fixture(scope="module")
def schema():
    return small_schema()


def test_a_fit_served_by_another_process_is_the_fit_in_this_one(schema):
    train = small_records(schema, 120, 4)
    here, status_here = run_generator("cart", CART, train, schema, n=80, seed=3)
    with EnvironmentFits(sys.executable, hash_seed=0) as fits:
        there, status = fits("cart", CART, train, schema, 80, 3)
        first = fits._process.pid
        again, _ = fits("cart", CART, train, schema, 80, 3)
        assert fits._process.pid == first  # one process serves every fit
    assert status["status"] == status_here["status"] == "ok"
    pd.testing.assert_frame_equal(there, here)
    pd.testing.assert_frame_equal(again, here)



def test_the_file_job_in_another_environment_is_the_fit_in_this_one(schema):
    """`fit_in_environment` (the workflow's generate job between files, for studies) fits what this
    process fits: its schema file keeps the columns' order (x, k, c; sorted keys once made it c, k, x,
    and an order-sensitive generator such as synthcity's PrivBayes then fitted another network)."""
    train = small_records(schema, 120, 4).drop(columns="row_id")
    here, _ = run_generator("cart", CART, train, schema, n=80, seed=3)
    there, status = fit_in_environment(sys.executable, "cart", CART, train, schema, 80, 3, hash_seed=0)
    assert status["status"] == "ok"
    assert list(there.columns) == list(schema.columns) == ["x", "k", "c"]
    pd.testing.assert_frame_equal(there, here)

def test_a_process_that_dies_is_a_failed_fit_and_the_next_fit_starts_another(schema, tmp_path, monkeypatch):
    (tmp_path / "dying_backend.py").write_text(textwrap.dedent("""
        import os
        from synthrisk.generators.base import Generator

        class Dying(Generator):
            def fit(self, train, schema):
                print("about to die", flush=True)
                os._exit(7)

            def sample(self, n, seed):
                raise AssertionError("never sampled")
    """))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    train = small_records(schema, 60, 5)
    with EnvironmentFits(sys.executable) as fits:
        synthetic, status = fits("dying", {"backend": "dying_backend:Dying"}, train, schema, 30, 0)
        assert status["status"] == "failed" and synthetic.empty and list(synthetic.columns) == list(schema.columns)
        assert "exit code 7" in status["error"] and "about to die" in status["error"]
        synthetic, status = fits("cart", CART, train, schema, 30, 0)
        assert status["status"] == "ok" and len(synthetic) == 30
        # a fit that always kills its process is tried DEATHS times in a row, then no new process is started
        for _ in range(DEATHS):
            assert fits("dying", {"backend": "dying_backend:Dying"}, train, schema, 30, 0)[1]["status"] == "failed"
        synthetic, status = fits("cart", CART, train, schema, 30, 0)
        assert status["status"] == "failed" and status["error"].startswith("not asked: the process of")
        assert "exit code 7" in status["error"] and fits._process is None


def test_values_cross_exactly_and_a_request_that_fails_leaves_the_process_serving(schema):
    """Integers beyond float's 53 bits cross exact beside a missing value; a request the process cannot
    answer is answered with its error, and the same process serves the next."""
    from synthrisk.generators.environment_fits import records_frame, records_json

    wide = DatasetSchema.from_dict({"name": "wide", "source": {"path": "unused.csv"},
                                    "columns": {"k": {"type": "integer"}, "c": {"type": "categorical"}},
                                    "quasi_identifiers": ["k"], "sensitive": ["c"]})
    frame = wide.conform(pd.DataFrame({"k": pd.array([2**60 + 1, None, 3], dtype="Int64"), "c": ["é", None, "b"]}))
    back = records_frame(json.loads(json.dumps(records_json(frame))), wide, "the test's records")
    assert back["k"].tolist()[0] == 2**60 + 1 and back["k"].isna().tolist() == [False, True, False]
    pd.testing.assert_frame_equal(back, frame)
    train = small_records(schema, 60, 5)
    with EnvironmentFits(sys.executable) as fits:
        refused = fits._ask({"name": "cart", "spec": CART, "schema": {"columns": "not a schema"},
                             "train": records_json(train), "n": 10, "seed": 0})
        first = fits._process.pid
        assert refused["status"]["status"] == "failed" and "schema" in refused["error"]
        synthetic, status = fits("cart", CART, train, schema, 30, 0)
        assert status["status"] == "ok" and len(synthetic) == 30 and fits._process.pid == first
        unsendable, status = fits("cart", {**CART, "params": {"when": datetime.date(2020, 1, 1)}}, train, schema, 30, 0)
        assert status["status"] == "failed" and "cannot be sent as JSON" in status["error"] and unsendable.empty


def test_shadow_models_refitting_in_the_generators_environment_find_what_they_find_here(schema):
    """The audit hands a generator of another environment to the shadow-model attack with
    `refit_in_environment`: the same refits, so the same targets, scores and test."""
    from helpers import small_records as records

    members, holdout = records(schema, 150, 1), records(schema, 150, 2, 1000)
    members, holdout = (frame.assign(row_id=range(len(frame))) for frame in (members, holdout))
    synthetic, _ = run_generator("cart", CART, members.drop(columns="row_id"), schema, n=150, seed=0)
    attack = measure("shadow_models")
    settings = attack.settings({"n_outliers": 6, "n_random": 6, "shadow_datasets": 8, "eval_datasets": 8,
                                "n_trees": 10})

    def summary(generator):
        data = MeasureInput(members=members, holdout=holdout, aux=holdout.iloc[:0], synthetic=synthetic,
                            schema=schema, population_size=3000, seed=0, generator=generator)
        result = attack.run(data, settings, None)
        return {k: v for k, v in result.summary.items() if k != "seconds"}, result.records

    here = summary(GeneratorInHand("cart", CART))
    there = summary(GeneratorInHand("cart", CART, python=sys.executable, refit_in_environment=True))
    assert there[0] == here[0] and there[0]["fits_failed"] == 0
    pd.testing.assert_frame_equal(there[1], here[1])


def test_the_refits_of_a_synthcity_dp_plugin_draw_seeded_noise_so_that_an_audit_repeats():
    """synthcity's constructor takes `noise_seed` from its params (for the DP plugins), not by name: the
    auditor's refits must still seed it, or two audits of one release differ."""
    from synthrisk.generators.base import with_noise_seed

    privbayes = {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 1.0}}
    seeded = with_noise_seed(privbayes, 3)
    assert isinstance(seeded["params"]["noise_seed"], int) and seeded == with_noise_seed(privbayes, 3)
    assert with_noise_seed({"backend": "synthcity", "params": {"plugin": "aim"}}, 3)["params"]["noise_seed"]
    assert with_noise_seed({"backend": "synthcity", "plugin": "ddpm"}, 3) == {"backend": "synthcity", "plugin": "ddpm"}
    assert "noise_seed" in with_noise_seed({"backend": "mst", "params": {"epsilon": 1.0}}, 3)["params"]
    assert with_noise_seed({"backend": "cart"}, 3) == {"backend": "cart"}
