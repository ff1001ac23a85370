"""The config schema cannot drift from the settings it validates (issues #29, #43).

The measures' blocks of workflow/schemas/config.schema.yaml are generated from their settings
dataclasses (`synthrisk.settings`: each key's type, default, admissible values and meaning, stated
once in a `setting(...)` field) by `make schema`; the committed file must be what that writes. The
same statement refuses a bad value in the Python API, naming the key. The stage blocks (dp,
epsilon_audit, shadow_mia, policy) are written by hand: they have the keys of their defaults, and
enumerations are the code's.
"""

import math

import jsonschema
import pytest
import yaml
from helpers import ROOT, tiny_config

from synthrisk.errors import ConfigError
from synthrisk.measures import RISKS, builtin_measures
from synthrisk.settings import as_json, default_of, fields_of, key_schema
from synthrisk.study.config_schema import MARKER, render

SCHEMA_PATH = ROOT / "workflow/schemas/config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())
MEASURES = sorted(builtin_measures())


def test_the_committed_schema_is_the_generated_one():
    text = SCHEMA_PATH.read_text()
    assert render(text) == text, "workflow/schemas/config.schema.yaml is stale: run `make schema` and commit it"


def test_a_changed_setting_changes_the_generated_schema():
    """The generated part is rewritten from the settings, whatever the file held below the marker."""
    text = SCHEMA_PATH.read_text()
    tampered = text.replace("default: 0.3,", "default: 0.25,", 1)
    assert tampered != text and render(tampered) == text
    with pytest.raises(ValueError, match="marker"):
        render(text.replace(MARKER, ""))


@pytest.mark.parametrize("name", MEASURES)
def test_every_default_passes_its_own_key(name):
    """A rule that refused its own default would make the defaults unusable."""
    measure = builtin_measures()[name]
    defaults = {item.name: default_of(item) for item in fields_of(measure.Settings)}
    assert measure.settings(defaults) == measure.Settings()
    for item in fields_of(measure.Settings):
        spec = key_schema(measure.Settings, item)
        jsonschema.validate(as_json(default_of(item)), {k: v for k, v in spec.items() if k != "default"})


@pytest.mark.parametrize("name, block, named", [
    ("rapid", {"n_trees": 0}, "config: rapid.n_trees: 0 is less than the minimum of 1"),
    ("rapid", {"n_trees": 5.0}, "config: rapid.n_trees: 5.0 is not of type 'integer'"),
    ("rapid", {"tau": math.nan}, "config: rapid.tau"),
    ("rapid", {"attackers": ["forest"]}, "config: rapid.attackers[0]: 'forest' is not one of"),
    ("mia", {"member_share": 1.5}, "config: mia.member_share"),
    ("disco", {"groups": 1}, "config: disco.groups"),
    ("ensemble", {"mode": "shade"}, "config: ensemble.mode: 'shade' is not one of ['shadow', 'split']"),
    ("dcr", {"permutations": True}, "config: dcr.permutations: True is not of type 'integer'"),
])
def test_a_bad_value_is_refused_naming_the_key(name, block, named):
    with pytest.raises(ConfigError) as error:
        builtin_measures()[name].settings(block)
    assert named in str(error.value)


def test_a_plug_in_block_is_left_open():
    """A block whose name no built-in measure has passes the schema whatever it holds; the plug-in's
    settings refuse unknown keys by name (synthrisk.study.config.check_config)."""
    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "cart"}}}
    for block in (None, {}, {"module": "my.measure", "any": 1}):
        jsonschema.validate({**base, "my_measure": block}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError, match="any"):
        jsonschema.validate({**base, "dcr": {"any": 1}}, SCHEMA)


def _enum(*path: str) -> list:
    spec = SCHEMA["properties"]
    for i, key in enumerate(path):
        spec = spec[key] if i == 0 else spec["properties"][key]
    spec = spec.get("items", spec)
    return spec.get("enum") or [v for b in spec.get("oneOf", []) for v in b.get("enum", [])]


