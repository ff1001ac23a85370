"""The audit as it ships on real data the project was not built on: statsmodels' bundled `fair`
(6,366 survey records, 9 columns, 16 % of them repeats of another) and `randhie` (20,190 records of
the RAND health insurance experiment, 10 columns of few values each, 55 % of them repeats), beside
Adult and the simulator, which the calibration study and every other benchmark use.

Per split, members, holdout and population records are disjoint draws of `N` records each, without
replacement, and two releases are audited:
- `population`: `N` other records, which never saw the members (the null);
- `copies_0.1`: 10 % of the members copied verbatim among population records (`N` in all).
Each is audited by `synthrisk.audit` with its defaults, as a steward without a schema runs it (the
schema inferred from the members, `sensitive` named), and the rows record per risk its level,
effect and one-sided bounds, and per release the answer, the members named (membership) in three
kinds: copied, not copied but with their exact record in the release (an identical member's copy,
or a population record: the release does publish their record), and the others, and how many
members have an exact twin among the holdout records (a copy of such a record tells little about
who was a member).

The size of the study is fixed here before any run (`DATASETS`, `SPLITS`, `N`, `SEED`) and never
grown; each finished split is appended to `benchmarks/calibration/other_data.csv.gz` (a rerun skips
the splits it holds), and the table (`other_data.md` beside it) is written from that file alone;
`--summarise` only rewrites it.

    PYTHONPATH=. .venv/bin/python benchmarks/other_data.py [--worker 0 --workers 2]
    PYTHONPATH=. .venv/bin/python benchmarks/other_data.py --summarise
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RUNS = HERE / "calibration" / "other_data.csv.gz"
TABLE = HERE / "calibration" / "other_data.md"
#: fixed before running: each dataset's statsmodels module and the sensitive column named to the audit
DATASETS = {"fair": "rate_marriage", "randhie": "mdvis"}
SPLITS, N, SEED, SHARE = 5, 1500, 7300, 0.1
RELEASES = ("population", "copies_0.1")


def records(dataset: str) -> pd.DataFrame:
    import importlib

    return importlib.import_module(f"statsmodels.datasets.{dataset}").load_pandas().data


def draws(dataset: str, split: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], np.ndarray]:
    """(members, holdout, the releases by kind, the positions of the copied members)."""
    frame = records(dataset)
    rng = np.random.default_rng([SEED, split, len(dataset)])
    order = rng.permutation(len(frame))
    members, holdout, population, others = (frame.iloc[order[i * N:(i + 1) * N]].reset_index(drop=True)
                                            for i in range(4))
    copied = np.sort(rng.choice(N, size=int(SHARE * N), replace=False))
    leaky = pd.concat([others.iloc[:N - len(copied)], members.iloc[copied]], ignore_index=True)
    leaky = leaky.iloc[rng.permutation(len(leaky))].reset_index(drop=True)
    return members, holdout, {"population": population, "copies_0.1": leaky}, copied


def run_job(job: dict, where: str) -> list[dict]:
    import synthrisk
    from synthrisk.figures import discarded

    dataset, split = job["dataset"], job["split"]
    members, holdout, releases, copied = draws(dataset, split)
    twins = int(members.merge(holdout.drop_duplicates(), how="inner").shape[0])
    rows = []
    for release, synthetic in releases.items():
        # which members' exact records the release holds, by position (a left merge keeps the order)
        held = members.merge(synthetic.drop_duplicates(), how="left", indicator=True)["_merge"].eq("both").to_numpy()
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), discarded():
            result = synthrisk.audit(members, synthetic, holdout, sensitive=[DATASETS[dataset]])
        seconds = round(time.perf_counter() - start, 1)
        named = set(result.identified.loc[result.identified["risk"] == "membership", "row_id"].astype(int))
        truly = named & set(copied.tolist()) if release != "population" else set()
        twin = {i for i in named - truly if held[i]}
        for risk in result.risks.itertuples():
            rows.append({"dataset": dataset, "split": split, "release": release, "risk": risk.risk,
                         "level": risk.level, "effect": risk.effect, "effect_low": risk.effect_low,
                         "effect_high": risk.effect_high, "answer": result.answer,
                         "named_copied": len(truly), "named_twin": len(twin), "named_other": len(named - truly - twin),
                         "members_with_twin": twins, "seconds": seconds, "commit": where})
    return rows


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and release: splits, the audit's answers, the membership verdicts and effect, and
    the members named (copied ones, others)."""
    from synthrisk.measures.policy import ANSWERS, LEVELS

    out = []
    for (dataset, release), part in runs.groupby(["dataset", "release"], sort=True):
        audits = part.drop_duplicates("split")
        membership = part[part["risk"] == "membership"]
        answers = audits["answer"].value_counts()
        levels = membership["level"].value_counts()
        out.append({
            "dataset": dataset, "release": release, "splits": f"{len(audits)} of {SPLITS}",
            "members with an exact twin in the holdout (median)": f"{audits['members_with_twin'].median():.0f} of {N:,}",
            "answer no / inconclusive / yes": " / ".join(str(int(answers.get(a, 0)))
                                                          for a in (ANSWERS["no"], ANSWERS["inconclusive"], ANSWERS["yes"])),
            "membership at risk / inconclusive / below": " / ".join(
                str(int(levels.get(lv, 0))) for lv in (LEVELS["at_risk"], LEVELS["inconclusive"], LEVELS["below"])),
            "membership effect (range)": f"{membership['effect'].min():.3f}–{membership['effect'].max():.3f}",
            f"copied members named (median of {int(SHARE * N)})": (f"{audits['named_copied'].median():.0f}"
                                                    if release != "population" else "–"),
            "members named, record in the release but not copied (total)": int(audits["named_twin"].sum()),
            "other members named (total)": int(audits["named_other"].sum())})
    return pd.DataFrame(out)


def markdown(table: pd.DataFrame) -> str:
    return ("The audit as it ships on statsmodels' `fair` and `randhie` (`benchmarks/other_data.py`), "
            f"{N:,} members, holdout and release records per split, drawn without replacement; written from "
            "`other_data.csv.gz` alone.\n\n" + table.to_markdown(index=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--summarise", action="store_true", help="only rewrite the table from the runs file")
    args = parser.parse_args(argv)
    if not args.summarise:
        from resumable import commit, run_jobs

        where = commit(HERE.parent)
        jobs = [{"dataset": d, "split": s} for d in DATASETS for s in range(SPLITS)]
        run_jobs(jobs, lambda job: run_job(job, where), RUNS, args.worker, args.workers)
    if RUNS.exists():
        text = markdown(summarise(pd.read_csv(RUNS)))
        TABLE.write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
