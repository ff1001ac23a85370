"""The configuration reference of the docs site, generated from the workflow's config schema
(`workflow/schemas/config.schema.yaml`), so that the page cannot drift from what the workflow
accepts: one table per top-level block, one row per key (nested keys dotted), with its type,
default, allowed values and description."""

from __future__ import annotations

from pathlib import Path

import yaml

#: the schema the workflow validates its config against (Snakefile: `validate`)
CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def _type(spec: dict) -> str:
    kind = spec.get("type", "object" if "properties" in spec else "")
    kinds = kind if isinstance(kind, list) else [kind]
    text = " or ".join(k for k in kinds if k)
    if "items" in spec and isinstance(spec["items"], dict) and spec["items"].get("type"):
        text += f" of {spec['items']['type']}"
    return text


def _allowed(spec: dict) -> str:
    parts = []
    if "enum" in spec:
        parts.append(" / ".join(f"`{v}`" for v in spec["enum"]))
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in spec:
            parts.append(f"{sign} {spec[key]}")
    return ", ".join(parts)


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _rows(spec: dict, prefix: str) -> list[str]:
    """One Markdown table row per key under `spec` (an object schema), nested keys dotted; a mapping of
    user-chosen names (additionalProperties) appears as `<name>`."""
    rows = []
    children = dict(spec.get("properties") or {})
    if isinstance(spec.get("additionalProperties"), dict) and spec["additionalProperties"].get("properties"):
        children["<name>"] = spec["additionalProperties"]
    for key, child in children.items():
        path = f"{prefix}.{key}" if prefix else key
        default = f"`{yaml.safe_dump(child['default'], default_flow_style=True).strip().removesuffix('...').strip()}`" \
            if "default" in child else ""
        rows.append(f"| `{path}` | {_type(child)} | {default} | {_allowed(child)} | {_cell(child.get('description', ''))} |")
        if child.get("properties") or (isinstance(child.get("additionalProperties"), dict)
                                       and child["additionalProperties"].get("properties")):
            rows += _rows(child, path)
    return rows


def config_reference(schema_path: str | Path = CONFIG_SCHEMA) -> str:
    """The reference as Markdown: the top-level keys, then one section per block."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    header = ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    required = set(schema.get("required", []))
    lines = ["## Top-level keys", "", *header]
    for key, spec in schema["properties"].items():
        need = "required" if key in required else "optional"
        lines.append(f"| `{key}` | {_type(spec)} | | {need} | {_cell(spec.get('description', ''))} |")
    for key, spec in schema["properties"].items():
        rows = _rows(spec, key)
        if rows:
            lines += ["", f"## `{key}`", "", *([_cell(spec["description"]), ""] if spec.get("description") else []),
                      *header, *rows]
    lines += _measure_sections(set(schema["properties"]))
    return "\n".join(lines) + "\n"


def _measure_sections(described: set[str]) -> list[str]:
    """The blocks of the built-in measures the schema leaves open (any key the measure's settings
    dataclass has), from those dataclasses: each key, its type and its default."""
    import dataclasses

    from ..measures import builtin_measures

    lines = []
    for name, measure in sorted(builtin_measures().items()):
        if name in described:
            continue
        settings = measure.settings(None)
        if not dataclasses.is_dataclass(settings) or not dataclasses.fields(settings):
            continue
        lines += ["", f"## `{name}`", "", f"{measure.title}. Its settings (`{type(settings).__module__}."
                  f"{type(settings).__name__}`); a key not listed is refused.", "",
                  "| key | type | default |", "|---|---|---|"]
        for item in dataclasses.fields(settings):
            value = getattr(settings, item.name)
            shown = yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
            lines.append(f"| `{name}.{item.name}` | {_cell(getattr(item.type, '__name__', item.type))} | `{_cell(shown)}` |")
    return lines
