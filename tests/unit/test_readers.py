"""Real-world files: compressed, tab- or space-separated, without a header, other encodings and
missing-value markers, read through a schema's source options; and `synthrisk schema infer`."""

import gzip

import numpy as np
import pandas as pd
import pytest
import yaml

from synthrisk.cli import main
from synthrisk.data import DatasetSchema, load_dataset, load_schema
from synthrisk.errors import DataError, SchemaError
from synthrisk.io import ReadOptions, read_table

COLUMNS = {"age": {"type": "integer"}, "height": {"type": "continuous"}, "town": {"type": "categorical"}}


def _schema(path, **options):
    return DatasetSchema.from_dict({
        "name": "people", "source": {"path": str(path), **({"options": options} if options else {})},
        "columns": COLUMNS, "quasi_identifiers": ["age", "town"], "sensitive": ["height"]}, origin="people.yaml")


EXPECTED = pd.DataFrame({"age": [31, 47, 52], "height": [1.8, np.nan, 1.65], "town": ["Łódź", "Ghent", None]})


def _check(frame):
    assert frame["age"].tolist() == [31, 47, 52]
    assert frame["height"].iloc[0] == 1.8 and np.isnan(frame["height"].iloc[1]) and frame["height"].iloc[2] == 1.65
    assert frame["town"].iloc[:2].tolist() == ["Łódź", "Ghent"] and pd.isna(frame["town"].iloc[2])


@pytest.mark.parametrize("name, content, encoding, options", [
    ("people.csv.gz", "age,height,town\n31,1.8,Łódź\n47,,Ghent\n52,1.65,\n", "utf-8", {}),
    ("people.tsv", "age\theight\ttown\n31\t1.8\tŁódź\n47\tNA\tGhent\n52\t1.65\t?\n", "utf-8",
     {"na_values": ["NA", "?"]}),
    ("people.data", "31  1,8  Łódź\n47  ?  Ghent\n52  1,65 ?\n", "utf-8",
     {"sep": "whitespace", "header": False, "names": ["age", "height", "town"], "decimal": ",", "na_values": ["?"]}),
    ("people.txt", "# survey 2026\nage;height;town\n31;1.8;Łódź\n47;;Ghent\n52;1.65;\n", "utf-16",
     {"sep": ";", "encoding": "utf-16", "comment": "#"}),
])
def test_a_real_world_file_is_read_through_its_schema(tmp_path, name, content, encoding, options):
    path = tmp_path / name
    data = content.encode(encoding)
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    _check(load_dataset(_schema(path, **options)))


@pytest.mark.parametrize("options, message", [
    ({"sep": ";", "delimiter": ","}, "unknown reader option(s) ['delimiter']"),
    ({"header": "no"}, "source.options.header: must be true or false"),
    ({"header": False}, "header: false needs names"),
    ({"encoding": "klingon"}, "source.options.encoding: unknown encoding 'klingon'"),
    ({"decimal": ",,"}, "source.options.decimal: must be one character"),
    ({"skip_rows": -1}, "source.options.skip_rows: must be a whole number >= 0"),
])
def test_bad_reader_options_are_refused_when_the_schema_is_read(tmp_path, options, message):
    with pytest.raises(SchemaError, match="people.yaml: source.options") as error:
        _schema(tmp_path / "people.csv", **options)
    assert message in str(error.value)


def test_unreadable_files_say_what_to_change(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("age,height,town\n31,1.8,Malmö\n".encode("latin-1"))
    with pytest.raises(DataError, match="latin.csv: not valid utf-8 text .*set the reader option encoding"):
        read_table(latin)
    assert read_table(latin, ReadOptions.from_mapping({"encoding": "latin-1"}))["town"].tolist() == ["Malmö"]
    short = tmp_path / "short.data"
    short.write_text("31 1.8 Ghent\n")
    with pytest.raises(DataError, match="names lists 2 columns but the file has 3 fields"):
        read_table(short, ReadOptions.from_mapping({"sep": "whitespace", "header": False, "names": ["a", "b"]}))
    with pytest.raises(DataError, match=r"unsupported file type '\.xlsx'"):
        (tmp_path / "book.xlsx").write_text("")
        read_table(tmp_path / "book.xlsx")
    with pytest.raises(DataError, match="reader options apply to text files"):
        pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "t.parquet")
        read_table(tmp_path / "t.parquet", ReadOptions.from_mapping({"sep": ";"}))


def _messy(n=120, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "record_id": np.arange(n) + 5000,
        "email": [f"user{i}@example.org" for i in range(n)],
        "admitted": pd.date_range("2024-01-01", periods=n, freq="D").strftime("%d/%m/%Y"),
        "remarks": [f"patient seen on ward {i % 7} and sent home with advice" for i in range(n)],
        "site": "A",
        "age": rng.integers(18, 95, n),
        "weight": rng.normal(75, 12, n).round(1),
        "smoker": rng.integers(0, 2, n),
        "ward": rng.choice(["cardio", "onco", "neuro", "?"], n),
        "outcome": rng.choice(["recovered", "readmitted", "died"], n),
    })


def test_schema_infer_drafts_a_schema_that_runs(tmp_path, capsys):
    path = tmp_path / "hospital.tsv.bz2"
    _messy().to_csv(path, sep="\t", index=False)
    assert main(["schema", "infer", str(path), "--na-values", "?", "--sensitive", "outcome"]) == 0
    text = capsys.readouterr().out
    raw = yaml.safe_load(text)
    assert raw["name"] == "hospital" and raw["source"]["options"] == {"na_values": ["?"]}
    drops = {line.split("#")[0].strip(" -"): line.split("#", 1)[1] for line in text.splitlines()
             if line.startswith("  - ")}
    assert set(drops) == {"record_id", "email", "admitted", "remarks", "site"}
    assert "identifier" in drops["record_id"] and "identifier" in drops["email"]
    assert "date" in drops["admitted"] and "free text" in drops["remarks"] and "constant" in drops["site"]
    assert raw["columns"] == {"age": {"type": "integer"}, "weight": {"type": "continuous"},
                              "smoker": {"type": "categorical"}, "ward": {"type": "categorical"},
                              "outcome": {"type": "categorical"}}
    # The domain seen in the data is there to read, commented out: never a public domain by accident.
    assert "# levels: [cardio, neuro, onco]" in text and "# bounds: [18," in text
    assert raw["quasi_identifiers"] == ["age", "weight", "smoker", "ward"] and raw["sensitive"] == ["outcome"]
    schema_file = tmp_path / "hospital.yaml"
    schema_file.write_text(text)
    frame = load_dataset(load_schema(schema_file))
    assert list(frame.columns) == ["age", "weight", "smoker", "ward", "outcome"] and frame["ward"].isna().any()


def test_schema_infer_writes_the_domain_only_when_asked_and_needs_a_sensitive_column(tmp_path, capsys):
    path = tmp_path / "h.csv"
    _messy().to_csv(path, index=False)
    assert main(["schema", "infer", str(path), "--domain-from-data", "--sensitive", "outcome"]) == 0
    raw = yaml.safe_load(capsys.readouterr().out)
    assert raw["columns"]["outcome"]["levels"] == ["died", "readmitted", "recovered"]
    assert raw["columns"]["age"]["bounds"][0] >= 18
    assert main(["schema", "infer", str(path)]) == 0
    text = capsys.readouterr().out
    assert "sensitive: []  # name at least one" in text
    assert main(["schema", "infer", str(path), "--sensitive", "no_such"]) == 2
    assert "--sensitive: column(s) ['no_such'] are not in the data" in capsys.readouterr().err
