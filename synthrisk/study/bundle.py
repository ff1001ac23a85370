"""One archive of a finished run that anyone can check a rerun against.

`write_bundle` packs the run's configuration as run (`results/config.yaml`), its provenance, tables,
figures, report, REPRODUCE.md and benchmark files into a gzipped tar with `manifest.json`: the
sha256 of every file, the package versions, the commit and the synthrisk version. The archive
itself is deterministic (sorted members, zero timestamps and owners), so bundling the same run
twice gives the same bytes.

`verify_bundle` compares the bundle's tables (`results/tables/*`) with a run directory's, by
sha256. With the same seeds and pins every table must match byte for byte, except timings, which
are excluded by name:
  - columns named `*_seconds` (`summary.csv`'s `fit_seconds`): such a CSV is compared cell by cell
    without them, and its Markdown and LaTeX renderings (`summary.md`, `summary.tex`), which carry
    the same columns, are not compared;
  - `results/benchmarks/` (wall time and memory of every job) is bundled but never compared.
Figures and the report are bundled for reading, not compared (the report states when it was
rendered).
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import SynthriskError
from ..io import sha256_file

MANIFEST = "manifest.json"
FORMAT = "synthrisk-bundle 1"
# What a bundle holds, relative to the run directory (folders are taken whole).
BUNDLED = ("results/config.yaml", "results/provenance.json", "results/tables", "results/figures",
           "results/report", "results/benchmarks", "results/findings")
REQUIRED = ("results/config.yaml", "results/provenance.json", "results/tables")
TABLES = "results/tables/"
TIMING_SUFFIX = "_seconds"
# Recorded in every manifest, so that a reader of the bundle alone knows what `verify` compares.
EXCLUDED = {"columns": f"*{TIMING_SUFFIX} (timings): a CSV with such columns is compared without them, "
                       "its .md and .tex renderings not at all",
            "not compared": ["results/benchmarks (timings)", "results/figures", "results/report",
                             "results/findings", "results/provenance.json (date of the run)"]}


class VerificationFailed(SynthriskError):
    """Tables of the run differ from the bundle's (exit code 1, not a usage error)."""

    exit_code = 1


def bundled_files(run_dir: str | Path) -> list[str]:
    """Every file a bundle of `run_dir` holds, as sorted paths relative to the run directory."""
    run_dir = Path(run_dir)
    for required in REQUIRED:
        if not (run_dir / required).exists():
            raise SynthriskError(f"{run_dir / required} not found: a bundle is made of a finished run "
                                 "(its `provenance` rule writes results/config.yaml and results/provenance.json)")
    files = []
    for entry in BUNDLED:
        path = run_dir / entry
        if path.is_file():
            files.append(entry)
        elif path.is_dir():
            files += [p.relative_to(run_dir).as_posix() for p in path.rglob("*")
                      if p.is_file() and not p.name.startswith(".")]
    return sorted(files)


def manifest(run_dir: str | Path, files: list[str]) -> dict:
    run_dir = Path(run_dir)
    provenance = json.loads((run_dir / "results/provenance.json").read_text())
    return {"format": FORMAT,
            "synthrisk_version": provenance.get("synthrisk_version"),
            "commit": provenance.get("commit"), "dirty": provenance.get("dirty"),
            "config_sha256": provenance.get("config_sha256"), "configfiles": provenance.get("configfiles"),
            "completed": provenance.get("completed"), "versions": provenance.get("versions"),
            "excluded_from_verification": EXCLUDED,
            "files": {name: sha256_file(run_dir / name) for name in files}}


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    archive.addfile(info, io.BytesIO(data))


