"""Attribute-inference risk (Giomi et al. 2023, PoPETs; definitions as in anonymeter 1.1.0).

Why native: anonymeter 1.1.0 pins numpy < 2 and cannot be imported in synthrisk's environment;
this module re-implements its inference evaluator (default nearest-neighbour attacker) from the
paper and the library's documented behaviour on synthrisk's exact Gower engine.

The attacker knows the `known` columns of a target and guesses its `secret` as the secret of the
nearest synthetic record on the known columns (Gower distance, scaled and with missing values and
ties as in synthrisk.anonymity.linkability: ranges over the synthetic and attacked records, ties to
the first record of one seeded random order of the synthetic data). A guess is correct when it
equals the secret, or, for a continuous secret (`regression`), when |guess - secret| <= tolerance *
|guess| (anonymeter's relative difference, which divides by the guess; the absolute value makes
negative guesses behave like positive ones). A missing guess of a missing secret is correct.

main = share of attacked members guessed correctly; control = the same attack on control records;
naive baseline = the secret of a synthetic record drawn at random (without replacement) for each
of the first min(n_synthetic, n_members_attacked) attacked members. (anonymeter 1.1.0 aligns its
random guesses with the targets by index label, so a target whose label was not among the drawn
synthetic rows gets a missing guess: its baseline is far below random guessing, e.g. 252 of 2,000
on Adult's income where ours gives 1,294, near the 0.64 chance that two random Adult records share
the income class. The baseline does not enter the risk.) Attacked records are drawn at
random without replacement, min(n_attacks, size of the table) from each table. Per-record output
holds the attacked record's row_id, whether it is a member and whether the guess was correct: no
data values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.encoding import numeric_values
from ..data.schema import CONTINUOUS, DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError
from ..mia.gower import GowerSpace, nearest_synthetic
from ._inputs import (
    DEFAULT_N_ATTACKS,
    check_columns,
    check_confidence,
    check_positive_int,
    prepare_all,
    streams,
    sub_schema,
    targets,
)
from .risk import ControlRisk, record_control_risk

DEFAULT_TOLERANCE = 0.05


def check_inference(schema: DatasetSchema, secret, known, n_attacks: int, tolerance: float,
                    confidence: float) -> list[str]:
    """The settings' problems as a ConfigError naming the argument; the known columns."""
    check_positive_int(n_attacks, "n_attacks")
    check_confidence(confidence)
    if not isinstance(secret, str) or secret not in schema.columns:
        raise ConfigError(f"secret: {secret!r} is not a column of schema {schema.origin} "
                          f"(columns: {list(schema.columns)})")
    if known is None:
        known = [c for c in schema.quasi_identifiers if c != secret]
        if not known:
            raise ConfigError(f"known: not given, and schema {schema.origin} has no quasi-identifier other than "
                              f"the secret '{secret}'; the attacker needs at least one known column")
    known = check_columns(known, schema, "known")
    if secret in known:
        raise ConfigError(f"known: lists the secret '{secret}'; an attribute the attacker knows cannot be inferred")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise ConfigError(f"tolerance: must be a non-negative number, got {tolerance!r}")
    return known


def _secret_values(frame: pd.DataFrame, secret: str, schema: DatasetSchema) -> np.ndarray:
    if schema.is_categorical(secret):
        return frame[secret].astype(object).where(frame[secret].notna(), None).to_numpy()
    return numeric_values(frame[[secret]])[:, 0]


def correct_guesses(guesses: np.ndarray, secrets: np.ndarray, regression: bool,
                    tolerance: float = DEFAULT_TOLERANCE) -> np.ndarray:
    """Boolean per guess (module docstring): equal, or within `tolerance` relative to the guess."""
    both_missing = pd.isna(guesses) & pd.isna(secrets)
    present = ~(pd.isna(guesses) | pd.isna(secrets))
    hit = np.zeros(len(guesses), dtype=bool)
    if regression:
        g, s = guesses[present].astype(float), secrets[present].astype(float)
        hit[present] = np.abs(g - s) <= tolerance * np.abs(g)
    else:
        hit[present] = guesses[present] == secrets[present]
    return hit | both_missing