def test_enumerations_are_the_codes():
    from synthrisk.mia.settings import MEMBER_SHARE_RULES
    from synthrisk.rapid.attackers import ATTACKERS
    from synthrisk.rapid.scores import CATEGORICAL_METHODS, CONTINUOUS_ERRORS

    assert _enum("rapid", "attackers") == list(ATTACKERS)
    assert _enum("rapid", "simulation", "attackers") == list(ATTACKERS)
    assert _enum("rapid", "method") == list(CATEGORICAL_METHODS)
    assert _enum("rapid", "error") == list(CONTINUOUS_ERRORS)
    assert _enum("mia", "member_share") == list(MEMBER_SHARE_RULES)


def _stage_blocks():
    from synthrisk.dp.stage import DEFAULTS as DP
    from synthrisk.epsilon_audit.stage import DEFAULTS as EPSILON_AUDIT
    from synthrisk.measures.policy import KEYS as POLICY_KEYS
    from synthrisk.rapid.simulation import SIMULATION_DEFAULTS
    from synthrisk.shadow_mia.stage import DEFAULTS as SHADOW_MIA

    properties = SCHEMA["properties"]
    return {
        "dp": (properties["dp"], DP),
        "dp.census": (properties["dp"]["properties"]["census"], DP["census"]),
        "epsilon_audit": (properties["epsilon_audit"], EPSILON_AUDIT),
        "shadow_mia": (properties["shadow_mia"], SHADOW_MIA),
        "policy": (properties["policy"], dict.fromkeys(POLICY_KEYS)),
        "policy.thresholds": (properties["policy"]["properties"]["thresholds"], dict.fromkeys(RISKS)),
        # its attackers default to RAPID's (simulation_settings)
        "rapid.simulation": (properties["rapid"]["properties"]["simulation"], {**SIMULATION_DEFAULTS, "attackers": None}),
    }


@pytest.mark.parametrize("block", sorted(_stage_blocks()))
def test_a_stage_block_has_the_keys_of_its_defaults(block):
    spec, defaults = _stage_blocks()[block]
    properties = spec["properties"]
    assert spec.get("additionalProperties") is False, f"{block}: has no 'additionalProperties: false'"
    assert set(properties) == set(defaults), (f"{block}: the schema's keys {sorted(properties)} are not the code's "
                                              f"{sorted(defaults)}")
    for key, child in properties.items():
        if "default" in child and defaults[key] is not None:
            assert child["default"] == as_json(defaults[key]), f"{block}.{key}: default differs from the code's"


def test_the_defaults_the_workflow_fills_in_are_the_settings_defaults():
    """Snakemake's `validate` writes the schema's defaults into a block the config has."""
    from snakemake.utils import validate

    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "cart"}}}
    config = {**base, **{name: {} for name in MEASURES}}
    validate(config, str(SCHEMA_PATH))
    for name in MEASURES:
        measure = builtin_measures()[name]
        assert measure.settings(config[name]) == measure.Settings(), name


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c.update(seed=[1]), "instance['seed']"),
    (lambda c: c["generators"].update(x={"model": "y"}), "backend"),
    (lambda c: c["dp"].update(families=["gamma"]), "gamma"),
    (lambda c: c["dp"].update(delta=1.5), "delta"),
    (lambda c: c.update(privacy_audit={}), "'privacy_audit' is now 'epsilon_audit'"),
])
def test_config_errors_name_the_key(tmp_path, mutate, message):
    """What the Snakefile runs before planning (snakemake's `validate` against the schema, then
    `check_config`), in-process; tests/workflow/test_workflow.py checks the workflow runs it."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    from synthrisk.errors import ConfigError
    from synthrisk.study.config import check_config

    config = yaml.safe_load(tiny_config(tmp_path).read_text())
    mutate(config)
    with pytest.raises((WorkflowError, ConfigError)) as error:
        validate(config, str(SCHEMA_PATH))
        check_config(config)
    assert message in str(error.value)

