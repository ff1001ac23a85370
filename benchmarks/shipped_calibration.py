"""The audit calibrated exactly as it ships (issue #42, item 3): `synthrisk.audit(train, synthetic,
holdout, schema=...)` with its defaults, as a steward runs it, on releases whose truth is known.

Pre-registered. Every cell (dataset, members, release kinds, number of splits, seed) is fixed in
`benchmarks/calibration/shipped/plan.yaml` before it runs; this script runs a cell's splits and
never more than the plan says, and a cell is never extended after looking (a plan whose cell
changed after its runs began is refused: each runs row carries the cell's fingerprint; two cells
of one dataset may not share a seed, which would replay the same splits). Each split is added to
its worker's runs file (`runs/{cell}.w{K}.csv.gz`, rewritten whole into a temporary file and renamed
over the old one, so a killed worker leaves the file as it was before that split) as soon as it
finishes, so a study is resumable (a rerun skips the splits its files hold) and can be pooled over
workers and sessions. Each row names the commit that ran it; the summary lists them per cell.
`--summarise` regenerates every table from the runs files alone.

Per split, members and holdout (n each) and the records of each release are disjoint draws of one
population (`synthrisk.study.calibration.Population`: Adult without replacement, or the simulator), and
the releases are `synthrisk.study.calibration.releases`:
- nulls, releases that never saw the members: `second_holdout` (a second holdout drawn
  independently of the reference holdout, released as it is: fresh records of the population) and
  `cart` (the `cart` generator fitted on other records);
- positive controls: `copies_q` (population records of which a share q are replaced by copies of
  random members), `rare_q` (the same with copies of the rarest share q of the members: those
  farthest, in Gower distance, from every other real record) and `leaky` (the `leaky` generator:
  10 % member copies, independent columns).
Per release the runs file holds, per risk, the level, whether an attack beat its reference, the
members named (and how many of them the release does not hold: every one in a null release, those
not copied in `copies_q` and `rare_q`), the effect with its simultaneous interval, and the audit's
answer; the audit's row counts the people named under any risk.

    PYTHONPATH=. .venv/bin/python benchmarks/shipped_calibration.py --cell adult-1000-nulls [--worker 0 --workers 2]
    PYTHONPATH=. .venv/bin/python benchmarks/shipped_calibration.py --summarise

The summary: per cell and release, per risk the share of splits at risk, below the threshold and
inconclusive, and per audit the share with any risk at risk and the share answering yes, each with
a Clopper-Pearson interval. The primary family, fixed by the plan before any run, is the per-audit
"at risk" rate of every null release of every cell (except a cell marked `secondary: true`, planned
after its revision's family was fixed): its intervals are Bonferroni-adjusted over that family's
planned size (`primary_family`), so that all of them hold together at 95 %; every other rate is
secondary, with its own 95 % interval. The audit quotes no secondary cell. Refused splits (the audit's input checks) are
counted per cell, never dropped silently.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
STUDY = HERE / "calibration" / "shipped"
PLAN = STUDY / "plan.yaml"
RUNS = STUDY / "runs"
#: the per-audit rates the audit quotes (package data)
PUBLISHED = HERE.parent / "synthrisk" / "reference" / "shipped_calibration.csv"
NULLS = ("second_holdout", "cart")
RUNS_COLUMNS = ["cell", "fingerprint", "dataset", "n", "split", "release", "risk", "level", "beats", "n_identified",
                "n_false", "effect", "effect_low", "effect_high", "answer", "seconds", "commit", "p_value"]
AUDIT = "(audit)"
#: rows of single attacks (from revision 2 on): "attack: {measure}: {attack}", with the attack's own
#: one-sided p-value and its value minus its reference as `effect`
ATTACK = "attack: "
LEVEL = 0.05  # an attack "fires" on its own when its p-value is at most this (the attacks table)
REFUSED = "(refused by the record checks)"


def revision(cell: dict) -> int:
    """The audit revision a cell calibrates (`synthrisk.measures.calibrated_power.AUDIT_REVISIONS`); the
    cells planned before revisions were named calibrate revision 1."""
    return int(cell.get("audit", 1))


def fingerprint(cell: dict) -> str:
    """What fixes a cell before it runs: its dataset, size, releases, seed, number of splits and (after
    revision 1) the audit revision it calibrates, and whether it is secondary."""
    keys = ("dataset", "n", "releases", "splits", "seed") + (("audit",) if revision(cell) != 1 else ())
    keys += ("secondary",) if cell.get("secondary") else ()  # marking a cell secondary changes the family
    text = json.dumps({k: cell[k] for k in keys}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_plan(path: Path = PLAN) -> dict[str, dict]:
    cells = yaml.safe_load(path.read_text())["cells"]
    seeds: dict[tuple, str] = {}
    for name, cell in cells.items():
        missing = {"dataset", "n", "releases", "splits", "seed"} - set(cell)
        if missing:
            raise SystemExit(f"{path}: cell {name} lacks {sorted(missing)}")
        key = (cell["dataset"], int(cell["seed"]))
        if key in seeds:
            raise SystemExit(f"{path}: cells {seeds[key]} and {name} share dataset {key[0]} and seed {key[1]}: they "
                             "would draw the same splits; give every cell a seed of its own")
        seeds[key] = name
    return cells


def primary_family(cells: dict, audit: int | None = None) -> int:
    """The size of the primary family, fixed by the plan: one per-audit "at risk" rate per null
    release of every cell of one audit revision (each revision is its own study; None: the largest
    revision's family, the widest the plan has), except cells marked `secondary: true` (added to a
    revision's plan after its primary family was fixed: their rates are secondary, at 95 %)."""
    if audit is None:
        return max((primary_family(cells, r) for r in {revision(c) for c in cells.values()}), default=0)
    return sum(1 for cell in cells.values() if revision(cell) == audit and not cell.get("secondary")
               for kind in cell["releases"] if kind in NULLS)


def audit_rows(members, holdout, release, schema, kind: str) -> tuple[list[dict], str]:
    """One row per risk of `synthrisk.audit` with its shipped defaults, and the audit's answer."""
    import synthrisk
    from synthrisk.figures import discarded

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), discarded():
        result = synthrisk.audit(members, release, holdout, schema=schema)
    document = result.to_dict()
    rows, everyone = [], set()
    for entry in document["risks"]:
        policy = entry.get("policy") or {}
        named = {int(person["row_id"]) for person in entry.get("identified") or []}
        everyone |= named
        rows.append({"risk": entry["risk"], "level": entry["level"], "beats": entry.get("beats"),
                     "n_identified": entry.get("n_identified"), "n_false": false_named(named, release, kind),
                     "effect": policy.get("effect"), "effect_low": policy.get("effect_low"),
                     "effect_high": policy.get("effect_high")})
    audit = {"risk": AUDIT, "level": "at risk" if any(r["level"] == "at risk" for r in rows) else "not at risk",
             "n_identified": len(everyone), "n_false": false_named(everyone, release, kind)}
    attacks = [{"risk": f"{ATTACK}{row['measure']}: {row['attack']}", "effect": row["value"] - row["reference"],
                "p_value": row.get("p_value"), "beats": bool(row.get("n_seeds_beating"))}
               for row in document["evidence"]]
    return [*rows, audit, *attacks], result.answer


