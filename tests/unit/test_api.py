"""`synthrisk.audit` from Python, as a notebook user calls it: DataFrames in, an `Audit` out, the
same checks, measures and verdicts as `synthrisk audit` (the measures with the calibration's
cheaper settings, as in test_audit.py), and nothing written until the user asks."""

import json
import os
import sys

import pytest

import synthrisk
from synthrisk.data.loaders import load_raw
from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError, DataError, SchemaError
from synthrisk.generators.run import run_generator
from synthrisk.measures.policy import LEVELS


@pytest.fixture(scope="module")
def frames(adult, adult_schema):
    sample = adult.sample(800, random_state=5).reset_index(drop=True)
    train, holdout = sample.iloc[:400].reset_index(drop=True), sample.iloc[400:].reset_index(drop=True)
    copies, status = run_generator("identity", {"backend": "identity", "params": {}}, train, adult_schema, n=400, seed=0)
    assert status["status"] == "ok"
    return train, holdout, copies


@pytest.fixture(scope="module")
def identity_result(frames, cheap_audit):
    train, holdout, copies = frames
    return synthrisk.audit(train, copies, holdout, sensitive="income")


def test_audit_of_dataframes_reads_a_copy_release_as_a_membership_risk(identity_result, frames):
    risks = identity_result.risks.set_index("risk")
    assert list(identity_result.risks.columns[:3]) == ["risk", "level", "verdict"]
    assert set(risks.index) == {"membership", "attribute_inference", "singling_out", "linkability"}
    assert risks.loc["membership", "level"] == LEVELS["at_risk"]
    assert risks.loc["membership", "threshold"] == pytest.approx(0.09)
    assert risks.loc["membership", "ci_low"] <= risks.loc["membership", "value"] <= risks.loc["membership", "ci_high"]
    assert set(identity_result.measures["status"]) <= {"ok", "skipped", "failed"}
    assert "dcr" in identity_result.tables and len(identity_result.tables["dcr"])
    assert identity_result.to_dict()["inputs"]["train"] == "the train DataFrame"
    assert identity_result.to_dict()["inputs"]["n_train"] == len(frames[0])
    assert "membership inference: at risk" in repr(identity_result)
    # The user's DataFrames are not changed by the audit's typing.
    assert "row_id" not in frames[0].columns


def test_the_audit_is_typed_fields_and_its_json_is_a_copy(identity_result):
    from synthrisk.measures.base import EVIDENCE_COLUMNS
    from synthrisk.measures.policy import Policy
    from synthrisk.release_audit.result import IDENTIFIED_COLUMNS, MEASURE_COLUMNS

    result = identity_result
    assert result.answer == "no" and result.sentence.startswith("Does this audit support releasing this file? No")
    assert isinstance(result.policy, Policy) and result.policy == Policy()
    assert list(result.evidence.columns) == [c for c in EVIDENCE_COLUMNS if c not in ("dataset", "generator")]
    assert result.evidence["value"].dtype.kind == "f" and set(result.evidence["risk"]) >= {"membership"}
    assert list(result.measures.columns) == MEASURE_COLUMNS and list(result.identified.columns) == IDENTIFIED_COLUMNS
    assert set(result.identified["risk"]) >= {"membership"} and result.identified["row_id"].notna().all()
    assert isinstance(result.notes, tuple)
    document = result.to_dict()
    document["release"]["answer"] = "yes"
    if result.utility is not None:  # the fields are the audit's own copies, not views of its JSON
        result.utility["quality"] = -1.0
        assert result.to_dict()["utility"]["quality"] != -1.0
    assert result.to_dict()["release"]["answer"] == "no" == json.loads(result.to_json())["release"]["answer"]


def test_nothing_is_written_until_asked_and_a_foreign_file_is_never_overwritten(identity_result, tmp_path):
    assert list(tmp_path.iterdir()) == []
    page = identity_result.to_html(tmp_path / "audit.html")
    assert "<html" in page.read_text()[:500].lower()
    assert json.loads(identity_result.to_json(tmp_path / "audit.json"))["risks"][0]["risk"] == "membership"
    identity_result.to_html(tmp_path / "audit.html")  # its own page may be replaced
    mine = tmp_path / "notes.html"
    mine.write_text("my notes")
    with pytest.raises(DataError, match="notes.html already exists and was not written by synthrisk"):
        identity_result.to_html(mine)
    assert mine.read_text() == "my notes"


