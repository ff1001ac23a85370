"""The verdicts' false-positive rate and power, measured (issue #26): simulated releases audited
as a steward audits one (`synthrisk.study.calibration`).

    PYTHONPATH=. .venv/bin/python benchmarks/verdict_calibration.py --dataset adult --n 1000 --splits 50 --seed 7

Nulls (a release that never saw the members): fresh population records, `cart` fitted on other
records, the holdout itself. Positive controls: population records with a share of member copies,
and the `leaky` generator. Writes `calibration_runs_<dataset>_<n>[_seed<k>].csv.gz` (one row per split x
release x verdict; `--summarise` pools every such file of the dataset, and the counts of
`recorded_calibration_<dataset>.csv`, earlier studies whose runs files were not kept),
`calibration_<dataset>.csv` (rates with Clopper-Pearson intervals), `calibration_<dataset>.md` (the
docs' table) and `calibration_power_<dataset>.csv` (the smallest member-copy share detected with 80%
power) into `--out` (benchmarks/calibration by default), and prints the risk verdicts' table. A study
(without --summarise) tabulates its own splits, in the same files named for it
(`calibration_<dataset>_<n>[_seed<k>].csv`, ...).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from synthrisk.study.calibration import (
    NULLS,
    POSITIVES,
    REFUSED,
    RISK_MEASURES,
    RISK_VERDICT,
    check_recorded,
    rates,
    recorded_seeds,
    smallest_detected,
    study,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["adult", "simulation"], default="adult")
    parser.add_argument("--n", type=int, nargs="+", default=[1000], help="members (= holdout = release size)")
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--releases", nargs="+",
                        default=[*NULLS, *POSITIVES])
    parser.add_argument("--measures", nargs="+", default=list(RISK_MEASURES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/calibration",
                        help="where runs files and tables go (default: benchmarks/calibration, tracked: the runs "
                             "are evidence and a later study pools with them)")
    parser.add_argument("--publish", action="store_true",
                        help="also write the risk verdicts' power and false-positive rates to "
                             "synthrisk/reference/calibration_power.csv, which the audit quotes")
    parser.add_argument("--summarise", action="store_true",
                        help="only tabulate the calibration_runs_*.csv already in --out (e.g. of a stopped study)")
    parser.add_argument("--recheck", metavar="RUNS_FILE",
                        help="re-audit, with the current code, the releases of an earlier runs file whose risk "
                             "verdict fired (for the risks of --measures and the releases of --releases), and "
                             "write recheck_<file>[_<releases>].csv beside it; --summarise then takes their "
                             "at-risk calls from it")
    args = parser.parse_args(argv)
    if args.recheck:
        return recheck(Path(args.recheck), tuple(args.measures), tuple(args.releases))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = []
    if args.summarise:
        import pandas as pd

        frames = [_read_runs(path) for path in _runs_files(out, args.dataset)]
        frames = _with_rechecks(frames, out, args.dataset)
    recorded = _recorded(out, args.dataset)
    runs_files = {n: out / f"calibration_runs_{args.dataset}_{n}{f'_seed{args.seed}' if args.seed else ''}.csv.gz"
                  for n in ([] if args.summarise else args.n)}
    for n, runs_file in runs_files.items():
        for existing in (runs_file, runs_file.with_suffix("")):
            if existing.exists():  # an earlier study's splits, hours of work: refused before any work
                raise SystemExit(f"{existing}: already holds the splits of this dataset, n and seed; pool more "
                                 f"splits with another --seed, tabulate them with --summarise, or move the file "
                                 f"away")
        _refuse_recorded_seed(recorded, n, args.seed, f"--seed {args.seed}")
    for runs in frames:
        for n, seed in set(zip(runs["n"], runs["seed"])):
            _refuse_recorded_seed(recorded, n, seed, "a runs file")
    # Another --seed draws other splits: its rows go to a file of their own, and --summarise pools
    # every file of the dataset (more splits for a cell whose interval is too wide).
    for n, runs_file in runs_files.items():
        start = time.time()

        def progress(done, total, so_far, n=n, start=start, runs_file=runs_file):
            # the splits so far, kept as they finish: a stopped study still has its rows
            _write_runs(so_far.assign(seed=args.seed), runs_file)
            print(f"n={n}: {done}/{total} splits, {time.time() - start:.0f} s", file=sys.stderr, flush=True)

        runs = study(args.dataset, n, args.splits, args.releases, seed=args.seed, measures=tuple(args.measures),
                     progress=progress).assign(seed=args.seed)
        _write_runs(runs, runs_file)
        frames.append(runs)
    import pandas as pd

    if not frames and recorded is None:
        raise SystemExit(f"{out}: no calibration_runs_{args.dataset}_*.csv(.gz) and no recorded counts to tabulate")
    keys = ["dataset", "n", "seed", "split", "release", "risk", "attack"]
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*keys, "verdict", "material"])
    if runs.duplicated(keys).any():  # the same splits in two files would be counted twice
        raise SystemExit(f"{out}: some splits are in more than one runs file (same {keys}); remove the copies")
    refused = runs[runs["release"] == REFUSED]
    if len(refused):  # the audit refused these splits' files: no verdict, not counted
        print(f"{len(refused)} split(s) refused by the audit's record checks, not counted: "
              f"{refused['attack'].iloc[0][:200]}", file=sys.stderr)
    # a study tabulates its own splits; --summarise pools every runs file and the recorded counts
    if args.summarise and recorded is not None:
        print(f"pooled with the recorded counts of {_recorded_path(out, args.dataset)}", file=sys.stderr)
    table = rates(runs, recorded=recorded if args.summarise else None)
    # The pooled tables are --summarise's; a study's own are named for it, so that a study run in the
    # folder of the pooled tables (the default --out) does not replace them with its splits alone.
    suffix = "" if args.summarise else "_" + "+".join(map(str, args.n)) + (f"_seed{args.seed}" if args.seed else "")
    table.to_csv(out / f"calibration_{args.dataset}{suffix}.csv", index=False)
    smallest_detected(table).to_csv(out / f"calibration_power_{args.dataset}{suffix}.csv", index=False)
    if args.publish:
        publish(table)
    verdicts = table[table["attack"] == RISK_VERDICT]
    print(verdicts[["n", "release", "risk", "splits", "rate", "rate_low", "rate_high", "rate_at_risk"]]
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    (out / f"calibration_{args.dataset}{suffix}.md").write_text(markdown(verdicts))
    return 0


RELEASE_NAMES = {"population": "fresh population records (null)", "cart": "`cart` fitted on other records (null)",
                 "holdout": "the holdout itself (null)", "leaky": "`leaky`"}


def markdown(verdicts) -> str:
    """The docs' tables (docs/methods/calibration*.md): per n, release x risk, splits in which the verdict
    fired (with the Clopper-Pearson upper bound for a null) and splits called at risk."""
    from synthrisk.measures import RISKS

    lines = []
    for n, part in verdicts.groupby("n"):
        risks = [r for r in RISKS if r in set(part["risk"])]
        lines += [f"n = {n:,}", "", "| release | " + " | ".join(r.replace("_", " ") for r in risks) + " |",
                  "|---|" + "---|" * len(risks)]
        order = [*NULLS, *sorted(k for k in set(part["release"]) if k.startswith("copies_")), "leaky"]
        for release in [k for k in order if k in set(part["release"])]:
            cells = []
            for risk in risks:
                match = part[(part["release"] == release) & (part["risk"] == risk)]
                if match.empty:  # pooled studies that did not all run this release for this risk
                    cells.append("–")
                    continue
                row = match.iloc[0]
                fired = f"{round(row['rate'] * row['splits'])} / {row['splits']}"
                bound = f" (≤ {100 * row['rate_high']:.1f} %)" if release in NULLS else ""
                # no at-risk call of the current interval (recorded counts of an older one): –; some
                # (pooled with such counts): the count of the splits that have one, out of how many
                with_call = int(row["at_risk_splits"])
                at_risk = "–" if not with_call else round(row["rate_at_risk"] * with_call)
                if with_call and with_call != row["splits"]:
                    at_risk = f"{at_risk} of {with_call}"
                cells.append(f"{fired}{bound}; at risk {at_risk}")
            name = RELEASE_NAMES.get(release) or f"{100 * float(release.split('_')[1]):g} % member copies"
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _write_runs(runs, path: Path) -> None:
    """A runs file, replaced whole: a study stopped while writing leaves the previous file readable
    (a half-written gzip is not), and mtime 0 keeps a rewrite of the same rows byte for byte the same."""
    partial = path.with_name(path.name + ".partial")
    runs.to_csv(partial, index=False, compression={"method": "gzip", "mtime": 0})
    os.replace(partial, path)


def _runs_files(out: Path, dataset: str) -> list[Path]:
    """The dataset's runs files in `out` (written gzipped; a plain .csv is read too)."""
    return sorted([*out.glob(f"calibration_runs_{dataset}_*.csv"), *out.glob(f"calibration_runs_{dataset}_*.csv.gz")])


