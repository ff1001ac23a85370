"""The audit's publish step is one transaction (issue #41, part 2; `synthrisk.outputs`): every target
is checked before anything moves, a refusal leaves the folder byte for byte as it was, files that
any synthrisk command wrote are recognised by every other, nothing synthrisk did not create is ever
deleted or renamed (not even files named like its own), and a run killed at any step leaves a folder
the next run publishes into.

Most tests drive `AuditFolder` with content they stage themselves (fast); one runs the real
commands. Kills are real: the steps run in a forked child that `os._exit`s (as under SIGKILL: no
cleanup, the kernel drops its lock) just before its k-th change to the file system."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import tempfile
import traceback
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import synthrisk
from synthrisk import outputs
from synthrisk.cli import main
from synthrisk.errors import DataError
from synthrisk.outputs import AUDIT_COMPLETE, MANIFEST, STAGING_PREFIX, AuditFolder
from synthrisk.release_audit.result import _write

HTML, JSON, SCHEMA, TABLES = "audit.html", "audit.json", "schema.yaml", "tables"


# --- helpers -------------------------------------------------------------------------------------

def snapshot(folder: Path) -> dict[str, str]:
    """Every path under `folder` with its sha256 (files), 'folder' or its link target."""
    state = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            state[key] = f"link to {os.readlink(path)}"
        elif path.is_dir():
            state[key] = "folder"
        else:
            state[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def audit_inputs(root: Path, out: Path, schema_given: bool) -> dict[str, str]:
    train = root / "train.csv"
    if not train.exists():
        train.write_text("a,b\n1,2\n")
    return {"--train": str(train), **({"--schema": str(out / SCHEMA)} if schema_given else {})}


def run_audit(out: Path, root: Path, tag: str, schema_given: bool = False, tables=("a.csv", "b.csv"),
              inside=None) -> None:
    """One audit into `out` as `write_audit` runs it, with staged content of its own (`tag` makes it
    differ from run to run); `inside(folder)` runs between staging and publish."""
    names = [HTML, JSON, TABLES] + ([] if schema_given else [SCHEMA])
    with AuditFolder(out, audit_inputs(root, out, schema_given), names) as folder:
        (folder.staging / HTML).write_text(f"<p>page {tag}</p>")
        (folder.staging / JSON).write_text(json.dumps({"tag": tag}))
        (folder.staging / TABLES).mkdir()
        for name in tables:
            (folder.staging / TABLES / name).write_text(f"x\n{tag}\n")
        if not schema_given:
            (folder.staging / SCHEMA).write_text(f"name: {tag}\n")
        if inside is not None:
            inside(folder)
        folder.publish(names, {"command": "audit", "tag": tag})


def infer_schema(out: Path, tag: str) -> None:
    """What `synthrisk schema infer --out OUT/schema.yaml` does with the file it writes
    (synthrisk/data/cli.py): one step, recorded before it is renamed into place."""
    outputs.write_file(outputs.check_output_file(out / SCHEMA, {}, option="--out"), f"name: inferred {tag}\n",
                       command="schema infer", option="--out")


def manifest(out: Path) -> dict:
    return json.loads((out / MANIFEST).read_text())


def assert_complete(out: Path, strict: bool = True) -> dict:
    """The folder holds a complete audit: the marker lists files that exist, each recorded as
    synthrisk's in the manifest (and, `strict`, with the content the audit published)."""
    marker = json.loads((out / AUDIT_COMPLETE).read_text())
    recorded = manifest(out)["files"]
    assert marker["files"] and set(marker["files"]) == set(marker["sha256"])
    for name in marker["files"]:
        assert (out / name).is_file(), name
        if strict:
            digest = hashlib.sha256((out / name).read_bytes()).hexdigest()
            assert digest == marker["sha256"][name] == recorded[name]["sha256"], name
    assert recorded[AUDIT_COMPLETE]["sha256"] == hashlib.sha256((out / AUDIT_COMPLETE).read_bytes()).hexdigest()
    assert not manifest(out).get("staging")
    return marker


def our_staging_folders(out: Path, foreign=()) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith(STAGING_PREFIX) and p.name not in foreign)


KILLED = 77
#: the calls that change the file system's names (pathlib and shutil.rmtree go through them); writing
#: a file's content is not a step: synthrisk writes content only into new files of unique names
MUTATIONS = ("replace", "rename", "unlink", "rmdir", "mkdir")


