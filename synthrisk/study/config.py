"""Checks of a workflow config that its JSON schema cannot express (called by the Snakefile after
`snakemake.utils.validate`, which applies workflow/schemas/config.schema.yaml and its ranges)."""

from __future__ import annotations

import math

from ..errors import ConfigError
from ..stats.noise import check_noise_seed


def non_finite_keys(value, key: str = "") -> list[str]:
    """Keys (as a/b/0 paths) of every NaN or infinite number in a parsed config. YAML reads `.nan`
    and `.inf` as floats, and JSON schema's minimum/maximum let NaN through (every comparison
    with NaN is false)."""
    if isinstance(value, dict):
        return [k for name, item in value.items() for k in non_finite_keys(item, f"{key}/{name}" if key else str(name))]
    if isinstance(value, (list, tuple)):
        return [k for i, item in enumerate(value) for k in non_finite_keys(item, f"{key}/{i}")]
    if isinstance(value, float) and not math.isfinite(value):
        return [key or "(top level)"]
    return []


# Top-level keys that are not measures (the measures' keys come from synthrisk.measures).
WORKFLOW_KEYS = ("seeds", "datasets", "generators", "dp", "epsilon_audit", "shadow_mia", "policy")


#: top-level keys that were renamed: old -> new
RENAMED_KEYS = {"privacy_audit": "epsilon_audit"}


def check_config(config: dict) -> None:
    from ..measures import builtin_measures

    known = set(WORKFLOW_KEYS) | set(builtin_measures())
    for key, block in config.items():
        if key in RENAMED_KEYS:
            raise ConfigError(f"config: the key {key!r} is now {RENAMED_KEYS[key]!r} (the ε audit); rename it")
        if key not in known and not (isinstance(block, dict) and "module" in block):
            raise ConfigError(f"config: unknown key {key!r}; known: {sorted(known)} (a plug-in measure's block "
                              "names its module: {module: my_package.my_measure})")
    bad = non_finite_keys(config)
    if bad:
        raise ConfigError(f"config: {', '.join(repr(k) for k in bad)} must be finite numbers (got NaN or "
                          "infinity); set a finite value")
    for key, value in noise_seeds(config):
        check_noise_seed(value, f"config: {key}")
    from ..measures.policy import config_policy

    config_policy(config)


def noise_seeds(config: dict) -> list[tuple[str, object]]:
    """(key, value) of every noise seed a config sets (synthrisk.stats.noise): a generator's or an audit
    control's `params.noise_seed`, and the `dp:` block's `noise_seed`."""
    found = []
    blocks = {"generators": config.get("generators"),
              "epsilon_audit.controls": (config.get("epsilon_audit") or {}).get("controls")}
    for where, specs in blocks.items():
        for name, spec in (specs or {}).items():
            params = (spec or {}).get("params") if isinstance(spec, dict) else None
            if isinstance(params, dict) and "noise_seed" in params:
                found.append((f"{where}.{name}.params.noise_seed", params["noise_seed"]))
    if isinstance(config.get("dp"), dict) and "noise_seed" in config["dp"]:
        found.append(("dp.noise_seed", config["dp"]["noise_seed"]))
    return found
