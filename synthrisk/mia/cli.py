"""`synthrisk mia`: membership-inference attacks on one synthetic file."""

from __future__ import annotations

from ..arguments import SEED, integer, number, number_list, number_or_choice, table_path
from .settings import MEMBER_SHARE_RULES, MiaSettings


def add_command(sub) -> None:
    p = sub.add_parser("mia", help="membership inference (KDE attacks and the threshold baseline)")
    p.add_argument("--members", required=True, help="records the generator was trained on")
    # --non-members: the name of releases up to 0.1.0, still read
    p.add_argument("--holdout", "--non-members", dest="holdout", required=True,
                   help="records of the same population it never saw")
    p.add_argument("--synthetic", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--aux", help="attacker's auxiliary non-member records (enables the realistic attack and "
                   "Method 1's label-free threshold)")
    p.add_argument("--aux-member-fraction", type=number(0, 1), default=MiaSettings.aux_member_fraction,
                   help="share of the realistic attack's aux set made of members not scored "
                        f"(default {MiaSettings.aux_member_fraction})")
    p.add_argument("--member-share", type=number_or_choice(MEMBER_SHARE_RULES, 0, 1),
                   help="attack set's member share: a number in (0, 1), 'sampling_fraction' "
                   "(El Emam et al.: members / --population-size) or 'all' (no subsampling; the default "
                   "without --population-size)")
    p.add_argument("--population-size", type=integer(2),
                   help="rows of the population the members were drawn from (sets the sampling fraction)")
    p.add_argument("--min-attack-members", type=integer(2), default=MiaSettings.min_attack_members,
                   help="fewest members scored even when the share asks for fewer "
                        f"(default {MiaSettings.min_attack_members})")
    p.add_argument("--thresholds", type=number_list(0, 1), help="comma-separated τ grid in [0, 1]")
    p.add_argument("--prior", type=number(0, 1, low_open=True, high_open=True),
                   help="P(member) in the posterior, in (0, 1) (default: the attack set's member share)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--records", type=table_path, help="write the per-record table here (.csv or .parquet)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> dict:
    from ..data import load_schema
    from ..io import read_table, write_table
    from ..outputs import check_output_file, record_written
    from .attacks import DEFAULT_THRESHOLDS, membership_attack

    if args.records:  # refused before any work: not an input, and absent or synthrisk's own
        check_output_file(args.records, {"--members": args.members, "--holdout": args.holdout,
                                         "--synthetic": args.synthetic, "--schema": args.schema, "--aux": args.aux},
                          option="--records")
    thresholds = args.thresholds or DEFAULT_THRESHOLDS
    share = args.member_share
    result = membership_attack(
        read_table(args.members), read_table(args.synthetic), read_table(args.holdout),
        schema=load_schema(args.schema), aux=read_table(args.aux) if args.aux else None,
        aux_member_fraction=args.aux_member_fraction, thresholds=thresholds, prior=args.prior,
        seed=args.seed, realistic=args.aux is not None, member_share=share,
        population_size=args.population_size, min_attack_members=args.min_attack_members,
    )
    if args.records:
        write_table(result.records, args.records)
        record_written(args.records, command="mia")
    return result.to_json()
