"""`synthrisk audit`: the command line of `synthrisk.release_audit`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..arguments import add_reader_options, reader_options


def output_folder(text: str) -> str:
    """--out: a folder (created if missing), never an existing file."""
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; give a folder for the audit's page and JSON")
    return text


def add_command(sub) -> None:
    p = sub.add_parser("audit", help="every applicable risk measure and utility on files you have: one HTML page "
                                     "and one JSON for the release decision")
    p.add_argument("--train", required=True, help="records the generator was trained on (CSV/Parquet)")
    p.add_argument("--synthetic", required=True, help="the synthetic release (CSV/Parquet)")
    p.add_argument("--holdout", help="records of the same population the generator never saw; without them the "
                                     "membership, control-set and utility measures are skipped")
    p.add_argument("--aux", help="records of the same population that are neither training nor holdout records "
                                 "(the attacker's sample; DOMIAS needs them); default: DOMIAS is skipped")
    p.add_argument("--schema", help="dataset schema (YAML); default: inferred from --train and written to "
                                    "OUT/schema.yaml")
    p.add_argument("--sensitive", nargs="+", metavar="COL",
                   help="sensitive column(s); required without --schema, replace the schema's with it")
    p.add_argument("--out", required=True, type=output_folder,
                   help="folder for audit.html, audit.json, tables/ (files synthrisk did not write are never touched)")
    p.add_argument("--json", action="store_true", help="print the audit's JSON")
    p.add_argument("--policy", help="release policy (YAML: alpha, power, thresholds per risk); default: family-wise "
                                    "level 0.05, threshold 0.09 for every risk (synthrisk.measures.policy)")
    p.add_argument("--generator", metavar="NAME|module:Class",
                   help="the generator that made the release (a backend: cart, mst, sdv, synthcity, ...); the audit "
                        "refits it on reference records with and without target records (shadow models): minutes "
                        "(synthcity's: in its own environment, once built; hours at the default refits)")
    p.add_argument("--generator-config", metavar="FILE",
                   help="the generator's entry as under config.yaml's generators: (YAML: params, model, plugin, "
                        "timeout)")
    p.add_argument("--shadow-fits", type=int, metavar="N",
                   help="refits of --generator, half to train the shadow models, half to judge them (default 400)")
    add_reader_options(p, "reader options of the text files (default: the schema's source.options)")
    p.set_defaults(func=run)


def run(args) -> dict | str:
    """The JSON with --json, else one line per risk (the page and JSON hold the rest)."""
    from . import HTML, audit

    options = reader_options(args)
    report = audit(args.train, args.synthetic, args.out, holdout=args.holdout, schema=args.schema,
                   sensitive=args.sensitive, read_options=options or None, aux=args.aux,
                   bar=False if args.json else None, policy=args.policy, generator=args.generator,
                   generator_config=args.generator_config, shadow_fits=args.shadow_fits)
    if args.json:
        return report
    lines = [report["release"]["sentence"]] + [f"{risk['label']}: {risk['verdict']}" for risk in report["risks"]]
    return "\n".join(lines + [f"report: {Path(args.out) / HTML}"]) + "\n"
