"""How often the audit reassures falsely (issue #44, item 4): releases that a stronger attacker breaks,
read by the audit as it ships (no generator) and with the generator in hand.

Per split, members, holdout and other records are disjoint draws of one population
(`synthrisk.study.calibration.Population`: Adult, real, and the simulator), 1,000 members each. Per
generator a release of 1,000 records is made and audited twice with `synthrisk.audit` at its
defaults: without the generator (the audit as it ships) and with it (`generator=`: shadow models,
and MAMA-MIA for MST and PrivBayes).

- Generators (the first plan, `PLANS["main"]`): `cart` (synthpop's CART; its leaves hold 5 records, the smallest
  synthpop allows by default), `mst_eps1` and `mst_eps10` (MST at ε = 1 and 10; noise from a seed so
  the study reruns, so those releases are marked not private), the controls `leaky` (10 % member
  copies) and `independent`, and the null `cart_other` (cart fitted on the other records: a release
  that never saw the members, which no attack may break).
- Gold standard: the release is *broken* when an attack that refits the generator (the per-target
  shadow models, `synthrisk.shadow_mia.release`, 400 refits on 80 targets; MAMA-MIA for MST and PrivBayes) finds
  its members (p ≤ 0.05 on its own) or names one. For MST the shadow models get 40 refits (an MST
  fit takes 7–14 s here: 400 would be an hour per release), stated in the table; MAMA-MIA is the
  strong attack there.
- The issue's rule, reported beside it: a member target whose shadow-model TPR at 1 % FPR (on
  fresh refits) has its Clopper-Pearson lower bound above 1 %, a member the gold standard finds
  (never counted on the null).
- *False reassurance*: the audit as it ships answers "yes" (every risk below its threshold), or
  reads membership below its threshold, for a broken release (and for one with a vulnerable member).
- Every attack's TPR at 1 % and 0.1 % FPR (the black-box attacks' own, where they give one), and
  each shadow target's TPR at 10 % and 1 % FPR with Clopper-Pearson intervals, are kept in the runs.

A second plan, `synthcity`, planned on 2026-12-07 before any of its runs, once the audit refits a
generator in its own environment: synthcity's PrivBayes at ε = 10 (`privbayes_eps10`, noise from a
seed as MST's) on Adult, 5 splits, the gold standard's 100 refits. A PrivBayes fit of 1,000 Adult
records takes 10–25 s here, so a job (with MAMA-MIA's 20 network searches and the ensemble's 20
refits) takes 40 to 70 minutes (the first: 70, on cores shared with other work): 5 splits, not 20. Not on the simulator: synthcity's PrivBayes makes a
level of every distinct value, and its four continuous columns asked 37 to 462 GiB in one fit.

Not run here: CTGAN and TVAE trained long, and AIM and TabDDPM through synthcity. The gold standard
needs at least 100 refits per split; one CTGAN fit of 1,000 Adult records for 300 epochs takes
minutes on this machine's 2 cores, and one AIM selection round 100–190 s: days per cell. They need a
cluster (the workflow's SLURM profile).

The size of each plan is fixed here before any of its runs (`PLANS`, `N`, `SEED`) and never grown.
Each worker appends its splits to its runs file under `benchmarks/calibration/red_team/`, one set per
audit revision and plan (`runs.r{revision}.w{worker}.csv.gz` for the first plan,
`runs.r{revision}.{plan}.w{worker}.csv.gz` for the others; `synthrisk.measures.calibrated_power.AUDIT_REVISIONS`):
a new revision of the audit as it ships starts the study again. The table (`summary.md`) is written
from the current revision's runs files alone.

    PYTHONPATH=. .venv/bin/python benchmarks/red_team.py --worker 0 --workers 2
    PYTHONPATH=. .venv/bin/python benchmarks/red_team.py --plan synthcity   # needs .venv-synthcity
    PYTHONPATH=. .venv/bin/python benchmarks/red_team.py --summarise
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
FOLDER = HERE / "calibration" / "red_team"
TABLE = FOLDER / "summary.md"
N, SEED = 1000, 6100


class Plan(NamedTuple):
    datasets: tuple[str, ...]
    generators: dict[str, dict]
    splits: int


#: fixed before running (the module doc); the first plan's runs files carry no plan name
PLANS = {
    "main": Plan(("adult", "simulation"), {
        "cart": {"backend": "cart"},
        "mst_eps1": {"backend": "mst", "params": {"epsilon": 1.0}},
        "mst_eps10": {"backend": "mst", "params": {"epsilon": 10.0}},
        "leaky": {"backend": "leaky"},
        "independent": {"backend": "independent"},
        "cart_other": {"backend": "cart"},
    }, 20),
    "synthcity": Plan(("adult",), {
        "privbayes_eps10": {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 10.0}},
    }, 5),
}
FIRST_PLAN = "main"
#: each generator's plan
PLAN_OF = {name: plan for plan in PLANS.values() for name in plan.generators}
#: refits of the shadow models per generator (default: the audit's, 400)
SHADOW_FITS = {"mst_eps1": 40, "mst_eps10": 40, "privbayes_eps10": 100}
#: generators whose DP noise the study seeds, so that it reruns (their releases are marked not private)
SEEDED_NOISE = ("mst", "synthcity")
LEVEL = 0.05
STRONG = ("shadow_models", "mama_mia")
#: the release that never saw its members
NULL = "cart_other"
#: the issue's rule of a release the gold standard shows membership inference on: a member target
#: whose per-target TPR at 1 % FPR (on fresh refits) has its Clopper-Pearson lower bound above 1 %
SHOWN_FPR, SHOWN_TPR = 0.01, 0.01
#: the commits whose jobs recorded TPRs read on a ROC curve without its collinear points, which can
#: understate a TPR on tied scores: their TPRs are left out of the pooled table (their verdicts stay)
UNDERSTATED_TPRS = {"890c941"}


def spec_of(name: str, split: int) -> dict:
    spec = json.loads(json.dumps(PLAN_OF[name].generators[name]))
    if spec["backend"] in SEEDED_NOISE:
        spec["params"]["noise_seed"] = SEED + split
    return spec


def fit_release(name: str, spec: dict, source: pd.DataFrame, schema, seed: int) -> pd.DataFrame:
    """The release: fitted in this process, or in the generator's own environment (built by a workflow
    run, refused otherwise) with the split's seed as its hash seed, so that the study reruns."""
    from synthrisk.generators.environment_fits import EnvironmentFits
    from synthrisk.generators.environments import built_python, requirements_file
    from synthrisk.generators.run import run_generator

    if requirements_file(spec, HERE.parent) is None:
        release, status = run_generator(name, spec, source, schema, n=N, seed=seed)
    else:
        python = built_python(spec, HERE.parent)
        if python is None:
            raise SystemExit(f"{name}: its environment is not built (make run CONFIG=\"config/config.yaml "
                             "config/synthcity.yaml\" builds it)")
        with EnvironmentFits(python, hash_seed=seed) as fits:
            release, status = fits(name, spec, source, schema, N, seed)
    if status["status"] != "ok":
        raise RuntimeError(f"{name}: {status['error']}")
    return release


