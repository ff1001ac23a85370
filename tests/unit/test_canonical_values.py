"""One value, one meaning (issue #41): formatting that carries no information (spaces, Unicode
form, boolean spellings, zero-padded codes, CSV against Parquet, gzip, a written index, column
order) never changes what the audit reads, and what it normalised is reported; levels no real
record has are reported, and refused past a stated share, by column and level."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import synthrisk
from synthrisk.cli import main
from synthrisk.data.canonical import boolean_columns, canonical_column, canonical_value
from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError, DataError, SchemaError, SynthriskError
from synthrisk.release_audit import run as audit_run
from synthrisk.release_audit.inputs import read_inputs

CITIES = ["Zürich", "Genève", "São Paulo", "Malmö", "Łódź", "Oslo"]
SCHEMA = {
    "name": "canon", "source": {"path": "train.csv"},
    "columns": {"age": {"type": "integer"}, "income": {"type": "continuous"}, "region": {"type": "categorical"},
                "city": {"type": "categorical"}, "smoker": {"type": "categorical"},
                "diagnosis": {"type": "categorical"}},
    "quasi_identifiers": ["age", "income", "region", "city", "smoker"], "sensitive": ["diagnosis"],
}


def population(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    return pd.DataFrame({
        "age": age, "income": np.round(rng.lognormal(10, 0.5, n), 2), "region": rng.integers(1, 13, n),
        "city": rng.choice(CITIES, n), "smoker": rng.random(n) < 0.3,
        "diagnosis": np.where(age + rng.normal(0, 15, n) > 60, "chronic", "none")})


@pytest.mark.parametrize("value, boolean, expected, kinds", [
    ("a ", False, "a", ("whitespace",)),
    (unicodedata.normalize("NFD", "Genève"), False, "Genève", ("unicode",)),
    ("true", False, "True", ("boolean",)),
    (" FALSE", False, "False", ("whitespace", "boolean")),
    (True, False, "True", ()),
    (1, True, "True", ("boolean",)),
    ("0", True, "False", ("boolean",)),
    (1, False, "1", ()),
    ("01", False, "1", ("number",)),
    ("+7", False, "7", ("number",)),
    (3.0, False, "3", ()),
    ("3.0", False, "3", ("number",)),
    ("2.50", False, "2.5", ("number",)),
    ("12345678901234567890", False, "12345678901234567890", ()),  # exact: no detour through a float
    ("A1", False, "A1", ()),
])
def test_canonical_value(value, boolean, expected, kinds):
    assert canonical_value(value, boolean) == (expected, kinds)


def test_a_boolean_column_with_some_rows_as_numbers_reads_the_same_whatever_the_row_order():
    """`True == 1` made the old cast key one dict entry for both: {'False', '1'} or {'0', 'True'} by
    which rows came first."""
    clean = pd.Series([True, False] * 50, dtype=object)
    for first in (slice(0, 10), slice(90, 100)):
        mixed = clean.copy()
        mixed[first] = mixed[first].map(int)
        assert boolean_columns([mixed.to_frame("b")], ["b"]) == {"b"}
        typed, changes = canonical_column(mixed, boolean=True)
        assert typed.tolist() == ["True", "False"] * 50 and changes == {"boolean": 10}
    # In a column that is not boolean, 1 and True stay two levels.
    assert canonical_column(pd.Series([True, 1], dtype=object))[0].tolist() == ["True", "1"]


def test_declared_levels_are_read_in_the_canonical_text():
    raw = {**SCHEMA, "columns": {**SCHEMA["columns"], "region": {"type": "categorical", "levels": ["01", "02", 3]},
                                 "city": {"type": "categorical", "ignore_case": True}}}
    schema = DatasetSchema.from_dict(raw)
    assert schema.levels["region"] == ["1", "2", "3"]
    frame = population(30, 0).assign(region=lambda f: f["region"] % 3 + 1, city=lambda f: f["city"].str.upper())
    typed = schema.conform(frame)
    assert set(typed["region"]) == {"1", "2", "3"} and set(typed["city"]) == {c.casefold() for c in CITIES}
    with pytest.raises(SchemaError, match="'region': 'levels' repeat a value"):
        DatasetSchema.from_dict({**raw, "columns": {**raw["columns"], "region": {"type": "categorical",
                                                                                  "levels": ["01", 1]}}})
    with pytest.raises(SchemaError, match="'ignore_case' belongs to categorical"):
        DatasetSchema.from_dict({**raw, "columns": {**raw["columns"], "age": {"type": "integer", "ignore_case": True}}})


@pytest.fixture()
def quick(monkeypatch):
    """The calibration study's cheaper settings (the same verdict logic) for one test; function-scoped,
    so that the slow test of this module audits at the shipped settings."""
    from synthrisk.study.calibration import CHEAP_SETTINGS

    monkeypatch.setattr(audit_run, "AUDIT_SETTINGS", CHEAP_SETTINGS)


@pytest.fixture(scope="module")
def trio(tmp_path_factory):
    """Members, an independent release and a holdout (150 records each) as clean CSVs."""
    folder = tmp_path_factory.mktemp("canon")
    frame = population(450, 11)
    for i, role in enumerate(("train", "synthetic", "holdout")):
        frame.iloc[150 * i:150 * (i + 1)].to_csv(folder / f"{role}.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def clean(trio):
    return read_inputs(*(str(trio / f"{r}.csv") for r in ("train", "synthetic", "holdout")), schema=dict(SCHEMA))


def _spell(value: bool, spelling: str):
    return {"bool": value, "lower": str(value).lower(), "upper": str(value).upper(), "10": int(value)}[spelling]


def rewrite(frame: pd.DataFrame, quirks: dict, rng) -> pd.DataFrame:
    """`frame` with information-free changes: NFD text, spaces around some cells, a boolean spelling,
    zero-padded region codes, a column order."""
    out = frame.copy()
    for column in ("city", "diagnosis"):
        out[column] = out[column].astype(object)
        if quirks["nfd"]:
            out[column] = out[column].map(lambda v: unicodedata.normalize("NFD", v))
        spaced = rng.random(len(out)) < quirks["spaces"]
        out.loc[spaced, column] = out.loc[spaced, column].map(lambda v: f" {v}  ")
    out["smoker"] = out["smoker"].map(lambda v: _spell(bool(v), quirks["smoker"])).astype(object)
    if quirks["padded"]:
        out["region"] = out["region"].map(lambda v: f"{int(v):02d}")
    return out[[out.columns[i] for i in quirks["order"]]]


def write(frame: pd.DataFrame, path_stem, quirks: dict) -> str:
    if quirks["format"] == "parquet":
        path = f"{path_stem}.parquet"
        frame.to_parquet(path, index=quirks["index"])
    else:
        path = f"{path_stem}.csv" + (".gz" if quirks["format"] == "csv.gz" else "")
        frame.to_csv(path, index=quirks["index"])
    return path


FILE_QUIRKS = st.fixed_dictionaries({
    "nfd": st.booleans(), "spaces": st.sampled_from([0.0, 0.3, 1.0]),
    "smoker": st.sampled_from(["bool", "lower", "upper", "10"]), "padded": st.booleans(),
    "order": st.permutations(range(6)), "format": st.sampled_from(["csv", "csv.gz", "parquet"]),
    "index": st.booleans()})
TRIO_QUIRKS = st.fixed_dictionaries({"train": FILE_QUIRKS, "synthetic": FILE_QUIRKS, "holdout": FILE_QUIRKS,
                                     "seed": st.integers(0, 2**16)}).filter(
    # 1/0 mean True/False only where some file writes the column as a boolean.
    lambda q: any(q[r]["smoker"] != "10" for r in ("train", "synthetic", "holdout")))


def rewritten_trio(trio, folder, quirks) -> list[str]:
    rng = np.random.default_rng(quirks["seed"])
    return [write(rewrite(pd.read_csv(trio / f"{role}.csv"), quirks[role], rng), folder / role, quirks[role])
            for role in ("train", "synthetic", "holdout")]


def assert_same_input(data, clean):
    for role in ("members", "holdout", "synthetic"):
        pd.testing.assert_frame_equal(getattr(data, role), getattr(clean, role), obj=role)
    assert data.schema.to_dict() == clean.schema.to_dict()
    assert data.checks == clean.checks


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(quirks=TRIO_QUIRKS)
def test_information_free_rewrites_read_as_the_clean_files(trio, clean, tmp_path_factory, quirks):
    folder = tmp_path_factory.mktemp("rewritten")
    data = read_inputs(*rewritten_trio(trio, folder, quirks), schema=dict(SCHEMA))
    assert_same_input(data, clean)
    # Whatever was rewritten in text is reported, per file and column.
    reported = {(e["file"], e["column"]) for e in data.normalised}
    for role in ("train", "synthetic", "holdout"):
        if quirks[role]["spaces"] or quirks[role]["nfd"]:
            assert (role, "city") in reported
        assert ((role, "region") in reported) == (quirks[role]["padded"] and quirks[role]["format"] == "parquet")


def audit_numbers(result) -> dict:
    """Every level and number of an audit, without what names the input files or says how long it took."""
    report = json.loads(result.to_json())
    for key in ("seconds", "inputs", "versions"):
        report.pop(key)
    for measure in report["measures"]:
        measure.pop("seconds")
        for run in measure["runs"]:
            run.pop("seconds")
    return report


def _invariant_audit(trio, folder, quirks, settings_override=None):
    clean_files = [str(trio / f"{r}.csv") for r in ("train", "synthetic", "holdout")]
    expected = audit_numbers(synthrisk.audit(*clean_files, schema=dict(SCHEMA)))
    result = synthrisk.audit(*rewritten_trio(trio, folder, quirks), schema=dict(SCHEMA))
    assert audit_numbers(result) == expected
    assert result.to_dict()["inputs"]["normalised"] or not any(quirks[r]["spaces"] or quirks[r]["nfd"]
                                                             for r in ("train", "synthetic", "holdout"))


def test_every_level_and_number_of_the_audit_survives_the_rewrites(trio, tmp_path, quick):
    """One rewrite with every change at once, through the whole audit (the calibration study's
    cheaper settings: the same verdict logic); the slow test draws many at the shipped settings."""
    every = {"nfd": True, "spaces": 0.3, "smoker": "10", "padded": True, "order": [5, 3, 1, 0, 2, 4],
             "format": "parquet", "index": True}
    quirks = {"train": {**every, "smoker": "lower"}, "synthetic": {**every, "format": "csv.gz"},
              "holdout": {**every, "format": "csv", "smoker": "upper"}, "seed": 1}
    _invariant_audit(trio, tmp_path, quirks)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(quirks=TRIO_QUIRKS)
def test_every_level_and_number_survives_random_rewrites_at_the_shipped_settings(trio, tmp_path_factory, quirks):
    _invariant_audit(trio, tmp_path_factory.mktemp("audit"), quirks)


def test_a_formatted_holdout_column_reads_as_the_clean_one(trio, clean):
    """The issue's case: 200 holdout cells with a trailing space made an independent release look
    like a membership leak (AUC 0.659)."""
    holdout = pd.read_csv(trio / "holdout.csv")
    holdout["diagnosis"] = holdout["diagnosis"] + " "
    data = read_inputs(str(trio / "train.csv"), str(trio / "synthetic.csv"), holdout, schema=dict(SCHEMA))
    pd.testing.assert_frame_equal(data.holdout.drop(columns="row_id"), clean.holdout.drop(columns="row_id"))
    assert {"file": "holdout", "path": "the holdout DataFrame", "column": "diagnosis",
            "change": "surrounding whitespace removed", "count": 150} in data.normalised
    assert any("the holdout DataFrame: values written in canonical form" in note for note in data.notes)


def test_a_holdout_in_one_zero_against_true_false_reads_as_the_clean_one(trio, clean):
    holdout = pd.read_csv(trio / "holdout.csv")
    holdout["smoker"] = holdout["smoker"].astype(int)
    data = read_inputs(str(trio / "train.csv"), str(trio / "synthetic.csv"), holdout, schema=dict(SCHEMA))
    pd.testing.assert_frame_equal(data.holdout.drop(columns="row_id"), clean.holdout.drop(columns="row_id"))


def test_invented_levels_are_reported_and_refused_past_the_stated_share(trio):
    synthetic = pd.read_csv(trio / "synthetic.csv")
    few = synthetic.copy()
    few.loc[:0, "city"] = "Atlantis"  # 1 of 150: under the 1 % share, reported
    data = read_inputs(str(trio / "train.csv"), few, str(trio / "holdout.csv"), schema=dict(SCHEMA))
    assert [(e["column"], e["count"], e["levels"]) for e in data.unknown_levels if e["file"] == "synthetic"] == \
        [("city", 1, ["Atlantis"])]
    many = synthetic.copy()
    many.loc[:14, "city"] = "Atlantis"  # 10 %
    with pytest.raises(DataError, match=r"synthetic DataFrame: column 'city': 15 value\(s\) \(10.0%\) hold level\(s\) "
                                        r"\['Atlantis'\] that no real record has"):
        read_inputs(str(trio / "train.csv"), many, str(trio / "holdout.csv"), schema=dict(SCHEMA))


def test_a_population_draw_with_rare_unseen_levels_is_reported_not_refused():
    """A high-cardinality column: a fresh draw of the population holds levels the real records never
    had, as many as their Good-Turing mass says. That is reported, not refused."""
    rng = np.random.default_rng(4)
    frame = population(600, 5).assign(city=[f"town {v}" for v in rng.zipf(1.6, 600) % 400])
    data = read_inputs(frame.iloc[:200], frame.iloc[200:400], frame.iloc[400:], schema=dict(SCHEMA))
    share = next(e["share"] for e in data.unknown_levels if e["file"] == "synthetic" and e["column"] == "city")
    assert share > 0.05


def test_an_invented_level_is_in_the_json_the_page_and_the_tables(trio, tmp_path, quick):
    synthetic = pd.read_csv(trio / "synthetic.csv")
    synthetic.loc[:0, "city"] = "Atlantis"
    synthetic.to_csv(tmp_path / "release.csv", index=False)
    (tmp_path / "schema.yaml").write_text(json.dumps(SCHEMA))
    assert main(["audit", "--train", str(trio / "train.csv"), "--synthetic", str(tmp_path / "release.csv"),
                 "--holdout", str(trio / "holdout.csv"), "--schema", str(tmp_path / "schema.yaml"),
                 "--out", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert report["inputs"]["unknown_levels"][0]["levels"] == ["Atlantis"]
    assert "Atlantis" in (tmp_path / "out" / "audit.html").read_text()
    table = pd.read_csv(tmp_path / "out" / "tables" / "inputs.csv")
    assert table.loc[table["check"] == "unknown levels", "levels"].tolist() == ["Atlantis"]


def test_a_holdout_written_differently_is_named_as_formatting_not_population(trio):
    """Files that still differ after the typing pass: the note names the formatting (here incomes in
    thousands in the holdout), not 'a different population'."""
    holdout = pd.read_csv(trio / "holdout.csv")
    holdout["income"] = holdout["income"] / 1000
    data = read_inputs(str(trio / "train.csv"), str(trio / "synthetic.csv"), holdout, schema=dict(SCHEMA))
    assert data.checks["same_population"]["differs"]
    note = next(n for n in data.notes if "classifier" in n)
    assert "column 'income'" in note and "write some columns differently" in note and "population" not in note


def test_dataframes_with_integer_column_names_are_audited_as_text_names(trio):
    frames = [pd.read_csv(trio / f"{r}.csv") for r in ("train", "synthetic", "holdout")]
    numbered = [f.set_axis(range(6), axis=1) for f in frames]
    data = read_inputs(*numbered, sensitive=["5"])
    assert list(data.schema.columns) == ["0", "1", "2", "3", "4", "5"] and data.schema.sensitive == ["5"]


@pytest.mark.parametrize("sensitive", [6, [6], {"a": 1}])
def test_a_wrong_type_of_sensitive_is_a_clear_error(trio, sensitive):
    with pytest.raises(ConfigError, match="sensitive: give a column name or a list of column names"):
        synthrisk.audit(str(trio / "train.csv"), str(trio / "synthetic.csv"), sensitive=sensitive)


def test_a_contaminated_holdout_is_refused_against_an_expectation_it_does_not_inflate(trio):
    train = pd.read_csv(trio / "train.csv")
    holdout = pd.concat([train.iloc[:75], pd.read_csv(trio / "holdout.csv").iloc[75:]], ignore_index=True)
    with pytest.raises(DataError, match=r"75 of 150 holdout records \(50.0%\) also occur.*against 0.0% expected"):
        read_inputs(str(trio / "train.csv"), str(trio / "synthetic.csv"), holdout, schema=dict(SCHEMA))


@pytest.mark.parametrize("option", ["--schema", "--policy"])
@pytest.mark.parametrize("kind", ["binary", "folder", "empty"])
def test_schema_and_policy_paths_that_are_not_yaml_files_are_refused_by_name(trio, tmp_path, capsys, option, kind):
    path = tmp_path / "given"
    if kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_text("")
    schema = tmp_path / "schema.yaml"
    schema.write_text(json.dumps(SCHEMA))
    args = ["audit", "--train", str(trio / "train.csv"), "--synthetic", str(trio / "synthetic.csv"),
            "--out", str(tmp_path / "out"), "--schema", str(path if option == "--schema" else schema)]
    if option == "--policy":
        args += ["--policy", str(path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
    assert {"binary": "is not UTF-8 text", "folder": "is a folder", "empty": "is empty"}[kind] in err
    assert not (tmp_path / "out").exists()


def test_an_empty_policy_is_refused_in_python_too(tmp_path):
    from synthrisk.measures.policy import as_policy

    (tmp_path / "policy.yaml").write_text("# nothing\n")
    with pytest.raises(SynthriskError, match="is empty"):
        as_policy(tmp_path / "policy.yaml")

