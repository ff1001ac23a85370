"""The verdicts checked the way they are used (issue #26): small versions of
benchmarks/verdict_calibration.py. Releases that never saw the members are rarely called a risk;
releases holding member copies are."""

from pathlib import Path

import pytest

from synthrisk.study.calibration import rates, study


@pytest.mark.slow
def test_membership_verdict_keeps_its_level_on_nulls_and_finds_member_copies():
    runs = study("adult", 1000, 100, ["holdout", "population", "copies_0.1", "leaky"], seed=7,
                 measures=("mia", "dcr"))
    table = rates(runs)
    verdict = table[(table["attack"] == "(risk verdict)") & (table["risk"] == "membership")].set_index("release")
    for null in ("holdout", "population"):
        # nominal 5%: at most 10 of 100 (P(> 10 | 5%) < 0.012)
        assert verdict.loc[null, "rate"] <= 0.10, (null, verdict.loc[null].to_dict())
    for positive in ("copies_0.1", "leaky"):
        assert verdict.loc[positive, "rate"] >= 0.9, (positive, verdict.loc[positive].to_dict())


@pytest.mark.slow
def test_control_set_and_attribute_verdicts_keep_their_level_and_find_member_copies():
    """Singling out, linkability and attribute inference (RAPID's member excess and the control-set
    inference attack under one Holm correction) on 60 simulator splits: `cart` fitted on other
    records and fresh population records fire at most 8 times each (nominal 5 %: P(> 8 of 60) =
    0.004), and 20 % member copies are found in at least 90 % of splits."""
    runs = study("simulation", 1000, 60, ["population", "cart", "copies_0.2"], seed=11,
                 measures=("rapid", "singling_out", "linkability", "inference"))
    table = rates(runs)
    verdict = table[table["attack"] == "(risk verdict)"].set_index(["release", "risk"])
    for risk in ("attribute_inference", "singling_out", "linkability"):
        for null in ("population", "cart"):
            assert verdict.loc[(null, risk), "splits"] == 60
            assert verdict.loc[(null, risk), "rate"] <= 8 / 60, (null, risk, verdict.loc[(null, risk)].to_dict())
        assert verdict.loc[("copies_0.2", risk), "rate"] >= 0.9, (risk, verdict.loc[("copies_0.2", risk)].to_dict())


@pytest.mark.slow
def test_a_large_release_of_other_records_is_no_risk():
    """Issue #26's large harmless release: 25,000 members, 25,000 holdout records and a release of
    25,000 fresh records of the same population (Adult-like: Adult bootstrapped with jitter), audited
    with the shipped settings. It once read "membership: at risk" (the label-fitted KDE attack, AUC
    0.506, and DCR's binomial test); now no risk is at risk, nobody is named, and the audit does not
    answer "no"."""
    import synthrisk
    from synthrisk.study.calibration import Population

    population = Population.of("adult", 75_000, seed=2026)
    members, holdout, release = population.take(25_000), population.take(25_000), population.take(25_000)
    result = synthrisk.audit(members, release, holdout, schema=population.schema)
    risks = result.risks.set_index("risk")
    assert set(risks.index) == {"membership", "attribute_inference", "singling_out", "linkability"}
    assert risks["level"].isin(["below the threshold", "inconclusive"]).all(), risks[["level", "verdict"]].to_dict()
    assert result.identified.empty and result.answer != "no"


def test_a_refused_split_counts_neither_as_a_false_positive_nor_as_a_miss():
    """A split whose files the audit's record checks refuse has no verdict: `rates` leaves it out
    (and `study` keeps it as one row saying why)."""
    import pandas as pd

    from synthrisk.study.calibration import REFUSED

    row = {"dataset": "adult", "n": 1000, "risk": "membership", "attack": "(risk verdict)", "material": 0}
    runs = pd.DataFrame([{**row, "split": 0, "release": "population", "verdict": 1},
                         {**row, "split": 1, "release": "population", "verdict": 0},
                         {**row, "split": 2, "release": REFUSED, "risk": "", "attack": "holdout.parquet: 26 of 1000 "
                          "holdout records are copies", "verdict": float("nan"), "material": float("nan")}])
    table = rates(runs)
    assert list(table["release"]) == ["population"]
    assert table.iloc[0][["splits", "rate"]].tolist() == [2, 0.5]


def test_the_rates_table_reads_back_with_every_release_kind(tmp_path):
    """`kind` survives a CSV round trip through pandas (whose default reads "null" as missing)."""
    import pandas as pd

    from synthrisk.study.calibration import NULL_KIND, POSITIVE_KIND

    row = {"dataset": "adult", "n": 1000, "risk": "membership", "attack": "(risk verdict)", "material": 0,
           "split": 0, "verdict": 0}
    runs = pd.DataFrame([{**row, "release": "population"}, {**row, "release": "copies_0.05"}])
    rates(runs).to_csv(tmp_path / "rates.csv", index=False)
    back = pd.read_csv(tmp_path / "rates.csv").set_index("release")["kind"]
    assert back.to_dict() == {"population": NULL_KIND, "copies_0.05": POSITIVE_KIND}