def _audit(members, holdout, release, schema, **generator):
    import synthrisk
    from synthrisk.figures import discarded

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), discarded():
        return synthrisk.audit(members, release, holdout, schema=schema, **generator)


def membership_level(result) -> str:
    return result.risks.set_index("risk").loc["membership", "level"]


def run_one(dataset: str, split: int, name: str, commit: str) -> dict:
    from synthrisk.measures.base import TPR_COLUMNS
    from synthrisk.study.calibration import Population

    seed = int(np.random.SeedSequence([SEED, split, len(dataset)]).generate_state(1)[0])
    population = Population.of(dataset, N * 3, seed=seed)
    schema = population.schema
    members, holdout, other = population.take(N), population.take(N), population.take(N)
    spec = spec_of(name, split)
    release = fit_release(name, spec, other if name == NULL else members, schema, seed)
    start = time.perf_counter()
    plain = _audit(members, holdout, release, schema)
    plain_seconds = time.perf_counter() - start
    start = time.perf_counter()
    hand = _audit(members, holdout, release, schema, generator=spec, shadow_fits=SHADOW_FITS.get(name))
    hand_seconds = time.perf_counter() - start
    broken = is_broken(hand)
    shadow = next((m for m in hand.to_dict()["measures"] if m.get("measure") == "shadow_models"), {})
    return {"dataset": dataset, "split": split, "generator": name, "commit": commit,
            "answer": plain.answer, "membership": membership_level(plain),
            "answer_in_hand": hand.answer, "membership_in_hand": membership_level(hand),
            "broken": broken, "shadow_fits": SHADOW_FITS.get(name, 400),
            "seconds": round(plain_seconds, 1), "seconds_in_hand": round(hand_seconds, 1),
            "attacks": json.dumps([{k: e.get(k) for k in ("measure", "attack", "value", "reference", "p_value",
                                                          "n_identified", *TPR_COLUMNS, "n_scored")}
                                   for e in hand.to_dict()["evidence"] if e["risk"] == "membership"]),
            "shadow_targets": json.dumps(_targets(hand)), "shadow_status": shadow.get("status")}


