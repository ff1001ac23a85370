"""Every built-in measure on one release, through the measure interface the workflow uses, in
memory: each run goes through the shared failure path (`compute_unit`: not applicable -> skipped
with the reason, an exception -> failed with the error, the others go on). What the runs add up
to is `summary`'s."""

from __future__ import annotations

import dataclasses
import sys

from ..measures import MeasureInput, registered_measures
from ..measures.runner import Outcome, plan_runs, run_units
from .inputs import AuditInput

#: the seed of every random draw of the audit (attack sets, permutations, model fits): the same
#: files give the same report
SEED = 0
#: the dataset and generator keys of the audit's runs, as the measures' tables name them
DATASET, RELEASE = "audit", "release"
#: The audit's settings where they differ from a measure's defaults (its `Settings`). RAPID runs
#: an attacker suite (a release is not judged on one model): a forest, a pruned tree, boosting,
#: logistic / linear regression, and the calibrated forest, which tells over-confidence from
#: knowledge. The forest has 200 trees instead of the paper's 500 (its RAPID moves by less than the
#: interval on Adult) so that 30,000 x 30,000 records take minutes on 2 cores.
#: RAPID's attackers learn from and score at most `WHOLE_FILE` records (a seeded sample beyond, and
#: the result says so): the calibrated forest's refits dominate the audit's time, and with these caps
#: 10^5 records per file take about 3 minutes (benchmarks/audit_scale.py). The control-set linkability
#: and inference attacks attack as many members and control records (their measures' default, 2,000,
#: leaves the control-corrected risk's interval about 0.1 wide at any size, so that a clean release
#: could never be shown below the threshold). Files of up to `WHOLE_FILE` records are audited whole.
WHOLE_FILE = 25_000
AUDIT_SETTINGS = {"rapid": {"attackers": ["rf", "cart", "gbm", "logit", "linear", "rf_cal"], "n_trees": 200,
                            "max_train": WHOLE_FILE, "max_records": WHOLE_FILE},
                  "linkability": {"n_attacks": WHOLE_FILE}, "inference": {"n_attacks": WHOLE_FILE}}


def progress(message: str) -> None:
    """One line on stderr: the audit's long steps are announced as they start and end."""
    print(f"synthrisk audit: {message}", file=sys.stderr, flush=True)


def silent(message: str) -> None:
    """Where the step lines go when nobody asked for them (the Python API without `progress`)."""


def audit_settings(measure, policy=None, generator=None) -> dict:
    """One measure's settings in the audit (`AUDIT_SETTINGS`, and the rates it names members at, read
    from the policy: module doc of `audit_measures`)."""
    from ..measures.policy import Policy

    policy = policy or Policy()
    block = dict(AUDIT_SETTINGS.get(measure.name) or {})
    if measure.names_members(generator):
        block["fdr"] = policy.naming_fdr
    if "rare_level" in {f.name for f in dataclasses.fields(measure.Settings)}:
        block["rare_level"] = policy.rare_copies_level
    return block


def audit_measures(policy=None, shadow_fits: int | None = None, generator=None) -> dict:
    """Every registered measure, in the report's order, with its audit settings. The measures that
    name members with a controlled false-discovery rate on this input (`Measure.names_members`: the
    per-person exposure evidence, and with the generator in hand the attacks that refit it) each
    name at the policy's `naming_fdr` (default policy: `Policy()`), and the exposure evidence's
    rare-copies test at its `rare_copies_level`; those that refit the generator are heard only once
    the exposure evidence has named someone (`named.gated`), so that in a release that never saw its
    members anyone is named with probability at most the sum of the two. The
    generator in hand is refitted `shadow_fits` times, half to train the shadow models and half to
    judge them (default: the measure's own)."""
    measures = sorted(registered_measures().values(), key=lambda m: (m.order, m.name))
    settings = {m.name: audit_settings(m, policy, generator) for m in measures}
    if shadow_fits is not None:
        settings["shadow_models"] = {**settings.get("shadow_models", {}), "shadow_datasets": shadow_fits // 2,
                                     "eval_datasets": shadow_fits - shadow_fits // 2}
    return {m.name: (m, m.settings(settings.get(m.name))) for m in measures}


def measure_input(data: AuditInput, seed: int = SEED, generator=None) -> MeasureInput:
    return MeasureInput(generator=generator,
        members=data.members, holdout=data.holdout,
        aux=data.aux if data.aux is not None else data.holdout.iloc[:0], synthetic=data.synthetic,
        schema=data.schema,
        # The members, the holdout and the auxiliary records are taken as the population the members
        # were drawn from: the membership attack set keeps El Emam's member share n_train / N.
        population_size=len(data.members) + len(data.holdout) + (0 if data.aux is None else len(data.aux)),
        seed=seed)


def run_measures(data: AuditInput, measures: dict, bar: bool | None = None, say=progress,
                 seed: int = SEED, generator=None) -> list[Outcome]:
    """Every unit of every measure on the release, each run's summary and records kept in memory
    (`Outcome`). `bar`: a progress bar on stderr (None: when stderr is a terminal), else a line per
    step to `say`. `seed`: of every random draw (the audit's is `SEED`; the measure functions take
    the caller's). `generator`: the `GeneratorInHand` (its refits report to a bar or to `say`)."""

    from .progress_bar import FitProgress, StepProgress

    fits = FitProgress(say, enabled=bar)
    if generator is not None:
        generator = dataclasses.replace(generator, progress=fits)
    inputs = measure_input(data, seed, generator)
    plan = plan_runs(measures, data.schema)
    with StepProgress(len(plan), say, enabled=bar) as steps:
        try:
            return run_units(plan, lambda: inputs, {"dataset": DATASET, "generator": RELEASE, "seed": seed},
                             announce=steps.announce)
        finally:
            fits.close()
