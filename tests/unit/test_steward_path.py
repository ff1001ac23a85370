"""The steward's path (issue #27): `synthrisk audit`, `generate` and `schema infer` run as a user runs
them, on files with the quirks of real ones. Each case gives the clean files' verdicts or a refusal
naming the file and column, and no command deletes or overwrites a file it did not write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthrisk.cli import main
from synthrisk.data import load_schema
from synthrisk.errors import SynthriskError
from synthrisk.generators.run import run_generator
from synthrisk.outputs import AUDIT_COMPLETE, MANIFEST
from synthrisk.release_audit import run as audit_run
from synthrisk.release_audit.checks import MIN_RECORDS
from synthrisk.release_audit.inputs import read_inputs
from synthrisk.study.calibration import CHEAP_SETTINGS

# The calibration study's cheaper settings (same verdict logic): two RAPID attackers, fewer
# permutations, refits and attacks.
QUICK = CHEAP_SETTINGS


@pytest.fixture(scope="module")
def files(adult, tmp_path_factory):
    """Members and holdout (400 each) of Adult with a 0/1 flag column, the schema as a file, and an
    `independent` release (it keeps no relation of the members: no membership risk)."""
    folder = tmp_path_factory.mktemp("steward")
    sample = adult.sample(800, random_state=5).reset_index(drop=True)
    sample["flag"] = (sample["age"] > 40).astype(int)
    members, holdout = sample.iloc[:400].reset_index(drop=True), sample.iloc[400:].reset_index(drop=True)
    raw = yaml.safe_load((ROOT / "config/datasets/adult.yaml").read_text())
    raw["source"] = {"path": "train.csv"}
    raw["columns"]["flag"] = {"type": "categorical", "levels": ["0", "1"]}
    raw["quasi_identifiers"].append("flag")
    (folder / "schema.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    schema = load_schema(folder / "schema.yaml")
    members.to_csv(folder / "train.csv", index=False)
    holdout.to_csv(folder / "holdout.csv", index=False)
    synthetic, status = run_generator("independent", {"backend": "independent"}, schema.conform(members), schema,
                                      n=400, seed=0)
    assert status["status"] == "ok"
    synthetic.to_csv(folder / "independent.csv", index=False)
    return folder


@pytest.fixture()
def quick(monkeypatch):
    monkeypatch.setattr(audit_run, "AUDIT_SETTINGS", QUICK)


def audit_args(folder, out, train="train.csv", holdout="holdout.csv", synthetic="independent.csv",
               schema="schema.yaml", extra=()):
    return ["audit", "--train", str(folder / train), "--synthetic", str(folder / synthetic),
            *(["--holdout", str(folder / holdout)] if holdout else []),
            *(["--schema", str(folder / schema)] if schema else []), "--out", str(out), *extra]


def verdicts(out: Path) -> dict:
    report = json.loads((out / "audit.json").read_text())
    return {r["risk"]: r["at_risk"] for r in report["risks"]}


def refused(args, capsys) -> str:
    capsys.readouterr()  # what earlier runs of the test printed
    code = main(args)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "Traceback" not in err and "synthrisk audit: [1/" not in err
    return err


def variant(folder: Path, name: str, source: str, change) -> str:
    frame = pd.read_csv(folder / source)
    change(frame)
    frame.to_csv(folder / name, index=False)
    return name


@pytest.fixture(scope="module")
def clean_verdicts(files, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_run, "AUDIT_SETTINGS", QUICK)
        out = tmp_path_factory.mktemp("clean")
        assert main(audit_args(files, out)) == 0
    return verdicts(out)


# 1. A blank cell in a 0/1 column: pandas reads the column as float; it must stay the 0/1 column.
@pytest.mark.parametrize("role", ["holdout", "train"])
def test_a_blank_flag_cell_gives_the_clean_verdicts(files, clean_verdicts, quick, tmp_path, role):
    def blank(frame):
        frame.loc[3, "flag"] = np.nan
    name = variant(files, f"{role}_blank.csv", f"{role}.csv", blank)
    assert main(audit_args(files, tmp_path, **{role: name})) == 0
    assert verdicts(tmp_path) == clean_verdicts
    assert clean_verdicts["membership"] is False


# 2. A holdout that is (partly) the training records.
@pytest.mark.parametrize("holdout", ["train.csv", "half"])
def test_a_holdout_overlapping_the_training_records_is_refused(files, tmp_path, capsys, holdout):
    if holdout == "half":
        mixed = pd.concat([pd.read_csv(files / "holdout.csv").iloc[:200], pd.read_csv(files / "train.csv").iloc[:200]])
        mixed.to_csv(files / "half.csv", index=False)
        holdout = "half.csv"
    err = refused(audit_args(files, tmp_path / "out", holdout=holdout, synthetic="train.csv"), capsys)
    assert holdout in err and "also occur, value for value" in err and "train.csv" in err
    assert not (tmp_path / "out").exists()


def test_copies_of_one_holdout_record_are_refused(files, tmp_path, capsys):
    holdout = pd.read_csv(files / "holdout.csv")
    pd.concat([holdout.iloc[:200]] + [holdout.iloc[[0]]] * 300).to_csv(files / "copies.csv", index=False)
    err = refused(audit_args(files, tmp_path / "out", holdout="copies.csv"), capsys)
    assert "copies.csv" in err and "copies of another holdout record" in err


def test_a_holdout_of_another_population_marks_membership_unreliable(adult, files, quick, tmp_path):
    # The holdout: older people only (a classifier separates them from the members at once).
    older = adult[adult["age"] > 60].sample(300, random_state=1).assign(flag=1)
    older.to_csv(files / "older.csv", index=False)
    assert main(audit_args(files, tmp_path, holdout="older.csv")) == 0
    report = json.loads((tmp_path / "audit.json").read_text())
    assert report["inputs"]["checks"]["same_population"]["differs"] is True
    membership = next(r for r in report["risks"] if r["risk"] == "membership")
    assert "unreliable" in membership["verdict"] and membership["unreliable"]
    page = (tmp_path / "audit.html").read_text()
    assert "unreliable" in page and 'id="input-notes"' in page


def test_the_same_population_check_keeps_its_level_under_the_null(adult, adult_schema):
    """Members and holdout split at random from one population: the check fires at its level."""
    from synthrisk.release_audit.checks import SAME_POPULATION_LEVEL, same_population

    conformed = adult_schema.conform(adult)
    fired = 0
    for seed in range(10):
        sample = conformed.sample(1000, random_state=seed).reset_index(drop=True)
        fired += same_population(sample.iloc[:500], sample.iloc[500:], adult_schema, seed)["differs"]
    # 10 draws at level 1e-3: P(any fires) < 0.01.
    assert fired == 0 and SAME_POPULATION_LEVEL <= 1e-3


# 3. --out never deletes or overwrites a file synthrisk did not write.
def test_out_holding_the_inputs_in_tables_is_refused_and_nothing_is_touched(files, tmp_path, capsys, monkeypatch):
    (tmp_path / "tables").mkdir()
    for name in ("train.csv", "holdout.csv", "independent.csv"):
        (tmp_path / "tables" / name).write_bytes((files / name).read_bytes())
    before = {p.name: p.read_bytes() for p in (tmp_path / "tables").iterdir()}
    monkeypatch.chdir(tmp_path)
    err = refused(["audit", "--train", "tables/train.csv", "--holdout", "tables/holdout.csv", "--synthetic",
                   "tables/independent.csv", "--sensitive", "income", "--out", "."], capsys)
    assert "tables" in err and "--out" in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "tables").iterdir()} == before


def test_an_edited_inferred_schema_is_never_overwritten(files, quick, tmp_path, capsys):
    args = audit_args(files, tmp_path, schema=None, extra=["--sensitive", "income"])
    assert main(args) == 0
    edited = (tmp_path / "schema.yaml").read_text() + "# my edit\n"
    (tmp_path / "schema.yaml").write_text(edited)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    err = refused(args, capsys)
    assert "schema.yaml" in err and f"--schema {tmp_path / 'schema.yaml'}" in err
    # The refused rerun leaves the folder as it was: the earlier audit, complete, and the edit.
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert (tmp_path / "audit.html").exists() and (tmp_path / AUDIT_COMPLETE).exists()
    # Rerun as the message says: the edited schema is read, and kept.
    assert main(audit_args(files, tmp_path, schema=str(tmp_path / "schema.yaml"))) == 0
    assert (tmp_path / "schema.yaml").read_text() == edited and (tmp_path / AUDIT_COMPLETE).exists()


def test_a_rerun_replaces_only_its_own_files(files, quick, tmp_path, capsys):
    assert main(audit_args(files, tmp_path)) == 0
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "tables" / "mine.csv").write_text("a\n1\n")
    err = refused(audit_args(files, tmp_path), capsys)  # tables/ now holds a file of the user's
    assert "tables" in err
    (tmp_path / "tables" / "mine.csv").unlink()
    assert main(audit_args(files, tmp_path)) == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert "audit.html" in manifest["files"] and "notes.txt" not in manifest["files"]


def test_a_foreign_file_where_the_audit_writes_is_refused(files, tmp_path, capsys):
    (tmp_path / "audit.html").write_text("<p>my page</p>")
    err = refused(audit_args(files, tmp_path), capsys)
    assert "audit.html" in err and "not written by synthrisk" in err
    assert (tmp_path / "audit.html").read_text() == "<p>my page</p>"


def test_an_unwritable_out_is_refused_before_any_measure(files, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    err = refused(audit_args(files, tmp_path / "file" / "sub"), capsys)
    assert "--out: cannot write into" in err


# 4. generate and schema infer never write over their input or a foreign file.
def test_generate_and_schema_infer_refuse_to_overwrite(files, tmp_path, capsys):
    train = (files / "train.csv").read_bytes()
    code = main(["generate", "--generator", "independent", "--train", str(files / "train.csv"), "--schema",
                 str(files / "schema.yaml"), "--n", "50", "--out", str(files / "train.csv")])
    assert code == 2 and "is also the input --train" in capsys.readouterr().err
    assert (files / "train.csv").read_bytes() == train
    assert main(["schema", "infer", str(files / "train.csv"), "--out", str(files / "train.csv")]) == 2
    assert "is also the input" in capsys.readouterr().err and (files / "train.csv").read_bytes() == train
    (tmp_path / "syn.csv").write_text("mine")
    generate = ["generate", "--generator", "independent", "--train", str(files / "train.csv"), "--schema",
                str(files / "schema.yaml"), "--n", "50", "--out", str(tmp_path / "syn.csv")]
    assert main(generate) == 2 and "not written by synthrisk" in capsys.readouterr().err
    assert (tmp_path / "syn.csv").read_text() == "mine"
    (tmp_path / "syn.csv").unlink()
    assert main(generate) == 0 and main(generate) == 0  # its own file it may replace
    capsys.readouterr()



def test_the_other_commands_writing_files_refuse_to_overwrite(files, tmp_path, capsys):
    """rapid --records, mia --records, findings --out and bundle --out keep the user's files as
    generate does: an input or a file synthrisk did not write is refused before any work, by option."""
    mine = tmp_path / "mine.csv"
    mine.write_text("mine")
    common = ["--synthetic", str(files / "independent.csv"), "--schema", str(files / "schema.yaml")]
    rapid = ["rapid", "--real", str(files / "train.csv"), *common, "--sensitive", "income", "--permutations", "0"]
    mia = ["mia", "--members", str(files / "train.csv"), "--non-members", str(files / "holdout.csv"), *common]
    for command in (rapid, mia):
        assert main([*command, "--records", str(mine)]) == 2
        assert "--records" in capsys.readouterr().err and mine.read_text() == "mine"
        assert main([*command, "--records", str(files / "train.csv")]) == 2
        assert "is also the input" in capsys.readouterr().err
    records = tmp_path / "records.csv"
    assert main([*rapid, "--records", str(records)]) == 0 and main([*rapid, "--records", str(records)]) == 0
    capsys.readouterr()
    for command in (["findings", str(tmp_path), "--out", str(mine)], ["bundle", str(tmp_path), "--out", str(mine)]):
        assert main(command) == 2
        assert "--out" in capsys.readouterr().err and mine.read_text() == "mine"

# 6. Stale, killed and concurrent audits.
def test_a_killed_audit_leaves_no_complete_looking_output_and_the_next_cleans_up(files, tmp_path):
    out = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-m", "synthrisk.cli", *audit_args(files, out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.name.startswith(".synthrisk-staging-")
                                             for p in (out.iterdir() if out.exists() else [])):
        time.sleep(0.2)
    time.sleep(0.5)
    # Frozen mid-audit (it would otherwise finish while the second starts up), then killed.
    assert child.poll() is None, "the audit finished before it could be stopped"
    os.killpg(child.pid, signal.SIGSTOP)
    # A second audit into the same folder while the first runs is refused, not interleaved.
    second = subprocess.run([sys.executable, "-m", "synthrisk.cli", *audit_args(files, out)], capture_output=True,
                            text=True)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    assert second.returncode == 2 and "another synthrisk audit is writing" in second.stderr
    assert not (out / "audit.json").exists() and not (out / AUDIT_COMPLETE).exists()
    assert any(p.name.startswith(".synthrisk-staging-") for p in out.iterdir())
    refused_run = subprocess.run([sys.executable, "-m", "synthrisk.cli",
                                  *audit_args(files, out, train="nope.csv")], capture_output=True, text=True)
    assert refused_run.returncode == 2
    assert not any(p.name.startswith(".synthrisk-staging-") for p in out.iterdir())


# 7. The schema's reader options, and files with another separator or encoding.
def test_reader_options_of_the_schema_and_the_command_line(files, tmp_path, capsys):
    train = pd.read_csv(files / "train.csv")
    train.to_csv(tmp_path / "train_semi.csv", sep=";", index=False)
    err = refused(audit_args(files, tmp_path / "out", train=str(tmp_path / "train_semi.csv")), capsys)
    assert "train_semi.csv" in err and "';'-separated" in err and "--sep" in err
    for role in ("holdout", "independent"):
        pd.read_csv(files / f"{role}.csv").to_csv(tmp_path / f"{role}_semi.csv", sep=";", index=False)
    data = read_inputs(str(tmp_path / "train_semi.csv"), str(tmp_path / "independent_semi.csv"),
                       str(tmp_path / "holdout_semi.csv"), str(files / "schema.yaml"), read_options={"sep": ";"})
    assert len(data.members) == len(train)
    # A schema made with --na-values "?" reads "?" as missing in every file of the audit.
    marked = train.copy()
    marked.loc[:9, "workclass"] = "?"
    marked.to_csv(tmp_path / "train_q.csv", index=False)
    raw = yaml.safe_load((files / "schema.yaml").read_text())
    raw["columns"]["workclass"].pop("levels", None)
    raw["source"] = {"path": "train_q.csv", "options": {"na_values": ["?"]}}
    (tmp_path / "schema_q.yaml").write_text(yaml.safe_dump(raw))
    data = read_inputs(str(tmp_path / "train_q.csv"), str(files / "independent.csv"), str(files / "holdout.csv"),
                       str(tmp_path / "schema_q.yaml"))
    assert "?" not in set(data.members["workclass"].dropna()) and data.members["workclass"].isna().sum() >= 10


# 8. The smaller ones.
@pytest.mark.parametrize("role, rows", [("holdout", 3), ("synthetic", 1), ("train", 5)])
def test_files_too_small_are_refused(files, tmp_path, capsys, role, rows):
    source = {"holdout": "holdout.csv", "synthetic": "independent.csv", "train": "train.csv"}[role]
    name = f"small_{role}.csv"
    pd.read_csv(files / source).iloc[:rows].to_csv(files / name, index=False)
    err = refused(audit_args(files, tmp_path / "out", **{role: name}), capsys)
    assert name in err and f"at least {MIN_RECORDS}" in err


def test_an_all_blank_synthetic_column_is_refused(files, tmp_path, capsys):
    def blank(frame):
        frame["hours_per_week"] = np.nan
    name = variant(files, "blank_column.csv", "independent.csv", blank)
    err = refused(audit_args(files, tmp_path / "out", synthetic=name), capsys)
    assert name in err and "'hours_per_week'" in err and "blank in every row" in err


def test_sensitive_replacing_the_schemas_is_stated(files):
    raw = yaml.safe_load((files / "schema.yaml").read_text())
    raw["quasi_identifiers"].remove("sex")
    raw["sensitive"] = ["income", "sex"]
    (files / "two_sensitive.yaml").write_text(yaml.safe_dump(raw))
    data = read_inputs(str(files / "train.csv"), str(files / "independent.csv"), str(files / "holdout.csv"),
                       str(files / "two_sensitive.yaml"), sensitive=["income"])
    assert data.schema.sensitive == ["income"]
    assert any("['sex']" in note and "no longer attacked" in note for note in data.notes)


# Files written with real-world quirks read as the clean files, or are refused naming the file.
QUIRKS = st.fixed_dictionaries({
    "sep": st.sampled_from([",", ";", "\t"]),
    "encoding": st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]),
    "crlf": st.booleans(),
    "blank_flag": st.sampled_from([None, "train", "holdout", "synthetic"]),
    "shared_records": st.sampled_from([0, 1, 5, 200]),
})


@pytest.fixture(scope="module")
def clean_input(files):
    return read_inputs(str(files / "train.csv"), str(files / "independent.csv"), str(files / "holdout.csv"),
                       str(files / "schema.yaml"))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(quirks=QUIRKS)
def test_quirky_files_read_as_the_clean_ones_or_are_refused_by_name(files, clean_input, tmp_path_factory, quirks):
    folder = tmp_path_factory.mktemp("quirks")
    frames = {"train": pd.read_csv(files / "train.csv"), "holdout": pd.read_csv(files / "holdout.csv"),
              "synthetic": pd.read_csv(files / "independent.csv")}
    clean = clean_input
    shared = quirks["shared_records"]
    if shared:
        frames["holdout"] = pd.concat([frames["train"].iloc[:shared], frames["holdout"].iloc[shared:]],
                                      ignore_index=True)
    if quirks["blank_flag"]:
        # The last record: never one of the shared ones.
        frames[quirks["blank_flag"]].loc[len(frames[quirks["blank_flag"]]) - 1, "flag"] = np.nan
    paths = {}
    for role, frame in frames.items():
        paths[role] = str(folder / f"{role}.csv")
        frame.to_csv(paths[role], sep=quirks["sep"], index=False, encoding=quirks["encoding"],
                     lineterminator="\r\n" if quirks["crlf"] else "\n")
    options = {"sep": quirks["sep"], **({"encoding": "latin-1"} if quirks["encoding"] == "latin-1" else {})}
    try:
        data = read_inputs(paths["train"], paths["synthetic"], paths["holdout"], str(files / "schema.yaml"),
                           read_options=options)
    except SynthriskError as exc:
        # Only the planted overlap may be refused, and then with the file named.
        assert quirks["shared_records"] >= 200 and paths["holdout"] in str(exc) and "also occur" in str(exc)
        return
    assert quirks["shared_records"] < 200
    for role, typed, expected in (("train", data.members, clean.members), ("holdout", data.holdout, clean.holdout),
                                  ("synthetic", data.synthetic, clean.synthetic)):
        assert set(typed["flag"].dropna()) <= {"0", "1"}, role  # never "1.0"
        columns = [c for c in expected.columns if c != "row_id"]
        changed = typed[columns].ne(expected[columns]) & ~(typed[columns].isna() & expected[columns].isna())
        if role == "holdout":
            changed = changed.iloc[shared:]  # the planted shared records differ from the clean holdout's
        assert changed.to_numpy().sum() == (role == quirks["blank_flag"]), role
        if role == quirks["blank_flag"]:
            assert typed["flag"].isna().sum() == 1 and changed["flag"].sum() == 1


# Issue #28 item 3: DOMIAS in the audit, given the attacker's auxiliary records.
def test_domias_runs_with_auxiliary_records_and_refuses_members_among_them(adult, files, quick, tmp_path, capsys):
    used = adult.sample(800, random_state=5).index  # the `files` fixture's members and holdout
    aux = adult.drop(index=used).sample(400, random_state=2).assign(flag=lambda f: (f["age"] > 40).astype(int))
    aux.to_csv(files / "aux.csv", index=False)
    assert main(audit_args(files, tmp_path / "out", extra=["--aux", str(files / "aux.csv")])) == 0
    report = json.loads((tmp_path / "out/audit.json").read_text())
    domias = next(m for m in report["measures"] if m["measure"] == "domias")
    assert domias["status"] == "ok" and report["inputs"]["n_aux"] == 400
    # Members among the auxiliary records are refused, naming the file.
    pd.concat([aux.iloc[:200], pd.read_csv(files / "train.csv").iloc[:200]]).to_csv(files / "aux_bad.csv", index=False)
    err = refused(audit_args(files, tmp_path / "bad", extra=["--aux", str(files / "aux_bad.csv")]), capsys)
    assert "aux_bad.csv" in err and "auxiliary records" in err and "train.csv" in err


# Issue #26: the membership verdict reads membership, and the level reads the policy.
def test_a_release_that_is_the_holdout_is_no_membership_risk(files, quick, tmp_path):
    assert main(audit_args(files, tmp_path, synthetic="holdout.csv")) == 0
    report = json.loads((tmp_path / "audit.json").read_text())
    membership = next(r for r in report["risks"] if r["risk"] == "membership")
    assert membership["level"] == "below the threshold", membership["verdict"]
    # The label-reading oracle (KDE on the true member/holdout distributions) stays in the MIA table only.
    assert "kde_true" not in {e["attack"] for e in report["evidence"]}


def test_forty_percent_member_copies_are_at_risk_and_a_policy_file_is_read(files, quick, tmp_path):
    schema = load_schema(files / "schema.yaml")
    members = schema.conform(pd.read_csv(files / "train.csv"))
    leaky, status = run_generator("leaky", {"backend": "leaky", "params": {"fraction": 0.4}}, members, schema,
                                  n=400, seed=0)
    assert status["status"] == "ok"
    leaky.to_csv(files / "leaky40.csv", index=False)
    assert main(audit_args(files, tmp_path / "default", synthetic="leaky40.csv")) == 0
    report = json.loads((tmp_path / "default/audit.json").read_text())
    membership = next(r for r in report["risks"] if r["risk"] == "membership")
    assert membership["level"] == "at risk" and membership["policy"]["effect_low"] > 0.09
    assert "at risk of membership inference" in membership["meaning"] and report["policy"]["thresholds"]["membership"] == 0.09
    page = (tmp_path / "default/audit.html").read_text()
    assert 'id="policy"' in page and "family-wise level 0.05" in page
    # A policy that tolerates more moves the threshold, not the people: the copied members are still
    # named, and a named member is at risk whatever the threshold.
    (files / "lenient.yaml").write_text("thresholds: {membership: 0.95}\nsource: a lenient test policy\n")
    assert main(audit_args(files, tmp_path / "lenient", synthetic="leaky40.csv",
                           extra=["--policy", str(files / "lenient.yaml")])) == 0
    lenient = json.loads((tmp_path / "lenient/audit.json").read_text())
    membership = next(r for r in lenient["risks"] if r["risk"] == "membership")
    assert membership["policy"]["threshold"] == 0.95 and membership["policy"]["effect_high"] < 0.95
    assert membership["level"] == "at risk" and membership["n_identified"] > 0, membership["verdict"]
    assert len(membership["identified"]) == membership["n_identified"]
    assert "a lenient test policy" in lenient["policy"]["statement"] and lenient["release"]["answer"] == "no"


# Issue #28: a measure that worked on a sample of a large file says so on the page.
def test_a_capped_measure_says_so_on_the_page(files, monkeypatch, tmp_path):
    capped = {**QUICK, "rapid": {**QUICK["rapid"], "max_train": 100, "max_records": 100}}
    monkeypatch.setattr(audit_run, "AUDIT_SETTINGS", capped)
    assert main(audit_args(files, tmp_path)) == 0
    report = json.loads((tmp_path / "audit.json").read_text())
    rapid = next(m for m in report["measures"] if m["measure"] == "rapid")
    assert "100 of the 400 synthetic records" in rapid["subsample_note"]
    assert "sampled: the attacker learned from 100 of the 400" in (tmp_path / "audit.html").read_text()