def write_bundle(run_dir: str | Path, out: str | Path) -> dict:
    """Write the bundle of `run_dir` to `out` (.tar.gz); returns its manifest."""
    run_dir, out = Path(run_dir), Path(out)
    files = bundled_files(run_dir)
    content = manifest(run_dir, files)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.part")
    # gzip's own header carries a timestamp and a file name: zero and none, for identical bytes.
    with open(partial, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as archive:
        _add(archive, MANIFEST, (json.dumps(content, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        for name in files:
            _add(archive, name, (run_dir / name).read_bytes())
    partial.replace(out)
    return content


def read_bundle(bundle: str | Path) -> tuple[dict, tarfile.TarFile]:
    bundle = Path(bundle)
    try:
        archive = tarfile.open(bundle, mode="r:*")
        member = archive.extractfile(MANIFEST)
    except (OSError, tarfile.TarError, KeyError) as exc:
        raise SynthriskError(f"{bundle}: not a synthrisk bundle ({exc})") from None
    content = json.loads(member.read())
    if content.get("format") != FORMAT:
        raise SynthriskError(f"{bundle}: {MANIFEST} has format {content.get('format')!r}, expected {FORMAT!r}")
    return content, archive


def timing_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if str(c).endswith(TIMING_SUFFIX)]


def _csv_without_timings(data: bytes) -> tuple[pd.DataFrame, list[str]]:
    # Every cell as the text written, so "the same" means the same digits, not close floats.
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    timings = timing_columns(frame)
    return frame.drop(columns=timings), timings


@dataclass
class Verification:
    identical: list[str] = field(default_factory=list)
    identical_without_timings: dict[str, list[str]] = field(default_factory=dict)
    not_compared: dict[str, str] = field(default_factory=dict)
    differ: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.differ or self.missing or self.extra)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "identical": self.identical,
                "identical_without_timings": self.identical_without_timings,
                "not_compared": self.not_compared, "differ": self.differ,
                "missing_from_run": self.missing, "not_in_bundle": self.extra}

    def text(self) -> str:
        lines = [f"{len(self.identical)} tables identical (sha256)"]
        for name, columns in self.identical_without_timings.items():
            lines.append(f"{name}: identical without its timing column(s) {', '.join(columns)}")
        for name, reason in self.not_compared.items():
            lines.append(f"{name}: not compared ({reason})")
        lines += [f"{name}: DIFFERS" for name in self.differ]
        lines += [f"{name}: in the bundle, missing from the run" for name in self.missing]
        lines += [f"{name}: in the run, not in the bundle" for name in self.extra]
        lines.append("verified: every table matches" if self.ok else
                     f"NOT verified: {len(self.differ)} differ, {len(self.missing)} missing, {len(self.extra)} extra")
        return "\n".join(lines) + "\n"


def verify_bundle(bundle: str | Path, run_dir: str | Path) -> Verification:
    """Which tables of `run_dir` differ from the bundle's (see the module docstring for what is
    compared and what is excluded as timing)."""
    content, archive = read_bundle(bundle)
    run_dir = Path(run_dir)
    if not (run_dir / TABLES).is_dir():
        raise SynthriskError(f"{run_dir / TABLES} not found: verify against a finished run's directory")
    result = Verification()
    with archive:
        bundled = {name for name in content["files"] if name.startswith(TABLES)}
        present = {p.relative_to(run_dir).as_posix() for p in (run_dir / TABLES).rglob("*")
                   if p.is_file() and not p.name.startswith(".")}
        # Renderings (.md, .tex) of a CSV with timing columns carry the timings too.
        timed_stems = {}
        for name in sorted(bundled):
            if name.endswith(".csv"):
                _, timings = _csv_without_timings(archive.extractfile(name).read())
                if timings:
                    timed_stems[name.removesuffix(".csv")] = timings
        for name in sorted(bundled):
            if name not in present:
                result.missing.append(name)
                continue
            stem, suffix = name.rsplit(".", 1) if "." in name else (name, "")
            if stem in timed_stems and suffix != "csv":
                result.not_compared[name] = (f"renders {stem.rsplit('/', 1)[-1]}.csv, whose timing column(s) "
                                             f"{', '.join(timed_stems[stem])} differ from run to run")
                continue
            if sha256_file(run_dir / name) == content["files"][name]:
                result.identical.append(name)
            elif stem in timed_stems:
                theirs, timings = _csv_without_timings(archive.extractfile(name).read())
                ours, _ = _csv_without_timings((run_dir / name).read_bytes())
                if theirs.equals(ours):
                    result.identical_without_timings[name] = timings
                else:
                    result.differ.append(name)
            else:
                result.differ.append(name)
        result.extra = sorted(present - bundled)
    return result
