"""The measure interface's shared failure path: the workflow's measure job runs every unit of every
measure, and a measure that raises, does not apply or lacks its input is recorded, not fatal
(tests/workflow/test_measures_workflow.py: the docs' example measure in a real Snakemake run)."""

import json
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT

from synthrisk.study.workflow import write_summary


def _frames(tmp_path, generator_status="ok"):
    from synthrisk.data import load_dataset, load_schema
    from synthrisk.io import write_json, write_table

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    real = load_dataset(schema).head(300).reset_index(drop=True)
    real.insert(0, "row_id", range(len(real)))
    paths = {}
    for name, part in (("members", real.iloc[:100]), ("holdout", real.iloc[100:200]), ("aux", real.iloc[200:]),
                       ("real", real), ("synthetic", real.iloc[:100].drop(columns="row_id"))):
        paths[name] = tmp_path / f"{name}.parquet"
        write_table(part, paths[name])
    paths["status"] = tmp_path / "status.json"
    write_json({"generator": "g", "status": generator_status, "error": "boom" if generator_status != "ok" else None},
               paths["status"])
    paths["schema"] = ROOT / "config/datasets/adult.yaml"
    return paths


class _Raising:
    name, record_columns, threads = "raising", ("row_id",), 1

    def __init__(self, error):
        self.error = error

    def run(self, data, settings, unit):
        raise self.error

    def log_line(self, result):
        return ""


def _run_one(measure, settings, paths, key, records, summary) -> str:
    """One measure without units through the workflow's measure job path; its status."""
    from synthrisk.measures.runner import UnitRun, run_synthetic_dataset

    run = UnitRun(measure, settings, None, Path(records), Path(summary))
    return run_synthetic_dataset([run], paths, key)[0].status


@pytest.mark.parametrize("error, status, reason", [
    (ValueError("singular matrix"), "failed", "ValueError: singular matrix"),
    ("not applicable", "skipped", "needs an aux set"),
])
def test_a_measure_that_raises_or_does_not_apply_is_recorded_not_fatal(tmp_path, error, status, reason):
    from synthrisk.measures import NotApplicable

    error = NotApplicable("needs an aux set") if error == "not applicable" else error
    paths = _frames(tmp_path)
    key = {"dataset": "adult", "generator": "g", "seed": 0}
    assert _run_one(_Raising(error), None, paths, key, tmp_path / "r.parquet", tmp_path / "r.json") == status
    summary = json.loads((tmp_path / "r.json").read_text())
    assert summary == {**key, "status": status, "error": reason}
    assert pd.read_parquet(tmp_path / "r.parquet").columns.tolist() == ["row_id"]


def test_one_job_runs_every_unit_of_every_measure_and_a_failure_stops_none(tmp_path):
    """The workflow's measure job: a measure with units writes one pair per unit into its run
    directory, a measure that raises is recorded as failed with its traceback in its own log, the
    measure after it still runs, and the input is loaded once for all of them."""
    from synthrisk.data import load_schema
    from synthrisk.measures import Measure, MeasureResult
    from synthrisk.measures.runner import load_input, plan_runs, run_units

    class PerUnit(Measure):
        name, record_columns = "per_unit", ("row_id",)

        def units(self, schema, settings):
            return ["a", "b"]

        def unit_key(self, unit):
            return {"part": unit}

        def run(self, data, settings, unit):
            return MeasureResult({"n_members": len(data.members), "unit": unit}, data.members[["row_id"]])

        def log_line(self, result):
            return f"measured {result.summary['unit']}"

    class Whole(PerUnit):
        name = "whole"
        units = Measure.units

    raising = _Raising(ValueError("singular matrix"))
    raising.has_units = False
    measures = {"per_unit": (PerUnit(), None), "raising": (raising, None), "whole": (Whole(), None)}
    paths = _frames(tmp_path)
    runs = plan_runs(measures, load_schema(paths["schema"]), lambda m: tmp_path / m.name / "seed0")
    assert [(r.measure.name, r.unit, r.summary_path.relative_to(tmp_path).as_posix()) for r in runs] == [
        ("per_unit", "a", "per_unit/seed0/a.json"), ("per_unit", "b", "per_unit/seed0/b.json"),
        ("raising", None, "raising/seed0.json"), ("whole", None, "whole/seed0.json")]
    loads = []

    def load():
        loads.append(1)
        return load_input(paths, 0)

    lines = []
    outcomes = run_units(runs, load, {"dataset": "adult", "generator": "g", "seed": 0}, announce=lines.append,
                         log_of=lambda run: tmp_path / f"{run.measure.name}.log")
    assert [o.status for o in outcomes] == ["ok", "ok", "failed", "ok"] and len(loads) == 1
    assert json.loads((tmp_path / "per_unit/seed0/b.json").read_text())["part"] == "b"
    assert json.loads((tmp_path / "whole/seed0.json").read_text())["n_members"] == 100
    assert json.loads((tmp_path / "raising/seed0.json").read_text())["error"] == "ValueError: singular matrix"
    assert "Traceback" in (tmp_path / "raising.log").read_text()
    assert (tmp_path / "per_unit.log").read_text().splitlines() == ["measured a", "measured b"]
    assert "[3/4] raising: failed (ValueError: singular matrix)" in "\n".join(lines)


def test_an_upstream_generator_failure_is_passed_on(tmp_path):
    from synthrisk.measures import measure

    paths = _frames(tmp_path, generator_status="failed")
    mia = measure("mia")
    key = {"dataset": "adult", "generator": "g", "seed": 0}
    assert _run_one(mia, mia.settings({}), paths, key, tmp_path / "r.parquet", tmp_path / "r.json") == "failed"
    assert json.loads((tmp_path / "r.json").read_text())["error"] == "generator g failed: boom"




