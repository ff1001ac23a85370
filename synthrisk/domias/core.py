"""DOMIAS: membership inference by density ratio (van Breugel, Sun, Qian & van der Schaar,
"Membership Inference Attacks against Synthetic Data through Overfitting Detection", AISTATS 2023).

A generator that overfits puts more synthetic mass near its training records than the population
has there. DOMIAS scores a record x by

    score(x) = p_synthetic(x) / p_reference(x),

p_synthetic fitted on the synthetic data and p_reference on the attacker's sample of the population
(the aux records); a member is expected to score higher. We report log score = log p_synthetic -
log p_reference (same ranking, no overflow), and for comparison the paper's ablation that ranks by
p_synthetic alone (its Eq. 1, "no reference").

Density estimator: a product-kernel KDE for mixed data, one kernel per column,
- numeric columns (continuous and integer): Gaussian kernel, bandwidth h_k = b * sd_k, sd_k the
  column's standard deviation in the sample the density is fitted on;
- categorical columns: Aitchison-Aitken kernel, weight 1 - lambda_k on the record's own level and
  lambda_k / (c_k - 1) on each of the other c_k - 1 levels, lambda_k = b * (c_k - 1) / c_k (b = 1
  would make the column uniform, b -> 0 an exact match); c_k = the levels declared in the schema or
  seen in any of the frames, whichever are more;
- b = Scott's factor n^(-1/(d + 4)) (n records fitted, d columns), the factor of the paper's KDE
  variant (scipy.stats.gaussian_kde, as in the domias package and synthcity's DomiasMIA_KDE), or a
  number passed as `bandwidth`.
Why this estimator: the paper's KDE variant runs scipy's gaussian_kde on the columns as numbers, so
label codes of a categorical column become distances (level 7 is "near" level 8) and one full
covariance ties all columns to one scale; a Gaussian kernel on a one-hot embedding is, up to a
constant factor, an Aitchison-Aitken kernel with its own lambda, so the product kernel covers that
option with an interpretable lambda per column. It is the kernel of statsmodels' KDEMultivariate
(var_type 'c' and 'u'); our tests check equal densities on the same bandwidths. We do not call
statsmodels because its pdf loops over queried records in Python: in benchmarks/domias_vs_synthcity.py
(Adult, 13 columns, 2 shared cores) p_synthetic for the 24,421 attack records of the 30,000-member
design, fitted on 30,000 synthetic records, took about 190 s with statsmodels (extrapolated from 300
records; our bandwidths given, so no bandwidth selection, whose cross-validation default costs far
more) and 3.2 s here. Nor do we call scipy's gaussian_kde as the paper's code does: besides the
label codes, on Adult's raw scales its densities are far below the 1e-10 that DomiasMIA adds to
p_reference, so that score ranks by p_synthetic alone (same benchmark).
BNAF (the paper's best variant) needs a neural flow per density; it is left out for cost.

Missing values: a numeric column that has missing values in any frame gets a missingness kernel
as well (Aitchison-Aitken on "missing or not", lambda = b / 2); a kernel centred on a record with
the value missing spreads its observed part as a normal with the column's mean and sd. Every
kernel integrates to one. A categorical missing value is a level of its own.

Computation: exact sums, compiled with numba, parallel over queried records: per queried record
the log kernels of all fitted records are accumulated column by column (fitted data stored
column-major, so each pass is a straight loop), then combined by log-sum-exp (no underflow far from
the data); memory O(n_query + n_fit) (one buffer of n_fit per thread).

Attack set (the design of synthrisk.mia.attacks, reused): members and holdout non-members at
member share t (El Emam et al.'s sampling fraction n_members / N by default), aux members drawn
only from members that are not scored. The reference sample has the aux set's size, with aux
members in place of some aux records (as membership_attack builds its auxiliary set), so that it
is a sample of the population the members were drawn from: by default its member share is the
population's, n_members / population_size (0 when the population size is not given, i.e. a
reference of non-members only, as in the paper's experiments).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
import pandas as pd

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import ConfigError, DataError
from ..io import finite_or_null
from ..mia.attacks import (
    DEFAULT_MIN_ATTACK_MEMBERS,
    plan_attack_set,
    resolve_member_share,
)
from ..mia.metrics import score_metrics

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class DomiasResult:
    """`summary`: plain-JSON figures (see `to_json`); `records`: one row per scored record."""

    summary: dict
    records: pd.DataFrame
    aux_member_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def auc(self) -> float:
        return self.summary["auc"]

    def to_json(self) -> dict:
        """Plain JSON types. Keys: `auc`, `tpr_at_fpr`, `fpr_floor`, `n_members`, `n_non_members`,
        `roc` {fpr, tpr} (from `score_metrics`, on the log density ratio); `no_reference` (the same
        metrics without `roc` for the ablation that ranks by p_synthetic alone); `score`
        (what is ranked); `density` {estimator, bandwidth_rule, synthetic {n, factor},
        reference {n, factor}}; the attack-set design: `n_attack`, `member_share`,
        `member_share_target`, `member_share_rule`, `population_size`, `min_attack_members`,
        `n_members_available`, `n_non_members_available`, `n_aux`, `n_aux_members`,
        `aux_member_share`, `aux_members_disjoint_from_attack_set`, `design_notes`; `seed`,
        `unknown_level_share`."""
        return finite_or_null(self.summary)


@numba.njit(parallel=True, cache=True, fastmath=False)
def _log_density_kernel(q_num, q_cat, f_num_t, f_cat_t, column_missing, inv_h, cat_delta, both_miss, miss_obs,
                        obs_miss, miss_centre_mean, miss_centre_inv_sd, miss_centre_log_norm, out):
    """out[i] = log sum_j exp(l_ij), l_ij = the log kernel of fitted record j at query i minus the
    per-pair constant (added by the caller). Fitted data column-major (f_*_t[k, j]) so that each
    column's pass over the fitted records is a straight loop; then max and sum of exp (log-sum-exp).
    Columns with missing values anywhere take the branchy per-pair rules."""
    n_query, n_fit = q_num.shape[0], f_num_t.shape[1]
    n_num, n_cat = q_num.shape[1], q_cat.shape[1]
    for i in numba.prange(n_query):
        value = np.zeros(n_fit)
        for k in range(n_cat):
            level = q_cat[i, k]
            delta = cat_delta[k]
            column = f_cat_t[k]
            for j in range(n_fit):
                if column[j] != level:
                    value[j] += delta
        for k in range(n_num):
            a = q_num[i, k]
            scale = inv_h[k]
            column = f_num_t[k]
            if not column_missing[k]:
                for j in range(n_fit):
                    z = (a - column[j]) * scale
                    value[j] -= 0.5 * z * z
            elif np.isnan(a):
                for j in range(n_fit):
                    value[j] += both_miss[k] if np.isnan(column[j]) else miss_obs[k]
            else:
                zc = (a - miss_centre_mean[k]) * miss_centre_inv_sd[k]
                centre_missing = obs_miss[k] + miss_centre_log_norm[k] - 0.5 * zc * zc
                for j in range(n_fit):
                    b = column[j]
                    if np.isnan(b):
                        value[j] += centre_missing
                    else:
                        z = (a - b) * scale
                        value[j] -= 0.5 * z * z
        top = value.max()
        acc = 0.0
        for j in range(n_fit):
            acc += np.exp(value[j] - top)
        out[i] = top + np.log(acc)


@dataclass(frozen=True)
class MixedEncoding:
    """Numeric columns as floats (NaN = missing), categorical columns as integer codes shared by
    every frame, the number of levels per categorical column and which numeric columns have
    missing values anywhere."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    levels: tuple[dict, ...]
    n_levels: np.ndarray
    numeric_missing: np.ndarray

    @classmethod
    def fit(cls, frames: list[pd.DataFrame], schema: DatasetSchema) -> MixedEncoding:
        numeric, categorical = tuple(schema.numeric), tuple(schema.categorical)
        levels, n_levels = [], []
        for column in categorical:
            seen = dict.fromkeys(str(v) for v in schema.levels.get(column, []))
            for frame in frames:
                seen.update(dict.fromkeys(category_strings(frame[column])))
            levels.append({v: i for i, v in enumerate(seen)})
            n_levels.append(max(2, len(seen)))
        missing = np.array([any(frame[c].isna().any() for frame in frames) for c in numeric], dtype=bool)
        return cls(numeric, categorical, tuple(levels), np.array(n_levels, dtype=np.int64), missing)

    def encode(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        num = numeric_values(frame[list(self.numeric)]) if self.numeric else np.zeros((len(frame), 0))
        cat = np.empty((len(frame), len(self.categorical)), dtype=np.int64)
        for k, column in enumerate(self.categorical):
            index = self.levels[k]
            cat[:, k] = [index.get(v, -1) for v in category_strings(frame[column])]
        return np.ascontiguousarray(num, dtype=np.float64), np.ascontiguousarray(cat)


class MixedKde:
    """Product-kernel KDE (Gaussian for numeric, Aitchison-Aitken for categorical columns); see the
    module docstring. `bandwidth`: "scott" (b = n^(-1/(d+4))) or a number b in (0, 1]."""

    def __init__(self, encoding: MixedEncoding, bandwidth="scott"):
        self.encoding = encoding
        self.bandwidth = bandwidth

    def fit(self, frame: pd.DataFrame) -> MixedKde:
        num, cat = self.encoding.encode(frame)
        n, d = len(frame), num.shape[1] + cat.shape[1]
        if n == 0:
            raise DataError("MixedKde: no records to fit")
        if self.bandwidth == "scott":
            factor = n ** (-1.0 / (d + 4))
        else:
            factor = float(self.bandwidth)
            if not 0 < factor <= 1:
                raise ConfigError(f"domias bandwidth must be 'scott' or a number in (0, 1], got {self.bandwidth!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-missing columns give NaN, handled below
            sd = np.nanstd(num, axis=0, ddof=1) if n > 1 else np.full(num.shape[1], np.nan)
            mean = np.nanmean(num, axis=0)
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)  # constant column: any positive scale
        mean = np.where(np.isfinite(mean), mean, 0.0)
        h = factor * sd
        lam = factor * (self.encoding.n_levels - 1) / self.encoding.n_levels
        lam_miss = np.where(self.encoding.numeric_missing, factor / 2.0, 0.0)
        with np.errstate(divide="ignore"):
            log_keep_miss = np.log1p(-lam_miss)
            log_switch_miss = np.log(lam_miss)  # -inf where the column has no missing value anywhere
            log_same = np.log1p(-lam)
            log_other = np.log(lam / (self.encoding.n_levels - 1))
        # Per-pair constant: every categorical level matching, every numeric value observed on both.
        self.constant_ = float(np.sum(log_same) + np.sum(log_keep_miss - np.log(h) - _LOG_SQRT_2PI))
        self.cat_delta_ = np.ascontiguousarray(log_other - log_same)
        self.inv_h_ = 1.0 / h
        self.both_miss_ = np.log(h) + _LOG_SQRT_2PI  # a point mass replaces the observed density
        self.miss_obs_ = log_switch_miss - (log_keep_miss - np.log(h) - _LOG_SQRT_2PI)  # query missing
        self.obs_miss_ = log_switch_miss - log_keep_miss + np.log(h)  # centre missing (its normal added)
        self.miss_mean_, self.miss_inv_sd_ = mean, 1.0 / sd
        self.miss_log_norm_ = -np.log(sd)
        self.num_t_, self.cat_t_ = np.ascontiguousarray(num.T), np.ascontiguousarray(cat.T)
        self.n_, self.factor_ = n, factor
        self.h_, self.lambda_ = h, lam
        return self

    def log_density(self, frame: pd.DataFrame, block_size: int = 4096) -> np.ndarray:
        q_num, q_cat = self.encoding.encode(frame)
        out = np.empty(len(frame))
        for start in range(0, len(frame), block_size):
            stop = min(start + block_size, len(frame))
            _log_density_kernel(q_num[start:stop], q_cat[start:stop], self.num_t_, self.cat_t_,
                                self.encoding.numeric_missing, self.inv_h_, self.cat_delta_, self.both_miss_,
                                self.miss_obs_, self.obs_miss_, self.miss_mean_, self.miss_inv_sd_,
                                self.miss_log_norm_, out[start:stop])
        return out + self.constant_ - math.log(self.n_)


def _conform(frame, schema: DatasetSchema, name: str) -> pd.DataFrame:
    if frame is None:
        raise DataError(f"domias: {name} is None; DOMIAS needs {name} records")
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"domias: {name} must be a pandas DataFrame, got {type(frame).__name__}")
    out = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=name)
    if len(out) == 0:
        raise DataError(f"domias: {name} is empty; DOMIAS needs {name} records")
    return out.reset_index(drop=True)



