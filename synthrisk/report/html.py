"""The self-contained report page: summary, every figure with its caption, failures, provenance.

Figures are embedded as data URIs so the page opens anywhere without a server or network. Only
aggregates enter the page (the tables of results/tables/ and figures), never a real record.
"""

from __future__ import annotations

import base64
import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import yaml

from ..versions import library_versions
from .provenance import PACKAGES, benchmark_records, git_revision, stage_times
from .verdicts import LEVEL_CSS, verdict_matrix_html

# Figures that no measure makes: figure file prefix -> (section, caption file in workflow/report/).
# The measures' sections sit between the first two and the last (synthrisk.measures).
BEFORE_MEASURES = [("risk_evidence_", "Every attack against its reference", "risk_evidence.rst"),
                   ("risk_utility_", "Risk against utility", "risk_utility.rst"),
                   ("rapid_simulation_", "RAPID: dependence-strength simulation", "rapid_simulation.rst")]
AFTER_MEASURES = [("dp_", "DP sufficient statistics", "dp.rst"),
                  ("epsilon_audit", "Empirical ε audit of DP generators", "epsilon_audit.rst"),
                  ("shadow_mia_", "Shadow-model membership inference", "shadow_mia.rst")]
#: the figure section shown with the verdicts on the report's first screen
FIRST_SCREEN = "Risk against utility"
#: a table column that marks a row as a violation (synthrisk.epsilon_audit: epsilon_lower > nominal): shown red
FLAG_COLUMN = "flagged"
# Wildcards that a caption reads (as Snakemake's report passes them), recovered from figure names.
CAPTION_WILDCARDS = {"dp_": "experiment"}

SUMMARY_HEAD = {"dataset": "dataset", "generator": "generator", "epsilon": "ε", "dp_guarantee": "DP guarantee",
                "status": "status"}
SUMMARY_TAIL = {"fit_seconds": "fit s"}


def data_uri(image: Path | bytes) -> str:
    """A PNG (a file, or its bytes) as a data URI, for a page that carries its figures inline."""
    data = image if isinstance(image, bytes) else image.read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def rst_to_html(text: str) -> str:
    from docutils.core import publish_parts

    return publish_parts(text, writer="html5", settings_overrides={"report_level": 5})["body"]


def render_caption(caption: str, captions_dir, stem: str, prefix: str = "") -> str:
    """The caption as Snakemake's report shows it: Jinja first (with the figure's wildcards), then
    rST. `caption` names a file of `captions_dir` (*.rst) or is the rST text itself."""
    import jinja2

    path = Path(captions_dir) / caption
    text = path.read_text() if caption.endswith(".rst") and path.is_file() else caption
    wildcards = {CAPTION_WILDCARDS[prefix]: stem[len(prefix):]} if prefix in CAPTION_WILDCARDS else {}
    text = jinja2.Template(text).render(snakemake=SimpleNamespace(wildcards=SimpleNamespace(**wildcards)))
    return rst_to_html(text)


def figure_sections(figures, captions_dir, measures: dict | None = None, datasets=()) -> list[dict]:
    """Figures grouped into the report's sections: the fixed ones and one per measure (its title;
    its figures are those its `outputs` name)."""
    by_stem = {figure.stem: (measure.title, figure.caption or "")
               for name, measure in (measures or {}).items()
               for figure in measure.outputs.figure_files(name, datasets)}
    titles = [t for _, t, _ in BEFORE_MEASURES] + [m.title for m in (measures or {}).values()]
    sections = {title: [] for title in titles + [t for _, t, _ in AFTER_MEASURES]}
    for path in map(Path, figures):
        entry = {"name": path.stem, "src": data_uri(path)}
        if path.stem in by_stem:
            title, caption = by_stem[path.stem]
            sections[title].append({**entry, "caption": render_caption(caption, captions_dir, path.stem)})
            continue
        for prefix, title, caption in BEFORE_MEASURES + AFTER_MEASURES:
            if path.stem.startswith(prefix):
                sections[title].append({**entry, "caption": render_caption(caption, captions_dir, path.stem, prefix)})
                break
        else:
            sections.setdefault("Other figures", []).append({**entry, "caption": ""})
    return [{"title": title, "figures": figs} for title, figs in sections.items() if figs]


def _number(value: float) -> str:
    # Three significant digits, and floating-point dust (a gain of 6.7e-16) shown as the 0 it is.
    return "0" if abs(value) < 1e-9 else f"{value:.3g}"


def frame_html(frame: pd.DataFrame, table_id: str | None = None) -> str:
    if FLAG_COLUMN in frame and frame[FLAG_COLUMN].astype(bool).any():
        return _flagged_html(frame, table_id or "flagged")
    return frame.to_html(index=False, na_rep="–", float_format=_number, border=0,
                         table_id=table_id, classes="data", escape=True)


