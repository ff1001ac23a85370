"""Entry point of privacy-audit blocks whose generator runs in an environment of its own
(.venv-synthcity): the same job as scripts/epsilon_audit_fits.py, with its arguments on the command
line instead of the `snakemake` object."""

import argparse
import json
from types import SimpleNamespace

from synthrisk.study.workflow import logged

parser = argparse.ArgumentParser()
for option in ("generator", "world", "settings", "real", "schema", "output", "log"):
    parser.add_argument(f"--{option}", required=True)
parser.add_argument("--epsilon", type=float, required=True)
parser.add_argument("--block", type=int, required=True)
args = parser.parse_args()

with logged(SimpleNamespace(log=[args.log], threads=1)):
    from synthrisk.epsilon_audit import stage

    stage.block_job(args.real, args.schema, json.loads(args.settings), args.generator, args.epsilon, args.world,
                    args.block, args.output)