def _base(path: Path) -> str:
    """A runs file's name without .csv or .csv.gz."""
    return path.name.removesuffix(".gz").removesuffix(".csv")


def _read_runs(path):
    """One runs file; a file without a seed column is seed 0's (written before the column existed)."""
    import pandas as pd

    runs = pd.read_csv(path)
    if "seed" not in runs.columns:
        if "_seed" in path.name:
            raise SystemExit(f"{path}: no seed column in a file named for a seed")
        runs["seed"] = 0
    return runs


def _recorded_path(out: Path, dataset: str) -> Path:
    return out / f"recorded_calibration_{dataset}.csv"


def _recorded(out: Path, dataset: str):
    """`recorded_calibration_<dataset>.csv` in `out`: per cell, the risk verdict's counts of earlier
    studies whose runs files were not kept, with the seeds those studies drew their splits from (a
    study with one of them would count the same splits twice), or None."""
    import pandas as pd

    path = _recorded_path(out, dataset)
    if not path.exists():
        return None
    recorded = pd.read_csv(path, dtype={"seeds": str})
    try:
        check_recorded(recorded)
    except ValueError as error:
        raise SystemExit(f"{path}: {error}") from None
    if set(recorded["dataset"]) != {dataset}:
        raise SystemExit(f"{path}: rows of another dataset than {dataset}")
    return recorded


