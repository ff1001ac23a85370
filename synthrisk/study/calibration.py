"""The verdicts checked the way they are used: simulated releases whose truth is known, audited as a
steward audits a release (`synthrisk.release_audit`'s library path), and the rates at which each verdict
fires.

Per split, members, holdout and the records each release is made from are disjoint draws of one
population (Adult without replacement; the simulator, fresh draws; at sizes beyond Adult, a
bootstrap of Adult with jitter on the numeric columns, so that no two draws share a record).

Nulls, releases that never saw the members:
- `population` (also called `second_holdout`: a second holdout, released as it is): fresh records
  of the population;
- `cart`: the `cart` generator fitted on other records of the population;
- `holdout`: the holdout itself (the release is the unseen records).
Positive controls, releases that did see them:
- `copies_q`: population records of which a share q are replaced by copies of members;
- `rare_q`: the same with copies of the rarest share q of the members (`rarest`: those farthest
  from every other real record), the records a leak harms most;
- `leaky`: the `leaky` generator fitted on the members (10% member copies, independent columns).

For each release the audit's risk verdicts (level per risk) and each attack's Holm decision are
recorded; `rates` turns them into the false-positive rate (nulls) or power (positives) with exact
Clopper-Pearson intervals, and `smallest_detected` gives, per n, the smallest member-copy share
detected with at least 80% power.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..measures.calibrated_power import COLUMNS as PUBLISHED_COLUMNS
from ..measures.calibrated_power import STUDY_ATTACKS
from ..measures.policy import LEVELS, Policy
from ..release_audit.checks import RecordCheckError
from ..stats.proportions import clopper_pearson

NULLS = ("population", "cart", "holdout")
#: `rates`' kind of release. Not "null": pandas reads that word back as a missing value.
NULL_KIND, POSITIVE_KIND = "null release", "positive control"
#: the `attack` of a row holding a risk's verdict (the other rows hold one attack's decision)
RISK_VERDICT = "(risk verdict)"
#: the release of a split the audit's record checks refused (no verdict; not counted by `rates`)
REFUSED = "(refused by the record checks)"
COPY_SHARES = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
#: the positive controls' release kinds, in the order the studies draw them
POSITIVES = (*(f"copies_{q:g}" for q in COPY_SHARES), "leaky")
#: cheaper settings than the audit's own, with the same verdict logic: two RAPID attackers (boosted
#: trees, which can memorise records, and a pruned tree), 99 permutations and 3 refits; 300
#: anonymeter-style attacks
CHEAP_SETTINGS = {"rapid": {"attackers": ["gbm", "cart"], "permutations": 99, "null_refits": 3},
                  **{name: {"n_attacks": STUDY_ATTACKS} for name in ("singling_out", "linkability", "inference")}}
#: the study's settings: the cheaper ones without RAPID's chance tests (label permutations and refits).
#: Those give RAPID's population-level figures, which no verdict reads when a holdout is given: the
#: attribute-inference verdict then rests on the member excess, an exact test on the scores of the
#: attackers fitted once (`synthrisk.rapid.core`), which the tests neither change nor draw from.
#: At 30,000 members they halve RAPID's time per release. Earlier studies ran CHEAP_SETTINGS
#: (docs/methods/calibration.md, "The study", says which); `test_the_studys_settings_give_the_cheaper_settings_verdicts`
#: checks that the verdicts are the same.
STUDY_SETTINGS = {**{name: dict(settings) for name, settings in CHEAP_SETTINGS.items()},
                  "rapid": {**CHEAP_SETTINGS["rapid"], "permutations": 0, "null_refits": 0}}
#: measures of each risk the study runs (utility is no verdict; DOMIAS needs an aux set)
RISK_MEASURES = ("mia", "dcr", "rapid", "singling_out", "linkability", "inference")


@dataclass
class Population:
    """Draws of disjoint record sets of one population."""

    name: str
    schema: DatasetSchema
    frame: pd.DataFrame | None = None
    jitter: bool = False
    _used: int = field(default=0, repr=False)

    @classmethod
    def of(cls, dataset: str, needed: int, seed: int) -> Population:
        from ..data.loaders import builtin_schema

        schema = builtin_schema(dataset)
        if dataset == "simulation":
            from ..data.simulate import simulate

            return cls(dataset, schema, schema.conform(simulate(n=needed, strength=0.8, seed=seed)))
        from ..data.loaders import load_dataset

        frame = schema.conform(load_dataset(schema))
        rng = np.random.default_rng(seed)
        if needed <= len(frame):
            return cls(dataset, schema, frame.iloc[rng.permutation(len(frame))].reset_index(drop=True))
        # Beyond the real records: a bootstrap with jitter, so that copies of one record differ.
        boot = frame.iloc[rng.integers(0, len(frame), needed)].reset_index(drop=True)
        for column in schema.numeric:
            values = boot[column].astype(float)
            spread = np.nanstd(values) * 0.02
            jittered = values + rng.normal(0, spread, len(values))
            boot[column] = (jittered.round() if schema.columns[column] == "integer" else jittered)
            if schema.columns[column] == "integer":
                boot[column] = boot[column].astype("Int64")
        return cls(dataset, schema, boot, jitter=True)

    def take(self, n: int) -> pd.DataFrame:
        if self._used + n > len(self.frame):
            raise ValueError(f"population {self.name}: {n} more records asked, {len(self.frame) - self._used} left")
        part = self.frame.iloc[self._used:self._used + n].reset_index(drop=True)
        self._used += n
        return part


def rarest(members: pd.DataFrame, holdout: pd.DataFrame, schema: DatasetSchema, share: float) -> np.ndarray:
    """The positions of the share of members farthest (Gower) from every other real record, members
    and holdout pooled."""
    from ..mia.gower import GowerSpace, nearest_others

    real = pd.concat([members, holdout], ignore_index=True)[list(schema.columns)]
    isolation = nearest_others(real, GowerSpace.fit(real, schema))[: len(members), 0]
    k = max(1, int(round(share * len(members))))
    return np.argsort(-isolation, kind="stable")[:k]


def releases(members: pd.DataFrame, holdout: pd.DataFrame, population: Population, schema: DatasetSchema,
             kinds: list[str], seed: int) -> dict[str, pd.DataFrame]:
    """The synthetic release of each kind (see the module's docstring), drawn in `kinds`' order."""
    from ..generators.run import run_generator

    n = len(members)
    out = {}
    rng = np.random.default_rng([seed, 0xCA1])
    base = None
    for kind in kinds:
        if kind in ("population", "second_holdout"):
            out[kind] = population.take(n)
        elif kind == "holdout":
            out[kind] = holdout.copy()
        elif kind in ("cart", "leaky"):
            source = population.take(n) if kind == "cart" else members
            synthetic, status = run_generator(kind, {"backend": kind}, source, schema, n=n, seed=seed)
            if status["status"] != "ok":
                raise RuntimeError(f"{kind}: {status['error']}")
            out[kind] = synthetic
        elif kind.startswith(("copies_", "rare_")):
            # One population draw serves every share: the releases differ only in their copies.
            base = population.take(n) if base is None else base
            share = float(kind.split("_", 1)[1])
            k = int(round(share * n))
            if kind.startswith("rare_"):
                copied = rarest(members, holdout, schema, share)
                k = len(copied)
            kept = base.drop(index=rng.choice(n, size=k, replace=False))
            if kind.startswith("copies_"):
                copied = rng.choice(n, size=k, replace=False)
            mixed = pd.concat([kept, members.iloc[copied]], ignore_index=True)
            out[kind] = mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)
            # which members the release holds (their positions): the truth a naming is checked against
            # (a list, not an array: pandas writes a frame's attrs into a Parquet file's JSON metadata)
            out[kind].attrs["copied"] = sorted(int(i) for i in copied)
        else:
            raise ValueError(f"unknown release kind {kind!r}")
    return out


def audit_frames(members: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema,
                 policy: Policy, measures: tuple[str, ...] = RISK_MEASURES,
                 checked=None, settings: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame, object]:
    """(risk table, attack decisions, checked input) of one release, through the audit's own input
    checks and measures (`synthrisk.release_audit`), with `settings` per measure (default
    STUDY_SETTINGS). `checked`: the checked input of another release of the same split (the checks
    of members and holdout are not redone; the release's own are)."""
    import dataclasses

    import yaml

    from ..measures.verdict import decisions
    from ..release_audit import run as audit_run
    from ..release_audit.inputs import read_inputs
    from ..release_audit.summary import summarise

    with tempfile.TemporaryDirectory(prefix="synthrisk-calibration-") as tmp:
        folder = Path(tmp)
        (folder / "schema.yaml").write_text(yaml.safe_dump(schema.to_dict(), sort_keys=False))
        if checked is None:
            for role, frame in (("train", members), ("holdout", holdout), ("synthetic", synthetic)):
                frame.to_parquet(folder / f"{role}.parquet", index=False)
            data = read_inputs(str(folder / "train.parquet"), str(folder / "synthetic.parquet"),
                               str(folder / "holdout.parquet"), str(folder / "schema.yaml"))
        else:
            typed = schema.conform(synthetic, what="synthetic")
            schema.unknown_level_shares(pd.concat([checked.members, checked.holdout]), typed, what="synthetic")
            data = dataclasses.replace(checked, synthetic=typed)
        settings = STUDY_SETTINGS if settings is None else settings
        chosen = {name: (m, m.settings({**(settings.get(name) or {})}))
                  for name, (m, _) in audit_run.audit_measures().items() if name in measures}
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            runs = audit_run.run_measures(data, chosen, bar=False)
            found = summarise(runs, chosen, data, policy)
        return found.risks, decisions(found.evidence, policy), data


def study(dataset: str, n: int, splits: int, kinds: list[str], seed: int = 0, policy: Policy | None = None,
          measures: tuple[str, ...] = RISK_MEASURES, progress=None,
          only: dict[int, set[str]] | None = None, settings: dict | None = None) -> pd.DataFrame:
    """One row per (split, release kind, risk or attack): `verdict` 1 when an attack of the risk beats
    its reference (resp. the attack does), `material` 1 when the risk is "at risk".

    `only` {split: release kinds}: audit just these releases of these splits, an earlier study's rows
    re-checked by the current code (`splits` is then ignored). The splits are drawn as that study drew
    them, so `kinds` must be its release kinds in its order: the records each release takes from the
    population, and the copies' draws, depend on them. `settings` per measure: `audit_frames`'
    (default STUDY_SETTINGS; `{}` is the audit's own)."""
    policy = policy or Policy()
    per_split = n * (2 + sum(1 for k in kinds if k in ("population", "cart"))
                     + any(k.startswith("copies_") for k in kinds))
    if only is not None:
        unknown = {k for wanted in only.values() for k in wanted} - set(kinds)
        if unknown:
            raise ValueError(f"releases to re-check {sorted(unknown)} are not among the study's kinds {kinds}")
    chosen = sorted(only) if only is not None else range(splits)
    rows = []
    for done, split in enumerate(chosen, start=1):
        population = Population.of(dataset, per_split,
                                   seed=int(np.random.SeedSequence([seed, split]).generate_state(1)[0]))
        schema = population.schema
        members, holdout = population.take(n), population.take(n)
        checked = None
        found = []
        key = {"dataset": dataset, "n": n, "split": split}
        try:
            for kind, synthetic in releases(members, holdout, population, schema, kinds, seed=split).items():
                if only is not None and kind not in only[split]:
                    continue
                risks, attacks, checked = audit_frames(members, holdout, synthetic, schema, policy, measures,
                                                       checked, settings)
                found += [{**key, "release": kind, "risk": r.risk, "attack": RISK_VERDICT,
                           "verdict": int(bool(r.beats)), "material": int(r.level == LEVELS["at_risk"])}
                          for r in risks.itertuples()]
                found += [{**key, "release": kind, "risk": a.risk, "attack": f"{a.measure}: {a.attack}",
                           "verdict": int(a.beats), "material": np.nan} for a in attacks.itertuples()]
        except RecordCheckError as refusal:
            # The audit's record checks refuse some random splits too (a holdout with more repeated
            # records than random halves of the pooled records have, at p <= 0.001): no verdict is
            # given, so the split counts neither way; it is kept as one row saying why.
            found = [{**key, "release": REFUSED, "risk": "", "attack": str(refusal), "verdict": np.nan,
                      "material": np.nan}]
        rows.extend(found)
        if progress:
            progress(done, len(chosen), pd.DataFrame(rows))
    return pd.DataFrame(rows)


#: one cell of the calibration table
CELL = ["dataset", "n", "release", "risk", "attack"]


def rates(results: pd.DataFrame, confidence: float = 0.95, recorded: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per dataset x n x release x risk x attack: the share of splits with a verdict (a false-positive
    rate for a null, power for a positive control) and its Clopper-Pearson interval; the same for
    "at risk" (material).

    `recorded`: counts of earlier studies whose per-split rows were not kept (`check_recorded`; risk
    verdicts only), added to the same cells' counts. Their at-risk calls count only where the current
    interval made them (`at_risk_interval` "current")."""
    counted = _counts(results[results["release"] != REFUSED])
    if recorded is not None and len(recorded):
        check_recorded(recorded)
        current = recorded["at_risk_interval"] == "current"
        earlier = recorded.assign(attack=RISK_VERDICT, at_risk=recorded["at_risk"].where(current, 0),
                                  at_risk_splits=recorded["splits"].where(current, 0))[list(counted.columns)]
        counted = (pd.concat([counted, earlier], ignore_index=True)
                   .groupby(CELL, as_index=False, sort=True).sum())
    rows = []
    for cell in counted.itertuples(index=False):
        k, m, km, mm = int(cell.fired), int(cell.splits), int(cell.at_risk), int(cell.at_risk_splits)
        low, high = clopper_pearson(k, m, confidence)
        mlow, mhigh = clopper_pearson(km, mm, confidence) if mm else (np.nan, np.nan)
        rows.append({**{c: getattr(cell, c) for c in CELL},
                     "kind": NULL_KIND if cell.release in NULLS else POSITIVE_KIND, "splits": m, "rate": k / m,
                     "rate_low": low, "rate_high": high, "rate_at_risk": km / mm if mm else np.nan,
                     "at_risk_splits": mm, "rate_at_risk_low": mlow, "rate_at_risk_high": mhigh})
    return pd.DataFrame(rows)


#: columns of recorded counts (`rates`): per cell, splits, splits whose risk verdict fired and splits
#: called at risk, which interval made the at-risk calls, and the seeds the splits were drawn from
RECORDED_COLUMNS = ["dataset", "n", "release", "risk", "splits", "fired", "at_risk", "at_risk_interval", "seeds",
                    "source"]
AT_RISK_INTERVALS = ("current", "first-order")


def check_recorded(recorded: pd.DataFrame) -> None:
    """Recorded counts as `rates` needs them, or a ValueError naming the column and the cell."""
    missing = [c for c in RECORDED_COLUMNS if c not in recorded.columns]
    if missing:
        raise ValueError(f"no column {', '.join(missing)}")
    for column in ("n", "splits", "fired", "at_risk"):
        values = pd.to_numeric(recorded[column], errors="coerce")
        bad = values.isna() | (values != values.round()) | (values < 0)
        if bad.any():
            raise ValueError(f"column {column}: {recorded.loc[bad, column].iloc[0]!r} is not a count "
                             f"(row {int(bad.to_numpy().argmax()) + 1})")
    bad = ~((recorded["at_risk"] <= recorded["fired"]) & (recorded["fired"] <= recorded["splits"]))
    if bad.any():
        raise ValueError(f"row {int(bad.to_numpy().argmax()) + 1}: at_risk <= fired <= splits does not hold")
    bad = ~recorded["at_risk_interval"].isin(AT_RISK_INTERVALS)
    if bad.any():
        raise ValueError(f"column at_risk_interval: {recorded.loc[bad, 'at_risk_interval'].iloc[0]!r} is not one "
                         f"of {AT_RISK_INTERVALS}")
    seeds = recorded["seeds"].astype(str).str.fullmatch(r"\d+( \d+)*")
    if not seeds.all():
        raise ValueError(f"column seeds: {recorded.loc[~seeds, 'seeds'].iloc[0]!r} is not a list of seeds "
                         f"separated by spaces")
    if recorded.duplicated(["dataset", "n", "release", "risk"]).any():
        raise ValueError("a cell (dataset, n, release, risk) is recorded twice")


def recorded_seeds(recorded: pd.DataFrame, n: int) -> set[int]:
    """The seeds the recorded studies at n drew their splits from."""
    return {int(s) for seeds in recorded.loc[recorded["n"] == n, "seeds"].astype(str) for s in seeds.split()}


def _counts(results: pd.DataFrame) -> pd.DataFrame:
    """Per cell: splits, splits whose verdict fired, and splits called at risk out of those with an
    at-risk call (attack rows have none)."""
    return (results.assign(splits=1, fired=results["verdict"].astype(int),
                           at_risk=results["material"].fillna(0).astype(int),
                           at_risk_splits=results["material"].notna().astype(int))
            .groupby(CELL, as_index=False, sort=True)[["splits", "fired", "at_risk", "at_risk_splits"]].sum())


def smallest_detected(table: pd.DataFrame, power: float = 0.8) -> pd.DataFrame:
    """Per dataset x n x risk: the smallest member-copy share whose risk verdict fires in at least
    `power` of the splits (NaN when none does)."""
    verdicts = table[(table["attack"] == RISK_VERDICT) & table["release"].str.startswith("copies_")]
    verdicts = verdicts.assign(share=verdicts["release"].str.split("_").str[1].astype(float))
    rows = []
    for key, group in verdicts.groupby(["dataset", "n", "risk"]):
        hit = group[group["rate"] >= power].sort_values("share")
        rows.append({**dict(zip(["dataset", "n", "risk"], key)),
                     f"smallest_share_detected_{int(power * 100)}": hit["share"].iloc[0] if len(hit) else np.nan})
    return pd.DataFrame(rows)


def publish_table(table: pd.DataFrame, commit: str) -> pd.DataFrame:
    """The published form of `rates` output (`synthrisk.measures.calibrated_power.COLUMNS`): per dataset x n x
    risk x copy share, the risk verdict's power; beside it the verdict's highest false-positive rate over the
    null releases (and the upper end of its interval)."""
    verdicts = table[table["attack"] == RISK_VERDICT]
    nulls = verdicts[verdicts["release"].isin(NULLS)]
    worst = (nulls.sort_values("rate").groupby(["dataset", "n", "risk"]).tail(1)
             .set_index(["dataset", "n", "risk"])[["rate", "rate_high", "splits"]])
    copies = verdicts[verdicts["release"].str.startswith("copies_")]
    rows = []
    for r in copies.itertuples():
        null = worst.loc[(r.dataset, r.n, r.risk)] if (r.dataset, r.n, r.risk) in worst.index else None
        rows.append({"dataset": r.dataset, "n": int(r.n), "risk": r.risk, "share": float(r.release.split("_")[1]),
                     "splits": int(r.splits), "power": r.rate, "power_low": r.rate_low, "power_high": r.rate_high,
                     "null_rate": None if null is None else float(null["rate"]),
                     "null_rate_high": None if null is None else float(null["rate_high"]),
                     "null_splits": None if null is None else int(null["splits"]), "commit": commit})
    return pd.DataFrame(rows, columns=PUBLISHED_COLUMNS).sort_values(["dataset", "n", "risk", "share"]).reset_index(drop=True)
