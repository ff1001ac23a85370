"""The configuration reference of the docs site, generated from the workflow's config schema
(`workflow/schemas/config.schema.yaml`), so that the page cannot drift from what the workflow
accepts: one table per top-level block, one row per key (nested keys dotted), with its type,
default, allowed values and description."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..settings import RANGE_SIGNS


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
    for key, sign in RANGE_SIGNS:
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


def config_reference(schema_path: str | Path) -> str:
    """The reference as Markdown from the schema at `schema_path` (the workflow's,
    `workflow/schemas/config.schema.yaml`): the top-level keys, then one section per block."""
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
    return "\n".join(lines) + "\n"
