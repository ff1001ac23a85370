"""The measure blocks of the workflow's config schema, generated from the measures' settings.

`workflow/schemas/config.schema.yaml` has two parts. Above `MARKER` it is written by hand: the
top-level keys (seeds, datasets, generators) and the stages' blocks (dp, policy, epsilon_audit,
shadow_mia). Below it, one block per built-in measure is generated from that measure's settings
dataclass (`synthrisk.settings.block_schema`: each key's type, default, admissible values and
meaning), so that the schema Snakemake validates and fills defaults from cannot drift from the
settings the measures run with. `make schema` rewrites the generated part; a test checks that the
committed file is what this module writes.

    python -m synthrisk.study.config_schema workflow/schemas/config.schema.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

MARKER = ("  # --- the measures' blocks, generated from their settings (synthrisk.settings); `make schema` "
          "rewrites all below ---")


def measure_blocks() -> str:
    """Every built-in measure's block as YAML, indented under the schema's `properties:`."""
    from ..measures import builtin_measures
    from ..settings import block_schema

    blocks = {name: block_schema(measure.Settings, measure.title) for name, measure in builtin_measures().items()}
    text = yaml.safe_dump(blocks, sort_keys=False, width=110, default_flow_style=None, allow_unicode=True)
    return "".join(f"  {line}\n" if line else "\n" for line in text.splitlines())


def render(current: str) -> str:
    """The schema file with its generated part rewritten (the hand-written part kept as it is)."""
    if MARKER not in current:
        raise ValueError(f"the config schema has no marker line {MARKER.strip()!r}: the generated part has no place")
    head = current[:current.index(MARKER) + len(MARKER)]
    return f"{head}\n{measure_blocks()}"


def main(argv=None) -> int:
    path = Path((argv or sys.argv[1:] or ["workflow/schemas/config.schema.yaml"])[0])
    path.write_text(render(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