def false_named(named: set[int], release: pd.DataFrame, kind: str) -> int | None:
    """How many of the `named` members (training-file rows) the release does not hold: every one in a
    null release, those outside the copied members in `copies_q` and `rare_q`; unknown (None) for
    `leaky`."""
    if kind in NULLS:
        return len(named)
    copied = release.attrs.get("copied")
    return None if copied is None else len(named - {int(i) for i in copied})


def run_split(name: str, cell: dict, split: int, commit: str) -> list[dict]:
    from synthrisk.errors import SynthriskError
    from synthrisk.study.calibration import Population, releases

    n = int(cell["n"])
    kinds = list(cell["releases"])
    needed = n * (2 + sum(1 for k in kinds if k in ("second_holdout", "cart"))
                  + any(k.startswith(("copies_", "rare_")) for k in kinds))
    seed = int(np.random.SeedSequence([int(cell["seed"]), split]).generate_state(1)[0])
    population = Population.of(cell["dataset"], needed, seed=seed)
    schema = population.schema
    members, holdout = population.take(n), population.take(n)
    key = {"cell": name, "fingerprint": fingerprint(cell), "dataset": cell["dataset"], "n": n, "split": split,
           "commit": commit}
    rows = []
    for kind, release in releases(members, holdout, population, schema, kinds, seed).items():
        start = time.perf_counter()
        try:
            risks, answer = audit_rows(members, holdout, release, schema, kind)
        except SynthriskError as refusal:
            # The audit refuses some random splits (a holdout repeating records beyond random halves
            # of the pooled records, at p <= 0.001): no verdict; kept as one row saying why.
            rows.append({**key, "release": kind, "risk": REFUSED, "level": str(refusal)[:200]})
            continue
        seconds = round(time.perf_counter() - start, 1)
        rows += [{**key, "release": kind, **risk, "answer": answer, "seconds": seconds} for risk in risks]
    return rows