@pytest.mark.parametrize("name, empty, reason", [
    ("dcr", "holdout", "holdout"),
    ("domias", "aux", "auxiliary records"),
    ("singling_out", "holdout", "control records"),
    ("linkability", "holdout", "control records"),
    ("inference", "holdout", "control records"),
])
def test_a_measure_without_its_input_is_skipped_with_the_reason(tmp_path, name, empty, reason):
    from synthrisk.measures import measure

    paths = _frames(tmp_path)
    from synthrisk.io import read_table, write_table

    write_table(read_table(paths[empty]).iloc[:0], paths[empty])
    m = measure(name)
    key = {"dataset": "adult", "generator": "g", "seed": 0}
    assert _run_one(m, m.settings({}), paths, key, tmp_path / "r.parquet", tmp_path / "r.json") == "skipped"
    assert reason in json.loads((tmp_path / "r.json").read_text())["error"]


def test_linkability_with_one_quasi_identifier_is_skipped(tmp_path):
    from synthrisk.data import load_schema
    from synthrisk.measures import MeasureInput, NotApplicable, measure

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    one = type(schema).from_dict({**schema.to_dict(), "quasi_identifiers": schema.quasi_identifiers[:1]})
    paths = _frames(tmp_path)
    from synthrisk.io import read_table

    frames = {k: read_table(paths[k]) for k in ("members", "holdout", "aux", "synthetic")}
    data = MeasureInput(**frames, schema=one, population_size=300, seed=0)
    with pytest.raises(NotApplicable, match="quasi"):
        measure("linkability").run(data, measure("linkability").settings({}), None)


def test_evidence_rows_read_named_columns_and_numbers():
    from synthrisk.measures.tabulate import evidence_rows

    table = pd.DataFrame({"dataset": ["a"], "generator": ["g"], "auc_mean": [0.6], "n_seeds": [2],
                          "n_seeds_beating": [2], "tpr_at_1e-02_mean": [0.05], "n_members_mean": [400]})
    rows = evidence_rows(table, "membership", "m", "attack", "AUC", "auc_mean", 0.5, "d")
    assert rows["tpr_at_1e-02"].tolist() == [0.05] and rows["reference"].tolist() == [0.5]
    assert rows["tpr_at_1e-03"].isna().all() and rows["n_scored"].tolist() == [400]
    # a table without TPRs reads no members for them
    assert evidence_rows(table.drop(columns="tpr_at_1e-02_mean"), "membership", "m", "attack", "AUC", "auc_mean",
                         0.5, "d")["n_scored"].isna().all()


def test_control_set_measures_run_summarise_and_give_evidence(tmp_path):
    """singling_out, linkability and inference (the tiny workflow run leaves them out for time):
    run through the shared runner on identity data, then summary table and verdict rows."""
    from synthrisk.io import TableFolder
    from synthrisk.measures import measure
    from synthrisk.measures.verdict import risk_table

    paths = _frames(tmp_path)
    tables = tmp_path / "tables"
    evidence = []
    for name in ("singling_out", "linkability", "inference"):
        m = measure(name)
        settings = m.settings({"n_attacks": 100})
        runs = []
        for seed in (0, 1):
            out = tmp_path / f"{name}{seed}"
            key = {"dataset": "adult", "generator": "identity", "seed": seed}
            assert _run_one(m, settings, paths, key, f"{out}.parquet", f"{out}.json") == "ok"
            runs.append(f"{out}.json")
        write_summary(m, runs, tables, tmp_path, settings)
        written = TableFolder(tables)
        assert (tables / f"{name}.csv").exists() and m.outputs.summary_columns(written) is not None
        evidence.append(m.evidence(written))
    risks = risk_table(pd.concat(evidence, ignore_index=True)).set_index("risk")
    # the synthetic data are the members themselves: every control-set attack beats its control
    assert risks.loc["singling_out", "verdict"].startswith("at risk")
    assert risks.loc["attribute_inference", "verdict"].startswith("at risk")
    assert risks.loc["linkability", "verdict"].startswith("at risk")


def test_the_workflow_hands_its_generator_to_the_measures_that_refit_it(tmp_path):
    """A workflow job knows the generator that made its synthetic data: the refitting measures get
    its config entry; a generator that runs in an environment of its own comes with that environment's
    interpreter once the workflow has built it (`tmp_path` stands for the repository), and not before."""
    from synthrisk.measures.runner import generator_in_workflow

    hand = generator_in_workflow("mst_eps1", {"backend": "mst", "params": {"epsilon": 1.0}}, tmp_path)
    assert (hand.name, hand.spec) == ("mst_eps1", {"backend": "mst", "params": {"epsilon": 1.0}})
    assert hand.refittable
    tvae = {"backend": "synthcity", "plugin": "tvae"}
    assert generator_in_workflow("tvae_sc", tvae, tmp_path) is None
    (tmp_path / ".venv-synthcity/bin").mkdir(parents=True)
    (tmp_path / ".venv-synthcity/bin/python").touch()
    (tmp_path / ".venv-synthcity/.installed").touch()
    hand = generator_in_workflow("tvae_sc", tvae, tmp_path)
    assert hand.python == str(tmp_path / ".venv-synthcity/bin/python") and not hand.refittable
    assert generator_in_workflow("gone", None, tmp_path) is None
