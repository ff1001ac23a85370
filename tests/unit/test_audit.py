"""`synthrisk audit` on small slices of Adult, run as a user would (synthrisk.cli.main): the page and
JSON it writes, the inferred schema, the controls (identity at risk, independent not), and bad
input. The measures run with cheaper settings than the audit's own (fewer attackers, permutations
and attacks) to keep the suite quick; the measures themselves are the real ones."""

import json
import os
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

from synthrisk.cli import main
from synthrisk.data import load_schema
from synthrisk.generators.run import run_generator
from synthrisk.io import write_table
from synthrisk.measures import RISKS, builtin_measures

SCHEMA = str(ROOT / "config/datasets/adult.yaml")


@pytest.fixture(scope="module")
def files(adult, adult_schema, tmp_path_factory):
    """Members and holdout (400 each) and three releases of the members: identity (the members
    themselves), leaky (10% of its rows are members) and independent (no relation survives)."""
    folder = tmp_path_factory.mktemp("audit_files")
    sample = adult.sample(800, random_state=3).reset_index(drop=True)
    members, holdout = sample.iloc[:400].reset_index(drop=True), sample.iloc[400:].reset_index(drop=True)
    write_table(members, folder / "train.csv")
    write_table(holdout, folder / "holdout.csv")
    for backend, params in (("identity", {}), ("leaky", {"fraction": 0.5}), ("independent", {})):
        synthetic, status = run_generator(backend, {"backend": backend, "params": params}, members, adult_schema,
                                          n=400, seed=0)
        assert status["status"] == "ok"
        write_table(synthetic, folder / f"{backend}.parquet")
    return folder


def audit(files, out, release="identity", holdout=True, schema=True, extra=()):
    args = ["audit", "--train", str(files / "train.csv"), "--synthetic", str(files / f"{release}.parquet"),
            "--out", str(out), *(["--holdout", str(files / "holdout.csv")] if holdout else []),
            *(["--schema", SCHEMA] if schema else []), *extra]
    return main(args)


@pytest.fixture(scope="module")
def identity_audit(files, cheap_audit, tmp_path_factory):
    out = tmp_path_factory.mktemp("identity")
    assert audit(files, out) == 0
    return out, json.loads((out / "audit.json").read_text())


def test_identity_release_is_at_risk_on_every_risk_with_every_measure_reported(identity_audit):
    out, report = identity_audit
    assert (out / "audit.html").stat().st_size > 10_000
    measures = {m["measure"]: m for m in report["measures"]}
    risk_measures = {name for name, m in builtin_measures().items() if m.risk}
    assert risk_measures <= set(measures)
    for name in risk_measures:
        entry = measures[name]
        if entry["status"] == "ok":
            assert entry["verdict"].startswith("at risk"), (name, entry["verdict"])
        else:  # skipped or failed: never silently, always with the reason
            assert entry["reason"], name
    # No aux file: DOMIAS says why it did not run.
    assert measures["domias"]["status"] == "skipped" and "auxiliary" in measures["domias"]["reason"]
    risks = {r["risk"]: r for r in report["risks"]}
    assert list(risks) == list(RISKS)
    for risk in risks.values():
        assert risk["at_risk"] is True, risk["verdict"]
        attack = risk["strongest_attack"]
        assert attack["value"] > attack["reference"]
        assert str(attack["attack"]) in risk["verdict"] and "the release is at risk of" in risk["meaning"]
    # Only the per-person membership evidence names people with a tested false-discovery rate; under
    # the other risks the audit lists those of them the risk's attack got right (release_audit.named).
    named = {m["row_id"] for m in risks["membership"]["identified"]}
    assert named and not any(m.get("named_by") for m in risks["membership"]["identified"])
    for risk in ("attribute_inference", "singling_out", "linkability"):
        listed = risks[risk]["identified"]
        assert listed and len(listed) == risks[risk]["n_identified"], risk
        assert {m["row_id"] for m in listed} <= named and all(m["named_by"] for m in listed), risk
        assert "whom" in risks[risk]["verdict"] and "names with a controlled" in risks[risk]["meaning"], risk
    # the three criteria of the Article 29 Working Party, each at its worst risk's level
    criteria = {c["criterion"]: c for c in report["criteria"]}
    assert list(criteria) == ["singling_out", "linkability", "inference"]
    assert all(c["level"] == "at risk" for c in criteria.values())
    assert {r["risk"] for r in criteria["inference"]["risks"]} == {"attribute_inference", "membership"}
    assert {"repu", "singling_out"} <= set(criteria["singling_out"]["measures"])
    # synthpop's numbers as synthpop prints them: the release is the training file, so every
    # training record unique on its keys is a replicated unique, and its excess over the holdout is large
    shown = {m["measure"]: m["reported"] for m in report["measures"] if m.get("reported")}
    repu = shown["repu"]["rows"][0]
    assert repu["repU on training records (%)"] == pytest.approx(repu["UiO on training records (%)"])
    assert repu["member excess"] > 0.5 and repu["p-value"] < 1e-10
    assert any(note.startswith("Keys: ") for note in shown["repu"]["notes"])
    assert [row["target"] for row in shown["disco"]["rows"]] == ["income"]
    assert report["release"]["audit_revision"] >= 2
    assert report["utility"]["quality"] > 0.95 and "Quality" in report["utility"]["meaning"]
    assert report["inputs"]["n_train"] == 400 and report["inputs"]["schema_inferred"] is False
    assert (out / "tables/rapid.csv").exists() and not (out / "schema.yaml").exists()