def domias(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
           aux: pd.DataFrame, population_size: int | None = None,
           member_share: float | str | None = "sampling_fraction", seed: int = 0,
           aux_member_fraction: float | None = None, bandwidth: float | str = "scott",
           min_attack_members: int = DEFAULT_MIN_ATTACK_MEMBERS) -> DomiasResult:
    """DOMIAS on the attack set of synthrisk.mia (module docstring).

    `members`: the generator's training records; `holdout`: holdout records of the same
    population; `aux`: the attacker's population sample (non-members; required); `synthetic`: the
    generator's output. `member_share` and `population_size` as in `resolve_member_share`
    (default: El Emam et al.'s sampling fraction n_members / population_size, which needs
    `population_size`). `aux_member_fraction`: share of members (not scored) added to the aux
    records to form the reference sample; None = the population's member share
    n_members / population_size, or 0 without `population_size`; as in membership_attack, the
    reference keeps the aux set's size, those members replacing its last records, so
    `aux_member_fraction=0.5` scores the same attack set as membership_attack's default.
    `aux_member_ids` of the result are the members in the reference. `bandwidth`: "scott" or a
    factor b in (0, 1] (module docstring).
    """
    if aux is None or (isinstance(aux, pd.DataFrame) and len(aux) == 0):
        raise DataError("domias: aux is empty; DOMIAS fits its reference density p_reference on the "
                        "attacker's population sample (the aux split, n_aux > 0)")
    if min_attack_members < 2:
        raise ConfigError(f"min_attack_members must be at least 2, got {min_attack_members}")
    typed = {name: _conform(frame, schema, name) for name, frame in
             (("members", members), ("holdout", holdout), ("aux", aux), ("synthetic", synthetic))}
    target, share_rule = resolve_member_share(member_share, len(typed["members"]), population_size)
    if aux_member_fraction is None:
        aux_member_fraction = len(typed["members"]) / population_size if population_size else 0.0
    if not 0 <= aux_member_fraction < 1:
        raise ConfigError(f"aux_member_fraction must lie in [0, 1), got {aux_member_fraction}")
    n_aux = len(typed["aux"])
    wanted = round(aux_member_fraction * n_aux)
    plan = plan_attack_set(len(typed["members"]), len(typed["holdout"]), target, wanted, min_attack_members)
    for note in plan.notes:
        warnings.warn(f"domias: {note}", stacklevel=2)
    # The draw of synthrisk.mia.membership_attack: equal plans give equal attack sets.
    aux_pos, member_pos, non_pos = plan.positions(len(typed["members"]), len(typed["holdout"]), seed)

    real = pd.concat([typed["members"], typed["holdout"], typed["aux"]], ignore_index=True)
    unknown = schema.unknown_level_shares(real, typed["synthetic"], what="synthetic", reference="real records")
    encoding = MixedEncoding.fit([real, typed["synthetic"]], schema)
    # As membership_attack's aux set: n_aux records, of which the aux members replace the last aux rows.
    reference = pd.concat([typed["members"].iloc[aux_pos], typed["aux"].iloc[:n_aux - plan.n_aux_members]],
                          ignore_index=True)
    attack = pd.concat([typed["members"].iloc[member_pos], typed["holdout"].iloc[non_pos]], ignore_index=True)
    y = np.concatenate([np.ones(len(member_pos), int), np.zeros(len(non_pos), int)])
    if y.sum() == 0 or y.sum() == len(y):
        raise DataError("domias: the attack set needs members and non-members")

    p_syn = MixedKde(encoding, bandwidth).fit(typed["synthetic"])
    p_ref = MixedKde(encoding, bandwidth).fit(reference)
    log_syn, log_ref = p_syn.log_density(attack), p_ref.log_density(attack)
    score = log_syn - log_ref
    metrics = score_metrics(y, score)
    ablation = {k: v for k, v in score_metrics(y, log_syn).items() if k != "roc"}

    ids_m, ids_nm = row_ids(members), row_ids(holdout)
    records = pd.DataFrame({ROW_ID: np.concatenate([ids_m[member_pos], ids_nm[non_pos]]), "member": y,
                            "score": score, "log_p_synthetic": log_syn, "log_p_reference": log_ref})
    summary = {
        **metrics,
        "score": "log p_synthetic(x) - log p_reference(x) (log of the DOMIAS density ratio)",
        "no_reference": {**ablation, "score": "log p_synthetic(x) (the paper's Eq. 1 ablation)"},
        "density": {"estimator": "product-kernel KDE: Gaussian (numeric, h = b sd), Aitchison-Aitken "
                                 "(categorical, lambda = b (c - 1) / c)",
                    "bandwidth_rule": ("Scott's factor b = n^(-1/(d+4))" if bandwidth == "scott"
                                       else f"fixed factor b = {float(bandwidth)}"),
                    "synthetic": {"n": p_syn.n_, "factor": p_syn.factor_},
                    "reference": {"n": p_ref.n_, "factor": p_ref.factor_}},
        "n_attack": len(y), "member_share": float(y.mean()), "member_share_target": target,
        "member_share_rule": share_rule, "population_size": population_size,
        "min_attack_members": int(min_attack_members),
        "n_members_available": len(typed["members"]), "n_non_members_available": len(typed["holdout"]),
        "n_aux": n_aux, "n_aux_members": int(plan.n_aux_members),
        "aux_member_share": float(plan.n_aux_members / n_aux),
        "aux_members_disjoint_from_attack_set": True, "design_notes": list(plan.notes),
        "seed": int(seed), "unknown_level_share": unknown,
    }
    return DomiasResult(finite_or_null(summary), records, ids_m[aux_pos])
