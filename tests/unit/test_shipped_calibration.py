"""The pre-registered calibration of the audit as it ships (issue #42, item 3;
benchmarks/shipped_calibration.py): a cell runs the shipped `synthrisk.audit` on releases of known
truth, appends each split as it finishes, resumes where it stopped, refuses a cell changed after it
began, and its tables regenerate byte for byte from the committed runs files."""

from __future__ import annotations

import importlib.util
import io
import subprocess

import pandas as pd
import pytest
from helpers import ROOT


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("shipped_calibration", ROOT / "benchmarks" / "shipped_calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # shipped audits of a cell's splits: `make test-all` and CI run it
def test_a_cell_runs_resumes_and_refuses_to_be_changed(study, tmp_path, monkeypatch):
    """The study's bookkeeping, through the real audit at the calibration's cheaper settings (the same
    verdict logic; the study itself runs the shipped settings)."""
    from synthrisk.release_audit import run as audit_run
    from synthrisk.study.calibration import CHEAP_SETTINGS

    monkeypatch.setattr(audit_run, "AUDIT_SETTINGS", CHEAP_SETTINGS)
    monkeypatch.setattr(study, "RUNS", tmp_path / "runs")
    from synthrisk.measures.calibrated_power import AUDIT_REVISION

    cell = {"dataset": "simulation", "n": 60, "releases": ["second_holdout", "rare_0.05"], "splits": 2, "seed": 7,
            "audit": AUDIT_REVISION}
    cells = {"tiny": cell}
    # a cell of another audit revision is run only from a checkout of that revision
    with pytest.raises(SystemExit, match="calibrates audit revision 1"):
        study.run_cell("old", {"old": {**cell, "audit": 1}}, worker=0, workers=1, commit="test")
    assert study.run_cell("tiny", cells, worker=0, workers=1, commit="test", limit=1) == 1
    assert study.run_cell("tiny", cells, worker=0, workers=1, commit="test") == 1  # the other split only
    assert study.run_cell("tiny", cells, worker=0, workers=1, commit="test") == 0  # never beyond the plan
    runs = study.read_runs(tmp_path / "runs")
    assert sorted(runs["split"].unique()) == [0, 1] and set(runs["release"]) == set(cell["releases"])
    risks = set(runs["risk"])
    assert {r for r in risks if not r.startswith(study.ATTACK)} == {"membership", "attribute_inference", "singling_out",
                                                                    "linkability", study.AUDIT}
    # every attack's own p-value is kept (each attack's false-positive rate on the null releases)
    assert {"attack: repu: replicated uniques (repU)", "attack: disco: DiSCO -> y_cat"} <= risks, risks
    assert study.attack_summary(runs, cells)["splits"].eq(2).all()
    audits = runs[runs["risk"] == study.AUDIT]
    assert set(audits["answer"]) <= {"yes", "no", "inconclusive"} and len(audits) == 4
    # A cell is never extended or changed after it began.
    with pytest.raises(SystemExit, match="never changed after it began"):
        study.run_cell("tiny", {"tiny": {**cell, "splits": 3}}, worker=0, workers=1, commit="test")
    table = study.summarise(runs, cells)
    audit = table[(table["risk"] == study.AUDIT) & (table["release"] == "second_holdout")].iloc[0]
    assert audit["splits"] == 2 and audit["planned"] == 2 and audit["kind"] == "null" and audit["primary"]
    assert audit["commits"] == "test" and audit["refused"] == 0
    # the primary family (null releases' per-audit rates) is the plan's: one null release here
    assert table.attrs["confidence"] == {AUDIT_REVISION: pytest.approx(0.95)} and study.primary_family(cells) == 1
    # a split in the runs twice (overlapping workers) is refused, not counted twice
    with pytest.raises(SystemExit, match="twice"):
        study.summarise(pd.concat([runs, runs.iloc[:1]]), cells)


def test_two_cells_may_not_share_a_seed_and_a_write_is_whole_or_nothing(study, tmp_path):
    plan = tmp_path / "plan.yaml"
    cell = "{dataset: adult, n: 10, releases: [cart], splits: 2, seed: 5}"
    plan.write_text(f"cells:\n  a: {cell}\n  b: {cell}\n")
    with pytest.raises(SystemExit, match="share dataset adult and seed 5"):
        study.load_plan(plan)
    path = tmp_path / "runs" / "a.w0.csv.gz"
    row = dict.fromkeys(study.RUNS_COLUMNS, 1)
    study.append([row], path)
    before = path.read_bytes()
    study.append([row], path)
    assert len(pd.read_csv(path)) == 2 and not list(path.parent.glob(".*.part"))
    study.append([], path)
    assert path.read_bytes() != before and len(pd.read_csv(path)) == 2


def test_the_rarest_members_are_the_most_isolated(adult, adult_schema):
    from synthrisk.study.calibration import rarest

    sample = adult.sample(300, random_state=3).reset_index(drop=True)
    members, holdout = sample.iloc[:150].reset_index(drop=True), sample.iloc[150:].reset_index(drop=True)
    doubled = pd.concat([members, members.iloc[:100]], ignore_index=True)  # 100 members get a twin
    rare = rarest(doubled.iloc[:150], pd.concat([holdout, members.iloc[:100]]), adult_schema, 0.1)
    assert len(rare) == 15 and set(rare) <= set(range(100, 150))


def test_the_committed_tables_regenerate_from_the_committed_runs(study):
    """One command (`--summarise`) regenerates every table of the study from its runs files; a summary
    whose runs were left out of the repository (a .gitignore once hid them) fails here."""
    summary = study.STUDY / "summary.md"
    tracked = subprocess.run(["git", "ls-files", str(study.RUNS)], cwd=study.STUDY, capture_output=True,
                             text=True, check=True).stdout.split()
    assert tracked, f"{study.RUNS} holds no committed runs files, yet {summary.name} reports runs"
    table = study.summarise(study.read_runs(), study.load_plan())
    assert study.markdown(table) == summary.read_text()
    attacks = study.attack_summary(study.read_runs(), study.load_plan())
    assert study.attacks_markdown(attacks) == (study.STUDY / "attacks.md").read_text()
    # the per-audit rates the audit quotes are package data, written by the same command
    shipped = pd.read_csv(study.PUBLISHED)
    assert shipped.equals(pd.read_csv(io.StringIO(study.published(table).to_csv(index=False, float_format="%.6g"))))


def test_the_audit_quotes_its_calibration_beside_its_answer_only_under_the_default_policy():
    from synthrisk.measures.calibrated_power import AUDIT_REVISION, release_statement
    from synthrisk.measures.policy import Policy

    table = pd.DataFrame({"audit": [AUDIT_REVISION] * 3, "dataset": ["adult"] * 3, "n": [1000] * 3,
                          "release": ["cart", "second_holdout", "copies_0.1"],
                          "null": [True, True, False], "splits": [200, 200, 100], "planned": [200, 200, 100],
                          "at_risk": [1, 0, 93], "at_risk_rate": [0.005, 0, 0.93], "at_risk_high": [0.04, 0.03, 0.97],
                          "yes": [5, 6, 0], "yes_rate": [0.025, 0.03, 0.0], "named": [1, 0, 90], "fdp": [1.0, 0, 0.03]})
    said = release_statement(1500, Policy(), table)
    assert "“no” in 1 of 400 audits" in said and "“yes” in 11" in said and "10 % member copies: “no” in 93 of 100" in said
    assert "this file has 1,500" in said and "so far" not in said
    assert release_statement(1500, Policy(alpha=0.1), table) is None
    # only an earlier revision calibrated: the quote says so, and that it is not this audit's
    earlier = release_statement(1500, Policy(), table.assign(audit=AUDIT_REVISION - 1))
    assert earlier.startswith(f"This audit is revision {AUDIT_REVISION}") and "has not run yet" in earlier
    assert f"calibration of revision {AUDIT_REVISION - 1}" in earlier


def test_a_secondary_cell_stays_out_of_the_primary_family_and_out_of_the_audits_quote(study):
    """A cell planned after its revision's primary family was fixed: the family's size and level do not
    move, marking it changes its fingerprint (so it cannot be flipped after its runs began), its rates
    are at 95 %, and the audit never quotes it (its size would otherwise be the nearest for some files)."""
    from synthrisk.measures.calibrated_power import AUDIT_REVISION, release_statement
    from synthrisk.measures.policy import Policy

    first = {"audit": 4, "dataset": "adult", "n": 1000, "releases": ["second_holdout", "cart"], "splits": 200, "seed": 1}
    later = {"audit": 4, "dataset": "adult", "n": 3000, "releases": ["second_holdout", "cart"], "splits": 50, "seed": 2}
    assert study.primary_family({"a": first}, 4) == 2
    assert study.primary_family({"a": first, "b": {**later, "secondary": True}}, 4) == 2
    assert study.primary_family({"a": first, "b": later}, 4) == 4
    assert study.fingerprint({**later, "secondary": True}) != study.fingerprint(later)
    assert study.fingerprint({**later, "secondary": False}) == study.fingerprint(later)
    assert "| b | 50 | 7.1 % |" in study.planned_widths({"a": first, "b": {**later, "secondary": True}})
    rows = pd.DataFrame({"audit": [AUDIT_REVISION] * 2, "dataset": ["adult"] * 2, "n": [1000, 3000],
                         "release": ["cart", "cart"], "null": [True, True], "secondary": [False, True],
                         "splits": [200, 50], "planned": [200, 50], "at_risk": [0, 0], "at_risk_rate": [0.0, 0.0],
                         "at_risk_high": [0.028, 0.071], "yes": [5, 30], "yes_rate": [0.025, 0.6], "named": [0, 0],
                         "fdp": [0.0, 0.0]})
    said = release_statement(3000, Policy(), rows)
    assert "at 1,000 training records per split" in said and "“yes” in 5" in said


def test_the_red_teams_attack_table_pools_members_flagged_over_members_scored():
    import json

    red = _benchmark("red_team")
    attack = {"measure": "exposure", "attack": "exposure", "value": 0.6, "reference": 0.5, "p_value": 0.01,
              "n_identified": 0, "tpr_at_1e-03": None, "tpr_at_1e-02": 0.05, "tpr_at_1e-01": 0.2, "n_scored": 1000}
    runs = pd.DataFrame({"dataset": ["adult"] * 3, "generator": ["cart"] * 3, "split": [0, 1, 2],
                         "attacks": [json.dumps([attack]), json.dumps([{**attack, "tpr_at_1e-02": 0.15, "p_value": 0.2}]),
                                     # a job recorded before the TPRs were: counted as a split, not in the TPRs
                                     json.dumps([{k: v for k, v in attack.items() if k not in ("tpr_at_1e-01",
                                                                                                  "n_scored")}])]})
    row = red.attack_rows(runs).iloc[0]
    assert row["splits"] == 3 and row["beats its reference"] == 2
    assert row["TPR at FPR 1 %"].startswith("0.100 (") and row["TPR at FPR 1 %"].endswith("; 2 splits)")
    assert row["TPR at FPR 10 %"].startswith("0.200 (") and row["TPR at FPR 0.1 %"] == "–"


def test_the_red_teams_target_table_pools_the_shadow_targets_by_kind():
    import json

    red = _benchmark("red_team")

    def target(kind, auc, low, tpr10, tpr1):
        return {"target": "train:1", "kind": kind, "member": "yes", "AUC": auc, "ci_low": low,
                "TPR at FPR 0.1": tpr10, "TPR at FPR 0.01": tpr1}

    runs = pd.DataFrame({"dataset": ["adult"] * 2, "generator": ["cart"] * 2,
                         "shadow_targets": [json.dumps([target("outlier", 0.8, 0.6, 0.4, 0.1),
                                                        target("random", 0.5, 0.4, 0.1, None)]),
                                            json.dumps([target("outlier", 0.6, 0.45, 0.2, 0.0)])]})
    table = red.target_rows(runs).set_index("targets")
    assert table.loc["outlier", "n"] == 2 and table.loc["outlier", "above chance"] == 1
    assert table.loc["outlier", "median AUC (range)"] == "0.70 (0.60–0.80)"
    assert table.loc["outlier", "median TPR at FPR 0.1"] == "0.300" and table.loc["outlier", "median TPR at FPR 0.01"] == "0.050"
    assert table.loc["random", "median TPR at FPR 0.01"] == "–"  # unresolved by the refits: no number


def test_the_disco_inference_comparison_regenerates_from_its_runs():
    spec = importlib.util.spec_from_file_location("disco_vs_inference", ROOT / "benchmarks" / "disco_vs_inference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runs = pd.read_csv(module.RUNS)
    assert module.markdown(module.summarise(runs)) == module.TABLE.read_text()
    # its size was fixed before it ran: every split of every dataset, none beyond
    assert runs.groupby("dataset")["split"].nunique().eq(module.SPLITS).all() and runs["split"].max() < module.SPLITS


def _benchmark(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_in_hand_studies_regenerate_from_their_runs():
    """The shadow-model level study and the MAMA-MIA study: each table is its committed runs
    summarised, and no split beyond the size fixed in the script was run (a study still running
    holds fewer; its table says how many of those planned)."""
    shadow = _benchmark("shadow_models_level")
    runs = shadow.read_runs()
    assert len(runs) and shadow.markdown(shadow.summarise(runs)) == shadow.TABLE.read_text()
    assert runs["split"].max() < shadow.SPLITS and set(runs["dataset"]) <= set(shadow.DATASETS)
    mama = _benchmark("mama_mia_mst")
    runs = pd.read_csv(mama.RUNS)
    assert mama.markdown(mama.summarise(runs)) == mama.TABLE.read_text()
    assert runs["split"].max() < mama.SPLITS and set(runs["epsilon"]) <= set(mama.EPSILONS)
    red = _benchmark("red_team")
    runs = red.read_runs()
    assert red.table_text(runs) == red.TABLE.read_text()
    assert runs.empty or set(runs["generator"]) <= set(red.PLAN_OF)
    assert runs.empty or all(split < red.PLAN_OF[n].splits for n, split in zip(runs["generator"], runs["split"]))


def test_the_audit_on_other_real_data_regenerates_from_its_runs():
    """`benchmarks/other_data.py` (the audit on statsmodels' fair and randhie): its table is its
    committed runs summarised, within the size fixed in the script, and a copy release names only
    members (its `named_copied` never exceeds the copies)."""
    other = _benchmark("other_data")
    runs = pd.read_csv(other.RUNS)
    assert other.markdown(other.summarise(runs)) == other.TABLE.read_text()
    assert runs["split"].max() < other.SPLITS and set(runs["dataset"]) <= set(other.DATASETS)
    assert runs["named_copied"].le(int(other.SHARE * other.N)).all()
    assert runs.loc[runs["release"] == "population", "named_copied"].eq(0).all()
