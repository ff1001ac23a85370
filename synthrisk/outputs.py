"""Where synthrisk writes files (`audit`, `generate`, `schema infer`, and `Audit.to_html` / `to_json`
of the Python API): a file synthrisk did not write is never deleted, renamed or overwritten.

Ownership. Every file a command writes is recorded, with its sha256 and the command, in the manifest
of a folder (`.synthrisk-manifest.json`), keyed by its path relative to that folder (`audit.html`,
`tables/dcr.csv`). A file is synthrisk's when the manifest records it with the content it has now,
whichever command wrote it; a file the user edited since (the inferred schema the README tells them
to edit) is theirs. Every command and the Python API read the manifest the same way
(`written_by_synthrisk`, `check_output_file`, `AuditFolder`). An output path that is one of the
command's inputs is refused, whatever the manifest says. A single file (`write_file`) is written to
a temporary file of a unique name beside it and renamed over it, so it is never half-written.

The audit writes its `--out` folder as one transaction (`AuditFolder`):

- It holds an exclusive `flock` on the folder's own descriptor for the whole run (there is no lock
  file): a second audit into the folder is refused. The other commands take the same lock, blocking,
  to record what they wrote (`record_written`, `write_file`): while an audit runs in a folder they
  wait for it to end.
- Its targets (`audit.html`, `audit.json`, `tables/`, an inferred `schema.yaml`, the completion
  marker) are checked before any work and again at publish: each must be absent, or synthrisk's own
  unedited file or tree, and neither be nor hold an input of the run.
- It writes into a staging folder inside `--out` (same file system: results are renamed into place,
  never copied), named uniquely per run and recorded in the manifest before it is created. A
  recorded staging folder that a later audit finds (it holds the lock, so the folder's audit was
  killed) is removed; a folder of a similar name that the manifest does not record is left alone.
- Publish checks every target first; a refusal raises `DataError` naming the file, with nothing
  moved, renamed or deleted. Then: the new files are recorded in the manifest (beside the content
  each target has now, so a kill at any later step leaves files the next audit recognises), the
  completion marker is withdrawn, each target is moved into place (a tree such as `tables/` is
  replaced whole, the old one moved aside into the staging folder), the previous audit's files that
  this audit does not write are moved aside (only those the audit command recorded, unedited, and
  never an input of this run), the manifest is settled, and the completion marker
  (`.synthrisk-audit-complete.json`: the audit's summary, its files and their sha256) is written
  last, atomically. Anything moved aside goes when the staging folder is removed.

A folder without the completion marker holds no complete audit. A refused audit leaves the previous
audit's files and marker as they were; a killed audit leaves at most its staging folder (and the
previous audit's files or its own, without a marker), which the next audit cleans up or replaces.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .errors import DataError
from .io import sha256_file as sha256

MANIFEST = ".synthrisk-manifest.json"
#: written last by a finished audit; its absence means the folder holds no complete audit
AUDIT_COMPLETE = ".synthrisk-audit-complete.json"
STAGING_PREFIX = ".synthrisk-staging-"
#: the command name the audit records its files under (the previous audit's files are these)
AUDIT_COMMAND = "audit"
#: how long an audit waits for a folder's lock that a short manifest update may hold
LOCK_PATIENCE_SECONDS = 2.0


# --- the manifest ------------------------------------------------------------------------------

def _read_manifest(folder: Path) -> dict:
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {"files": {}}
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return {"files": {}}
    return manifest


def _write_manifest(folder: Path, manifest: dict, scratch: Path | None = None) -> None:
    """Replace the folder's manifest in one step: a temporary file of a unique name in `scratch` (a
    folder on the same file system, the audit's staging folder, so a kill leaves nothing beside the
    user's files) or in the folder, renamed over it. The caller holds the folder's lock."""
    descriptor, partial = tempfile.mkstemp(prefix=f"{MANIFEST}.", suffix=".part", dir=scratch or folder)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(partial, folder / MANIFEST)


@contextlib.contextmanager
def _manifest_locked(folder: Path):
    """The folder's manifest, read under the folder's exclusive lock (blocking: generate jobs may
    write into one folder at the same time, and an audit holds it while it runs) and written back on
    a normal exit."""
    folder.mkdir(parents=True, exist_ok=True)
    # The folder itself is the lock (flock works on a directory's descriptor): no lock file is left.
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        manifest = _read_manifest(folder)
        yield manifest
        _write_manifest(folder, manifest)
    finally:
        os.close(descriptor)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _entry(path: Path, command: str) -> dict:
    return {"sha256": sha256(path), "command": command, "written": _now()}


def _regular_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _recorded(manifest: dict, key: str, path: Path) -> bool:
    """The manifest records `path` (under `key`, its path relative to the manifest's folder) with
    the content it has now: the recorded content, or the one a publish was replacing when it was
    killed (`replaces`)."""
    entry = manifest["files"].get(key)
    if not isinstance(entry, dict) or not _regular_file(path):
        return False
    try:
        return sha256(path) in {entry.get("sha256"), entry.get("replaces")} - {None}
    except OSError:  # unreadable: nothing says it is synthrisk's
        return False


def _recorded_folder(manifest: dict, key: str) -> bool:
    entry = manifest["files"].get(key)
    return isinstance(entry, dict) and entry.get("directory") is True


def _foreign_part(path: Path, manifest: dict, key: str) -> Path | None:
    """The first file or folder at or under `path` (recorded as `key`) that is not synthrisk's own
    unedited one, or None when everything there is. A symbolic link is never synthrisk's; an empty
    folder is only when the manifest records it."""
    if path.is_symlink():
        return path
    if path.is_dir():
        children = sorted(path.iterdir())
        if not children and not _recorded_folder(manifest, key):
            return path
        for child in children:
            found = _foreign_part(child, manifest, f"{key}/{child.name}")
            if found is not None:
                return found
        return None
    return None if _recorded(manifest, key, path) else path


def _unrecorded_marker_of_an_audit(path: Path, manifest: dict) -> bool:
    """A completion marker that synthrisk 0.1.0 wrote without recording it: JSON of the audit command
    whose listed files the manifest records as the audit's. Such a folder is synthrisk's own, and an
    audit into it must not be refused for its marker."""
    try:
        marker = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(marker, dict):
        return False
    files = marker.get("files")
    return (_regular_file(path) and marker.get("command") == AUDIT_COMMAND and isinstance(files, list)
            and bool(files) and all(isinstance(key, str) and isinstance(manifest["files"].get(key), dict)
                                    and manifest["files"][key].get("command") == AUDIT_COMMAND for key in files))


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


# --- single files: every command ------------------------------------------------------------------

def written_by_synthrisk(path: str | Path) -> bool:
    """True when synthrisk recorded writing `path` and its content is unchanged since."""
    path = Path(path)
    return _recorded(_read_manifest(path.parent), path.name, path)


def record_written(*paths: str | Path, command: str) -> None:
    """Record files a command has just written as synthrisk's, in the manifest of each file's folder.
    Waits while an audit runs in that folder (it holds the folder's lock)."""
    by_folder: dict[Path, list[Path]] = {}
    for path in map(Path, paths):
        by_folder.setdefault(path.parent, []).append(path)
    for folder, files in by_folder.items():
        with _manifest_locked(folder) as manifest:
            for path in files:
                manifest["files"][path.name] = _entry(path, command)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _not_ours_message(option: str, path: Path, where: str = "choose another path") -> str:
    return (f"{option}: {path} already exists and was not written by synthrisk (or was edited since); synthrisk "
            f"never overwrites a file it did not write: move it away or {where}")


def check_output_file(path: str | Path, inputs: dict[str, str | None], option: str = "--out") -> Path:
    """`path` may be written: not one of `inputs` ({option: path}) and absent or synthrisk's own.
    Checked before any work is done; the error names the option and the file."""
    path = Path(path)
    for name, given in inputs.items():
        if given and _same_file(path, Path(given)):
            raise DataError(f"{option}: {path} is also the input {name} ({given}); synthrisk never writes over "
                            "its input: choose another output path")
    if _present(path) and not written_by_synthrisk(path):
        raise DataError(_not_ours_message(option, path))
    return path


def write_file(path: str | Path, text: str, command: str, option: str = "path") -> Path:
    """Write `text` to `path` in one step and record it as `command`'s: a temporary file of a unique
    name in the same folder, renamed over `path` under the folder's lock, after checking again that
    `path` is absent or synthrisk's own. The manifest records the new content before the rename, next
    to the content replaced, so a kill in between leaves a file synthrisk still recognises."""
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        with _manifest_locked(folder) as manifest:
            if _present(path) and not _recorded(manifest, path.name, path):  # written since the first check
                raise DataError(_not_ours_message(option, path))
            entry = _entry(Path(partial), command)
            manifest["files"][path.name] = {**entry, "replaces": sha256(path) if _regular_file(path) else None}
            _write_manifest(folder, manifest)
            os.replace(partial, path)
            manifest["files"][path.name] = entry
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)  # only when the rename did not happen: a unique name of our own
    return path


# --- the audit's folder ----------------------------------------------------------------------------

def _under(key: str, names: list[str]) -> bool:
    return any(key == name or key.startswith(f"{name}/") for name in names)


def _staging_name(name) -> bool:
    """A name the manifest records as a staging folder: a plain name in the folder, never a path."""
    return isinstance(name, str) and name.startswith(STAGING_PREFIX) and Path(name).name == name and ".." not in name


class AuditFolder:
    """The audit's `--out` folder for one run: locked, staged, then published as one transaction
    (the module's docstring). Use as a context manager; `staging` is where the run writes; `publish`
    checks every target, then moves the named entries into place and writes the completion marker."""

    def __init__(self, out: str | Path, inputs: dict[str, str | None], targets: list[str]):
        self.out = Path(out)
        self.inputs = {k: Path(v) for k, v in inputs.items() if v}
        self.targets = list(targets)
        self.staging: Path | None = None
        self._descriptor: int | None = None
        self._created = False
        self._manifest_existed = False

    # entering: lock, check, stage ---------------------------------------------------------------

    def __enter__(self) -> AuditFolder:
        self._created = not self.out.exists()
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            self._descriptor = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            self._release()
            raise DataError(f"--out: cannot write into {self.out}: {exc.strerror}; choose a folder you can "
                            "write to") from None
        try:
            self._lock()
            self._manifest_existed = (self.out / MANIFEST).exists()
            manifest = _read_manifest(self.out)
            self._refuse_targets([*self.targets, AUDIT_COMPLETE], manifest, publishing=False)
            self._open_staging(manifest)
        except BaseException:
            self._release()
            raise
        return self

    def _lock(self) -> None:
        """The folder's exclusive lock, held until the run ends. A manifest update of another command
        holds it for a moment, so the audit waits a little; another audit holds it for its run."""
        deadline = time.monotonic() + LOCK_PATIENCE_SECONDS
        while True:
            try:
                fcntl.flock(self._descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DataError(f"--out: another synthrisk audit is writing into {self.out}; wait for it to end "
                                    "or choose another folder") from None
                time.sleep(0.05)

    def _open_staging(self, manifest: dict) -> None:
        """Remove the staging folders of killed audits (recorded ones only: this run holds the lock,
        so no audit owns them), then record and create this run's."""
        kept = []
        for name in manifest.get("staging", []):
            stale = self.out / name if _staging_name(name) else None
            if stale is not None and stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            if stale is not None and _present(stale):
                kept.append(name)  # could not be removed: still ours to remove later
        name = self._unique_staging_name()
        manifest["staging"] = [*kept, name]
        try:
            # Recorded before it exists: a kill in between leaves a record of nothing, never an
            # unrecorded folder that no later run would dare remove.
            _write_manifest(self.out, manifest)
            self.staging = self.out / name
            self.staging.mkdir()
        except OSError as exc:
            raise DataError(f"--out: cannot write into {self.out}: {exc.strerror}; choose a folder you can "
                            "write to") from None

    def _unique_staging_name(self) -> str:
        while True:
            name = f"{STAGING_PREFIX}{os.getpid()}-{time.time_ns()}"
            if not _present(self.out / name):
                return name

    # leaving: remove the staging folder, release the lock -------------------------------------------

    def __exit__(self, *exc) -> None:
        try:
            if self.staging is not None:
                shutil.rmtree(self.staging, ignore_errors=True)
                if not _present(self.staging):
                    self._forget_staging()
        finally:
            self._release()

    def _forget_staging(self) -> None:
        """Drop this run's staging folder from the manifest; a manifest this run created for it alone
        goes too (a refused audit leaves the folder as it found it)."""
        manifest = _read_manifest(self.out)
        staging = [name for name in manifest.get("staging", []) if name != self.staging.name]
        if staging:
            manifest["staging"] = staging
        else:
            manifest.pop("staging", None)
        if not manifest["files"] and len(manifest) == 1 and not self._manifest_existed:
            (self.out / MANIFEST).unlink(missing_ok=True)
        else:
            _write_manifest(self.out, manifest)

    def _release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # releases the flock
            self._descriptor = None
        if self._created:
            with contextlib.suppress(OSError):
                self.out.rmdir()  # a folder this run created and left empty (a refused audit)

    # the checks ---------------------------------------------------------------------------------

    def _refuse_targets(self, names: list[str], manifest: dict, publishing: bool) -> None:
        """Every target is absent or synthrisk's own unedited file or tree, and neither is nor holds
        an input of this run; otherwise a `DataError` naming the file (nothing is changed)."""
        for name in names:
            target = self.out / name
            for option, given in self.inputs.items():
                if _same_file(target, given) or (target.is_dir() and given.resolve().is_relative_to(target.resolve())):
                    raise DataError(f"--out: the audit writes {target}, which is (or holds) the input {option} "
                                    f"({given}); choose another --out")
            foreign = _foreign_part(target, manifest, name) if _present(target) else None
            if foreign is None or (name == AUDIT_COMPLETE and _unrecorded_marker_of_an_audit(target, manifest)):
                continue
            hint = (f"; to audit with your edited schema, rerun with --schema {target}"
                    if name == "schema.yaml" else "")
            outcome = (f"; the audit's results are not published and {self.out} is left as it was"
                       if publishing else "")
            raise DataError(f"--out: {foreign} exists and was not written by synthrisk (or was edited since); "
                            f"synthrisk never overwrites a file it did not write: move it away or choose another "
                            f"--out{hint}{outcome}")

    def _is_input(self, path: Path) -> bool:
        return any(_same_file(path, given) for given in self.inputs.values())

    # publishing ---------------------------------------------------------------------------------

    def publish(self, names: list[str], summary: dict) -> None:
        """Check every target, then move staging/NAME to out/NAME for each name, withdraw the previous
        audit's other files, record them all, and write the completion marker last. A refusal raises
        `DataError` before anything in the folder changes."""
        manifest = _read_manifest(self.out)  # this run holds the lock: nobody else writes it now
        self._refuse_targets([*names, AUDIT_COMPLETE], manifest, publishing=True)
        new = self._staged_entries(names)
        marker = self._marker_text(summary, new)
        new[AUDIT_COMPLETE] = {"sha256": hashlib.sha256(marker).hexdigest(), "command": AUDIT_COMMAND,
                               "written": _now()}
        previous = self._previous_files(manifest, names)

        _write_manifest(self.out, self._write_ahead(manifest, new), self.staging)
        self._set_aside(AUDIT_COMPLETE)  # first: a kill from here on leaves no complete-looking folder
        for name in names:
            self._move_into_place(name)
        for key in previous:
            if _recorded(manifest, key, self.out / key):  # still unedited
                self._set_aside(key)
        _write_manifest(self.out, self._settled(manifest, new, names, previous), self.staging)
        (self.staging / AUDIT_COMPLETE).write_bytes(marker)
        os.replace(self.staging / AUDIT_COMPLETE, self.out / AUDIT_COMPLETE)

    def _staged_entries(self, names: list[str]) -> dict[str, dict]:
        """The manifest entries of everything staged under `names`: files with their sha256, folders."""
        entries = {}
        for name in names:
            source = self.staging / name
            for path in [source, *(sorted(source.rglob("*")) if source.is_dir() else [])]:
                key = path.relative_to(self.staging).as_posix()
                entries[key] = ({"directory": True, "command": AUDIT_COMMAND, "written": _now()} if path.is_dir()
                                else _entry(path, AUDIT_COMMAND))
        return entries

    @staticmethod
    def _marker_text(summary: dict, new: dict[str, dict]) -> bytes:
        files = {key: entry["sha256"] for key, entry in new.items() if "sha256" in entry}
        return (json.dumps({**summary, "files": sorted(files), "sha256": files}, indent=1, sort_keys=True,
                           default=str) + "\n").encode()

    def _previous_files(self, manifest: dict, names: list[str]) -> list[str]:
        """The previous audit's files that this audit does not write: recorded by the audit command,
        unedited, and not an input of this run."""
        keys = []
        for key, entry in manifest["files"].items():
            path = self.out / key
            if (isinstance(entry, dict) and entry.get("command") == AUDIT_COMMAND and key != AUDIT_COMPLETE
                    and not _under(key, names) and _recorded(manifest, key, path) and not self._is_input(path)):
                keys.append(key)
        return sorted(keys)

    def _write_ahead(self, manifest: dict, new: dict[str, dict]) -> dict:
        """The manifest while the targets move: each new entry also accepts the content its path
        holds now (`replaces`), so a kill between two moves leaves only files synthrisk recognises."""
        files = dict(manifest["files"])
        for key, entry in new.items():
            current = self.out / key
            files[key] = {**entry, "replaces": sha256(current) if _regular_file(current) else None}
        return {**manifest, "files": files}

    @staticmethod
    def _settled(manifest: dict, new: dict[str, dict], names: list[str], previous: list[str]) -> dict:
        """The manifest once published: the new entries replace everything under the targets, and
        the withdrawn files' entries go."""
        files = {key: entry for key, entry in manifest["files"].items()
                 if key not in previous and key != AUDIT_COMPLETE and not _under(key, names)}
        return {**manifest, "files": {**files, **new}}

    def _move_into_place(self, name: str) -> None:
        source, target = self.staging / name, self.out / name
        if target.is_dir() or (source.is_dir() and _present(target)):
            self._set_aside(name)  # a folder is replaced whole: rename cannot replace a full one
        os.replace(source, target)

    def _set_aside(self, key: str) -> None:
        """Move out/KEY (when present) into the staging folder, which goes at the end of the run."""
        path = self.out / key
        if not _present(path):
            return
        aside = self.staging / ".previous" / key
        aside.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, aside)
