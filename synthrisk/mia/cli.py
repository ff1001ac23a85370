"""`synthrisk mia`: membership-inference attacks on one synthetic file."""

from __future__ import annotations


def add_command(sub) -> None:
    p = sub.add_parser("mia", help="membership inference (KDE attacks and the threshold baseline)")
    p.add_argument("--members", required=True, help="records the generator was trained on")
    p.add_argument("--non-members", required=True, help="records of the same population it never saw")
    p.add_argument("--synthetic", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--aux", help="attacker's auxiliary non-member records (enables the realistic attack and "
                   "Method 1's label-free threshold)")
    p.add_argument("--aux-member-fraction", type=float, default=0.5,
                   help="share of the realistic attack's aux set made of members not scored (default 0.5)")
    p.add_argument("--member-share", help="attack set's member share: a number in (0, 1), 'sampling_fraction' "
                   "(El Emam et al.: members / --population-size) or 'all' (no subsampling; the default "
                   "without --population-size)")
    p.add_argument("--population-size", type=int,
                   help="rows of the population the members were drawn from (sets the sampling fraction)")
    p.add_argument("--min-attack-members", type=int, default=20,
                   help="fewest members scored even when the share asks for fewer (default 20)")
    p.add_argument("--thresholds", help="comma-separated τ grid in [0, 1]")
    p.add_argument("--prior", type=float, help="P(member) in the posterior (default: the attack set's member share)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--records", help="write the per-record table here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> dict:
    from ..data import load_schema
    from ..errors import ConfigError
    from ..io import read_table, write_table
    from .attacks import DEFAULT_THRESHOLDS, membership_attack

    try:
        thresholds = [float(t) for t in args.thresholds.split(",")] if args.thresholds else DEFAULT_THRESHOLDS
    except ValueError:
        raise ConfigError(f"--thresholds: expected comma-separated numbers, got {args.thresholds!r}") from None
    share = args.member_share
    if share is not None and share not in ("sampling_fraction", "all"):
        try:
            share = float(share)
        except ValueError:
            raise ConfigError(f"--member-share: expected a number, 'sampling_fraction' or 'all', "
                              f"got {share!r}") from None
    result = membership_attack(
        read_table(args.members), read_table(args.non_members), read_table(args.synthetic),
        load_schema(args.schema), aux=read_table(args.aux) if args.aux else None,
        aux_member_fraction=args.aux_member_fraction, thresholds=thresholds, prior=args.prior,
        seed=args.seed, realistic=args.aux is not None, member_share=share,
        population_size=args.population_size, min_attack_members=args.min_attack_members,
    )
    if args.records:
        write_table(result.records, args.records)
    return result.to_json()
