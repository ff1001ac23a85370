"""Entry point of generate jobs that run in an isolated environment (.venv-synthcity): the same job
as scripts/generate.py, with its arguments on the command line instead of the `snakemake` object."""

import argparse
import json
from types import SimpleNamespace

from synthrisk.study.workflow import logged

parser = argparse.ArgumentParser()
for option in ("name", "spec", "train", "schema", "synthetic", "status", "log"):
    parser.add_argument(f"--{option}", required=True)
parser.add_argument("--n", type=int, required=True)
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

with logged(SimpleNamespace(log=[args.log], threads=args.threads)):
    from synthrisk.generators.run import generate_files

    generate_files(args.name, json.loads(args.spec), args.train, args.schema, args.n, args.seed,
                   args.synthetic, args.status)
