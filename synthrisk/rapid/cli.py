"""`synthrisk rapid`: RAPID of one synthetic file against the real records."""

from __future__ import annotations

from ..arguments import SEED, integer, number, table_path
from .attackers import ATTACKERS
from .core import DEFAULT_NULL_REFITS
from .scores import CATEGORICAL_METHODS, CONTINUOUS_ERRORS


def add_command(sub) -> None:
    p = sub.add_parser("rapid", help="attribute-inference risk (RAPID) of synthetic data")
    p.add_argument("--real", required=True, help="real records to attack (CSV/Parquet; the members)")
    p.add_argument("--synthetic", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--sensitive", help="sensitive column (default: the schema's first)")
    p.add_argument("--attacker", default="rf", choices=ATTACKERS)
    p.add_argument("--tau", type=number(0, 1), default=0.3, help="categorical threshold in [0, 1] (default 0.3)")
    p.add_argument("--epsilon", type=number(0, low_open=True), default=0.1,
                   help="continuous tolerance > 0 (default 0.1)")
    p.add_argument("--method", default="rcs_marginal", choices=CATEGORICAL_METHODS)
    p.add_argument("--error", default="relative", choices=CONTINUOUS_ERRORS)
    p.add_argument("--n-trees", type=integer(1), default=500, help="trees of the forest (at least 1)")
    p.add_argument("--permutations", type=integer(0), default=199,
                   help="permutations of the chance test (0: no test)")
    p.add_argument("--null-refits", type=integer(0), default=DEFAULT_NULL_REFITS,
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
    from .core import rapid

    schema = load_schema(args.schema)
    result = rapid(
        read_table(args.real), read_table(args.synthetic), schema, args.sensitive or schema.sensitive[0],
        attacker=args.attacker, tau=args.tau, epsilon=args.epsilon, method=args.method, error=args.error,
        n_trees=args.n_trees, n_permutations=args.permutations, seed=args.seed, null_refits=args.null_refits,
    )
    if args.records:
        write_table(result.records, args.records)
    return result.to_json()