def is_broken(result) -> bool:
    """Whether an attack that refits the generator finds the members on its own (p <= LEVEL) or names
    one, read from its own table: the audit hears MAMA-MIA's names only behind the exposure
    evidence (`synthrisk.release_audit.named.gated`), the gold standard does not gate them."""
    for name in STRONG:
        table = result.tables.get(name)
        if table is None or "status" not in table:
            continue
        ok = table[table["status"] == "ok"]
        p_values = pd.to_numeric(ok.get("p_value_merged", pd.Series(dtype=float)), errors="coerce")
        named = pd.to_numeric(ok.get("n_identified_min", pd.Series(dtype=float)), errors="coerce").fillna(0)
        if (p_values <= LEVEL).any() or (named > 0).any():
            return True
    return False


def _targets(result) -> list[dict]:
    """Each shadow target's kind, membership and TPRs with intervals (from the measure's reported table)."""
    for block in result.to_dict().get("measures", []):
        reported = block.get("reported") if isinstance(block, dict) else None
        if block.get("measure") == "shadow_models" and reported:
            return reported["rows"]
    return []


def revision() -> int:
    from synthrisk.measures.calibrated_power import AUDIT_REVISION

    return AUDIT_REVISION


def runs_file(worker: int, plan: str = FIRST_PLAN) -> Path:
    return FOLDER / f"runs.r{revision()}.{'' if plan == FIRST_PLAN else plan + '.'}w{worker}.csv.gz"