def _dying_before(change, count, step):
    """`change` (an os function), exiting at once instead when it is the `step`-th change counted."""
    def dying(*args, **kwargs):
        if next(count) == step:
            os._exit(KILLED)
        return change(*args, **kwargs)
    return dying


def run_killed_at(step: int | None, actions, log: Path) -> bool:
    """Run `actions()` in a forked child that dies just before its `step`-th change to the file system
    (None: never). True when it was killed; an error in the child fails the test."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            count = itertools.count()
            for name in MUTATIONS:
                setattr(os, name, _dying_before(getattr(os, name), count, step))
            actions()
        except BaseException:
            log.write_text(traceback.format_exc())
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, KILLED), log.read_text() if log.exists() else code
    return code == KILLED


@pytest.fixture()
def out(tmp_path) -> Path:
    return tmp_path / "o" / "h"


def fail_reading_inputs(folder):
    raise DataError("--train: missing.csv does not exist")


# --- the reproductions -----------------------------------------------------------------------------

def test_an_audit_replaces_the_schema_that_schema_infer_wrote(out, tmp_path):
    infer_schema(out, "first")
    run_audit(out, tmp_path, "one")
    assert (out / SCHEMA).read_text() == "name: one\n"
    assert_complete(out)
    run_audit(out, tmp_path, "two")  # and every rerun
    assert (out / SCHEMA).read_text() == "name: two\n" and assert_complete(out)["tag"] == "two"


def test_an_audit_replaces_the_page_to_html_wrote(out, tmp_path):
    _write(out / HTML, "<p>from Python</p>")
    assert manifest(out)["files"][HTML]["command"] == "synthrisk.audit"
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, HTML])  # no temporary file left
    run_audit(out, tmp_path, "one")
    assert (out / HTML).read_text() == "<p>page one</p>" and assert_complete(out)
    # and Python may replace the audit's page again
    _write(out / HTML, "<p>again</p>")
    assert (out / HTML).read_text() == "<p>again</p>" and outputs.written_by_synthrisk(out / HTML)


def test_to_html_never_writes_over_a_file_synthrisk_did_not_write(out):
    out.mkdir(parents=True)
    (out / HTML).write_text("mine")
    with pytest.raises(DataError, match="not written by synthrisk"):
        _write(out / HTML, "<p>page</p>")
    assert snapshot(out) == {HTML: hashlib.sha256(b"mine").hexdigest()}


@pytest.mark.parametrize("outcome", ["failed", "published"])
def test_files_named_like_synthrisks_own_are_left_alone(out, tmp_path, outcome):
    """A user's `.synthrisk-staging-mine/` and `.synthrisk-audit.lock` survive an audit, whether it
    fails or publishes: synthrisk removes only staging folders its manifest records."""
    (out / ".synthrisk-staging-mine").mkdir(parents=True)
    (out / ".synthrisk-staging-mine" / "keep.txt").write_text("mine")
    (out / ".synthrisk-audit.lock").write_text("mine too")
    mine = snapshot(out)
    if outcome == "failed":
        with pytest.raises(DataError, match="missing.csv"):
            run_audit(out, tmp_path, "one", inside=fail_reading_inputs)
        assert snapshot(out) == mine
    else:
        run_audit(out, tmp_path, "one")
        assert_complete(out)
        assert {k: v for k, v in snapshot(out).items() if k in mine} == mine
    assert our_staging_folders(out, foreign={".synthrisk-staging-mine"}) == []


def test_a_failed_command_line_audit_leaves_the_users_files(out, tmp_path, capsys):
    (out / ".synthrisk-staging-mine").mkdir(parents=True)
    (out / ".synthrisk-staging-mine" / "keep.txt").write_text("mine")
    (out / ".synthrisk-audit.lock").write_text("mine too")
    mine = snapshot(out)
    code = main(["audit", "--train", str(tmp_path / "missing.csv"), "--synthetic", str(tmp_path / "missing.csv"),
                 "--sensitive", "income", "--out", str(out)])
    assert code == 2 and "missing.csv" in capsys.readouterr().err
    assert snapshot(out) == mine


# --- a refusal leaves the folder as it was ------------------------------------------------------------

@pytest.mark.parametrize("foreign", [HTML, "tables/mine.csv", SCHEMA, AUDIT_COMPLETE])
def test_a_refusal_at_publish_leaves_the_folder_byte_identical(out, tmp_path, foreign):
    run_audit(out, tmp_path, "one")
    (out / "notes.txt").write_text("mine")
    expected = {**snapshot(out), foreign: hashlib.sha256(b"the user's").hexdigest()}

    def appears(folder):
        # A file of the user's lands on a target while the measures run.
        (out / foreign).write_text("the user's")

    with pytest.raises(DataError, match=f"{foreign}.*not written by synthrisk.*left as it was"):
        run_audit(out, tmp_path, "two", inside=appears)
    assert snapshot(out) == expected
    if foreign != AUDIT_COMPLETE:
        assert_complete(out, strict=False)  # the previous audit, its marker and every file it lists
    # Moved away, the rerun publishes.
    shutil.move(out / foreign, tmp_path / "moved")
    run_audit(out, tmp_path, "three")
    assert assert_complete(out)["tag"] == "three" and (out / "notes.txt").read_text() == "mine"


def test_a_refusal_before_the_measures_leaves_the_folder_byte_identical(out, tmp_path):
    run_audit(out, tmp_path, "one")
    (out / TABLES / "mine.csv").write_text("a\n1\n")
    before = snapshot(out)
    with pytest.raises(DataError, match="tables/mine.csv"):
        AuditFolder(out, audit_inputs(tmp_path, out, False), [HTML, JSON, TABLES, SCHEMA]).__enter__()
    assert snapshot(out) == before


def test_a_refused_audit_leaves_no_folder_it_created(out, tmp_path):
    with pytest.raises(DataError):
        run_audit(out, tmp_path, "one", inside=fail_reading_inputs)
    assert not out.exists() and out.parent.exists()


def test_an_output_that_is_an_input_is_refused(out, tmp_path):
    out.mkdir(parents=True)
    (out / HTML).write_text("<p>an input</p>")
    with pytest.raises(DataError, match="is \\(or holds\\) the input --train"):
        AuditFolder(out, {"--train": str(out / HTML)}, [HTML]).__enter__()


# --- the previous audit's files ----------------------------------------------------------------

def test_the_previous_audits_schema_goes_unless_it_is_an_input_or_edited(out, tmp_path):
    run_audit(out, tmp_path, "one")  # writes schema.yaml
    run_audit(out, tmp_path, "two", schema_given=True)  # reads OUT/schema.yaml: kept
    assert (out / SCHEMA).read_text() == "name: one\n"
    # Given another schema, the previous audit's unedited one is withdrawn ...
    with AuditFolder(out, {"--schema": str(tmp_path / "other.yaml")}, [HTML, JSON, TABLES]) as folder:
        for name in (HTML, JSON):
            (folder.staging / name).write_text("three")
        (folder.staging / TABLES).mkdir()
        folder.publish([HTML, JSON, TABLES], {"tag": "three"})
    assert not (out / SCHEMA).exists() and SCHEMA not in manifest(out)["files"]
    assert SCHEMA not in assert_complete(out)["files"]
    # ... an edited one never.
    run_audit(out, tmp_path, "four")
    (out / SCHEMA).write_text("name: edited\n")
    with AuditFolder(out, {"--schema": str(tmp_path / "other.yaml")}, [HTML, JSON, TABLES]) as folder:
        for name in (HTML, JSON):
            (folder.staging / name).write_text("five")
        (folder.staging / TABLES).mkdir()
        folder.publish([HTML, JSON, TABLES], {"tag": "five"})
    assert (out / SCHEMA).read_text() == "name: edited\n"


def test_a_table_the_new_audit_does_not_write_goes_with_the_old_tables(out, tmp_path):
    run_audit(out, tmp_path, "one", tables=("a.csv", "old.csv"))
    run_audit(out, tmp_path, "two", tables=("a.csv",))
    assert sorted(p.name for p in (out / TABLES).iterdir()) == ["a.csv"]
    assert "tables/old.csv" not in manifest(out)["files"]
    assert_complete(out)


# --- locks, kills and staging folders ------------------------------------------------------------------

def test_a_second_audit_into_the_folder_is_refused(out, tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "LOCK_PATIENCE_SECONDS", 0.1)
    with AuditFolder(out, audit_inputs(tmp_path, out, False), [HTML]):
        with pytest.raises(DataError, match="another synthrisk audit is writing into"):
            AuditFolder(out, audit_inputs(tmp_path, out, False), [HTML]).__enter__()
    assert not out.exists()  # created by the first, left empty


def test_a_killed_audits_staging_folder_is_removed_by_the_next_and_no_other(out, tmp_path):
    (out / f"{STAGING_PREFIX}mine").mkdir(parents=True)

    def killed_while_measuring():
        run_audit(out, tmp_path, "one", inside=lambda folder: os._exit(KILLED))

    assert run_killed_at(None, killed_while_measuring, tmp_path / "log")
    left = our_staging_folders(out, foreign={f"{STAGING_PREFIX}mine"})
    assert len(left) == 1 and manifest(out)["staging"] == left
    run_audit(out, tmp_path, "two")
    assert our_staging_folders(out) == [f"{STAGING_PREFIX}mine"]
    assert_complete(out)


def test_an_audit_killed_at_any_step_leaves_a_folder_the_next_publishes_into(tmp_path):
    """Killed before each of its changes to the folder in turn, until one run is not killed."""
    for step in itertools.count():
        out = tmp_path / str(step)
        run_audit(out, tmp_path, "one")
        killed = run_killed_at(step, lambda: run_audit(out, tmp_path, "two", tables=("b.csv", "c.csv")),  # noqa: B023
                               tmp_path / "log")
        if (out / AUDIT_COMPLETE).exists():
            marker = json.loads((out / AUDIT_COMPLETE).read_text())
            assert marker["tag"] == "two" or killed  # killed after its marker: while removing its staging folder
            assert all((out / name).is_file() for name in marker["files"])
        run_audit(out, tmp_path, "three")
        assert assert_complete(out)["tag"] == "three" and our_staging_folders(out) == []
        if not killed:
            break
    assert step > 20  # every step of an audit was a kill point


# --- the real commands ---------------------------------------------------------------------------------

def test_schema_infer_audit_python_and_audit_again_each_leave_a_complete_folder(adult, cheap_audit, tmp_path,
                                                                                  capsys):
    """The reproduction of issue #41 through the commands a user types, on 250 records per file."""
    sample = adult.sample(750, random_state=7).reset_index(drop=True)
    files = {}
    for role, part in zip(("train", "holdout", "synthetic"), (sample[:250], sample[250:500], sample[500:])):
        files[role] = tmp_path / f"{role}.csv"
        part.to_csv(files[role], index=False)
    out = tmp_path / "o" / "h"
    (out / f"{STAGING_PREFIX}mine").mkdir(parents=True)
    (out / ".synthrisk-audit.lock").write_text("mine")
    mine = snapshot(out)
    audit = ["audit", "--train", str(files["train"]), "--synthetic", str(files["synthetic"]), "--holdout",
             str(files["holdout"]), "--out", str(out)]

    assert main(["schema", "infer", str(files["train"]), "--sensitive", "income", "--out", str(out / SCHEMA)]) == 0
    assert main([*audit, "--sensitive", "income"]) == 0, capsys.readouterr().err
    # schema infer creates a folder that does not exist yet (it raised FileNotFoundError).
    assert main(["schema", "infer", str(files["train"]), "--sensitive", "income", "--out",
                 str(tmp_path / "new" / SCHEMA)]) == 0 and (tmp_path / "new" / SCHEMA).is_file()
    assert SCHEMA in assert_complete(out)["files"]
    result = synthrisk.audit(files["train"], files["synthetic"], files["holdout"], sensitive="income")
    result.to_html(out / HTML)
    result.to_json(out / JSON)
    assert_complete(out, strict=False)  # the page and JSON are Python's now, the marker's files all there
    assert manifest(out)["files"][HTML]["command"] == "synthrisk.audit"
    assert main([*audit, "--schema", str(out / SCHEMA)]) == 0, capsys.readouterr().err
    marker = assert_complete(out)
    assert SCHEMA not in marker["files"] and (out / SCHEMA).is_file()  # an input of that run: kept
    assert {k: v for k, v in snapshot(out).items() if k in mine} == mine
    assert our_staging_folders(out, foreign={f"{STAGING_PREFIX}mine"}) == []