def read_runs(folder: Path | None = None) -> pd.DataFrame:
    files = sorted((RUNS if folder is None else folder).glob("*.csv.gz"))
    if not files:
        return pd.DataFrame(columns=RUNS_COLUMNS)
    runs = pd.concat([pd.read_csv(f) for f in files], ignore_index=True).reindex(columns=RUNS_COLUMNS)
    # Rows written before the audit row counted the people named and `n_false` was recorded: then only
    # membership named anyone, so the audit's count is the largest of its risks'; in a null release
    # every member named is a false one.
    split = ["cell", "split", "release"]
    largest = runs[runs["risk"] != AUDIT].groupby(split)["n_identified"].max().rename("_largest").reset_index()
    runs = runs.merge(largest, on=split, how="left")
    audit = runs["risk"] == AUDIT
    runs.loc[audit, "n_identified"] = runs.loc[audit, "n_identified"].fillna(runs.loc[audit, "_largest"])
    runs = runs.drop(columns="_largest")
    return runs.assign(n_false=runs["n_false"].fillna(runs["n_identified"].where(runs["release"].isin(NULLS))))


def append(rows: list[dict], path: Path) -> None:
    """`path` with one split's rows added: the whole file rewritten into a temporary file and renamed
    over it, so that a worker killed at any moment leaves the file as it was (the files are small:
    a few thousand rows per cell)."""
    frame = pd.DataFrame(rows, columns=RUNS_COLUMNS)
    if path.exists():
        frame = pd.concat([pd.read_csv(path), frame], ignore_index=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.part")
    with gzip.GzipFile(partial, "wb", mtime=0) as handle:  # no timestamp: the same rows, the same bytes
        handle.write(frame.to_csv(index=False).encode())
    partial.replace(path)


def run_cell(name: str, cells: dict, worker: int, workers: int, commit: str, limit: int | None = None) -> int:
    """Run the cell's splits of this worker that no runs file holds yet; returns how many it ran."""
    from synthrisk.measures.calibrated_power import AUDIT_REVISION

    cell = cells[name]
    if revision(cell) != AUDIT_REVISION:
        raise SystemExit(f"cell {name} calibrates audit revision {revision(cell)}; this commit's audit is revision "
                         f"{AUDIT_REVISION}: run it from a checkout of its own revision (its runs name their commits)")
    done = read_runs()
    mine = done[done["cell"] == name]
    stale = set(mine["fingerprint"]) - {fingerprint(cell)}
    if stale:
        raise SystemExit(f"cell {name}: its runs were made under another plan ({sorted(stale)}); a pre-registered "
                         "cell is never changed after it began: add a new cell instead")
    finished = set(mine["split"].astype(int))
    todo = [s for s in range(int(cell["splits"])) if s % workers == worker and s not in finished]
    path = RUNS / f"{name}.w{worker}.csv.gz"
    ran = 0
    for split in todo[:limit]:
        start = time.perf_counter()
        append(run_split(name, cell, split, commit), path)
        ran += 1
        print(f"{name} split {split}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return ran


def clopper_pearson(k: int, m: int, confidence: float) -> tuple[float, float]:
    from synthrisk.stats.proportions import clopper_pearson as interval

    return interval(k, m, confidence) if m else (float("nan"), float("nan"))


def summarise(runs: pd.DataFrame, cells: dict) -> pd.DataFrame:
    """Per cell, release and risk (and the audit): splits, at risk / below / inconclusive counts and
    rates, the audit's yes answers, with Clopper-Pearson intervals: the primary family's (null
    releases' per-audit at-risk rates) Bonferroni-adjusted over its planned size, the rest at 95 %."""
    repeated = runs.duplicated(["cell", "split", "release", "risk"])
    if repeated.any():
        first = runs[repeated].iloc[0]
        raise SystemExit(f"runs: cell {first['cell']} split {first['split']} release {first['release']} is in the runs "
                         "files twice (overlapping workers?); remove the repeat")
    refused = runs[runs["risk"] == REFUSED].groupby("cell")["split"].nunique()
    commits = runs.groupby("cell")["commit"].agg(lambda c: " ".join(sorted(set(map(str, c)))))
    runs = runs[(runs["risk"] != REFUSED) & ~runs["risk"].astype(str).str.startswith(ATTACK)]
    groups = []
    for (cell, release, risk), part in runs.groupby(["cell", "release", "risk"], sort=True):
        splits = part["split"].nunique()
        row = {"cell": cell, "audit": revision(cells.get(cell, {})), "dataset": part["dataset"].iloc[0], "n": int(part["n"].iloc[0]), "release": release,
               "kind": "null" if release in NULLS else "positive control", "risk": risk, "splits": splits,
               "planned": int(cells.get(cell, {}).get("splits", 0)), "refused": int(refused.get(cell, 0)),
               "commits": commits.get(cell, ""),
               "secondary": bool(cells.get(cell, {}).get("secondary")),
               "primary": release in NULLS and risk == AUDIT and not cells.get(cell, {}).get("secondary"),
               "at_risk": int((part["level"] == "at risk").sum()),
               # naming: the splits naming anyone, and the mean false-discovery proportion (V / max(R, 1))
               "named": int((part["n_identified"].fillna(0) > 0).sum()),
               "fdp": (part["n_false"] / part["n_identified"].clip(lower=1)).mean()
               if part["n_false"].notna().all() else np.nan}
        if risk == AUDIT:
            row["yes"] = int((part["answer"] == "yes").sum())
        else:
            row["below"] = int((part["level"] == "below the threshold").sum())
            row["inconclusive"] = int((part["level"] == "inconclusive").sum())
        groups.append(row)
    table = pd.DataFrame(groups, columns=["cell", "audit", "dataset", "n", "release", "kind", "risk", "splits", "planned",
                                          "refused", "commits", "secondary", "primary", "at_risk", "below", "inconclusive",
                                          "yes", "named",
                                          "fdp"])
    confidence = {audit: 1 - 0.05 / max(primary_family(cells, audit), 1) for audit in set(table["audit"])}
    for column in ("at_risk", "below", "yes", "named"):
        counts = table[column]
        table[f"{column}_rate"] = counts / table["splits"]
        bounds = [clopper_pearson(int(k), int(m), confidence[audit] if column == "at_risk" and primary else 0.95)
                  if pd.notna(k) else (np.nan, np.nan)
                  for k, m, primary, audit in zip(counts, table["splits"], table["primary"], table["audit"])]
        table[f"{column}_low"] = [b[0] for b in bounds]
        table[f"{column}_high"] = [b[1] for b in bounds]
    table.attrs["confidence"] = confidence
    return table


def attack_summary(runs: pd.DataFrame, cells: dict) -> pd.DataFrame:
    """Per cell, release and attack (the runs of revision 2 on): splits, how many the attack's own
    test fires in at `LEVEL` (before Holm over its risk's attacks) with its 95 % Clopper-Pearson
    interval, and its mean value minus reference. On a null release the rate is the attack's own
    false-positive rate: at most `LEVEL` for a valid test."""
    attacks = runs[runs["risk"].astype(str).str.startswith(ATTACK)]
    rows = []
    for (cell, release, attack), part in attacks.groupby(["cell", "release", "risk"], sort=True):
        p = pd.to_numeric(part["p_value"], errors="coerce")
        fires, splits = int((p <= LEVEL).sum()), part["split"].nunique()
        low, high = clopper_pearson(fires, splits, 0.95)
        rows.append({"cell": cell, "audit": revision(cells.get(cell, {})), "release": release,
                     "kind": "null" if release in NULLS else "positive control", "attack": attack[len(ATTACK):],
                     "splits": splits, "fires": fires, "fires_rate": fires / splits, "fires_low": low,
                     "fires_high": high, "effect": pd.to_numeric(part["effect"], errors="coerce").mean()})
    return pd.DataFrame(rows, columns=["cell", "audit", "release", "kind", "attack", "splits", "fires", "fires_rate",
                                       "fires_low", "fires_high", "effect"])


def attacks_markdown(table: pd.DataFrame) -> str:
    lines = [f"Each attack's own test at {LEVEL:g} (before Holm over its risk's attacks), per release: on a null "
             f"release the share of splits it fires in is its false-positive rate (at most {LEVEL:g} for a valid test). "
             "Intervals: Clopper–Pearson, 95 % each.", "",
             "| cell | audit revision | release | attack | splits | fires | mean value − reference |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.cell} | {r.audit} | {r.release} | {r.attack} | {r.splits} | {r.fires} "
                     f"({100 * r.fires_rate:.1f} %, {100 * r.fires_low:.1f}–{100 * r.fires_high:.1f}) | {r.effect:.4f} |")
    return "\n".join(lines) + "\n"


def published(table: pd.DataFrame) -> pd.DataFrame:
    """What the audit quotes beside its answer (`synthrisk.measures.calibrated_power.release_statement`): the
    per-audit rows, with the columns it reads (package data, so an installed audit needs nothing
    outside the package)."""
    from synthrisk.measures.calibrated_power import SHIPPED_COLUMNS

    audits = table[table["risk"] == AUDIT].assign(null=lambda t: t["kind"] == "null")
    return audits[SHIPPED_COLUMNS].reset_index(drop=True)


def markdown(table: pd.DataFrame) -> str:
    """The summary as the docs show it: per cell, release and risk, rate (interval) of each outcome."""
    def cell(k, rate, low, high):
        return "" if pd.isna(k) else f"{int(k)} ({100 * rate:.1f} %, {100 * low:.1f}–{100 * high:.1f})"

    levels = "; ".join(f"revision {audit}: {100 * level:.3f} %"
                       for audit, level in sorted(table.attrs.get("confidence", {}).items()))
    lines = [f"Intervals: Clopper–Pearson. Primary (**bold**: the null releases' per-audit at-risk rates) at "
             f"{levels} each, Bonferroni over each audit revision's primary family in the plan: 95 % together; "
             "every other interval 95 % on its own.", "",
             "| cell | audit revision | release | risk | splits (planned; refused) | at risk | below the threshold "
             "| audit answers yes | anyone named | mean false-discovery proportion |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        at_risk = cell(r.at_risk, r.at_risk_rate, r.at_risk_low, r.at_risk_high)
        lines.append(f"| {r.cell} | {r.audit} | {r.release} | {r.risk} | {r.splits} ({r.planned}; {r.refused}) | "
                     f"{f'**{at_risk}**' if r.primary else at_risk} | "
                     f"{cell(r.below, r.below_rate, r.below_low, r.below_high)} | "
                     f"{cell(r.yes, r.yes_rate, r.yes_low, r.yes_high)} | "
                     f"{cell(r.named, r.named_rate, r.named_low, r.named_high)} | "
                     f"{'' if pd.isna(r.fdp) else f'{100 * r.fdp:.1f} %'} |")
    return "\n".join(lines) + "\n"


def planned_widths(cells: dict) -> str:
    """What each cell's pre-registered split count can tell, stated before it runs: for the primary
    family (the null releases' per-audit at-risk rates, Bonferroni over its planned size) and for a
    secondary rate at 95 %, the upper end of the interval at 0 events, and the interval at 1 % and at
    50 % (power)."""
    primary = 1 - 0.05 / max(primary_family(cells), 1)
    lines = [f"Primary family (per audit revision, the largest): {primary_family(cells)} rates, each at "
             f"{100 * primary:.3f} %; a secondary cell's at 95 %.", "",
             "| cell | splits | primary: upper end at 0 | primary: at 1 % | secondary: at 50 % |",
             "|---|---|---|---|---|"]
    for name, cell in cells.items():
        m = int(cell["splits"])
        confidence = 0.95 if cell.get("secondary") else primary
        zero = clopper_pearson(0, m, confidence)[1]
        one = clopper_pearson(int(round(0.01 * m)), m, confidence)
        half = clopper_pearson(m // 2, m, 0.95)
        lines.append(f"| {name} | {m} | {100 * zero:.1f} % | {100 * one[0]:.1f}–{100 * one[1]:.1f} % | "
                     f"{100 * half[0]:.1f}–{100 * half[1]:.1f} % |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", help="a cell of the plan to run")
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--limit", type=int, help="run at most this many splits now (the rest later)")
    parser.add_argument("--summarise", action="store_true", help="write the tables from the runs files")
    parser.add_argument("--widths", action="store_true", help="print what each planned split count can tell")
    args = parser.parse_args(argv)
    cells = load_plan()
    if args.widths:
        print(planned_widths(cells))
    if args.cell:
        if args.cell not in cells:
            raise SystemExit(f"--cell: {args.cell!r} is not in {PLAN} ({sorted(cells)})")
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                                text=True).stdout.strip()
        ran = run_cell(args.cell, cells, args.worker, args.workers, commit, args.limit)
        print(f"{args.cell}: {ran} split(s) run by worker {args.worker}", file=sys.stderr)
    if args.summarise:
        runs = read_runs()
        table = summarise(runs, cells)
        table.to_csv(STUDY / "summary.csv", index=False, float_format="%.6g")
        (STUDY / "summary.md").write_text(markdown(table))
        (STUDY / "attacks.md").write_text(attacks_markdown(attack_summary(runs, cells)))
        published(table).to_csv(PUBLISHED, index=False, float_format="%.6g")
        print(markdown(table))


if __name__ == "__main__":
    main()