def _flagged_html(frame: pd.DataFrame, uuid: str) -> str:
    """The table with its flagged rows in red (pandas' Styler: to_html cannot style a row); a fixed
    uuid keeps the page the same from run to run."""
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    styler = (frame.style.set_uuid(uuid).hide(axis="index").format(escape="html", na_rep="–")
              .format(_number, subset=floats, na_rep="–")
              .apply(lambda row: ["color: #c00; font-weight: bold" if row[FLAG_COLUMN] else "" for _ in row], axis=1)
              .set_table_attributes('class="data"'))
    return styler.to_html()


def summary_tables(summary: pd.DataFrame, measures: dict) -> list[dict]:
    """The summary in narrow tables that fit a laptop screen: the generators' own columns (table
    `summary`), then one table per measure with its columns. The verdicts are the matrix's."""
    keys = {"dataset": "dataset", "generator": "generator"}
    groups = [("Generators", "summary", {**SUMMARY_HEAD, **SUMMARY_TAIL})]
    groups += [(measure.title, f"summary-{name}", {**keys, **measure.outputs.summary_labels})
               for name, measure in measures.items()]
    tables = []
    for title, table_id, labels in groups:
        columns = [c for c in labels if c in summary]
        if len(columns) > len(keys):
            tables.append({"title": title, "html": frame_html(summary[columns].rename(columns=labels), table_id=table_id)})
    return tables


def failures(summary: pd.DataFrame) -> pd.DataFrame:
    failed = summary[summary["status"] != "ok"]
    return failed[["dataset", "generator", "status"]]


def _recorded_provenance(provenance_json, workflow_dir, version: str) -> dict:
    if provenance_json is None:
        return {"revision": git_revision(workflow_dir), "versions": library_versions(PACKAGES), "version": version,
                "config_sha256": None}
    import json

    recorded = json.loads(Path(provenance_json).read_text())
    return {"revision": {"commit": recorded["commit"], "dirty": recorded["dirty"]}, "versions": recorded["versions"],
            "version": recorded["synthrisk_version"], "config_sha256": recorded["config_sha256"]}


def policy_statement(config: dict) -> str:
    """The policy the run's verdicts were read against, as the report states it: the config's
    `policy:` (the defaults where it has none)."""
    from ..measures.policy import config_policy

    return config_policy(config).statement()


def calibrated_power_statements(risk: pd.DataFrame, config: dict) -> list[dict]:
    """Per dataset of the run and risk it measured, what that risk's verdict detected in the
    calibration study at the size nearest the dataset's members (`synthrisk.measures.calibrated_power.quote`,
    the sentence the audit page gives each risk); none when the run's policy has another level."""
    from ..measures import calibrated_power
    from ..measures.base import RISKS
    from ..measures.policy import config_policy

    policy = config_policy(config)
    out = []
    for dataset in dict.fromkeys(risk["dataset"]):
        n_train = (config.get("datasets", {}).get(dataset) or {}).get("n_train")
        if n_train is None:
            continue
        measured = set(risk.loc[risk["dataset"] == dataset, "risk"])
        for name, label in RISKS.items():
            sentence = (calibrated_power.quote(name, int(n_train), policy, yours="this run trains on")
                        if name in measured else None)
            if sentence:
                out.append({"dataset": dataset, "risk": label, "statement": sentence})
    return out


def write_report(out, summary_csv, tables: dict, figures, captions_dir, config: dict, workflow_dir,
                 benchmarks_dir, provenance_json=None) -> Path:
    """`provenance_json` (the run's results/provenance.json) gives the commit, synthrisk version and
    package versions as the run recorded them; without it they are read now."""
    import jinja2

    from ..measures import configured_measures
    from ..versions import SYNTHRISK_VERSION as __version__

    measures = configured_measures(config)

    summary = pd.read_csv(summary_csv)
    env = jinja2.Environment(loader=jinja2.PackageLoader("synthrisk.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    sections = figure_sections(figures, captions_dir, measures, list(config.get("datasets", {})))
    first = [s for s in sections if s["title"] == FIRST_SCREEN]
    risk = pd.read_csv(tables["risk"]) if "risk" in tables else None
    page = env.get_template("report.html.j2").render(
        verdicts=verdict_matrix_html(risk) if risk is not None else None,
        calibrated_power=calibrated_power_statements(risk, config) if risk is not None else [],
        policy=policy_statement(config),
        level_css=LEVEL_CSS,
        risk_utility=first[0] if first else None,
        summaries=summary_tables(summary, measures),
        n_pairs=len(summary),
        failures=frame_html(failures(summary)) if (summary["status"] != "ok").any() else None,
        sections=[s for s in sections if s["title"] != FIRST_SCREEN],
        tables=[{"name": name, "html": frame_html(pd.read_csv(path))} for name, path in tables.items()],
        config=yaml.safe_dump(config, sort_keys=False),
        seeds=config.get("seeds"),
        **_recorded_provenance(provenance_json, workflow_dir, __version__),
        stages=frame_html(stage_times(benchmark_records(benchmarks_dir))),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
