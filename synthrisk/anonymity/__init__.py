"""Singling-out, linkability and inference risk measured against a control set.

Giomi, Boenisch, Wehmeyer and Tasnádi, "A Unified Framework for Quantifying Privacy Risk in
Synthetic Data", PoPETs 2023 (2): each attack is run on the members (the generator's training
records) and on control records that the generator never saw; the risk is the members' success
in excess of the control's, (main - control) / (1 - control), with Wilson intervals
(synthrisk.anonymity.risk). The definitions follow anonymeter 1.1.0, re-implemented natively
because that library pins numpy < 2 (see each module's docstring for the details and the few
deliberate differences).

Every evaluator raises synthrisk.errors.ConfigError (a setting) or DataError / SchemaError (the
data) with a message naming the argument when it cannot apply; `applicable_reason` returns that
message without running the attack (None when the attack can run), for a "skipped: reason" row.
"""

from __future__ import annotations

import inspect

import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError, SynthriskError
from ._inputs import prepare_all
from .inference import InferenceResult, check_inference, correct_guesses, inference
from .linkability import (
    LinkabilityResult,
    check_linkability,
    default_aux_cols,
    k_nearest,
    linkability,
)
from .risk import ControlRisk, SuccessRate, control_risk, success_rate
from .singling_out import SinglingOutResult, check_singling_out, singling_out

ATTACKS = ("singling_out", "linkability", "inference")
_EVALUATORS = {"singling_out": singling_out, "linkability": linkability, "inference": inference}

__all__ = ["ATTACKS", "ControlRisk", "InferenceResult", "LinkabilityResult", "SinglingOutResult", "SuccessRate",
           "applicable_reason", "control_risk", "correct_guesses", "default_aux_cols", "inference", "k_nearest",
           "linkability", "singling_out", "success_rate"]


def applicable_reason(attack: str, members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *,
                      schema: DatasetSchema, **settings) -> str | None:
    """Why `attack` ("singling_out", "linkability" or "inference") cannot run with these frames and
    settings (the keyword arguments the evaluator takes), or None when it can.

    The message is the one the evaluator would raise, naming the argument; the data are checked as
    the evaluator checks them (conformed to the schema, non-empty, the holdout disjoint from members)."""
    try:
        if attack not in ATTACKS:
            raise ConfigError(f"attack: must be one of {list(ATTACKS)}, got {attack!r}")
        parameters = inspect.signature(_EVALUATORS[attack]).parameters
        unknown = sorted(set(settings) - set(list(parameters)[4:]))
        if unknown:
            raise ConfigError(f"{unknown[0]}: not a setting of {attack} (settings: {list(parameters)[4:]})")
        given = {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
        given.update(settings)
        if attack == "singling_out":
            check_singling_out(schema, given["n_attacks"], given["mode"], given["n_cols"], given["columns"],
                               given["max_attempts"], given["confidence"])
        elif attack == "linkability":
            check_linkability(schema, given["aux_cols"], given["n_attacks"], given["n_neighbors"],
                              given["confidence"])
        else:
            if "secret" not in given:
                raise ConfigError("secret: inference needs the name of the secret column")
            check_inference(schema, given["secret"], given["known"], given["n_attacks"], given["tolerance"],
                            given["confidence"])
        _, _, synthetic, _, _ = prepare_all(members, synthetic, holdout, schema)
        n_neighbors = given.get("n_neighbors", 1)
        if attack == "linkability" and n_neighbors > len(synthetic):
            raise ConfigError(f"n_neighbors: {n_neighbors} neighbours asked, but the synthetic data has only "
                              f"{len(synthetic)} record(s)")
    except SynthriskError as exc:
        return str(exc)
    return None
