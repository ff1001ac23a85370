"""KDE membership-inference attacks (Pathak & Jana 2026, arXiv:2603.10937) and the fixed-
threshold baseline ("Method 1", El Emam, Mosquera & Fang 2022), on Gower nearest distances.

Attack-set design (El Emam, Mosquera & Fang, JAMIA Open 2022;5(4):ooac083). The F1 of a membership
attack depends on the share of members in the set it is scored on; El Emam et al. show that this
share must equal the sampling fraction t = n / N of the training data from its population, so that
calling everyone a member scores F1 = 2t / (1 + t). Our splits (synthrisk.data.split) draw train,
holdout and aux without replacement from the rows of `real.parquet`, so the population the members
were drawn from is that table: t = n_train / len(real). (With `members: leading` on Adult the
members are all of adult.data and the population is adult.data + adult.test: t = 32,561 / 48,842.)
The attack set is then made of the scored members and holdout non-members, one of the two
subsampled (seeded, the same for every generator of a seed) so that members make up t of it.

τ rules. Every hard-label figure says how its threshold was chosen (`tau_rule`):
- `label-free: ...`: the attacker can apply the rule without membership labels;
- `oracle: ...`: the τ of the grid with the best F1 on the true labels, which no attacker can pick;
  kept for comparison with the papers' best-over-τ figures.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import ConfigError, DataError
from ..stats.sampling import sample_positions
from .gower import GowerSpace, nearest_synthetic
from .kde import DistanceDensity, member_probability
from .metrics import label_metrics, score_metrics
from .settings import DEFAULT_MAX_ATTACK, DEFAULT_MIN_ATTACK_MEMBERS, DEFAULT_THRESHOLDS, MEMBER_SHARE_RULES, MiaSettings

# Plain ASCII without table delimiters: these strings go into the CSV, Markdown and LaTeX tables.
ORACLE_RULE = "oracle: grid tau with the best F1 on the true labels"
TRUE_RULE = "true distribution (KDEs cross-fitted on the labels by design): member if posterior at least 0.5 with prior t"
REALISTIC_RULE = "label-free: tau = median aux distance; member if posterior at least 0.5 with prior t"
METHOD1_RULE = ("label-free: grid tau maximising the attacker's F1 estimate from t and known reference "
                "non-members (the aux records)")
METHOD1_UNAVAILABLE = "label-free: not available (needs reference non-members, i.e. an aux set)"
_SUBSAMPLE_STREAM = 0x4D4941  # keeps the attack-set draw independent of the other seeded draws


@dataclass
class MiaResult:
    true_distribution: dict
    baseline: dict
    realistic: dict | None
    by_threshold: list[dict]
    records: pd.DataFrame
    prior: float
    summary: dict = field(default_factory=dict)
    baseline_oracle: dict | None = None
    realistic_oracle: dict | None = None
    aux_member_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def to_json(self) -> dict:
        """docs/design.md keys at the top level (the true-distribution KDE attack): `auc`, `f1`,
        `precision`, `tpr_at_fpr`; `baseline` (Method 1) and `realistic` with the same keys, their
        hard labels at a τ chosen without labels (`tau_rule` says how). `baseline_oracle_tau` and
        `realistic_oracle_tau` hold the F1 at the grid τ picked with the true labels (an oracle, as
        in the papers' best-over-τ comparisons); `by_threshold` has both attacks at every τ of the
        grid. The attack-set design (`member_share`, `member_share_target`, `member_share_rule`,
        `population_size`, aux composition) is at the top level."""
        top = {k: v for k, v in self.true_distribution.items() if k != "roc"}
        return {**top, "prior": self.prior, "tau_rule": TRUE_RULE, "baseline": _strip(self.baseline),
                "baseline_oracle_tau": self.baseline_oracle,
                "realistic": _strip(self.realistic) if self.realistic else None,
                "realistic_oracle_tau": self.realistic_oracle,
                "by_threshold": self.by_threshold, **self.summary}

    def roc(self) -> dict:
        curves = {"kde_true": self.true_distribution["roc"], "distance": self.baseline["roc"]}
        if self.realistic:
            curves["kde_realistic"] = self.realistic["roc"]
        return curves


def _strip(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if k != "roc"}


def _check(frames: dict[str, pd.DataFrame], schema: DatasetSchema) -> dict[str, pd.DataFrame]:
    """Each file conformed to the schema (which names its missing or unknown columns and drops the
    schema's `drop` columns from whichever file has them)."""
    out = {}
    for name, frame in frames.items():
        out[name] = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=name)
        if len(out[name]) == 0:
            raise DataError(f"{name} is empty: the attack needs records there")
    return out


def _metrics(p, y):
    return {**label_metrics(y, (p >= 0.5).astype(int)), **score_metrics(y, p)}


def _attack_with_kde(d_attack, y, d_member_fit, d_non_fit, prior):
    p = member_probability(d_attack, DistanceDensity().fit(d_member_fit), DistanceDensity().fit(d_non_fit), prior)
    return p, _metrics(p, y)


def _cross_fitted_kde(d, y, prior, folds, seed):
    """True-distribution attack scored out of fold: each record's probability comes from KDEs
    fitted on the other folds. Fitting and scoring on the same records (as the MIA-KDE code does)
    lets the density ratio fit noise and shows an AUC above 0.5 even for the `independent`
    generator; cross-fitting removes that optimism. Folds are stratified (members and non-members
    dealt out separately), so every fitting part has both kinds even with few members."""
    n_members, n_non = int(y.sum()), int(len(y) - y.sum())
    if min(n_members, n_non) < 2:
        raise DataError(f"the attack set has {n_members} member(s) and {n_non} non-member(s); "
                        "the true-distribution attack needs at least 2 of each")
    folds = max(2, min(folds, n_members, n_non))
    rng = np.random.default_rng(seed)
    fold = np.empty(len(d), dtype=int)
    for label in (1, 0):
        where = np.flatnonzero(y == label)
        fold[where] = rng.permutation(len(where)) % folds
    p = np.empty(len(d))
    for k in range(folds):
        train, test = fold != k, fold == k
        members, non = DistanceDensity().fit(d[train & (y == 1)]), DistanceDensity().fit(d[train & (y == 0)])
        p[test] = member_probability(d[test], members, non, prior)
    return p, _metrics(p, y)


def resolve_member_share(member_share, n_members: int, population_size: int | None) -> tuple[float | None, str]:
    """(target member share of the attack set or None for "use every record", how it was set).

    `member_share`: a number in (0, 1); "sampling_fraction" (El Emam et al.: t = n_members /
    population_size); "all" (no subsampling); None = "sampling_fraction" when `population_size` is
    given, else "all"."""
    if member_share is None:
        member_share = "sampling_fraction" if population_size is not None else "all"
    if isinstance(member_share, str):
        if member_share == "all":
            return None, "all: every member and non-member given"
        if member_share != "sampling_fraction":
            raise ConfigError(f"mia.member_share must be a number in (0, 1) or one of {list(MEMBER_SHARE_RULES)}, "
                              f"got {member_share!r}")
        if population_size is None:
            raise ConfigError("mia.member_share = sampling_fraction needs the population size "
                              "(the number of rows the members were drawn from)")
        if not n_members < population_size:
            raise ConfigError(f"population size {population_size} must exceed the {n_members} members")
        return n_members / population_size, (f"sampling_fraction: t = n_train / N = {n_members} / {population_size} "
                                             "(El Emam et al. 2022)")
    share = float(member_share)
    if not 0 < share < 1:
        raise ConfigError(f"mia.member_share must lie strictly between 0 and 1, got {share}")
    return share, "configured"


@dataclass(frozen=True)
class AttackPlan:
    """How many members and non-members are scored, and how many members go to the aux set."""

    n_members: int
    n_non_members: int
    n_aux_members: int
    notes: tuple[str, ...] = ()
    #: what the size cap changed (None: nothing), for the report
    subsample_note: str | None = None

    def positions(self, n_members: int, n_non_members: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions of the aux members, the scored members and the scored non-members: one seeded
        draw, so that attacks with equal plans (the membership attacks and DOMIAS) score the same
        attack set. Aux members are members that are not scored."""
        rng = np.random.default_rng([seed, _SUBSAMPLE_STREAM])
        order = rng.permutation(n_members)
        aux = np.sort(order[:self.n_aux_members])
        scored = np.sort(order[self.n_aux_members:self.n_aux_members + self.n_members])
        return aux, scored, sample_positions(rng, n_non_members, self.n_non_members)


def plan_attack_set(n_members: int, n_non_members: int, target: float | None, n_aux_members: int,
                    min_members: int = DEFAULT_MIN_ATTACK_MEMBERS, max_attack: int | None = None) -> AttackPlan:
    """Sizes of the attack set and of the aux set's member part.

    Aux members are drawn from members that are *not* scored, so at most
    n_members - min(min_members, n_members) of them. The attack set is the largest one with member
    share `target` (all non-members and a subsample of the members, or the reverse); when that
    leaves fewer than `min_members` members (tiny samples from a large population), `min_members`
    are scored against every non-member the share allows, and the note says the share is missed."""
    notes = []
    floor = max(1, min(min_members, n_members))
    k = max(0, min(n_aux_members, n_members - floor))
    if k < n_aux_members:
        notes.append(f"{n_aux_members} aux members wanted, {k} drawn: aux members come from members not "
                     f"scored and at least {floor} members stay in the attack set")
    available = n_members - k
    if target is None:
        n_m, n_nm = available, n_non_members
    else:
        n_m = int(round(target / (1 - target) * n_non_members))
        n_nm = n_non_members
        if n_m > available:
            n_m, n_nm = available, int(round(available * (1 - target) / target))
        if n_m < floor:
            n_m = floor
            n_nm = int(round(floor * (1 - target) / target))
            notes.append(f"member share {target:.4g} would leave fewer than min_attack_members = {min_members} "
                         f"members; {floor} members are scored, so the share is above the target")
        n_nm = max(1, min(n_nm, n_non_members))
    note = None
    if max_attack is not None and n_m + n_nm > max_attack:
        # the same member share in a seeded sample of max_attack records (the draws take the first
        # of the same permutations, so the sample is part of the uncapped attack set)
        scale = max_attack / (n_m + n_nm)
        capped_m = min(n_m, max(floor, 2, int(round(n_m * scale))))
        capped_nm = min(n_nm, max(2, max_attack - capped_m))
        note = (f"attack set capped at mia.max_attack = {max_attack:,}: {capped_m:,} of {n_m:,} members and "
                f"{capped_nm:,} of {n_nm:,} non-members scored (drawn at random, seeded; same member share); the "
                "AUC's interval and tests are that sample's")
        notes.append(note)
        n_m, n_nm = capped_m, capped_nm
    return AttackPlan(n_m, n_nm, k, tuple(notes), note)


def method1_label_free_tau(d_attack, d_reference, member_share: float, thresholds) -> tuple[float, float]:
    """(τ, the attacker's own F1 estimate at τ) for Method 1, without membership labels.

    The attacker knows the attack set's distances (not who is a member), the member share t of
    the attack set (the sampling fraction, public in El Emam et al.'s design) and the distances of
    reference records known not to be members (the aux split). At each grid τ the expected number of
    non-members within τ is (1 - t) n F_ref(τ), so the true positives are estimated as
    #{d <= τ} - (1 - t) n F_ref(τ) (clipped to [0, min(#{d <= τ}, t n)]) and
    F1 = 2 TP / (#{d <= τ} + t n). The τ with the largest estimate is chosen (ties: the smallest);
    nothing in it depends on which attack record is a member."""
    d, ref = np.asarray(d_attack, dtype=float), np.asarray(d_reference, dtype=float)
    if len(ref) == 0:
        raise DataError("Method 1's label-free τ needs reference non-member distances")
    n, expected_members = len(d), member_share * len(d)
    best = None
    for tau in sorted(float(t) for t in thresholds):
        predicted = float(np.sum(d <= tau))
        false_positives = (1 - member_share) * n * float(np.mean(ref <= tau))
        true_positives = min(max(predicted - false_positives, 0.0), predicted, expected_members)
        denominator = predicted + expected_members
        f1 = 2 * true_positives / denominator if denominator > 0 else 0.0
        if best is None or f1 > best[1] + 1e-12:
            best = (tau, f1)
    return best


def membership_attack(
    members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
    aux: pd.DataFrame | None = None, aux_member_fraction: float = MiaSettings.aux_member_fraction,
    thresholds=DEFAULT_THRESHOLDS, prior: float | None = None, seed: int = 0, realistic: bool = True,
    folds: int = 5, member_share: float | str | None = None, population_size: int | None = None,
    min_attack_members: int = DEFAULT_MIN_ATTACK_MEMBERS, max_attack: int | None = DEFAULT_MAX_ATTACK,
) -> MiaResult:
    """Attack set = members + non-members at a set member share; distances to the nearest
    synthetic record.

    `members` are all training records, `holdout` held-out records of the same population (the
    attack's non-members).
    `member_share` sets the attack set's share of members (see `resolve_member_share`; with
    `population_size` given the default is El Emam et al.'s sampling fraction
    len(members) / population_size); members or non-members are subsampled with `seed` to reach it.
    With more than `max_attack` records in that attack set, a seeded sample of `max_attack` at the
    same share is scored (`subsample_note` says so; the AUC's interval is the sample's).

    `aux` holds population records that are not members; the realistic attacker's auxiliary set
    mixes them with members so that `aux_member_fraction` of it are members (the attacker does not
    know which). Those members are drawn from the members left out of the attack set, never from
    the scored ones (`aux_member_ids`). The aux records also serve Method 1's label-free τ as
    reference non-members. Set `realistic=False` to skip the realistic attack.

    `prior` is P(member) in the posterior. None (default) uses the attack set's member share t,
    which the design makes public (the sampling fraction); member if the posterior is >= 0.5, i.e.
    if the density ratio f_m / f_nm is >= (1 - t) / t. The MIA-KDE code fixes 0.5, which biases
    hard labels whenever the member share is not one half; pass 0.5 to match it.
    """
    thresholds = [float(t) for t in thresholds]
    if not thresholds or not all(0 <= t <= 1 for t in thresholds):
        raise ConfigError(f"mia thresholds must lie in [0, 1], got {thresholds}")
    if prior is not None and not 0 < prior < 1:
        raise ConfigError(f"prior must lie strictly between 0 and 1, got {prior}")
    if not 0 <= aux_member_fraction <= 1:
        raise ConfigError(f"aux_member_fraction must lie in [0, 1], got {aux_member_fraction}")
    if min_attack_members < 2:
        raise ConfigError(f"min_attack_members must be at least 2, got {min_attack_members}")
    if max_attack is not None and (isinstance(max_attack, bool) or int(max_attack) != max_attack or max_attack < 4):
        raise ConfigError(f"max_attack must be an integer >= 4 or null (no cap), got {max_attack}")
    if realistic and aux is None:
        raise ConfigError("the realistic attack needs an auxiliary set (--aux / n_aux > 0)")
    frames = {"members": members, "non-members": holdout, "synthetic": synthetic}
    if aux is not None and len(aux):
        frames["aux"] = aux
    typed = _check(frames, schema)
    has_aux = "aux" in typed
    real_parts = [typed[k] for k in ("members", "non-members", "aux") if k in typed]
    unknown_levels = schema.unknown_level_shares(pd.concat(real_parts, ignore_index=True), typed["synthetic"],
                                                 what="synthetic", reference="real records")
    target, share_rule = resolve_member_share(member_share, len(members), population_size)

    n_aux = len(typed["aux"]) if realistic else 0
    plan = plan_attack_set(len(members), len(holdout), target, int(round(aux_member_fraction * n_aux)),
                           min_attack_members, max_attack)
    for note in plan.notes:
        warnings.warn(f"membership attack: {note}", stacklevel=2)
    aux_pos, member_pos, non_pos = plan.positions(len(members), len(holdout), seed)

    real = pd.concat([typed["members"], typed["non-members"]] + ([typed["aux"]] if has_aux else []),
                     ignore_index=True)
    space = GowerSpace.fit(real, schema)
    d_m, i_m = nearest_synthetic(typed["members"].iloc[member_pos], typed["synthetic"], space)
    d_nm, i_nm = nearest_synthetic(typed["non-members"].iloc[non_pos], typed["synthetic"], space)
    d_ref = nearest_synthetic(typed["aux"], typed["synthetic"], space)[0] if has_aux else np.zeros(0)
    d = np.concatenate([d_m, d_nm])
    y = np.concatenate([np.ones(len(d_m), int), np.zeros(len(d_nm), int)])
    share = float(y.mean())

    true_prior = share if prior is None else prior
    p_true, true_metrics = _cross_fitted_kde(d, y, true_prior, folds, seed)
    true_metrics["tau_rule"] = TRUE_RULE
    distance_metrics = score_metrics(y, -d)
    rows, best_baseline, best_realistic, p_real_best, realistic_oracle = [], None, None, None, None
    if realistic:
        d_aux_m = nearest_synthetic(typed["members"].iloc[aux_pos], typed["synthetic"], space)[0]
        d_aux = np.concatenate([d_aux_m, d_ref[: n_aux - plan.n_aux_members]])

    def realistic_at(tau):
        presumed = d_aux < tau
        if presumed.sum() < 2 or (~presumed).sum() < 2:
            return None, None  # every aux record on one side of tau: no two densities to fit
        real_prior = share if prior is None else prior
        p_real, metrics = _attack_with_kde(d, y, d_aux[presumed], d_aux[~presumed], real_prior)
        return p_real, {**metrics, "tau": float(tau), "prior": real_prior, "n_presumed_members": int(presumed.sum())}

    for tau in thresholds:
        row = {"tau": tau, "method1": label_metrics(y, (d <= tau).astype(int))}
        if best_baseline is None or row["method1"]["f1"] > best_baseline["f1"]:
            best_baseline = {**row["method1"], "tau": tau}
        if realistic:
            metrics = realistic_at(tau)[1]
            row["realistic"] = _strip(metrics) if metrics else None
            if metrics and (realistic_oracle is None or metrics["f1"] > realistic_oracle["f1"]):
                realistic_oracle = {k: metrics[k] for k in ("f1", "f1_relative", "f1_naive", "precision", "recall",
                                                            "accuracy", "tau", "prior")}
        rows.append(row)
    if realistic_oracle is not None:
        realistic_oracle["tau_rule"] = ORACLE_RULE
    if realistic:
        # Reported at a τ the attacker can choose without labels: the median auxiliary distance
        # (the MIA-KDE default); the grid above shows every other τ.
        # When over half the aux records are exact copies (median 0, nothing strictly below), the
        # next distinct distance is used so that the copies are the presumed members.
        tau = float(np.median(d_aux))
        p_real_best, best_realistic = realistic_at(tau)
        above = np.unique(d_aux[d_aux > tau])
        if best_realistic is None and len(above):
            p_real_best, best_realistic = realistic_at(float(above[0]))
        if best_realistic is not None:
            best_realistic["tau_rule"] = REALISTIC_RULE

    if has_aux:
        tau, estimate = method1_label_free_tau(d, d_ref, share, thresholds)
        baseline = {**distance_metrics, **label_metrics(y, (d <= tau).astype(int)), "tau": tau,
                    "f1_estimated_by_attacker": estimate, "tau_rule": METHOD1_RULE}
    else:
        baseline = {**distance_metrics, "f1": None, "f1_relative": None, "precision": None, "recall": None,
                    "tau": None, "tau_rule": METHOD1_UNAVAILABLE}
    baseline_oracle = {**best_baseline, "tau_rule": ORACLE_RULE}

    ids_m, ids_nm = row_ids(members), row_ids(holdout)
    records = pd.DataFrame({ROW_ID: np.concatenate([ids_m[member_pos], ids_nm[non_pos]]), "member": y,
                            "distance": d, "nearest_synthetic": np.concatenate([i_m, i_nm]),
                            "p_member_true": p_true})
    if p_real_best is not None:
        records["p_member_realistic"] = p_real_best
    summary = {"n_attack": int(len(y)), "member_share": share,
               "member_share_target": target, "member_share_rule": share_rule,
               "population_size": population_size, "min_attack_members": int(min_attack_members),
               "n_members_available": int(len(members)), "n_non_members_available": int(len(holdout)),
               "n_aux": int(n_aux), "n_aux_members": int(plan.n_aux_members),
               "aux_member_share": float(plan.n_aux_members / n_aux) if n_aux else None,
               "aux_members_disjoint_from_attack_set": True,
               "design_notes": list(plan.notes),
               "max_attack": max_attack, "capped": plan.subsample_note is not None,
               "subsample_note": plan.subsample_note,
               "unknown_level_share": unknown_levels,
               "exact_copy_share_members": float(np.mean(d_m <= 1e-12)),
               "exact_copy_share_non_members": float(np.mean(d_nm <= 1e-12)),
               "median_distance_members": float(np.median(d_m)),
               "median_distance_non_members": float(np.median(d_nm))}
    return MiaResult(true_metrics, baseline, best_realistic, rows, records, true_prior, summary,
                     baseline_oracle, realistic_oracle, ids_m[aux_pos])