def _refuse_recorded_seed(recorded, n, seed, what: str) -> None:
    if recorded is None:
        return
    used = recorded_seeds(recorded, n)
    if int(seed) in used:
        raise SystemExit(f"{what}: seed {seed} at n = {n} drew splits that recorded_calibration_*.csv already "
                         f"counts (seeds {sorted(used)}); use another --seed, or another --out to reproduce "
                         f"that study")


RECHECK_KEYS = ["dataset", "n", "seed", "split", "release", "risk"]


def recheck(runs_file: Path, measures: tuple[str, ...], releases: tuple[str, ...]) -> int:
    """Re-audit the fired risk verdicts of one runs file with the current code. Whether a verdict
    fires does not depend on the effect's interval, but whether it is *at risk* does (its lower
    bound): a study run before an interval changed keeps its firing counts, and this gives its
    at-risk calls as the current code makes them. Only fired verdicts can be *at risk*, so they are
    all that needs re-auditing. The study's release kinds, in their order, are read from the file
    (they decide which records each release takes), and its measures from its risks."""
    from synthrisk.release_audit.run import audit_measures

    runs = _read_runs(runs_file)
    runs = runs[runs["release"] != REFUSED]
    verdicts = runs[runs["attack"] == RISK_VERDICT]
    (dataset,), (n,), (seed,) = (verdicts[c].unique() for c in ("dataset", "n", "seed"))
    kinds = list(dict.fromkeys(verdicts["release"]))
    # a re-check of some of the study's releases is named for them (another may re-check the rest)
    part = "" if set(kinds) <= set(releases) else "_" + "+".join(k for k in kinds if k in releases)
    target = runs_file.parent / f"recheck_{_base(runs_file)}{part}.csv"
    if target.exists():
        raise SystemExit(f"{target}: already holds this re-check of {runs_file.name}; move it away to re-check again")
    registered = {name: m for name, (m, _) in audit_measures().items()}
    wanted_risks = {m.risk for name, m in registered.items() if name in measures}
    risks = [r for r in dict.fromkeys(verdicts["risk"]) if r in wanted_risks]
    study_measures = tuple(name for name, m in registered.items()
                           if name in RISK_MEASURES and m.risk in set(verdicts["risk"]))
    fired = verdicts[(verdicts["verdict"] == 1) & verdicts["risk"].isin(risks) & verdicts["release"].isin(releases)]
    only: dict[int, set[str]] = {}
    for split, release in zip(fired["split"], fired["release"]):
        only.setdefault(int(split), set()).add(release)
    start = time.time()

    def progress(done, total, so_far):
        print(f"{runs_file.name}: {done}/{total} splits re-checked, {time.time() - start:.0f} s", file=sys.stderr,
              flush=True)

    now = study(dataset, int(n), 0, kinds, seed=int(seed), measures=study_measures, progress=progress, only=only)
    now = now[(now["attack"] == RISK_VERDICT) & now["risk"].isin(risks)].assign(seed=seed)
    merged = fired[RECHECK_KEYS + ["verdict", "material"]].merge(
        now[RECHECK_KEYS + ["verdict", "material"]], on=RECHECK_KEYS, suffixes=("_before", ""), how="left")
    merged.to_csv(target, index=False)
    changed = merged[merged["material"] != merged["material_before"]]
    lost = merged[merged["verdict"] != merged["verdict_before"]]
    print(f"{len(merged)} fired verdicts re-checked: {len(lost)} no longer fire, {len(changed)} change their "
          f"at-risk call; {target}", file=sys.stderr)
    if len(changed):
        print(changed.to_string(index=False), file=sys.stderr)
    return 0


