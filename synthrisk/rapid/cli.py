"""`synthrisk rapid`: RAPID of one synthetic file against the real records."""

from __future__ import annotations

from ..arguments import SEED, integer, number, table_path
from .attackers import ATTACKERS
from .scores import CATEGORICAL_METHODS, CONTINUOUS_ERRORS
from .settings import RapidSettings


def add_command(sub) -> None:
    p = sub.add_parser("rapid", help="attribute-inference risk (RAPID) of synthetic data")
    p.add_argument("--real", required=True, help="real records to attack (CSV/Parquet; the members)")
    p.add_argument("--synthetic", required=True)
    p.add_argument("--holdout", help="records of the same population the generator never saw (CSV/Parquet): the "
                                     "same attacker scores them, giving RAPID on non-members and the member excess")
    p.add_argument("--schema", required=True)
    p.add_argument("--sensitive", help="sensitive column (default: the schema's first)")
    p.add_argument("--attacker", default="rf", choices=ATTACKERS)
    p.add_argument("--tau", type=number(0, 1), default=RapidSettings.tau,
                   help=f"categorical threshold in [0, 1] (default {RapidSettings.tau})")
    p.add_argument("--epsilon", type=number(0, low_open=True), default=RapidSettings.epsilon,
                   help=f"continuous tolerance > 0 (default {RapidSettings.epsilon})")
    p.add_argument("--method", default=RapidSettings.method, choices=CATEGORICAL_METHODS)
    p.add_argument("--error", default=RapidSettings.error, choices=CONTINUOUS_ERRORS)
    p.add_argument("--n-trees", type=integer(1), default=RapidSettings.n_trees,
                   help=f"trees of the forest (default {RapidSettings.n_trees})")
    p.add_argument("--permutations", type=integer(0), default=RapidSettings.permutations,
                   help="permutations of the chance test (0: no test)")
    p.add_argument("--null-refits", type=integer(0), default=RapidSettings.null_refits,
                   help="refits on synthetic data with the sensitive column permuted, for an attacker that "
                        "passes the label-permutation test (0: that test alone)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--records", type=table_path,
                   help="write the per-record table (row_id, score, at_risk) here (.csv or .parquet)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> dict:
    from ..data import load_schema
    from ..io import read_table, write_table
    from ..outputs import check_output_file, record_written
    from .core import rapid

    if args.records:  # refused before any work: not an input, and absent or synthrisk's own
        check_output_file(args.records, {"--real": args.real, "--synthetic": args.synthetic, "--schema": args.schema,
                                         "--holdout": args.holdout}, option="--records")
    schema = load_schema(args.schema)
    result = rapid(
        read_table(args.real), read_table(args.synthetic), schema=schema,
        sensitive=args.sensitive or schema.sensitive[0], attacker=args.attacker, tau=args.tau, epsilon=args.epsilon,
        method=args.method, error=args.error, n_trees=args.n_trees, n_permutations=args.permutations, seed=args.seed,
        null_refits=args.null_refits, holdout=read_table(args.holdout) if args.holdout else None,
    )
    if args.records:
        write_table(result.records, args.records)
        record_written(args.records, command="rapid")
    return result.to_json()
