"""The reproducibility commands: `synthrisk findings`, `synthrisk bundle`, `synthrisk verify`."""

from __future__ import annotations

from pathlib import Path

#: the published findings of the repository (a path from where the command runs)
FINDINGS = "config/findings.yaml"


def add_artifact_commands(sub) -> None:
    p = sub.add_parser("findings", help="render REPRODUCE.md: each published finding next to our number from a run")
    p.add_argument("run_dir", help="working directory of a finished run (holds results/tables and results/provenance.json)")
    p.add_argument("--findings", default=FINDINGS, help=f"findings file (default: {FINDINGS}, from the repository's root)")
    p.add_argument("--out", help="write here instead of to stdout (e.g. REPRODUCE.md)")
    p.set_defaults(func=_run_findings)

    p = sub.add_parser("bundle", help="one archive of a run: config as run, tables, figures, report, benchmarks, "
                                      "manifest with the sha256 of every file")
    p.add_argument("run_dir", help="working directory of a finished run")
    p.add_argument("--out", required=True, help="archive to write (.tar.gz)")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p.set_defaults(func=_run_bundle)

    p = sub.add_parser("verify", help="which tables of a run differ from a bundle's (timings excluded by name); "
                                      "exit code 1 if any does")
    p.add_argument("bundle", help="archive written by `synthrisk bundle`")
    p.add_argument("run_dir", help="working directory of the run to check, e.g. a rerun of the same config")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=_run_verify)


def _run_findings(args) -> str:
    from ..outputs import check_output_file, record_written
    from .findings import render

    if args.out:  # a file the user has (an edited REPRODUCE.md, their notes) is never written over
        check_output_file(args.out, {"--findings": args.findings})
    text = render(args.run_dir, args.findings)
    if args.out:
        Path(args.out).write_text(text)
        record_written(args.out, command="findings")
        return f"wrote {args.out}\n"
    return text


def _run_bundle(args):
    from ..outputs import check_output_file, record_written
    from .bundle import write_bundle

    check_output_file(args.out, {})
    content = write_bundle(args.run_dir, args.out)
    record_written(args.out, command="bundle")
    if args.json:
        return content
    return f"wrote {args.out}: {len(content['files'])} files, commit {content['commit']}\n"


def _run_verify(args):
    from .bundle import VerificationFailed, verify_bundle

    result = verify_bundle(args.bundle, args.run_dir)
    if not result.ok:
        raise VerificationFailed("\n" + result.text().rstrip("\n"))
    return result.as_dict() if args.json else result.text()