def test_a_recheck_reproduces_the_fired_verdicts_and_its_at_risk_calls_replace_the_old_ones(tmp_path):
    """`--recheck` re-audits only the fired verdicts of an earlier runs file (of the releases asked
    for), drawing its splits as the study drew them; `--summarise` then takes the at-risk calls from
    the re-check. The earlier study is imitated by flipping the at-risk calls of its file, as an older
    interval would have made them."""
    import sys

    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import verdict_calibration as bench

    args = ["--dataset", "simulation", "--n", "400", "--seed", "9", "--out", str(tmp_path)]
    assert bench.main([*args, "--splits", "2", "--releases", "population", "copies_0.2",
                       "--measures", "singling_out"]) == 0
    honest = pd.read_csv(tmp_path / "calibration_simulation_400_seed9.csv")
    runs_file = tmp_path / "calibration_runs_simulation_400_seed9.csv.gz"
    runs = pd.read_csv(runs_file)
    fired = (runs["attack"] == "(risk verdict)") & (runs["verdict"] == 1) & (runs["release"] == "copies_0.2")
    assert fired.sum() == 2  # 20 % member copies are singled out at this size
    runs.loc[fired, "material"] = 1 - runs.loc[fired, "material"]
    runs.to_csv(runs_file, index=False)

    assert bench.main(["--recheck", str(runs_file), "--measures", "singling_out", "--releases", "copies_0.2"]) == 0
    checked = pd.read_csv(tmp_path / "recheck_calibration_runs_simulation_400_seed9_copies_0.2.csv")
    assert len(checked) == fired.sum()
    assert (checked["verdict"] == checked["verdict_before"]).all()
    assert (checked["material"] != checked["material_before"]).all()
    with pytest.raises(SystemExit, match="already holds this re-check"):
        bench.main(["--recheck", str(runs_file), "--measures", "singling_out", "--releases", "copies_0.2"])

    assert bench.main(["--dataset", "simulation", "--summarise", "--out", str(tmp_path)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "calibration_simulation.csv"), honest)


