"""Cluster resources from benchmark files, and the provenance read from them."""

import pytest

from synthrisk.cli import main
from synthrisk.report.provenance import benchmark_records, git_revision, stage_times
from synthrisk.study.resources import profile_block, resources_per_rule

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, seconds, rss):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t1\n")


@pytest.fixture
def benchmarks(tmp_path):
    root = tmp_path / "benchmarks"
    _bench(root / "generate/adult/cart/seed0.tsv", 100.0, 900.0)
    _bench(root / "generate/adult/ctgan/seed0.tsv", 1300.0, 2100.0)
    _bench(root / "dp_grid.tsv", 30.0, "-")  # psutil could not read the memory
    return root


def test_each_rule_gets_its_worst_job_with_headroom(benchmarks):
    resources = resources_per_rule(benchmark_records(benchmarks))
    assert resources["generate"] == {"mem_mb": 3584}  # 2100 MB x 1.5; run time comes from the generator's timeout
    assert resources["dp_grid"] == {"mem_mb": 1024, "runtime": 10}   # unknown memory and short jobs: the floors
    times = stage_times(benchmark_records(benchmarks)).set_index("rule")
    assert times.loc["generate", "jobs"] == 2 and times.loc["generate", "total_seconds"] == 1400


def test_the_cli_prints_a_profile_block(benchmarks, capsys):
    assert main(["resources", str(benchmarks)]) == 0
    out = capsys.readouterr().out
    assert "set-resources:" in out and "generate: 2 jobs, longest 1300 s" in out
    assert "mem_mb: 3584 * attempt" in out
    assert out == profile_block(benchmarks)


def test_no_benchmarks_is_a_clear_error(tmp_path, capsys):
    assert main(["resources", str(tmp_path)]) == 2
    assert "no benchmark files" in capsys.readouterr().err


def test_git_revision_outside_a_checkout(tmp_path):
    assert git_revision(tmp_path)["commit"].startswith("unknown")
