"""`synthrisk dp`: release noisy sufficient statistics of one table and analyse them."""

from __future__ import annotations

from ..arguments import SEED, integer, number


def add_command(sub) -> None:
    p = sub.add_parser("dp", help="noise-calibrated inference from DP sufficient statistics")
    p.add_argument("--data", required=True, help="CSV or Parquet table")
    p.add_argument("--family", required=True, choices=["gaussian", "logistic", "poisson"])
    p.add_argument("--epsilon", required=True, type=number(0, low_open=True), help="privacy budget > 0")
    p.add_argument("--delta", required=True, type=number(0, 1, low_open=True, high_open=True), help="in (0, 1)")
    p.add_argument("--clip", required=True, type=number(0, low_open=True),
                   help="l2 bound B > 0 on each record's statistic")
    p.add_argument("--response", help="column modelled (default: the only column for gaussian)")
    p.add_argument("--covariates", help="comma-separated categorical covariates (regressions; default: all "
                                        "other columns)")
    p.add_argument("--schema", help="dataset schema whose 'levels' give the public domain of the response and "
                                    "covariates (required for categorical columns unless --domain from_data)")
    p.add_argument("--domain", choices=["public", "from_data"], default="public",
                   help="from_data: read levels from the data; the result is then NOT DP and marked so")
    p.add_argument("--bootstrap", type=integer(20), default=200,
                   help="parametric-bootstrap draws (at least 20)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the analysis (bootstrap, naive synthetic data)")
    p.add_argument("--noise-seed", type=integer(0), default=None,
                   help="draw the release's noise from this seed (with --seed) instead of the operating system's "
                        "entropy: reproducible, and then NOT private (the JSON says so)")
    p.add_argument("--reference", action="store_true",
                   help="also print the non-private MLE and interval (NOT private: for checking only)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> dict:
    from ..data.schema import load_schema
    from ..errors import ConfigError
    from ..io import read_table
    from .frames import dp_inference

    frame = read_table(args.data)
    response = args.response
    if response is None:
        if args.family != "gaussian" or frame.shape[1] != 1:
            raise ConfigError("--response is required unless the data has one column and the family is gaussian")
        response = frame.columns[0]
    covariates = [c.strip() for c in args.covariates.split(",")] if args.covariates else None
    levels = load_schema(args.schema).levels if args.schema else None
    result, reference = dp_inference(frame, args.family, response, args.epsilon, args.delta, args.clip,
                                     covariates=covariates, levels=levels, seed=args.seed,
                                     bootstrap_draws=args.bootstrap, domain=args.domain, noise_seed=args.noise_seed)
    out = result.to_json()
    if args.reference:
        out["nonprivate_reference"] = reference
    return out