def test_recorded_counts_of_earlier_studies_are_pooled_and_their_seeds_refused(tmp_path):
    """`recorded_calibration_<dataset>.csv` holds the risk verdicts' counts of studies whose runs files
    were not kept: `--summarise` adds them to the same cells (at-risk calls only where the current
    interval made them), a study tabulates its own splits, and a study (or a runs file) drawn from one
    of their seeds is refused, since it would count the same splits twice."""
    import sys

    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import verdict_calibration as bench

    args = ["--dataset", "simulation", "--n", "400", "--out", str(tmp_path), "--releases", "population",
            "copies_0.2", "--measures", "singling_out"]
    assert bench.main([*args, "--splits", "2", "--seed", "8"]) == 0
    alone = pd.read_csv(tmp_path / "calibration_simulation_400_seed8.csv").set_index(["release", "attack"])
    verdict = alone.loc[("population", "(risk verdict)")]
    fired, at_risk = round(verdict["rate"] * 2), round(verdict["rate_at_risk"] * 2)
    copies_alone = alone.loc[("copies_0.2", "(risk verdict)")]
    copies_fired, copies_at_risk = round(copies_alone["rate"] * 2), round(copies_alone["rate_at_risk"] * 2)
    recorded = pd.DataFrame([
        {"dataset": "simulation", "n": 400, "release": "population", "risk": "singling_out", "splits": 98,
         "fired": 3, "at_risk": 1, "at_risk_interval": "current", "seeds": "0 7", "source": "a test"},
        {"dataset": "simulation", "n": 400, "release": "copies_0.2", "risk": "singling_out", "splits": 50,
         "fired": 40, "at_risk": 9, "at_risk_interval": "first-order", "seeds": "0 7", "source": "a test"},
        {"dataset": "simulation", "n": 400, "release": "copies_0.1", "risk": "singling_out", "splits": 50,
         "fired": 30, "at_risk": 2, "at_risk_interval": "first-order", "seeds": "0 7", "source": "a test"}])
    recorded.to_csv(tmp_path / "recorded_calibration_simulation.csv", index=False)

    assert bench.main(["--dataset", "simulation", "--summarise", "--out", str(tmp_path)]) == 0
    pooled = pd.read_csv(tmp_path / "calibration_simulation.csv").set_index(["release", "attack"])
    verdict = pooled.loc[("population", "(risk verdict)")]
    assert verdict["splits"] == 100 and verdict["rate"] == pytest.approx((fired + 3) / 100)
    assert verdict["rate_at_risk"] == pytest.approx((at_risk + 1) / 100)
    # an older interval's at-risk calls are not the current code's: alone, no at-risk rate and "–" in
    # the table; pooled with current splits, the at-risk rate is the current splits' alone, and the
    # table counts them out of those splits, not of the pooled ones
    older = pooled.loc[("copies_0.1", "(risk verdict)")]
    assert older["splits"] == 50 and older["rate"] == pytest.approx(0.6) and pd.isna(older["rate_at_risk"])
    assert "| 10 % member copies | 30 / 50; at risk – |" in (tmp_path / "calibration_simulation.md").read_text()
    copies = pooled.loc[("copies_0.2", "(risk verdict)")]
    assert copies["splits"] == 52 and copies["rate"] == pytest.approx((40 + copies_fired) / 52)
    assert copies["at_risk_splits"] == 2 and copies["rate_at_risk"] == pytest.approx(copies_at_risk / 2)
    assert (f"| 20 % member copies | {40 + copies_fired} / 52; at risk {copies_at_risk} of 2 |"
            in (tmp_path / "calibration_simulation.md").read_text())
    # the attacks' own rows have no recorded counts: they stay the runs files'
    attacks = pooled[pooled.index.get_level_values("attack") != "(risk verdict)"]
    assert len(attacks) and (attacks["splits"] == 2).all()

    # a study tabulates its own splits, in files named for it: the pooled tables stay --summarise's
    assert bench.main([*args, "--splits", "1", "--seed", "9"]) == 0
    assert (pd.read_csv(tmp_path / "calibration_simulation_400_seed9.csv")["splits"] == 1).all()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "calibration_simulation.csv").set_index(["release", "attack"]),
                                  pooled)
    (tmp_path / "calibration_runs_simulation_400_seed9.csv.gz").unlink()

    with pytest.raises(SystemExit, match="seed 7 at n = 400 drew splits"):
        bench.main([*args, "--splits", "1", "--seed", "7"])
    assert not list(tmp_path.glob("calibration_runs_simulation_400_seed7*"))
    runs_file = tmp_path / "calibration_runs_simulation_400_seed8.csv.gz"
    pd.read_csv(runs_file).assign(seed=7).to_csv(tmp_path / "calibration_runs_simulation_400_seed7.csv.gz", index=False)
    runs_file.unlink()
    with pytest.raises(SystemExit, match="a runs file: seed 7 at n = 400 drew splits"):
        bench.main(["--dataset", "simulation", "--summarise", "--out", str(tmp_path)])

    recorded.assign(at_risk=[1, 41, 2]).to_csv(tmp_path / "recorded_calibration_simulation.csv", index=False)
    with pytest.raises(SystemExit, match="recorded_calibration_simulation.csv: row 2: at_risk <= fired <= splits"):
        bench.main(["--dataset", "simulation", "--summarise", "--out", str(tmp_path)])


@pytest.mark.slow  # two audits of each release: `make test-all` and CI run it
def test_the_studys_settings_give_the_cheaper_settings_verdicts():
    """STUDY_SETTINGS leave out RAPID's chance tests, which give population-level figures only: with a
    holdout the attribute-inference verdict rests on the member excess, which they neither change
    nor draw from. The same split audited with both settings: the same verdicts and decisions, on
    a null release and on one with member copies whose member excess fires."""
    import pandas as pd

    from synthrisk.measures.policy import Policy
    from synthrisk.study.calibration import CHEAP_SETTINGS, STUDY_SETTINGS, Population, audit_frames, releases

    assert STUDY_SETTINGS["rapid"]["null_refits"] == 0 and STUDY_SETTINGS["rapid"]["permutations"] == 0
    population = Population.of("simulation", 4000, seed=11)  # members, holdout, one source, the copies
    members, holdout = population.take(1000), population.take(1000)
    drawn = releases(members, holdout, population, population.schema, ["population", "copies_0.2"], seed=11)
    fired = {}
    for kind, synthetic in drawn.items():
        found = [audit_frames(members, holdout, synthetic, population.schema, Policy(), ("rapid",), settings=s)[:2]
                 for s in (CHEAP_SETTINGS, STUDY_SETTINGS)]
        (risks_cheap, attacks_cheap), (risks_study, attacks_study) = found
        keep = ["risk", "level", "attack", "value", "effect_low", "p_value"]
        pd.testing.assert_frame_equal(risks_cheap[keep], risks_study[keep])
        # every decision the same; only the detail's population-level chance floor is left out
        same = [c for c in attacks_cheap.columns if c != "detail"]
        pd.testing.assert_frame_equal(attacks_cheap[same].reset_index(drop=True), attacks_study[same].reset_index(drop=True))
        assert attacks_study["detail"].str.contains("no chance test run").all()
        fired[kind] = bool(attacks_study["beats"].any())
    assert fired == {"population": False, "copies_0.2": True}  # the copies' member excess, not the null's
