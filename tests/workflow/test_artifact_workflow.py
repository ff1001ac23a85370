"""The reproducibility artifact on the tiny run (tests/conftest.py's `tiny_run`): findings
rendered from it, bundles verified against it and (slow) a rerun, and (slow) `snakemake --archive`."""

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import ROOT

import synthrisk
from synthrisk.cli import main
from synthrisk.study import findings as F
from synthrisk.study.bundle import verify_bundle, write_bundle

FINDINGS = ROOT / "config" / "findings.yaml"

# What the tiny config (tests/helpers.py: Adult only, `cart`, `independent` and a broken generator,
# attackers logit and linear, no simulation study, no control-set measures, DP with two families)
# lets us compute. Every other finding needs something it does not run: the RF attacker (RAPID's
# three Adult findings), `identity` (RAPID_max's bounds), the simulator (dependence study, low-FPR
# finding), `bayesian_network`, MST, or CTGAN with singling out and linkability.
TINY_COMPUTED = {"mia_kde_beats_baseline_f1", "mia_realistic_matches_true", "dp_calibrated_coverage",
                 "dp_naive_collapse", "dp_census", "dp_variance_formula", "dp_mse_law", "dp_clipping"}


def _cli(*args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _row(document: str, finding_text: str) -> list[str]:
    """Cells of the REPRODUCE.md table row of one finding."""
    line = next(line for line in document.splitlines() if line.startswith(f"| {finding_text} |"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def _copy_run(run: Path, to: Path) -> Path:
    """A finished run's files that findings and verification read, to be perturbed."""
    (to / "results").mkdir(parents=True)
    shutil.copytree(run / "results/tables", to / "results/tables")
    for name in ("provenance.json", "config.yaml"):
        shutil.copy(run / "results" / name, to / "results" / name)
    return to


# --- findings ---------------------------------------------------------------------------------

def test_findings_of_the_tiny_run_are_computed_or_say_why_not(tiny_run, capsys):
    workdir, _, _ = tiny_run
    code, rendered, _ = _cli("findings", workdir, capsys=capsys)
    assert code == 0
    # The workflow's rule and the command render the same bytes, twice.
    assert rendered == (workdir / "results/findings/REPRODUCE.md").read_text()
    assert _cli("findings", workdir, capsys=capsys)[1] == rendered

    results = {r.finding["id"]: r for r in F.results_for(workdir, FINDINGS)}
    assert set(results) == {f["id"] for f in F.load_findings(FINDINGS)["findings"]}
    computed = {key for key, r in results.items() if r.agreement != F.NOT_RUN}
    assert computed == TINY_COMPUTED
    for key in computed:
        r = results[key]
        assert r.agreement in (F.WITHIN, F.HOLDS, F.NOT_REPRODUCED), key
        assert r.ours and not r.ours.startswith("("), (key, r.ours)
        # optional values are context beside the test: absent (None) or NaN where the run lacks them
        tested = {name: value for name, value in r.values.items()
                  if not (isinstance(r.finding["values"][name], dict) and r.finding["values"][name].get("optional"))}
        numbers = [v for value in tested.values()
                   for v in (value.tolist() if isinstance(value, pd.Series) else [value]) if not isinstance(v, str)]
        assert numbers and all(pd.notna(numbers)), (key, r.values)
    for key in set(results) - computed:
        assert "not produced" in results[key].missing or "no rows of" in results[key].missing, key

    provenance = json.loads((workdir / "results/provenance.json").read_text())
    for needle in (provenance["commit"], provenance["config_sha256"], provenance["completed"],
                   f"synthrisk version | {synthrisk.__version__}"):
        assert needle in rendered
    for result in results.values():  # every row has an agreement, none blank
        assert _row(rendered, result.finding["finding"])[-1] == result.agreement


def test_a_perturbed_table_flips_the_agreement(tiny_run, tmp_path):
    run = _copy_run(tiny_run[0], tmp_path / "run")
    tables = run / "results/tables"

    def agreement(finding_text):
        return _row(F.render(run, FINDINGS), finding_text)[-1]

    kde = "the KDE attack beats the fixed-threshold baseline (Method 1) on F1"
    mia = pd.read_csv(tables / "mia.csv")
    at = {attack: (mia["dataset"] == "adult") & (mia["generator"] == "cart") & (mia["attack"] == attack)
          for attack in ("kde_realistic", "method1")}
    baseline = float(mia.loc[at["method1"], "f1_mean"].iloc[0])
    for shift, expected in ((0.05, F.HOLDS), (-0.05, F.NOT_REPRODUCED)):
        mia.loc[at["kde_realistic"], "f1_mean"] = baseline + shift
        mia.to_csv(tables / "mia.csv", index=False)
        assert agreement(kde) == expected

    variance = "the empirical variance matches I⁻¹/n + σ²I⁻²"
    summary = pd.read_csv(tables / "dp_variance_summary.csv")
    for value, expected in ((0.99, F.WITHIN), (0.5, F.NOT_REPRODUCED)):
        summary.loc[summary["family"] == "gaussian", "pearson_log"] = value
        summary.loc[summary["family"] != "gaussian", "pearson_log"] = 0.99
        summary.to_csv(tables / "dp_variance_summary.csv", index=False)
        assert agreement(variance) == expected

    census = "on census data calibrated intervals cover far better than naive ones"
    frame = pd.read_csv(tables / "dp_census.csv")
    naive = (frame["family"] == "logistic") & (frame["interval"] == "naive")
    frame.loc[naive, "coverage"] = 1.0  # naive covers at least as well as calibrated at every epsilon
    frame.loc[(frame["family"] == "logistic") & (frame["interval"] == "plugin_wald"), "coverage"] = 0.9
    frame.to_csv(tables / "dp_census.csv", index=False)
    assert agreement(census) == F.NOT_REPRODUCED

    (tables / "dp_clipping.csv").unlink()
    row = _row(F.render(run, FINDINGS), "clipping too tight biases, too loose adds noise")
    assert row[-1] == F.NOT_RUN and "dp_clipping.csv not produced" in row[3]


# --- bundles ----------------------------------------------------------------------------------

def test_a_bundle_verifies_against_its_run_and_names_a_perturbed_table(tiny_run, tmp_path, capsys):
    workdir = tiny_run[0]
    bundle = tmp_path / "bundle.tar.gz"
    code, out, _ = _cli("bundle", workdir, "--out", bundle, capsys=capsys)
    assert code == 0 and "files" in out
    # The archive is deterministic: the same run bundles to the same bytes.
    again = tmp_path / "again.tar.gz"
    write_bundle(workdir, again)
    assert bundle.read_bytes() == again.read_bytes()

    with tarfile.open(bundle) as archive:
        names = set(archive.getnames())
        manifest = json.loads(archive.extractfile("manifest.json").read())
    assert set(manifest["files"]) == names - {"manifest.json"}
    for required in ("results/config.yaml", "results/provenance.json", "results/tables/mia.csv",
                     "results/report/index.html", "results/findings/REPRODUCE.md",
                     "results/figures/mia_roc_adult.png", "results/benchmarks/report.tsv"):
        assert required in names, required
    provenance = json.loads((workdir / "results/provenance.json").read_text())
    assert (manifest["commit"], manifest["synthrisk_version"]) == (provenance["commit"], synthrisk.__version__)
    assert manifest["versions"]["numpy"] and manifest["excluded_from_verification"]

    code, out, _ = _cli("verify", bundle, workdir, capsys=capsys)
    assert code == 0 and "verified: every table matches" in out
    assert "summary.md: not compared" in out and "fit_seconds" in out

    copy = _copy_run(workdir, tmp_path / "copy")
    # Cells as written (read as text, so that no other column is reformatted on the way back).
    summary = pd.read_csv(copy / "results/tables/summary.csv", dtype=str, keep_default_na=False)
    summary["fit_seconds"] = "123.4"  # a timing: excluded by name
    summary.to_csv(copy / "results/tables/summary.csv", index=False)
    result = verify_bundle(bundle, copy)
    assert result.ok and result.identical_without_timings == {"results/tables/summary.csv": ["fit_seconds"]}

    mia = copy / "results/tables/mia.csv"
    mia.write_text(mia.read_text().replace("0.", "0.9", 1))
    (copy / "results/tables/dcr.md").unlink()
    code, _, err = _cli("verify", bundle, copy, "--json", capsys=capsys)
    assert code == 1
    assert "results/tables/mia.csv: DIFFERS" in err and "results/tables/dcr.md: in the bundle, missing" in err
    assert verify_bundle(bundle, copy).differ == ["results/tables/mia.csv"]


@pytest.mark.slow
def test_a_bundle_verifies_against_a_rerun_in_a_fresh_directory(tiny_run, tmp_path):
    """Same config and seeds, another directory: every table byte for byte (timings excluded)."""
    from conftest import run_tiny

    bundle = tmp_path / "bundle.tar.gz"
    write_bundle(tiny_run[0], bundle)
    (tmp_path / "rerun").mkdir()
    rerun = run_tiny(tmp_path / "rerun")[0]
    result = verify_bundle(bundle, rerun)
    assert result.ok, result.text()
    assert len(result.identical) > 40


# --- snakemake --archive ----------------------------------------------------------------------

@pytest.mark.slow
def test_snakemake_archive_holds_every_input_and_builds_the_dag(tmp_path):
    """`snakemake --archive` packs the files tracked by git plus every input no rule makes; an input
    outside the repository would only be warned about, so the test fails on that warning, and the
    unpacked archive must build the default config's DAG on its own."""
    archive = tmp_path / "workflow.tar.gz"
    done = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", "Snakefile", "--cores", "1",
                           "--nolock", "--archive", str(archive)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cannot be archived" not in done.stdout + done.stderr
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())
    with tarfile.open(archive) as packed:
        names = set(packed.getnames())
        packed.extractall(tmp_path / "unpacked", filter="data")
    assert tracked <= names
    for needed in ("Snakefile", "config/config.yaml", "config/findings.yaml", "config/datasets/adult.yaml",
                   "workflow/rules/report.smk", "scripts/findings.py", "synthrisk/study/findings.py"):
        assert needed in names, needed
    unpacked = tmp_path / "unpacked"
    dry = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", "Snakefile", "--cores", "1", "-n",
                          "--directory", str(tmp_path / "run"), "--configfile", str(unpacked / "config/config.yaml")],
                         cwd=unpacked, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(unpacked), "HOME": str(tmp_path)})
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "findings" in dry.stdout and "provenance" in dry.stdout


# --- provenance -------------------------------------------------------------------------------

def test_the_report_states_the_run_s_provenance(tiny_run):
    workdir = tiny_run[0]
    provenance = json.loads((workdir / "results/provenance.json").read_text())
    assert provenance["synthrisk_version"] == synthrisk.__version__
    assert provenance["configfiles"] and len(provenance["config_sha256"]) == 64
    page = (workdir / "results/report/index.html").read_text()
    assert f"by synthrisk {synthrisk.__version__} from commit <code>{provenance['commit']}</code>" in page
    assert provenance["config_sha256"] in page
    assert yaml.safe_load((workdir / "results/config.yaml").read_text())["seeds"] == [0]
