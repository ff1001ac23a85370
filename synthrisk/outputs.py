"""Where the steward's commands write (`audit`, `generate`, `schema infer`): a user's file is never
deleted or overwritten.

Every file one of these commands writes is recorded, with its sha256, in the manifest of its folder
(`.synthrisk-manifest.json`). A command may replace or remove a file only when the manifest says
synthrisk wrote it *and* its content is still what synthrisk wrote: a file the user edited (the
inferred schema the README tells them to edit) is theirs from then on. An output path that is one of
the command's inputs is refused, whatever the manifest says.

The audit writes a folder (`AuditFolder`): it holds an OS lock on the folder while it runs (a second
audit into the same folder is refused, not interleaved), withdraws the previous audit's files before
reading any input (a refused or killed rerun leaves no complete-looking page of other inputs
behind), works in a staging folder inside `--out` (same file system, so the results are moved into
place, never copied; a staging folder left by a killed audit is removed by the next one), and writes
its completion marker last.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from pathlib import Path

from .bundle import sha256_file as sha256
from .errors import DataError

MANIFEST = ".synthrisk-manifest.json"
#: written last by a finished audit; its absence means the folder holds no complete audit
AUDIT_COMPLETE = ".synthrisk-audit-complete.json"
AUDIT_LOCK = ".synthrisk-audit.lock"
STAGING_PREFIX = ".synthrisk-staging-"


@contextlib.contextmanager
def _manifest_locked(folder: Path):
    """The folder's manifest, read under an exclusive lock and written back atomically on exit
    (generate jobs may write into one folder at the same time)."""
    folder.mkdir(parents=True, exist_ok=True)
    # The folder itself is the lock (flock works on a directory's descriptor): no lock file is left.
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        manifest = _read_manifest(folder)
        yield manifest
        partial = folder / f".{MANIFEST}.{os.getpid()}.part"
        partial.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        os.replace(partial, folder / MANIFEST)
    finally:
        os.close(descriptor)


def _read_manifest(folder: Path) -> dict:
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {"files": {}}
    return manifest if isinstance(manifest.get("files"), dict) else {"files": {}}


def _recorded(manifest: dict, key: str, path: Path) -> bool:
    """The manifest records `path` (under `key`, its path relative to the manifest's folder) with
    the content it has now."""
    entry = manifest["files"].get(key)
    return isinstance(entry, dict) and entry.get("sha256") == sha256(path)


def _entry(path: Path, command: str) -> dict:
    return {"sha256": sha256(path), "command": command, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def written_by_synthrisk(path: str | Path) -> bool:
    """True when synthrisk recorded writing `path` and its content is unchanged since."""
    path = Path(path)
    return path.is_file() and _recorded(_read_manifest(path.parent), path.name, path)


def record_written(*paths: str | Path, command: str) -> None:
    """Record files a command has just written (by folder) as synthrisk's."""
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


def check_output_file(path: str | Path, inputs: dict[str, str | None], option: str = "--out") -> Path:
    """`path` may be written: not one of `inputs` ({option: path}) and absent or synthrisk's own.
    Checked before any work is done; the error names the option and the file."""
    path = Path(path)
    for name, given in inputs.items():
        if given and _same_file(path, Path(given)):
            raise DataError(f"{option}: {path} is also the input {name} ({given}); synthrisk never writes over "
                            "its input: choose another output path")
    if path.exists() and not written_by_synthrisk(path):
        raise DataError(f"{option}: {path} already exists and was not written by synthrisk (or was edited since); "
                        "synthrisk never overwrites a file it did not write: move it away or choose another path")
    return path


def _tree_is_ours(folder: Path, manifest: dict, prefix: str) -> bool:
    """Every file under `folder` is synthrisk's, unedited (recorded as `prefix/name`)."""
    return all(_recorded(manifest, f"{prefix}/{path.relative_to(folder).as_posix()}", path)
               for path in folder.rglob("*") if path.is_file())


class AuditFolder:
    """The audit's `--out` folder for one run: locked, cleared of the previous audit, staged, then
    published. Use as a context manager; `staging` is where the run writes; `publish` moves the
    named entries into place and writes the completion marker."""

    def __init__(self, out: str | Path, inputs: dict[str, str | None], targets: list[str]):
        self.out = Path(out)
        self.inputs = {k: Path(v) for k, v in inputs.items() if v}
        self.targets = list(targets)
        self._lock = None
        self.staging: Path | None = None

    def __enter__(self) -> AuditFolder:
        self._created = not self.out.exists()
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            self._lock = open(self.out / AUDIT_LOCK, "a")  # noqa: SIM115 - held for the whole run
        except OSError as exc:
            raise DataError(f"--out: cannot write into {self.out}: {exc.strerror}; choose a folder you can "
                            "write to") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The lock file is removed at the end; one removed between our open and our lock is not
            # the one the next audit will lock.
            if os.fstat(self._lock.fileno()).st_ino != os.stat(self.out / AUDIT_LOCK).st_ino:
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            self._lock.close()
            self._lock = None
            raise DataError(f"--out: another synthrisk audit is writing into {self.out}; wait for it to end or "
                            "choose another folder") from None
        try:
            for stale in self.out.glob(f"{STAGING_PREFIX}*"):
                # No other audit holds the lock, so this is the work folder of a killed one.
                shutil.rmtree(stale, ignore_errors=True)
            # The previous audit goes first: a rerun refused for any reason leaves no complete-looking
            # page of other inputs behind.
            self._withdraw_previous()
            self._check_targets()
            self.staging = self.out / f"{STAGING_PREFIX}{os.getpid()}-{time.time_ns()}"
            self.staging.mkdir()
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            (self.out / AUDIT_LOCK).unlink(missing_ok=True)  # still held: nobody else can have it
            self._lock.close()  # releases the flock
            self._lock = None
        if self._created:
            with contextlib.suppress(OSError):
                self.out.rmdir()  # a folder this run created and left empty (a refused audit)

    def _check_targets(self) -> None:
        manifest = _read_manifest(self.out)
        for name in self.targets:
            target = self.out / name
            for option, given in self.inputs.items():
                if _same_file(target, given) or (target.is_dir() and given.resolve().is_relative_to(target.resolve())):
                    raise DataError(f"--out: the audit writes {target}, which is (or holds) the input {option} "
                                    f"({given}); choose another --out")
            if not target.exists():
                continue
            ours = _tree_is_ours(target, manifest, name) if target.is_dir() else \
                written_by_synthrisk(target)
            if not ours:
                hint = (f"; to audit with your edited schema, rerun with --schema {target}"
                        if name == "schema.yaml" else "")
                raise DataError(f"--out: {target} exists and was not written by synthrisk (or was edited since); "
                                f"synthrisk never overwrites a file it did not write: move it away or choose another "
                                f"--out{hint}")

    def _withdraw_previous(self) -> None:
        """Remove the previous audit's unedited files (never an input of this run) and its marker."""
        (self.out / AUDIT_COMPLETE).unlink(missing_ok=True)
        manifest = _read_manifest(self.out)
        inputs = [p.resolve() for p in self.inputs.values()]
        gone = []
        for name, entry in manifest["files"].items():
            path = self.out / name
            if entry.get("command") != "audit" or not path.is_file() or path.resolve() in inputs:
                continue
            if _recorded(manifest, name, path):
                path.unlink()
                gone.append(name)
        if gone:
            with _manifest_locked(self.out) as current:
                for name in gone:
                    current["files"].pop(name, None)
        for name in self.targets:
            target = self.out / name
            if target.is_dir() and not any(p.is_file() for p in target.rglob("*")):
                shutil.rmtree(target)

    def publish(self, names: list[str], summary: dict) -> None:
        """Move staging/NAME to out/NAME for each name, record them, then write the completion marker."""
        written = []
        for name in names:
            source, target = self.staging / name, self.out / name
            if target.exists():
                # Created by someone else while the audit ran (the previous audit's were withdrawn).
                raise DataError(f"--out: {target} appeared while the audit ran; it was not written by synthrisk "
                                "and is left as it is: the audit's results are not published")
            os.replace(source, target)
            written += [p for p in ([target] if target.is_file() else sorted(target.rglob("*"))) if p.is_file()]
        with _manifest_locked(self.out) as manifest:
            for path in written:
                manifest["files"][path.relative_to(self.out).as_posix()] = _entry(path, "audit")
        marker = self.out / f".{AUDIT_COMPLETE}.part"
        marker.write_text(json.dumps({**summary, "files": sorted(p.relative_to(self.out).as_posix() for p in written)},
                                     indent=1, sort_keys=True, default=str) + "\n")
        os.replace(marker, self.out / AUDIT_COMPLETE)
