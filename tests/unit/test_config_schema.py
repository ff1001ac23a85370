"""The config schema cannot drift from the settings it validates (issue #29).

workflow/schemas/config.schema.yaml states each measure block's keys again, with types, ranges and
defaults, for the workflow's `validate` (which also fills the defaults into the config) and the
docs' configuration reference (synthrisk.study.config_reference). The defaults themselves live in the
measures' settings dataclasses (synthrisk.measures, `Settings`) and in the stages' DEFAULTS. So,
for every built-in measure whose settings have fields and whose block the schema states:
- the block's keys are the dataclass's fields, and it refuses other keys;
- every key states a default, equal to the dataclass's, and the default passes the key's schema;
- the key's JSON types are those of the field's annotation (`int | None`: integer or null).
A measure the schema leaves open (any object; its settings refuse unknown keys by name) cannot
drift. The stage blocks (dp, epsilon_audit, shadow_mia, policy, rapid.simulation) have the keys of
their defaults, and enumerations are the code's.
"""

import dataclasses
import types
import typing

import jsonschema
import pytest
import yaml
from helpers import ROOT, tiny_config

from synthrisk.measures import RISKS, builtin_measures

SCHEMA_PATH = ROOT / "workflow/schemas/config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", tuple: "array",
              list: "array", type(None): "null"}


def settings_fields(measure) -> list[dataclasses.Field]:
    settings = measure.Settings
    return list(dataclasses.fields(settings)) if dataclasses.is_dataclass(settings) else []


MEASURES = sorted(name for name, measure in builtin_measures().items() if settings_fields(measure))


def annotation_types(annotation) -> set[str]:
    """The JSON types a field's annotation admits: `int | None` -> {integer, null}."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(annotation_types(a) for a in typing.get_args(annotation)))
    kind = typing.get_origin(annotation) or annotation
    if kind not in JSON_TYPES:
        raise AssertionError(f"no JSON type known for the annotation {annotation!r}; add it to JSON_TYPES")
    return {JSON_TYPES[kind]}


def item_annotation(annotation):
    """X of `tuple[X, ...]` or `list[X]` (None | tuple[X, ...] too), else None."""
    for part in typing.get_args(annotation) or (annotation,):
        if typing.get_origin(part) in (tuple, list):
            args = [a for a in typing.get_args(part) if a is not Ellipsis]
            if len(set(args)) == 1:
                return args[0]
    return None


def schema_types(spec: dict) -> set[str]:
    """The JSON types a property's schema admits (its `type`, or those of its oneOf/anyOf branches)."""
    if "type" in spec:
        return set(spec["type"]) if isinstance(spec["type"], list) else {spec["type"]}
    branches = spec.get("oneOf") or spec.get("anyOf") or []
    return set().union(*(schema_types(b) for b in branches)) if branches else set()