def test_independent_release_is_not_at_risk_and_a_leaky_one_is(files, cheap_audit, tmp_path):
    assert audit(files, tmp_path / "independent", release="independent") == 0
    assert audit(files, tmp_path / "leaky", release="leaky") == 0
    independent = json.loads((tmp_path / "independent/audit.json").read_text())
    leaky = json.loads((tmp_path / "leaky/audit.json").read_text())
    for risk in independent["risks"]:
        if risk["risk"] == "singling_out":
            # Independent sampling copies each column's values from the members, so a query on one
            # rare value (a capital gain only one member has) singles that member out: univariate
            # singling out rightly flags it (tests/unit/test_anonymity.py spares it the same way).
            continue
        assert risk["at_risk"] is False and risk["beats"] is False, risk["verdict"]
        assert risk["level"] in ("below the threshold", "inconclusive"), risk["verdict"]
        assert "0 of" in risk["verdict"] and "attacks beat their reference" in risk["meaning"]
    leaky_risks = {r["risk"]: r for r in leaky["risks"]}
    assert leaky_risks["membership"]["at_risk"] and leaky_risks["singling_out"]["at_risk"]
    # Subgroups are named only for a risk that is there, and only those more exposed than the rest.
    assert all(not r["subgroups"] for r in independent["risks"] if r["measured"] and not r["beats"])
    for risk in leaky["risks"]:
        for group in risk.get("subgroups", []):
            assert group["share_exposed"] > group["share_exposed_overall"] and group["n"] >= 20


def test_without_holdout_the_measures_that_need_it_are_skipped_with_reasons(files, cheap_audit, tmp_path):
    assert audit(files, tmp_path, holdout=False) == 0
    report = json.loads((tmp_path / "audit.json").read_text())
    measures = {m["measure"]: m for m in report["measures"]}
    for name in ("mia", "dcr", "singling_out", "linkability", "inference", "utility"):
        assert measures[name]["status"] == "skipped" and "holdout" in measures[name]["reason"], name
    risks = {r["risk"]: r for r in report["risks"]}
    assert risks["membership"]["verdict"].startswith("not measured:") and "holdout" in risks["membership"]["verdict"]
    assert risks["attribute_inference"]["at_risk"] is True  # RAPID needs no holdout
    assert report["utility"] is None
    assert "no holdout was" in (tmp_path / "audit.html").read_text()


def test_inferred_schema_is_written_and_reruns(files, cheap_audit, tmp_path):
    first = tmp_path / "inferred"
    assert audit(files, first, release="identity", schema=False, extra=["--sensitive", "income"]) == 0
    schema = load_schema(first / "schema.yaml")
    assert schema.sensitive == ["income"]
    assert set(schema.quasi_identifiers) == set(load_schema(SCHEMA).columns) - {"income"}
    assert schema.columns["age"] == "integer" and schema.columns["workclass"] == "categorical"
    report = json.loads((first / "audit.json").read_text())
    assert report["inputs"]["schema_inferred"] is True

    # The user edits the schema (age no longer a quasi-identifier) and reruns with it.
    raw = yaml.safe_load((first / "schema.yaml").read_text())
    raw["quasi_identifiers"].remove("age")
    (first / "schema.yaml").write_text(yaml.safe_dump(raw))
    second = tmp_path / "rerun"
    assert main(["audit", "--train", str(files / "train.csv"), "--synthetic", str(files / "identity.parquet"),
                 "--holdout", str(files / "holdout.csv"), "--schema", str(first / "schema.yaml"),
                 "--out", str(second)]) == 0
    rerun = json.loads((second / "audit.json").read_text())
    assert "age" not in rerun["schema"]["quasi_identifiers"]
    assert [r["at_risk"] for r in rerun["risks"]] == [True] * len(RISKS)


