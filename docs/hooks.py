"""MkDocs hook: the configuration reference page is generated from the config schema at build time
(`synthrisk.study.config_reference`), in place of the marker below."""

from pathlib import Path

MARKER = "<!-- config-reference -->"


def on_page_markdown(markdown, page, config, files):
    if MARKER not in markdown:
        return markdown
    from synthrisk.study.config_reference import config_reference

    schema = Path(config["config_file_path"]).parent / "workflow" / "schemas" / "config.schema.yaml"
    return markdown.replace(MARKER, config_reference(schema))
