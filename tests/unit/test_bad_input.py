"""Hostile inputs (issue #18): every case is refused where data enter (schema conformance, argument
parsing, the config schema) with a message naming the column or option, and no output is left
behind; or, where it has a right answer, handled correctly. (Through Snakemake:
tests/workflow/test_bad_input_workflow.py.)"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import HOSTILE_SCHEMA, ROOT, hostile_frame

from synthrisk.cli import build_parser, main
from synthrisk.data import load_schema
from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError, SchemaError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Good inputs for every command; each case below breaks one thing."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "schema.yaml").write_text(yaml.safe_dump(HOSTILE_SCHEMA, sort_keys=False))
    hostile_frame(80, 0).to_csv(d / "real.csv", index=False)
    hostile_frame(80, 1).to_csv(d / "holdout.csv", index=False)
    hostile_frame(60, 2).to_csv(d / "aux.csv", index=False)
    hostile_frame(80, 3).to_csv(d / "synthetic.csv", index=False)
    dp = pd.DataFrame({"y": np.random.default_rng(4).normal(size=60).round(3),
                       "sex": np.random.default_rng(5).choice(["female", "male"], 60)})
    dp.to_csv(d / "dp.csv", index=False)
    return d


def variant(files: Path, name: str, base: str, change) -> str:
    """A copy of `base`.csv changed by `change` (a DataFrame -> DataFrame or -> CSV text)."""
    out = files / f"{name}.csv"
    changed = change(pd.read_csv(files / f"{base}.csv"))
    if isinstance(changed, str):
        out.write_text(changed)
    else:
        changed.to_csv(out, index=False)
    return str(out)


def set_value(column, value, rows=slice(0, 3)):
    def change(df):
        df = df.copy()
        df[column] = df[column].astype(object)
        df.loc[df.index[rows], column] = value
        return df
    return change


def duplicate(column):
    def change(df):
        header = list(df.columns) + [column]
        body = df.assign(extra=df[column]).to_csv(index=False, header=False)
        return ",".join(header) + "\n" + body
    return change


def codes(column):
    def change(df):
        return df.assign(**{column: pd.factorize(df[column])[0]})
    return change


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`synthrisk ARGV` in this process: (exit code, stdout, stderr)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's errors exit with 2
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# Each case: the command's arguments (files relative to the fixture folder, {X} = a variant file
# built by `make`), the fragments the error message must contain, and the output it must not leave.
def cmd_generate(f, train="real.csv", extra=()):
    return ["generate", "--generator", "independent", "--train", train, "--schema", "schema.yaml",
            "--n", "20", "--out", "out/syn.parquet", *extra]


def cmd_rapid(f, real="real.csv", synthetic="synthetic.csv", sensitive="diag-code", extra=()):
    return ["rapid", "--real", real, "--synthetic", synthetic, "--schema", "schema.yaml", "--sensitive", sensitive,
            "--attacker", "logit" if sensitive == "diag-code" else "linear", "--permutations", "9",
            "--records", "out/records.parquet", "--json", *extra]


def cmd_mia(f, members="real.csv", synthetic="synthetic.csv", extra=()):
    return ["mia", "--members", members, "--holdout", "holdout.csv", "--synthetic", synthetic,
            "--aux", "aux.csv", "--schema", "schema.yaml", "--records", "out/mia.parquet", "--json", *extra]


def cmd_dp(f, data="dp.csv", extra=()):
    return ["dp", "--data", data, "--family", "gaussian", "--response", "y", "--epsilon", "1", "--delta", "1e-5",
            "--clip", "3", "--bootstrap", "20", "--json", *extra]


def cmd_audit(f, train="real.csv", synthetic="synthetic.csv", extra=("--schema", "schema.yaml")):
    return ["audit", "--train", train, "--synthetic", synthetic, "--holdout", "holdout.csv", "--out", "out/audit",
            "--json", *extra]


CASES = {
    # 1. (timeouts) below, in their own tests. 2. infinite values, at every entry point
    "generate-inf-continuous": (lambda f: cmd_generate(f, variant(f, "g_inf", "real", set_value("income", "inf"))),
                                ["column 'income'", "infinite", "3 row(s)"]),
    "generate-inf-integer": (lambda f: cmd_generate(f, variant(f, "g_inf_int", "real", set_value("age", "-inf"))),
                             ["column 'age'", "infinite"]),
    "rapid-inf-real": (lambda f: cmd_rapid(f, real=variant(f, "r_inf", "real", set_value("income", "inf", slice(0, 1)))),
                       ["real data: column 'income'", "infinite", "1 row(s)"]),
    "rapid-inf-synthetic-sensitive": (
        lambda f: cmd_rapid(f, synthetic=variant(f, "r_inf_s", "synthetic", set_value("score", "-inf")), sensitive="score"),
        ["synthetic data: column 'score'", "infinite"]),
    "mia-inf": (lambda f: cmd_mia(f, members=variant(f, "m_inf", "real", set_value("income", "inf"))),
                ["members: column 'income'", "infinite"]),
    "dp-inf": (lambda f: cmd_dp(f, variant(f, "d_inf", "dp", set_value("y", "inf"))),
               ["response column 'y'", "infinite", "3 row(s)"]),
    # 3. out-of-range settings, refused at parse time naming the option
    "mia-prior-above-1": (lambda f: cmd_mia(f, extra=["--prior", "1.5"]), ["argument --prior", "(0, 1)"]),
    "mia-prior-negative": (lambda f: cmd_mia(f, extra=["--prior", "-0.5"]), ["argument --prior"]),
    "mia-thresholds-nan": (lambda f: cmd_mia(f, extra=["--thresholds", "0.1,nan"]), ["argument --thresholds", "finite"]),
    "mia-thresholds-above-1": (lambda f: cmd_mia(f, extra=["--thresholds", "0.1,2"]), ["argument --thresholds", "[0, 1]"]),
    "mia-aux-member-fraction": (lambda f: cmd_mia(f, extra=["--aux-member-fraction", "1.5"]),
                                ["argument --aux-member-fraction"]),
    "mia-member-share": (lambda f: cmd_mia(f, extra=["--member-share", "1.5"]), ["argument --member-share"]),
    "mia-population-size": (lambda f: cmd_mia(f, extra=["--population-size", "0"]), ["argument --population-size"]),
    "mia-min-attack-members": (lambda f: cmd_mia(f, extra=["--min-attack-members", "1"]),
                               ["argument --min-attack-members"]),
    "mia-seed": (lambda f: cmd_mia(f, extra=["--seed", "-1"]), ["argument --seed"]),
    "rapid-permutations": (lambda f: cmd_rapid(f, extra=["--permutations", "-5"]), ["argument --permutations", ">= 0"]),
    "rapid-n-trees": (lambda f: cmd_rapid(f, extra=["--n-trees", "0"]), ["argument --n-trees", ">= 1"]),
    "rapid-tau": (lambda f: cmd_rapid(f, extra=["--tau", "1.5"]), ["argument --tau", "[0, 1]"]),
    "rapid-tau-nan": (lambda f: cmd_rapid(f, extra=["--tau", "nan"]), ["argument --tau", "finite"]),
    "rapid-epsilon": (lambda f: cmd_rapid(f, extra=["--epsilon", "0"]), ["argument --epsilon", "> 0"]),
    "rapid-epsilon-inf": (lambda f: cmd_rapid(f, extra=["--epsilon", "inf"]), ["argument --epsilon", "finite"]),
    "dp-bootstrap": (lambda f: cmd_dp(f, extra=["--bootstrap", "-3"]), ["argument --bootstrap"]),
    "dp-epsilon": (lambda f: cmd_dp(f, extra=["--epsilon", "0"]), ["argument --epsilon"]),
    "dp-delta": (lambda f: cmd_dp(f, extra=["--delta", "1"]), ["argument --delta", "(0, 1)"]),
    "dp-clip": (lambda f: cmd_dp(f, extra=["--clip", "-2"]), ["argument --clip"]),
    "dp-seed": (lambda f: cmd_dp(f, extra=["--seed", "x"]), ["argument --seed", "integer"]),
    "generate-n-zero": (lambda f: cmd_generate(f, extra=["--n", "0"]), ["argument --n", ">= 1"]),
    "generate-n-negative": (lambda f: cmd_generate(f, extra=["--n", "-5"]), ["argument --n"]),
    "generate-timeout": (lambda f: cmd_generate(f, extra=["--timeout", "-1"]), ["argument --timeout"]),
    "generate-seed": (lambda f: cmd_generate(f, extra=["--seed", "-3"]), ["argument --seed"]),
    # 4. undefined results: a continuous sensitive attribute missing everywhere
    "rapid-real-sensitive-all-missing": (
        lambda f: cmd_rapid(f, real=variant(f, "r_nan", "real", set_value("score", None, slice(None))), sensitive="score"),
        ["real data", "'score'", "missing in all 80 records", "undefined"]),
    # 5. foreign encodings: codes where the real data have labels
    "rapid-synthetic-codes": (lambda f: cmd_rapid(f, synthetic=variant(f, "r_codes", "synthetic", codes("sex"))),
                              ["'sex'", "shares no level", "'0', '1'", "'female', 'male'"]),
    "mia-synthetic-codes": (lambda f: cmd_mia(f, synthetic=variant(f, "m_codes", "synthetic", codes("region"))),
                            ["'region'", "shares no level", "'0', '1', '2'", "'east', 'north', 'south'"]),
    # 6. duplicate column names
    "dp-duplicate-columns": (lambda f: cmd_dp(f, variant(f, "d_dup", "dp", duplicate("sex"))),
                             ["duplicate column name(s) ['sex']"]),
    "rapid-duplicate-columns": (lambda f: cmd_rapid(f, synthetic=variant(f, "r_dup", "synthetic", duplicate("age"))),
                                ["duplicate column name(s) ['age']"]),
    "generate-duplicate-columns": (lambda f: cmd_generate(f, variant(f, "g_dup", "real", duplicate("region"))),
                                   ["duplicate column name(s) ['region']"]),
    "mia-duplicate-columns": (lambda f: cmd_mia(f, synthetic=variant(f, "m_dup", "synthetic", duplicate("income"))),
                              ["duplicate column name(s) ['income']"]),
    # unclear today: each says what to fix
    "generate-header-only": (lambda f: cmd_generate(f, variant(f, "g_empty", "real", lambda df: df.iloc[:0])),
                             ["has no rows", "header only"]),
    "rapid-synthetic-sensitive-all-missing": (
        lambda f: cmd_rapid(f, synthetic=variant(f, "r_nan_s", "synthetic", set_value("score", None, slice(None))),
                            sensitive="score"),
        ["synthetic data", "'score'", "missing in all 80 records"]),
    "generate-out-txt": (lambda f: [*cmd_generate(f)[:-2], "--out", "out/syn.txt"],
                         ["argument --out", "'.txt'", ".csv or .parquet"]),
    "rapid-records-txt": (lambda f: [a if a != "out/records.parquet" else "out/records.txt" for a in cmd_rapid(f)],
                          ["argument --records", "'.txt'"]),
    "mia-records-txt": (lambda f: [a if a != "out/mia.parquet" else "out/mia.txt" for a in cmd_mia(f)],
                        ["argument --records", "'.txt'"]),
    "generate-params-not-object": (lambda f: cmd_generate(f, extra=["--params", "[1, 2]"]), ["--params", "JSON object"]),
    "resources-missing-folder": (lambda f: ["resources", "no/such/folder"], ["no/such/folder"]),
    "schema-missing-file": (lambda f: ["schema", "infer", "no_such.csv"], ["no_such.csv", "does not exist"]),
    "schema-unknown-sensitive": (lambda f: ["schema", "infer", "real.csv", "--sensitive", "salary"],
                                 ["--sensitive", "'salary'", "not in the data"]),
    "schema-no-header-without-names": (lambda f: ["schema", "infer", "real.csv", "--no-header"],
                                       ["header: false needs names"]),
    "schema-negative-skip-rows": (lambda f: ["schema", "infer", "real.csv", "--skip-rows", "-2"],
                                  ["skip_rows", ">= 0"]),
    "schema-unknown-encoding": (lambda f: ["schema", "infer", "real.csv", "--encoding", "klingon"],
                                ["encoding", "'klingon'"]),
    "schema-wrong-field-count": (lambda f: ["schema", "infer", "real.csv", "--names", "a", "b"],
                                 ["real.csv", "names lists 2 columns", "fields per line"]),
    # the artifact commands name the run folder or archive that is not what they need
    "findings-not-a-run": (lambda f: ["findings", "no/run"], ["no/run/results/provenance.json", "finished run"]),
    "bundle-not-a-run": (lambda f: ["bundle", "no/run", "--out", "out/run.tar.gz"],
                         ["no/run/results/config.yaml", "finished run"]),
    "verify-not-a-bundle": (lambda f: ["verify", "real.csv", "."], ["real.csv", "not a synthrisk bundle"]),
    # synthrisk audit: every file is checked before the first measure runs
    "audit-synthetic-codes": (lambda f: cmd_audit(f, synthetic=variant(f, "a_codes", "synthetic", codes("region"))),
                              ["a_codes.csv", "'region'", "shares no level"]),
    "audit-duplicate-columns": (lambda f: cmd_audit(f, train=variant(f, "a_dup", "real", duplicate("age"))),
                                ["a_dup.csv", "duplicate column name(s) ['age']"]),
    "audit-inf": (lambda f: cmd_audit(f, train=variant(f, "a_inf", "real", set_value("income", "inf"))),
                  ["a_inf.csv", "'income'", "infinite"]),
    "audit-sensitive-unknown": (lambda f: cmd_audit(f, extra=["--sensitive", "salary"]),
                                ["--sensitive", "['salary']", "real.csv"]),
    "audit-sensitive-not-in-schema": (
        lambda f: cmd_audit(f, extra=["--schema", "schema.yaml", "--sensitive", "salary"]),
        ["--sensitive", "['salary']", "schema.yaml"]),
    "audit-inferred-needs-sensitive": (lambda f: cmd_audit(f, extra=()), ["--sensitive", "no --schema"]),
    "audit-out-is-a-file": (lambda f: [a if a != "out/audit" else "real.csv" for a in cmd_audit(f)],
                            ["argument --out", "is a file"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_a_message_naming_the_culprit(case, files, capsys, monkeypatch):
    build, fragments = CASES[case]
    monkeypatch.chdir(files)
    out_dir = files / "out"
    if out_dir.exists():
        for stale in out_dir.iterdir():
            stale.unlink()
    code, stdout, stderr = run_cli(build(files), capsys)
    assert code == 2, (case, stdout, stderr)
    message = " ".join(stderr.split())
    for fragment in fragments:
        assert fragment in message, (case, fragment, stderr)
    assert "Traceback" not in stderr
    assert stdout == ""  # with --json, nothing but the one object on success
    assert not out_dir.exists() or not any(out_dir.iterdir()), f"{case} left {list(out_dir.iterdir())}"


def test_every_command_has_cases():
    commands = {case.split("-")[0] for case in CASES}  # case ids start with their command
    subcommands = set(build_parser()._subparsers._group_actions[0].choices)
    assert subcommands <= commands


def test_good_inputs_pass(files, capsys, monkeypatch):
    """The same commands on the unbroken files succeed (so the cases above fail for their reason)."""
    monkeypatch.chdir(files)
    for argv in (cmd_generate(files), cmd_rapid(files), cmd_rapid(files, sensitive="score"), cmd_mia(files),
                 cmd_dp(files)):
        code, stdout, stderr = run_cli(argv, capsys)
        assert code == 0, (argv, stderr[-2000:])
    assert (files / "out/syn.parquet").exists() and (files / "out/records.parquet").exists()


def test_every_option_that_help_mentions_exists(capsys):
    """`generate --help` advertised a --config option that did not exist."""
    parser = build_parser()
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        known = {s for action in sub._actions for s in action.option_strings}
        mentioned = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", sub.format_help()))
        assert mentioned <= known, (name, mentioned - known)


# 2. what an infinite value is, decided once in schema conformance
def test_conformance_refuses_infinite_values_naming_column_and_rows():
    schema = DatasetSchema.from_dict(HOSTILE_SCHEMA)
    data = hostile_frame(10, 0)
    data.loc[[1, 4], "income"] = np.inf
    with pytest.raises(SchemaError, match=r"column 'income' holds infinite values .* in 2 row\(s\)"):
        schema.conform(data)
    huge = hostile_frame(10, 0).astype({"age": float})
    huge.loc[0, "age"] = 1e30
    with pytest.raises(SchemaError, match="column 'age' .* beyond the 64-bit integer range"):
        schema.conform(huge)


# 5. partial overlap: the share of unknown levels is recorded
def test_partly_foreign_levels_are_recorded(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    synthetic = variant(files, "r_partial", "synthetic", set_value("region", "west", slice(0, 20)))
    code, stdout, stderr = run_cli(cmd_rapid(files, synthetic=synthetic), capsys)
    assert code == 0, stderr
    assert json.loads(stdout)["unknown_level_share"] == {"region": 0.25}
    code, stdout, stderr = run_cli(cmd_mia(files, synthetic=synthetic), capsys)
    assert code == 0, stderr
    assert json.loads(stdout)["unknown_level_share"] == {"region": 0.25}


# 8. `drop` columns are removed from every file that has them, in every command
def test_drop_is_consistent_across_commands(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    with_note = variant(files, "with_note", "real", lambda df: df.assign(note="internal"))
    for argv in (cmd_generate(files, train=with_note), cmd_rapid(files, real=with_note),
                 cmd_rapid(files, synthetic=with_note), cmd_mia(files, members=with_note),
                 cmd_mia(files, synthetic=with_note)):
        code, _, stderr = run_cli(argv, capsys)
        assert code == 0, (argv, stderr[-2000:])


# 7 and unclear-today: names and schema roles
def test_schema_refuses_names_that_cannot_work_with_a_reason():
    bad_path = {**HOSTILE_SCHEMA, "columns": {**HOSTILE_SCHEMA["columns"], "a/b": {"type": "categorical"}},
                "sensitive": ["a/b"]}
    with pytest.raises(SchemaError, match=r"sensitive column 'a/b' contains \['/'\].*file names"):
        DatasetSchema.from_dict(bad_path)
    reserved = {**HOSTILE_SCHEMA, "columns": {**HOSTILE_SCHEMA["columns"], "row_id": {"type": "integer"}}}
    with pytest.raises(SchemaError, match="'row_id' is reserved"):
        DatasetSchema.from_dict(reserved)
    typo = {**HOSTILE_SCHEMA, "sensitive": ["incom"]}
    with pytest.raises(SchemaError, match=r"sensitive lists \['incom'\] which are not in 'columns'"):
        DatasetSchema.from_dict(typo)
    # A '-' in a sensitive name is fine: the workflow's patterns keep it whole (test below).
    assert DatasetSchema.from_dict(HOSTILE_SCHEMA).sensitive == ["diag-code", "score"]


def test_relative_source_path_says_where_it_was_looked_for(tmp_path, monkeypatch):
    from synthrisk.data import load_dataset

    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas/s.yaml").write_text(yaml.safe_dump({**HOSTILE_SCHEMA, "source": {"path": "data/mine.csv"}}))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaError, match=r"source.path 'data/mine.csv' does not exist\. A relative source.path is "
                                          r"read from the working directory \(" + re.escape(str(tmp_path))):
        load_dataset(load_schema("schemas/s.yaml"))


# 3. the config schema has the same ranges, and NaN or infinity is refused by key
def test_config_ranges_and_non_finite_numbers():
    import jsonschema

    from synthrisk.study.config import check_config

    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "cart"}}}
    jsonschema.validate(base, schema)
    for bad in ({"rapid": {"tau": 1.5}}, {"rapid": {"permutations": -5}}, {"rapid": {"n_trees": 0}},
                {"mia": {"thresholds": [0.1, 2]}}, {"dp": {"delta": 1}}, {"seeds": [-1]},
                {"generators": {"g": {"backend": "cart", "timeout": 0}}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**base, **bad}, schema)
    parsed = yaml.safe_load("rapid: {tau: .nan, epsilon: .inf}\nmia: {thresholds: [0.1, .nan]}")
    with pytest.raises(ConfigError, match=r"'rapid/tau', 'rapid/epsilon', 'mia/thresholds/1' must be finite"):
        check_config({**base, **parsed})




# 1. timeouts, enforced from outside the fitting code
@pytest.fixture(scope="module")
def small_train():
    schema = DatasetSchema.from_dict(HOSTILE_SCHEMA)
    return schema, schema.conform(hostile_frame(200, 0))


def test_timeout_holds_when_the_generator_swallows_every_signal(small_train):
    import stubborn_backend  # noqa: F401 - registers the backend

    from synthrisk.generators.run import run_generator

    schema, train = small_train
    start = time.monotonic()
    synthetic, status = run_generator("stubborn", {"backend": "stubborn", "params": {"seconds": 60}, "timeout": 2},
                                      train, schema, 50, 0)
    elapsed = time.monotonic() - start
    assert status["status"] == "failed" and "GeneratorTimeout" in status["error"]
    assert "time limit of 2 s" in status["error"]
    assert len(synthetic) == 0 and list(synthetic.columns) == list(schema.columns)
    assert elapsed < 30, elapsed  # 2 s of fitting plus the child's start-up, never the 60 s


def test_timeout_stops_a_real_slow_generator(small_train):
    """MST with many Private-PGM iterations (the issue's case: JAX swallowed SIGALRM)."""
    from synthrisk.generators.run import run_generator

    schema, train = small_train
    spec = {"backend": "mst", "params": {"epsilon": 1.0, "iters": 10**6, "domain": "from_data"}, "timeout": 2}
    start = time.monotonic()
    _, status = run_generator("mst", spec, train, schema, 50, 0)
    assert status["status"] == "failed" and "time limit of 2 s" in status["error"], status["error"]
    assert time.monotonic() - start < 60
    assert status["privacy"]["epsilon"] == 1.0  # what the generator said before fitting is kept


def test_a_time_limit_changes_nothing_in_the_data(small_train, capsys):
    from synthrisk.generators.run import run_generator

    schema, train = small_train
    limited, status = run_generator("cart", {"backend": "cart", "timeout": 120}, train, schema, 60, 3)
    assert status["status"] == "ok", status.get("traceback")
    free, _ = run_generator("cart", {"backend": "cart"}, train, schema, 60, 3)
    pd.testing.assert_frame_equal(limited, free)
    # the child's output reaches this process's stdout (the job's log in the workflow)
    import stubborn_backend  # noqa: F401

    run_generator("stubborn", {"backend": "stubborn", "params": {"seconds": 0}, "timeout": 60}, train, schema, 5, 0)
    assert "stubborn: sampling 5 rows" in capsys.readouterr().out


def test_cli_generate_timeout_leaves_no_file(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    code, stdout, stderr = run_cli(["generate", "--generator", "mst", "--params",
                                    '{"epsilon": 1, "iters": 1000000, "domain": "from_data"}', "--train", "real.csv",
                                    "--schema", "schema.yaml", "--n", "10", "--timeout", "1",
                                    "--out", "out/slow.parquet"], capsys)
    assert code == 2 and "time limit of 1 s" in stderr
    assert not (files / "out/slow.parquet").exists() and not (files / "out/slow.json").exists()




def test_timeout_holds_in_the_isolated_entry_point(small_train, tmp_path):
    """scripts/generate_isolated.py (the synthcity environment's entry point, run here with this
    interpreter) goes through the same child process and deadline."""
    import subprocess

    schema, train = small_train
    train.assign(row_id=range(len(train))).to_parquet(tmp_path / "train.parquet")
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(HOSTILE_SCHEMA))
    spec = {"backend": "mst", "params": {"epsilon": 1.0, "iters": 10**6, "domain": "from_data"}, "timeout": 2}
    start = time.monotonic()
    subprocess.run([sys.executable, str(ROOT / "scripts/generate_isolated.py"), "--name", "mst", "--spec",
                    json.dumps(spec), "--train", str(tmp_path / "train.parquet"), "--schema",
                    str(tmp_path / "schema.yaml"), "--n", "10", "--seed", "0", "--synthetic",
                    str(tmp_path / "syn.parquet"), "--status", str(tmp_path / "syn.json"), "--log",
                    str(tmp_path / "job.log")], check=True, timeout=300)
    assert time.monotonic() - start < 90
    status = json.loads((tmp_path / "syn.json").read_text())
    assert status["status"] == "failed" and "time limit of 2 s" in status["error"]
    assert pd.read_parquet(tmp_path / "syn.parquet").empty
    assert "GeneratorTimeout" in (tmp_path / "job.log").read_text()  # the job's log has the story