# --- the property: any foreign files, any writes, any kill ------------------------------------------------

#: files a user may hold beside the audit's, some named like synthrisk's own
BESIDE = [f"{STAGING_PREFIX}x/f.txt", f"{STAGING_PREFIX}mine/deep/g.txt", ".synthrisk-audit.lock", "notes.txt",
          "page.html", f"{MANIFEST}.mine.part"]
#: a user's file on a target of the audit (at most one: with one there, every audit is refused)
ON_TARGETS = [HTML, JSON, "tables/x.csv", SCHEMA, AUDIT_COMPLETE]
#: the writes: audits (inferring the schema, or reading OUT/schema.yaml) and the other commands' files
OPERATIONS = ["audit", "audit --schema", "to_html audit.html", "to_json audit.json", "to_html page.html",
              "schema infer"]


def perform(operation: str, out: Path, root: Path, tag: str) -> None:
    """One write; a refusal (a foreign file on its way) is an outcome, not a failure."""
    try:
        if operation.startswith("audit"):
            run_audit(out, root, tag, schema_given=operation.endswith("--schema"))
        elif operation.startswith("to_"):
            _write(out / operation.split()[1], f"python {tag}")
        else:
            infer_schema(out, tag)
    except DataError:
        pass


def check_any_writes_and_kill(foreign: set[str], operations: list[str], kill: int | None, rerun: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        out = root / "out"
        out.mkdir()
        for name in foreign:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(f"the user's {name}")
        mine = snapshot(out)

        def writes():
            for number, operation in enumerate(operations):
                perform(operation, out, root, f"w{number}")

        run_killed_at(kill, writes, root / "log")
        # Nothing of the user's was changed, removed or renamed.
        assert {k: v for k, v in snapshot(out).items() if k in mine} == mine
        if (out / AUDIT_COMPLETE).exists() and AUDIT_COMPLETE not in foreign:
            listed = json.loads((out / AUDIT_COMPLETE).read_text())["files"]
            assert all((out / name).is_file() for name in listed)
        # The user moves away what sits on the rerun's targets; the rerun publishes.
        schema_given = rerun.endswith("--schema")
        targets = {HTML, JSON, TABLES, AUDIT_COMPLETE} | (set() if schema_given else {SCHEMA})
        on_targets = [name for name in foreign if name.split("/")[0] in targets]
        for name in on_targets:
            (out / name).unlink()
        if "tables/x.csv" in on_targets:
            (out / TABLES).rmdir()  # the user's folder: synthrisk never put a file beside theirs
        run_audit(out, root, "rerun", schema_given=schema_given)
        marker = assert_complete(out)
        assert marker["tag"] == "rerun"
        kept = {k: v for k, v in mine.items() if k not in on_targets and k != TABLES}
        assert {k: v for k, v in snapshot(out).items() if k in kept} == kept
        assert our_staging_folders(out, foreign={n.split("/")[0] for n in foreign}) == []


#: an audit changes the file system 13-22 times, a Python write 6
PROPERTY = dict(foreign=st.builds(set.union, st.sets(st.sampled_from(BESIDE)),
                                  st.sets(st.sampled_from(ON_TARGETS), max_size=1)),
                operations=st.lists(st.sampled_from(OPERATIONS), min_size=1, max_size=4),
                kill=st.none() | st.integers(0, 80), rerun=st.sampled_from(["audit", "audit --schema"]))


@settings(max_examples=25, deadline=None)
@given(**PROPERTY)
def test_any_foreign_files_writes_and_kill_leave_the_users_files_and_a_folder_the_rerun_completes(
        foreign, operations, kill, rerun):
    check_any_writes_and_kill(foreign, operations, kill, rerun)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(**PROPERTY)
def test_any_foreign_files_writes_and_kill_many_examples(foreign, operations, kill, rerun):
    check_any_writes_and_kill(foreign, operations, kill, rerun)


def test_a_folder_of_an_earlier_version_with_an_unrecorded_marker_is_published_into(tmp_path):
    """synthrisk 0.1.0 recorded an audit's files but not its completion marker: a rerun into such a
    folder replaces the marker; a file of that name listing files synthrisk never wrote is foreign."""
    out = tmp_path / "out"
    run_audit(out, tmp_path, "first")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"].pop(AUDIT_COMPLETE)
    (out / MANIFEST).write_text(json.dumps(manifest))
    run_audit(out, tmp_path, "second")
    assert json.loads((out / AUDIT_COMPLETE).read_text())["tag"] == "second"
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"].pop(AUDIT_COMPLETE)
    (out / MANIFEST).write_text(json.dumps(manifest))
    (out / AUDIT_COMPLETE).write_text(json.dumps({"command": "audit", "files": ["notes.txt"]}))
    before = snapshot(out)
    with pytest.raises(DataError, match="was not written by synthrisk"):
        run_audit(out, tmp_path, "third")
    assert snapshot(out) == before
