"""The `synthrisk` command: each subcommand takes CSV/Parquet files and a dataset schema.

With --json, exactly one JSON object goes to stdout and nothing else (library chatter is sent to
stderr), so the output can be piped into other tools.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from ..errors import SynthriskError


def _add_generate(sub):
    from ..arguments import SEED, integer, number, table_path
    from ..generators.base import BUILTIN_BACKENDS, ENTRY_POINT_GROUP

    p = sub.add_parser("generate", help="fit a generator on training data and write synthetic data")
    p.add_argument("--generator", required=True,
                   help=f"backend name ({', '.join(sorted(BUILTIN_BACKENDS))}), 'package.module:ClassName', "
                        f"or an entry point of group {ENTRY_POINT_GROUP}")
    p.add_argument("--model", help="sdv: synthesizer class, e.g. CTGANSynthesizer")
    p.add_argument("--params", default="{}", help="JSON object of backend parameters")
    p.add_argument("--train", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--n", type=integer(1), required=True, help="synthetic rows (at least 1)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--timeout", type=number(0, low_open=True),
                   help="seconds for fit + sample; the generator runs in a child process that is stopped then")
    p.add_argument("--out", required=True, type=table_path,
                   help=".parquet or .csv; a status .json is written beside it")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    p.set_defaults(func=_run_generate)


def _run_generate(args) -> dict:
    from pathlib import Path

    from ..data import load_schema
    from ..data.split import ROW_ID
    from ..errors import ConfigError
    from ..generators.run import check_training_data, run_generator
    from ..io import read_table, write_json, write_table
    from ..outputs import check_output_file, record_written

    inputs = {"--train": args.train, "--schema": args.schema}
    # Checked before the fit: a run of minutes must not end in a refusal, nor in an overwritten input.
    out = check_output_file(args.out, inputs)
    status_path = check_output_file(Path(args.out).with_suffix(".json"), inputs, option="--out (its status .json)")
    schema = load_schema(args.schema)
    train = read_table(args.train)
    train = schema.conform(train.drop(columns=[ROW_ID], errors="ignore"), what=args.train)
    check_training_data(train, what=args.train)
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--params: not a JSON object: {exc}") from None
    if not isinstance(params, dict):
        raise ConfigError(f"--params: expected a JSON object such as '{{\"epochs\": 10}}', got {args.params!r}")
    spec = {"backend": args.generator, "params": params}
    if args.model:
        spec["model"] = args.model
    if args.timeout:
        spec["timeout"] = args.timeout
    synthetic, status = run_generator(args.generator, spec, train, schema, n=args.n, seed=args.seed)
    status.pop("traceback", None)
    if status["status"] != "ok":
        # Nothing is written on failure: a file on disk is a result.
        raise SynthriskError(f"generator {args.generator!r} failed: {status['error']}")
    write_table(synthetic, out)
    write_json(status, status_path)
    record_written(out, status_path, command="generate")
    return status


def _add_resources(sub):
    p = sub.add_parser("resources", help="per-rule mem_mb/runtime for a cluster profile, from a run's benchmark files")
    p.add_argument("benchmarks", help="the results/benchmarks folder of a finished run")
    p.set_defaults(func=_run_resources)


def _run_resources(args) -> str:
    from ..study.resources import profile_block

    try:
        return profile_block(args.benchmarks)
    except FileNotFoundError as exc:
        raise SynthriskError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from ..study.artifact import add_artifact_commands

    parser = argparse.ArgumentParser(prog="synthrisk", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"synthrisk {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_generate(sub)
    _add_resources(sub)
    add_artifact_commands(sub)
    from .commands import add_method_commands

    add_method_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        # Libraries print progress and warnings; keep stdout for the one JSON object.
        with contextlib.redirect_stdout(sys.stderr):
            result = args.func(args)
    except SynthriskError as exc:
        print(f"synthrisk {args.command}: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    if isinstance(result, str):
        print(result, end="")
    elif getattr(args, "json", False):
        from ..io import finite_or_null

        print(json.dumps(finite_or_null(result), sort_keys=True, default=str, allow_nan=False))
    else:
        for key, value in result.items():
            if not isinstance(value, (list, dict)):
                print(f"{key}: {value}")
    return 0