def test_bad_dataframe_is_refused_naming_the_dataframe_and_column(frames):
    train, holdout, copies = frames
    with pytest.raises(SchemaError, match=r"the synthetic DataFrame: column\(s\) \[.age.\]"):
        synthrisk.audit(train, copies.drop(columns=["age"]), holdout, schema=DatasetSchema.infer(train, "income"))
    with pytest.raises(ConfigError, match="sensitive"):
        synthrisk.audit(train, copies, holdout)
    with pytest.raises(ConfigError, match="give a pandas DataFrame or the path"):
        synthrisk.audit(train.to_dict(), copies, holdout, sensitive="income")


def test_inferred_schema_of_a_dataframe_says_it_cannot_be_loaded(frames):
    schema = DatasetSchema.infer(frames[0], sensitive="income", name="adult")
    assert schema.sensitive == ["income"] and "age" in schema.quasi_identifiers
    assert schema.source == {"frame": "the DataFrame given"}
    with pytest.raises(SchemaError, match="was a DataFrame given in Python"):
        load_raw(schema)


_WRITES: list[tuple[str, str]] = []
_WATCHING = [False]


def _watch(event: str, args) -> None:
    """An audit hook (sys.addaudithook): every file opened for writing and every folder or temporary
    file made while `_WATCHING` is on (Python's own byte-code and library caches aside)."""
    if not _WATCHING[0]:
        return
    if event == "open" and args[0] is not None:
        mode, flags = args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            not isinstance(mode, str) and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing:
            _WRITES.append((event, str(args[0])))
    elif event in ("os.mkdir", "tempfile.mkdtemp", "tempfile.mkstemp", "shutil.copytree", "shutil.move"):
        _WRITES.append((event, str(args[0])))


def test_the_audit_writes_nothing_while_it_computes(frames, cheap_audit):
    """Issue #43: `synthrisk.audit` computes in memory: no scratch folder, no file, until the user
    asks for the page or the JSON."""
    train, holdout, copies = frames
    sys.addaudithook(_watch)
    _WRITES.clear()
    _WATCHING[0] = True
    try:
        found = synthrisk.audit(train.iloc[:200], copies.iloc[:200], holdout.iloc[:200], sensitive="income")
    finally:
        _WATCHING[0] = False
    cache = ("__pycache__", f"{os.sep}.cache{os.sep}", "matplotlib", "numba")
    assert [w for w in _WRITES if not any(c in w[1] for c in cache)] == []
    assert found.html.startswith("<!DOCTYPE html>") and "dcr" in found.tables


def test_copies_of_a_few_rare_members_are_listed_by_the_audit_as_a_steward_runs_it(adult, adult_schema, cheap_audit):
    """Twelve copies of the rarest 2 % of 600 members among other records: too few for the conformal
    p-values, so the audit's rare-copies test names them; membership is at risk, the audit answers
    no, and `identified` lists exactly the copied members under the count test."""
    from synthrisk.measures.exposure import RARE_ATTACK
    from synthrisk.study.calibration import rarest

    sample = adult.sample(1800, random_state=23).reset_index(drop=True)
    members, holdout, other = (sample.iloc[i * 600:(i + 1) * 600].reset_index(drop=True) for i in range(3))
    copied = rarest(members, holdout, adult_schema, 0.02)
    release = other.copy()
    release.iloc[: len(copied)] = members.iloc[copied][release.columns].to_numpy()
    result = synthrisk.audit(members, release, holdout, schema=adult_schema)
    assert result.answer == "no"
    assert result.risks.set_index("risk").loc["membership", "level"] == LEVELS["at_risk"]
    named = result.identified[result.identified["risk"] == "membership"]
    assert set(named["attack"]) == {RARE_ATTACK}
    assert sorted(named["row_id"]) == sorted(int(i) for i in copied)
