"""A measure's settings, stated once: each key's default, what it means and the values it admits.

`setting(default, doc, **rules)` makes a field of a frozen settings dataclass. Its metadata hold
the key's meaning and the JSON-schema rules its values obey (`minimum`, `enum`, `items`, ...); its
type is the field's annotation. One statement serves every reader:

- `check(Settings, values, where)` refuses a bad value where it enters (a config block, a keyword
  of `synthrisk.measure`), naming the key;
- `block_schema(Settings)` is the measure's block of the workflow's config schema
  (`workflow/schemas/config.schema.yaml` is generated from it: `make schema`), which Snakemake's
  `validate` applies and whose defaults it fills in;
- the docs' configuration reference is rendered from that schema.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import typing

from .errors import ConfigError

#: the range rules of JSON schema, in words (the errors here, the docs' configuration reference)
RANGE_SIGNS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))
#: the JSON type of each Python type a setting may hold
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", tuple: "array",
              list: "array", type(None): "null"}


def setting(default, doc: str, **rules) -> dataclasses.Field:
    """A settings field: its default, its meaning (one sentence for the config reference) and the
    JSON-schema rules of its values beyond its type (e.g. ``minimum=1``, ``enum=[...]``)."""
    metadata = {"doc": " ".join(doc.split()), "rules": rules}
    if isinstance(default, (dict, list)):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def same_as(settings_class, key: str) -> dataclasses.Field:
    """A key another settings class states (its default, meaning and rules), for a measure that
    shares it: stated there once."""
    item = {f.name: f for f in dataclasses.fields(settings_class)}[key]
    return setting(default_of(item), item.metadata["doc"], **item.metadata["rules"])


def as_json(value):
    """A settings value as YAML and JSON hold it (tuples are lists)."""
    if isinstance(value, (tuple, list)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def annotation_types(annotation) -> list[str]:
    """The JSON types an annotation admits, in the schema's order: `int | None` -> [integer, null]."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        found = [t for part in typing.get_args(annotation) for t in annotation_types(part)]
        return sorted(set(found), key=found.index)
    kind = typing.get_origin(annotation) or annotation
    if kind not in JSON_TYPES:
        raise TypeError(f"no JSON type for the annotation {annotation!r} (known: {sorted(map(str, JSON_TYPES))})")
    return [JSON_TYPES[kind]]


def _item_annotation(annotation):
    """X of `tuple[X, ...]`, `tuple[X, X]` or `list[X]` (also under `| None`), else None."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    for part in typing.get_args(annotation) if union else (annotation,):
        if typing.get_origin(part) in (tuple, list):
            args = [a for a in typing.get_args(part) if a is not Ellipsis]
            if args and len(set(args)) == 1:
                return args[0]
    return None


def default_of(item: dataclasses.Field):
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def key_schema(settings_class, item: dataclasses.Field) -> dict:
    """One key's schema: its JSON type(s) from the annotation, its rules, its default and meaning."""
    annotation = typing.get_type_hints(settings_class)[item.name]
    kinds = annotation_types(annotation)
    spec: dict = {"type": kinds[0] if len(kinds) == 1 else kinds}
    rules = copy.deepcopy(item.metadata.get("rules", {}))
    element = _item_annotation(annotation)
    if element is not None:
        element_kinds = annotation_types(element)
        items = {"type": element_kinds[0] if len(element_kinds) == 1 else element_kinds, **rules.pop("items", {})}
        spec["items"] = items
    spec.update(rules)
    spec["default"] = as_json(default_of(item))
    if item.metadata.get("doc"):
        spec["description"] = item.metadata["doc"]
    return spec


def fields_of(settings_class) -> list[dataclasses.Field]:
    return list(dataclasses.fields(settings_class)) if dataclasses.is_dataclass(settings_class) else []


def block_schema(settings_class, description: str | None = None) -> dict:
    """A measure's config block: an object (or null: the defaults) with the settings' keys only."""
    block: dict = {"type": ["object", "null"], "additionalProperties": False}
    if description:
        block["description"] = " ".join(description.split())
    block["properties"] = {item.name: key_schema(settings_class, item) for item in fields_of(settings_class)}
    return block


def normalised(settings_class, values: dict) -> dict:
    """`values` with a list given for a tuple-typed key as a tuple (YAML and JSON have lists only),
    so that settings read from a config equal those built in Python."""
    hints = typing.get_type_hints(settings_class)
    out = dict(values)
    for key, value in values.items():
        kinds = annotation_types(hints[key]) if key in hints else []
        if isinstance(value, list) and "array" in kinds:
            out[key] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return out


def check(settings_class, values: dict, where: str) -> None:
    """Refuse a value (of `values`, by key) that its key's schema does not admit, naming `where.key`
    and what the key takes; keys the class lacks are the caller's to refuse."""
    import jsonschema

    validator = _strict_validator()
    for item in fields_of(settings_class):
        if item.name not in values:
            continue
        try:
            spec = key_schema(settings_class, item)
        except TypeError:  # a plug-in's field of a type JSON lacks: its own __post_init__ checks it
            continue
        spec.pop("default", None)
        value = as_json(values[item.name])
        error = jsonschema.exceptions.best_match(validator(spec).iter_errors(value))
        if error is not None:
            path = "".join(f"[{p!r}]" for p in error.absolute_path)
            # jsonschema's own words name the value and the rule, except for the composite rules
            said = error.message if error.validator not in ("oneOf", "anyOf", "not") else \
                f"{values[item.name]!r} is refused; it takes {_admits(spec)}"
            raise ConfigError(f"{where}.{item.name}{path}: {said} ({item.metadata.get('doc', '')})")


@functools.cache
def _strict_validator():
    """JSON schema's validator, stricter where Python differs from JSON: 3.0 is not an integer
    (a count), and NaN or infinity is not a number (every range check lets NaN through)."""
    import math

    import jsonschema

    checker = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({
        "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda _, v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)})
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=checker)


def _admits(spec: dict) -> str:
    """What a schema admits, in words (for the error)."""
    if spec.get("oneOf") or spec.get("anyOf"):
        return " or ".join(_admits(branch) for branch in spec.get("oneOf") or spec["anyOf"])
    kinds = spec.get("type", "")
    parts = [" or ".join(kinds) if isinstance(kinds, list) else kinds]
    if isinstance(spec.get("items"), dict):
        parts.append(f"of ({_admits(spec['items'])})")
    if "enum" in spec:
        parts.append(f"one of {spec['enum']}")
    for key, sign in RANGE_SIGNS:
        if key in spec:
            parts.append(f"{sign} {spec[key]}")
    if "not" in spec and "const" in spec["not"]:
        parts.append(f"not {spec['not']['const']}")
    return " ".join(p for p in parts if p)