def read_runs() -> pd.DataFrame:
    files = sorted(FOLDER.glob(f"runs.r{revision()}.*w*.csv.gz"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def vulnerable_member(targets_json: str) -> bool:
    """Whether a member target of the shadow models is demonstrably attackable at 1 % FPR (the
    release was fitted on that member, so the gold-standard attack finds it that often)."""
    rows = json.loads(targets_json) if isinstance(targets_json, str) and targets_json else []
    return any(r.get("member") == "yes" and (r.get(f"TPR at FPR {SHOWN_FPR:g} low") or 0) > SHOWN_TPR for r in rows)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    from synthrisk.stats.proportions import clopper_pearson

    def rate(k: int, m: int) -> str:
        if not m:
            return "–"
        low, high = clopper_pearson(k, m, 0.95)
        return f"{k} of {m} ({100 * k / m:.0f} %, {100 * low:.0f}–{100 * high:.0f})"

    def reassures(frame: pd.DataFrame, suffix: str) -> int:
        return int(((frame[f"answer{suffix}"] == "yes") | (frame[f"membership{suffix}"] == "below the threshold")).sum())

    rows = []
    for (dataset, name), part in runs.groupby(["dataset", "generator"], sort=True):
        broken = part[part["broken"].astype(bool)]
        shown = part[[name != NULL and vulnerable_member(targets) for targets in part["shadow_targets"]]]
        rows.append({"dataset": dataset, "generator": name, "splits": f"{part['split'].nunique()} of {PLAN_OF[name].splits}",
                     "refits": int(part["shadow_fits"].iloc[0]),
                     "broken by the strong attacks": rate(len(broken), len(part)),
                     "a member shown vulnerable": rate(len(shown), len(part)),
                     "audit says no (as shipped)": rate(int((part["answer"] == "no").sum()), len(part)),
                     "audit says no (generator in hand)": rate(int((part["answer_in_hand"] == "no").sum()), len(part)),
                     "false reassurance (as shipped)": rate(reassures(broken, ""), len(broken)),
                     "false reassurance (generator in hand)": rate(reassures(broken, "_in_hand"), len(broken)),
                     "false reassurance, vulnerable member (as shipped / in hand)":
                         f"{rate(reassures(shown, ''), len(shown))} / {rate(reassures(shown, '_in_hand'), len(shown))}",
                     "seconds (shipped / in hand, median)": f"{part['seconds'].median():.0f} / "
                                                            f"{part['seconds_in_hand'].median():.0f}"})
    return pd.DataFrame(rows)


def attack_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset x generator x membership attack of the audit with the generator in hand:
    the splits it ran in, how many it beat its reference in (p <= LEVEL on its own), and its TPR at
    each low FPR pooled over the splits that recorded it (members flagged over members scored, with a
    95 % Clopper-Pearson interval; the threshold of each split is read on its holdout)."""
    from synthrisk.measures.base import TPR_LABELS
    from synthrisk.stats.proportions import clopper_pearson

    rows = []
    for _, run in runs.iterrows():
        for attack in json.loads(run["attacks"]):
            if str(run.get("commit")) in UNDERSTATED_TPRS:
                attack = {k: v for k, v in attack.items() if k != "n_scored"}
            rows.append({"dataset": run["dataset"], "generator": run["generator"], "split": run["split"], **attack})
    if not rows:
        return pd.DataFrame()
    attacks = pd.DataFrame(rows)
    recorded = attacks["n_scored"] if "n_scored" in attacks else pd.Series(np.nan, index=attacks.index)
    attacks = attacks.assign(n_scored=pd.to_numeric(recorded, errors="coerce"))  # the first runs did not record it
    out = []
    # one row per measure: its display name may change between commits (MAMA-MIA's did when it learnt PrivBayes)
    for (dataset, name, _), part in attacks.groupby(["dataset", "generator", "measure"]):
        row = {"dataset": dataset, "generator": name, "attack": part["attack"].iloc[-1], "splits": len(part),
               "beats its reference": int((pd.to_numeric(part["p_value"], errors="coerce") <= LEVEL).sum())}
        for column, label in TPR_LABELS.items():
            read = part.dropna(subset=["n_scored"])
            tpr = pd.to_numeric(read.get(column), errors="coerce") if column in read else pd.Series(dtype=float)
            read, tpr = read[tpr.notna()], tpr[tpr.notna()]
            n = int(read["n_scored"].round().sum())
            if not n:
                row[label] = "–"
                continue
            hits = int((tpr * read["n_scored"]).round().sum())
            low, high = clopper_pearson(hits, n, 0.95)
            row[label] = f"{hits / n:.3f} ({low:.3f}–{high:.3f}; {len(read)} splits)"
        out.append(row)
    return pd.DataFrame(out)


#: the shadow models' own anchor (docs/methods/shadow-models.md, `config/audit.yaml`: Adult on 4
#: columns, 10 outlier and 10 random targets, 200 + 200 shadow datasets): cart's outlier targets
ANCHOR = ("docs/methods/shadow-models.md, on Adult restricted to 4 columns: cart's outlier targets all 10 above "
          "chance, median AUC 0.73 (0.62–0.79), median TPR 0.375 at FPR 0.1; random targets 2 of 10, median AUC 0.55")


def target_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset x generator x target kind (outlier, random) of the shadow models with the
    generator in hand, over every split: targets, those whose AUC interval lies above 0.5, the median
    AUC with its range, and the median per-target TPR at 10 % and 1 % FPR (each read on the target's
    fresh evaluation refits), to stand beside the workflow's anchor (`ANCHOR`)."""
    rows = [{"dataset": run["dataset"], "generator": run["generator"], **target}
            for _, run in runs.iterrows()
            for target in (json.loads(run["shadow_targets"]) if isinstance(run["shadow_targets"], str) else [])]
    if not rows:
        return pd.DataFrame()
    targets = pd.DataFrame(rows)
    out = []
    for (dataset, name, kind), part in targets.groupby(["dataset", "generator", "kind"]):
        auc = pd.to_numeric(part["AUC"], errors="coerce")
        row = {"dataset": dataset, "generator": name, "targets": kind, "n": len(part),
               "above chance": int((pd.to_numeric(part["ci_low"], errors="coerce") > 0.5).sum()),
               "median AUC (range)": f"{auc.median():.2f} ({auc.min():.2f}–{auc.max():.2f})"}
        for fpr in (0.1, 0.01):
            tpr = pd.to_numeric(part.get(f"TPR at FPR {fpr:g}"), errors="coerce")
            row[f"median TPR at FPR {fpr:g}"] = f"{tpr.median():.3f}" if tpr.notna().any() else "–"
        out.append(row)
    return pd.DataFrame(out)


def markdown(table: pd.DataFrame, attacks: pd.DataFrame | None = None, targets: pd.DataFrame | None = None) -> str:
    return (f"Audit revision {revision()}. Per dataset and generator: splits run of those planned; rates with 95 % Clopper–Pearson intervals. "
            "Broken: an attack that refits the generator finds the members (p ≤ 0.05 on its own) or names one. "
            "A member shown vulnerable (the issue's rule): a member target whose shadow-model TPR at 1 % FPR has its "
            "Clopper–Pearson lower bound above 1 % (never on the null, cart_other). "
            "False reassurance: of the broken releases, those the audit answers “yes” or reads membership below "
            "its threshold.\n\n" + table.to_markdown(index=False) + "\n"
            + ("" if attacks is None or attacks.empty else
               "\nEvery membership attack of the audit with the generator in hand, per dataset and generator: the "
               "splits it ran in, those it beat its reference in on its own (p ≤ 0.05), and its TPR at 0.1, 1 and 10 % "
               "FPR pooled over the splits that recorded it (members flagged over members scored, 95 % Clopper–Pearson; "
               "an attack without a per-member score has none; 0.1 % needs at least 1,000 holdout records scored). "
               "A TPR near its FPR is chance. The shadow models' per-target TPRs are in the runs files "
               "(`shadow_targets`) and the column “a member shown vulnerable” above.\n\n"
               + attacks.to_markdown(index=False) + "\n")
            + ("" if targets is None or targets.empty else
               "\nThe shadow models' targets with the generator in hand, per dataset, generator and kind, over every "
               "split: how many, those whose AUC interval lies above 0.5 (chance: about 2.5 % of them), the median AUC "
               "with its range, and the median per-target TPR at 10 % and 1 % FPR on fresh evaluation refits (a blind "
               f"attack's TPR equals its FPR). The anchor: {ANCHOR}. The settings differ: here every column, 40 outlier "
               "and 40 random targets, the refits in the column `refits` above. A target's vulnerability is the "
               "generator's, read on refits with and without it: the release enters only the release-level test, so "
               "`cart` and the null `cart_other` (the same generator on the same records) show the same targets on "
               "the splits both ran.\n\n"
               + targets.to_markdown(index=False) + "\n"))


#: the table before any job has run
NO_RUNS = "No job of the study has run yet under audit revision {revision} ({jobs} planned).\n"


def plan_jobs(plan: Plan) -> list[dict]:
    return [{"dataset": dataset, "split": split, "generator": name}
            for split in range(plan.splits) for dataset in plan.datasets for name in plan.generators]


def table_text(runs: pd.DataFrame) -> str:
    if runs.empty:
        return NO_RUNS.format(revision=revision(), jobs=sum(len(plan_jobs(plan)) for plan in PLANS.values()))
    return markdown(summarise(runs), attack_rows(runs), target_rows(runs))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--plan", choices=list(PLANS), default=FIRST_PLAN)
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args(argv)
    FOLDER.mkdir(parents=True, exist_ok=True)
    if not args.summarise:
        from resumable import commit, run_jobs

        here = commit(HERE)
        run_jobs(plan_jobs(PLANS[args.plan]), lambda job: [run_one(job["dataset"], job["split"], job["generator"], here)],
                 runs_file(args.worker, args.plan), args.worker, args.workers)
    text = table_text(read_runs())
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