def _with_rechecks(frames, out: Path, dataset: str):
    """The runs with the at-risk calls of their re-checks (`--recheck`) in place of the old ones. A
    re-check whose verdict no longer fires means the code no longer reproduces the study: refused."""
    import pandas as pd

    paths = sorted(out.glob(f"recheck_calibration_runs_{dataset}_*.csv"))
    if not paths:
        return frames
    checked = pd.concat([pd.read_csv(path).assign(file=path.name) for path in paths], ignore_index=True)
    twice = checked[checked.duplicated(RECHECK_KEYS, keep=False)]
    if len(twice):  # two re-checks of one verdict: which one counts would be arbitrary
        raise SystemExit(f"{out}: {', '.join(sorted(set(twice['file'])))} re-check the same verdicts; remove one")
    lost = checked[checked["verdict"] != checked["verdict_before"]]
    if len(lost):
        raise SystemExit(f"{out / lost['file'].iloc[0]}: {len(lost)} verdicts no longer fire with the current code, "
                         f"e.g. {lost.iloc[0][RECHECK_KEYS].to_dict()}; the study must be run again")
    material = checked.set_index(RECHECK_KEYS)["material"]
    updated = []
    for runs in frames:
        keys = pd.MultiIndex.from_frame(runs[RECHECK_KEYS])
        rows = (runs["attack"] == RISK_VERDICT).to_numpy() & keys.isin(material.index)
        runs = runs.copy()
        runs.loc[rows, "material"] = material.reindex(keys[rows]).to_numpy()
        updated.append(runs)
    print(f"at-risk calls of {', '.join(path.name for path in paths)} applied", file=sys.stderr)
    return updated


def publish(table) -> None:
    """The study's risk verdicts into the package's published table, replacing its rows of the same
    dataset and n (other sizes' rows are kept)."""
    import subprocess

    import pandas as pd

    from synthrisk.measures.calibrated_power import PUBLISHED
    from synthrisk.study.calibration import publish_table

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout.strip() or "unknown"
    new = publish_table(table, commit)
    path = Path(__file__).resolve().parents[1] / "synthrisk" / PUBLISHED
    if path.exists():
        old = pd.read_csv(path)
        keys = set(zip(new["dataset"], new["n"]))
        new = pd.concat([old[[k not in keys for k in zip(old["dataset"], old["n"])]], new], ignore_index=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    new.sort_values(["dataset", "n", "risk", "share"]).to_csv(path, index=False)
    print(f"published: {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