def as_json(value):
    """A settings value as YAML/JSON holds it (tuples are lists)."""
    if isinstance(value, (tuple, list)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def field_default(item: dataclasses.Field):
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return dataclasses.MISSING


def drift(name: str, measure, schema: dict) -> list[str]:
    """Every difference between a measure's schema block and its settings dataclass, as messages."""
    block = schema["properties"].get(name)
    if block is None:
        return []  # left open: checked by test_measures_without_a_block_are_left_open
    where = f"{SCHEMA_PATH.relative_to(ROOT)}: {name}"
    settings = measure.Settings
    source = f"{settings.__module__}.{settings.__qualname__}"
    properties = block.get("properties", {})
    fields = {item.name: item for item in settings_fields(measure)}
    problems = []
    if block.get("additionalProperties") is not False:
        problems.append(f"{where}: has no 'additionalProperties: false' (its settings refuse unknown keys)")
    for key in sorted(set(fields) - set(properties)):
        problems.append(f"{where}: lacks the key {key!r} of {source} (the workflow refuses a config that sets it)")
    for key in sorted(set(properties) - set(fields)):
        problems.append(f"{where}.{key}: not a field of {source} (a config that sets it fails when the measure runs)")
    hints = typing.get_type_hints(settings)
    for key in sorted(set(fields) & set(properties)):
        spec, default = properties[key], field_default(fields[key])
        if "default" not in spec:
            problems.append(f"{where}.{key}: states no default; {source}.{key} is {as_json(default)!r}")
        elif spec["default"] != as_json(default):
            problems.append(f"{where}.{key}: default {spec['default']!r} differs from {source}.{key} = "
                            f"{as_json(default)!r}")
        try:
            jsonschema.validate(as_json(default), spec)
        except jsonschema.ValidationError as exc:
            problems.append(f"{where}.{key}: refuses {source}'s default {as_json(default)!r} ({exc.message})")
        expected, stated = annotation_types(hints[key]), schema_types(spec)
        if stated != expected:
            problems.append(f"{where}.{key}: type {sorted(stated)} but {source}.{key} is {hints[key]} "
                            f"({sorted(expected)})")
        item = item_annotation(hints[key])
        if item is not None and isinstance(spec.get("items"), dict):
            expected_items, stated_items = annotation_types(item), schema_types(spec["items"])
            if stated_items and stated_items != expected_items:
                problems.append(f"{where}.{key}: items of type {sorted(stated_items)} but {source}.{key} holds "
                                f"{item} ({sorted(expected_items)})")
    return problems


@pytest.mark.parametrize("name", MEASURES)
def test_a_measure_block_has_the_keys_defaults_and_types_of_its_settings(name):
    problems = drift(name, builtin_measures()[name], SCHEMA)
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_drift():
    """A key removed, one added, a default and a type changed: each is named."""
    rapid = builtin_measures()["rapid"]
    assert not drift("rapid", rapid, SCHEMA)
    changed = yaml.safe_load(SCHEMA_PATH.read_text())
    block = changed["properties"]["rapid"]["properties"]
    del block["method"]
    block["taus"] = {"type": "array"}
    block["tau"]["default"] = 0.25
    block["n_trees"]["type"] = "number"
    block["max_train"]["type"] = "integer"
    problems = "\n".join(drift("rapid", rapid, changed))
    for expected in ("lacks the key 'method' of synthrisk.rapid.settings.RapidSettings",
                     "rapid.taus: not a field of synthrisk.rapid.settings.RapidSettings",
                     "rapid.tau: default 0.25 differs from synthrisk.rapid.settings.RapidSettings.tau = 0.3",
                     "rapid.n_trees: type ['number']", "rapid.max_train: type ['integer']"):
        assert expected in problems, problems


def test_measures_without_a_block_are_left_open():
    """Their blocks pass the schema whatever they hold; the settings refuse unknown keys by name."""
    base = {"seeds": [0], "datasets": {"d": {"schema": "s.yaml", "n_train": 10, "n_holdout": 10}},
            "generators": {"g": {"backend": "cart"}}}
    open_measures = [name for name in MEASURES if name not in SCHEMA["properties"]]
    for name in open_measures:
        for block in (None, {}, {"any": 1}):
            jsonschema.validate({**base, name: block}, SCHEMA)


def _enum(*path: str) -> list:
    spec = SCHEMA["properties"]
    for i, key in enumerate(path):
        spec = spec[key] if i == 0 else spec["properties"][key]
    spec = spec.get("items", spec)
    return spec.get("enum") or [v for b in spec.get("oneOf", []) for v in b.get("enum", [])]


def test_enumerations_are_the_codes():
    from synthrisk.mia.attacks import MEMBER_SHARE_RULES
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
    closed = [name for name in MEASURES if name in SCHEMA["properties"]]
    config = {**base, **{name: {} for name in closed}}
    validate(config, str(SCHEMA_PATH))
    for name in closed:
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

