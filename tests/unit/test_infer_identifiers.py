"""`synthrisk schema infer` on a raw file like COMPAS's (issue #27 item 9): names, case numbers and
columns nearly unique per record are direct identifiers to drop, never quasi-identifiers; a column
repeated under a `.1` suffix is dropped as a duplicate; measurements stay, however many values they take."""

import numpy as np
import pandas as pd
import pytest
import yaml

from synthrisk.cli import main
from synthrisk.data.infer import guess_columns, identifier_name, infer_schema


def _compas_like(n=600, seed=0):
    rng = np.random.default_rng(seed)
    first = rng.choice([f"given{i}" for i in range(150)], n)
    last = rng.choice([f"family{i}" for i in range(400)], n)
    # Case numbers as COMPAS writes them, a few shared by two records (3,594 distinct in 3,607 there).
    case = np.array([f"13{i:06d}CF10A" for i in range(n)], dtype=object)
    case[rng.choice(n, 5, replace=False)] = case[:5]
    recid_case = np.where(rng.random(n) < 0.3, [f"15{i:06d}MM10A" for i in range(n)], None)
    decile = rng.integers(1, 11, n)
    priors = rng.poisson(3, n).astype(float)
    priors[rng.choice(n, 20, replace=False)] = np.nan
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "name": [f"{f} {la}" for f, la in zip(first, last)],
        "first": first,
        "last": last,
        "sex": rng.choice(["Male", "Female"], n),
        "age": rng.integers(18, 80, n),
        "race": rng.choice(["African-American", "Caucasian", "Hispanic", "Other"], n),
        "decile_score": decile,
        "priors_count": priors,
        "c_case_number": case,
        "c_charge_degree": rng.choice(["F", "M"], n),
        # Many levels, repeated: a quasi-identifier with a note, not an identifier.
        "c_charge_desc": rng.choice([f"charge {i}" for i in range(120)], n),
        "r_case_number": recid_case,
        # Named like nothing known, but nearly one value per record.
        "booking_ref": [f"B{i:05d}" if i % 50 else "B00000" for i in range(n)],
        # Ordinary high-cardinality measurements: never identifiers.
        "days_b_screening_arrest": rng.integers(-400, 400, n),
        "risk_raw": rng.normal(0, 1, n),
        # Named like an identifier but a yes/no attribute (German credit's `telephone`).
        "telephone": rng.choice(["none", "yes"], n),
        "decile_score.1": decile,
        "priors_count.1": priors,
        "is_recid": rng.integers(0, 2, n),
        "two_year_recid": rng.integers(0, 2, n),
    })


IDENTIFIERS = {"id", "name", "first", "last", "c_case_number", "r_case_number", "booking_ref"}
DUPLICATES = {"decile_score.1": "decile_score", "priors_count.1": "priors_count"}


def test_direct_identifiers_and_duplicates_are_dropped_measurements_kept():
    frame = _compas_like()
    guesses = {g.name: g for g in guess_columns(frame)}
    for column in IDENTIFIERS:
        assert guesses[column].drop and guesses[column].drop.startswith("direct identifier"), (column, guesses[column])
    for column, original in DUPLICATES.items():
        assert guesses[column].same_as == original and f"duplicate of {original!r}" in guesses[column].drop
    for column in ("age", "days_b_screening_arrest", "risk_raw", "telephone", "c_charge_desc", "decile_score",
                   "priors_count", "is_recid", "two_year_recid", "sex", "race"):
        assert guesses[column].drop is None, (column, guesses[column])
    assert "levels" in guesses["c_charge_desc"].note
    assert "distinct values in 600 records (98.2%)" in guesses["booking_ref"].drop
    schema = infer_schema(frame, "compas", sensitive=["two_year_recid"])
    assert set(schema["drop"]) == IDENTIFIERS | set(DUPLICATES)
    assert not (IDENTIFIERS | set(DUPLICATES)) & set(schema["quasi_identifiers"])
    assert "days_b_screening_arrest" in schema["quasi_identifiers"] and "risk_raw" in schema["quasi_identifiers"]


@pytest.mark.parametrize("name, kind", [
    ("id", "identifier"), ("PersonID", "identifier"), ("patient_id", "identifier"), ("first_name", "name"),
    ("LastName", "name"), ("surname", "name"), ("first", "name"), ("name.1", "name"), ("e-mail", "e-mail"),
    ("phone_number", "telephone"), ("SSN", "official"), ("c_case_number", "case"), ("vr_case_number", "case"),
    ("account_no", "account"),
    ("is_recid", None), ("two_year_recid", None), ("paid", None), ("last_visit_days", None), ("first_job_age", None),
    ("filename", None), ("income", None), ("decile_score.1", None), ("grid", None),
])
def test_identifier_names(name, kind):
    found = identifier_name(name)
    assert (found is None) if kind is None else (kind in found), (name, found)


def test_a_column_equal_to_the_sensitive_one_is_dropped_whichever_comes_first():
    frame = _compas_like()
    schema = infer_schema(frame, "compas", sensitive=["decile_score.1"])
    assert schema["sensitive"] == ["decile_score.1"] and "decile_score" in schema["drop"]
    assert "decile_score" not in schema["quasi_identifiers"]


def test_schema_infer_says_why_in_the_yaml_and_the_audit_drops_them(tmp_path, capsys):
    from synthrisk.release_audit.inputs import read_inputs

    frame = _compas_like()
    path = tmp_path / "compas-scores-two-years.csv"
    frame.to_csv(path, index=False)
    assert main(["schema", "infer", str(path), "--sensitive", "two_year_recid"]) == 0
    text = capsys.readouterr().out
    raw = yaml.safe_load(text)
    drops = {line.split("#")[0].strip(" -").strip("'\""): line.split("#", 1)[1] for line in text.splitlines()
             if line.startswith("  - ")}
    assert set(drops) == set(raw["drop"]) == IDENTIFIERS | set(DUPLICATES)
    assert "direct identifier: named as a person's name" in drops["first"]
    assert "direct identifier" in drops["c_case_number"] and "group rare levels" not in drops["c_case_number"]
    assert "duplicate of 'decile_score'" in drops["decile_score.1"]
    assert not (IDENTIFIERS | set(DUPLICATES)) & set(raw["quasi_identifiers"])
    # The audit infers its schema the same way when no --schema is given.
    half = len(frame) // 2
    frame.iloc[:half].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[half:].drop(columns=sorted(IDENTIFIERS)).to_csv(tmp_path / "synthetic.csv", index=False)
    audit = read_inputs(str(tmp_path / "train.csv"), str(tmp_path / "synthetic.csv"), sensitive=["two_year_recid"])
    assert not (IDENTIFIERS | set(DUPLICATES)) & set(audit.schema.columns)
    assert set(audit.schema.drop) >= IDENTIFIERS | set(DUPLICATES)