@dataclass(frozen=True)
class InferenceResult:
    risk: ControlRisk
    secret: str
    known: tuple[str, ...]
    regression: bool
    tolerance: float | None
    n_attacks: int
    n_members_attacked: int
    n_control_attacked: int
    seed: int
    n_synthetic: int
    #: one row per attacked record: row_id, member (True: members, False: control), correct
    records: pd.DataFrame = field(repr=False, compare=False)

    def to_json(self) -> dict:
        return {"attack": "inference", **self.risk.to_json(), "secret": self.secret, "known": list(self.known),
                "regression": self.regression, "tolerance": self.tolerance, "n_attacks": self.n_attacks,
                "n_members_attacked": self.n_members_attacked, "n_control_attacked": self.n_control_attacked,
                "seed": self.seed, "n_synthetic": self.n_synthetic}


def inference(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
              secret: str, known: list[str] | None = None, n_attacks: int = DEFAULT_N_ATTACKS, seed: int = 0,
              regression: bool | None = None, tolerance: float = DEFAULT_TOLERANCE,
              confidence: float = 0.95) -> InferenceResult:
    """Inference risk on `secret` of `synthetic` for `members`, measured against the `holdout`
    records as the control set.

    `known`: the attacker's columns (default: the schema's quasi-identifiers other than `secret`).
    `regression`: compare guesses with a relative `tolerance` (default: when the secret is a
    continuous column; categorical and integer secrets must be guessed exactly)."""
    known = check_inference(schema, secret, known, n_attacks, tolerance, confidence)
    members, member_ids, synthetic, holdout, control_ids = prepare_all(members, synthetic, holdout, schema)
    regression = schema.columns[secret] == CONTINUOUS if regression is None else bool(regression)
    rng_main, rng_control, rng_baseline, rng_order = streams(seed, 4)
    main_pos = targets(len(members), n_attacks, rng_main)
    control_pos = targets(len(holdout), n_attacks, rng_control)
    attacked = {True: members.iloc[main_pos], False: holdout.iloc[control_pos]}
    order = rng_order.permutation(len(synthetic))
    shuffled = synthetic.iloc[order].reset_index(drop=True)
    reference = pd.concat([synthetic, attacked[True], attacked[False]], ignore_index=True)
    space = GowerSpace.fit(reference[known], sub_schema(schema, known))
    syn_secret = _secret_values(shuffled, secret, schema)

    correct = {}
    for member, frame in attacked.items():
        _, index = nearest_synthetic(frame[known], shuffled[known], space)
        correct[member] = correct_guesses(syn_secret[index], _secret_values(frame, secret, schema), regression,
                                          tolerance)
    n_baseline = min(len(synthetic), len(main_pos))
    random_guess = syn_secret[rng_baseline.choice(len(synthetic), n_baseline, replace=False)]
    baseline = correct_guesses(random_guess, _secret_values(attacked[True], secret, schema)[:n_baseline],
                               regression, tolerance)

    risk = record_control_risk(correct[True], correct[False], confidence, n_baseline_success=int(baseline.sum()),
                               n_baseline=n_baseline)
    records = pd.DataFrame({ROW_ID: np.concatenate([member_ids[main_pos], control_ids[control_pos]]),
                            "member": np.r_[np.ones(len(main_pos), bool), np.zeros(len(control_pos), bool)],
                            "correct": np.concatenate([correct[True], correct[False]])})
    return InferenceResult(risk=risk, secret=secret, known=tuple(known), regression=regression,
                           tolerance=float(tolerance) if regression else None, n_attacks=int(n_attacks),
                           n_members_attacked=len(main_pos), n_control_attacked=len(control_pos),
                           seed=int(seed), n_synthetic=len(synthetic), records=records)