def _replace(option, value):
    def change(args, folder):
        args[args.index(option) + 1] = value.format(folder=folder)
    return change


def _drop(option):
    def change(args, folder):
        del args[args.index(option):args.index(option) + 2]
    return change


def _add(*extra):
    def change(args, folder):
        args.extend(e.format(folder=folder) for e in extra)
    return change


@pytest.mark.parametrize("change, message", [
    (_replace("--train", "{folder}/nope.csv"), "nope.csv: file does not exist"),
    (_replace("--sensitive", "salary"), "--sensitive: column(s) ['salary']"),
    (_drop("--sensitive"), "--sensitive: name the sensitive"),
    (_add("--schema", "{folder}/bad_schema.yaml"), "column(s) ['native_country']"),
    (_replace("--synthetic", "{folder}/recoded.csv"), "recoded.csv: categorical column 'sex'"),
])
def test_bad_input_is_refused_before_any_measure_runs_naming_file_and_column(files, tmp_path, capsys, change,
                                                                            message):
    import pandas as pd

    raw = yaml.safe_load(Path(SCHEMA).read_text())
    del raw["columns"]["native_country"]
    raw["quasi_identifiers"].remove("native_country")
    (files / "bad_schema.yaml").write_text(yaml.safe_dump(raw))
    recoded = pd.read_parquet(files / "independent.parquet")
    recoded["sex"] = recoded["sex"].map({"Female": "F", "Male": "M"})
    write_table(recoded, files / "recoded.csv")
    args = ["audit", "--train", str(files / "train.csv"), "--synthetic", str(files / "independent.parquet"),
            "--sensitive", "income", "--out", str(tmp_path / "out")]
    change(args, files)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "synthrisk audit: [1/" not in err  # refused before the first measure
    assert not (tmp_path / "out/audit.json").exists()


def test_out_must_be_a_folder(files, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--train", str(files / "train.csv"), "--synthetic", str(files / "identity.parquet"),
              "--sensitive", "income", "--out", str(tmp_path / "file")])
    assert exc.value.code == 2 and "--out" in capsys.readouterr().err


def test_audit_page_renders_in_headless_chromium(identity_audit):
    from helpers import open_page

    out, report = identity_audit
    page = out / "audit.html"
    driver, images = open_page(page)
    try:
        risks = driver.execute_script(
            "return Array.from(document.querySelectorAll('.risk')).map(d => [d.id, "
            "d.querySelector('.verdict').innerText, (d.querySelector('.meaning') || {}).innerText]);")
        measures = driver.execute_script(
            "return Array.from(document.querySelectorAll('#measures tbody tr')).map(r => r.cells[2].innerText);")
        answer = driver.execute_script(
            "const a = document.getElementById('release-answer'); return [a.innerText, getComputedStyle(a).borderLeftColor];")
        criteria = driver.execute_script(
            "return Array.from(document.querySelectorAll('#criteria-table tr')).slice(1)"
            ".map(r => [r.cells[0].innerText, r.cells[1].innerText]);")
        repu = driver.execute_script(
            "return Array.from(document.querySelectorAll('#reported-repu-table tbody tr td')).map(c => c.innerText);")
    finally:
        driver.quit()
    assert {alt for alt, _ in images} >= {"risk_evidence_audit", "mia_roc_audit"}
    assert all(loaded for _, loaded in images), [alt for alt, loaded in images if not loaded]
    assert [r[0] for r in risks] == [f"risk-{r}" for r in RISKS]
    assert all(verdict.startswith("at risk") and len(meaning) > 100 for _, verdict, meaning in risks), risks
    assert len(measures) == len(report["measures"]) and "skipped" in measures
    assert criteria == [["Singling out", "at risk"], ["Linkability", "at risk"], ["Inference", "at risk"]], criteria
    assert repu and "e-" in repu[-1], repu  # the exact p-value in powers of ten, never "0"
    # the release's answer stands first, in the at-risk colour (LEVEL_COLOURS: #c0392b)
    assert report["release"]["answer"] == "no" and answer == [report["release"]["sentence"], "rgb(192, 57, 43)"], answer
    assert os.path.getsize(page) < 2_000_000
