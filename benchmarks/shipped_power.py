"""The audit's power at its own settings against the calibration study's (issue #26): the study
attacks 300 records per anonymeter-style measure (`synthrisk.study.calibration.STUDY_SETTINGS`), the
audit every record up to 2,000, so the power the audit pages quote is that of fewer attacks than
a steward's audit makes. This re-audits releases of the study's own splits (`--study-seed`, drawn
with the study's release kinds in its order, so each split's members, holdout and copies are the
study's) with the audit's settings, and prints per release and risk the share of splits whose
verdict fired and was called *at risk*, beside the study's share on the same splits when its runs
file is given. Singling out, linkability and the control-set inference attack take the audit's
settings; RAPID keeps the study's (its attackers are the same, and they share attribute
inference's Holm family with the inference attack, so the family is the study's).

    PYTHONPATH=. .venv/bin/python benchmarks/shipped_power.py --dataset adult --n 1000 --splits 100 \\
        --study-seed 5 --releases copies_0.1 copies_0.2 \\
        --runs benchmarks/calibration/calibration_runs_adult_1000_seed5.csv.gz

It writes nothing: the calibration tables (`benchmarks/verdict_calibration.py`) pool only runs of
the study's settings.

Measured (2026-12-06, at 2038828, from a clean clone; Adult, 1,000 members, the 200 splits of the
positive controls' `--study-seed 5`, run as `--first 0` and `--first 100` with `--splits 100`), the
share of splits whose verdict fired, the audit's settings against the study's on the same splits:

| release | attribute inference | singling out | linkability |
|---|---|---|---|
| 5 % member copies | 9.0 % (6.0 %) | 14.0 % (8.5 %) | 95.0 % (29.0 %) |
| 10 % member copies | 22.0 % (14.5 %) | 43.0 % (17.5 %) | 100 % (76.5 %) |
| 20 % member copies | 66.5 % (42.5 %) | 89.0 % (49.5 %) | 100 % (99.0 %) |
| `leaky` | 40.0 % (31.0 %) | 99.5 % (97.0 %) | 100 % (89.5 %) |

At 20 % copies the audit's settings call attribute inference *at risk* in 39 of 200 splits and
singling out in 30 (the study's: 12 and 4). On 200 fresh-population nulls (`--study-seed 6 --kinds
population --releases population --splits 200`) they fire on 5.5 %, 3.0 % and 0.5 %, none *at
risk*: the level holds at the audit's settings too (the tests are exact at any attack count).
"""

from __future__ import annotations

import argparse
import sys

MEASURES = ("rapid", "singling_out", "linkability", "inference")


def main(argv=None) -> int:
    from synthrisk.study.calibration import POSITIVES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["adult", "simulation"], default="adult")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--splits", type=int, default=100, help="the study's first splits to re-audit")
    parser.add_argument("--first", type=int, default=0, help="the first split (to share the splits between processes)")
    parser.add_argument("--study-seed", type=int, required=True)
    parser.add_argument("--kinds", nargs="+", default=list(POSITIVES),
                        help="the study's release kinds, in its order (default: its positive controls')")
    parser.add_argument("--releases", nargs="+", default=["copies_0.1", "copies_0.2"],
                        help="which of them to re-audit")
    parser.add_argument("--runs", help="the study's runs file, for its verdicts on the same splits")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.releases) - set(args.kinds))
    if unknown:
        parser.error(f"--releases {unknown} are not among --kinds")

    import pandas as pd

    from synthrisk.study.calibration import RISK_VERDICT, STUDY_SETTINGS, study

    splits = range(args.first, args.first + args.splits)
    runs = study(args.dataset, args.n, 0, args.kinds, seed=args.study_seed, measures=MEASURES,
                 only={split: set(args.releases) for split in splits},
                 settings={"rapid": STUDY_SETTINGS["rapid"]},
                 progress=lambda done, total, _: print(f"{done}/{total} splits", file=sys.stderr, flush=True))
    verdicts = runs[runs["attack"] == RISK_VERDICT]
    table = verdicts.groupby(["release", "risk"]).agg(splits=("verdict", "size"), fired=("verdict", "mean"),
                                                      at_risk=("material", "mean"))
    if args.runs:
        study_runs = pd.read_csv(args.runs)
        same = study_runs[(study_runs["attack"] == RISK_VERDICT) & study_runs["split"].isin(verdicts["split"])
                          & study_runs["release"].isin(args.releases) & study_runs["risk"].isin(verdicts["risk"])]
        table = table.join(same.groupby(["release", "risk"]).agg(study_fired=("verdict", "mean"),
                                                                 study_at_risk=("material", "mean")))
    print(table.to_markdown(floatfmt=".3f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
