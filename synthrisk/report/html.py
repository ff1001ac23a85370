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

# Figure file prefixes -> (section, caption file in workflow/report/).
SECTIONS = [
    ("risk_utility_", "Risk against utility", "risk_utility.rst"),
    ("rapid_simulation_", "RAPID: dependence-strength simulation", "rapid_simulation.rst"),
    ("rapid_", "RAPID attribute-inference risk", "rapid.rst"),
    ("mia_", "Membership inference", "mia.rst"),
    ("dp_", "DP sufficient statistics", "dp.rst"),
]
# Wildcards that a caption reads (as Snakemake's report passes them), recovered from figure names.
CAPTION_WILDCARDS = {"dp_": "experiment"}

SUMMARY_COLUMNS = {
    "dataset": "dataset", "generator": "generator", "epsilon": "ε", "dp_guarantee": "DP guarantee", "status": "status",
    "rapid_max": "RAPID_max (attackers beating chance)", "rapid_chance_floor": "RAPID chance floor",
    "rapid_excess": "RAPID excess over chance", "rapid_verdict": "RAPID verdict",
    "mia_auc": "MIA AUC", "mia_tpr_low_fpr": "TPR @ low FPR",
    "mia_member_share": "MIA member share t",
    "mia_f1_gain_label_free_tau_kde_realistic": "F1 gain KDE (realistic), label-free τ",
    "mia_f1_gain_oracle_tau_kde_realistic": "F1 gain KDE (realistic), oracle τ",
    "mia_f1_gain_label_free_tau_method1": "F1 gain Method 1, label-free τ",
    "mia_f1_gain_oracle_tau_method1": "F1 gain Method 1, oracle τ",
    "quality": "quality", "efficacy_ratio": "efficacy", "fit_seconds": "fit s",
}


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def rst_to_html(text: str) -> str:
    from docutils.core import publish_parts

    return publish_parts(text, writer="html5", settings_overrides={"report_level": 5})["body"]


def render_caption(path: Path, stem: str, prefix: str) -> str:
    """The caption as Snakemake's report shows it: Jinja first (with the figure's wildcards), then rST."""
    import jinja2

    wildcards = {CAPTION_WILDCARDS[prefix]: stem[len(prefix):]} if prefix in CAPTION_WILDCARDS else {}
    text = jinja2.Template(path.read_text()).render(snakemake=SimpleNamespace(wildcards=SimpleNamespace(**wildcards)))
    return rst_to_html(text)


def figure_sections(figures, captions_dir) -> list[dict]:
    sections = {title: [] for _, title, _ in SECTIONS}
    for path in map(Path, figures):
        for prefix, title, caption in SECTIONS:
            if path.stem.startswith(prefix):
                sections[title].append({"name": path.stem, "src": _data_uri(path),
                                        "caption": render_caption(Path(captions_dir) / caption, path.stem, prefix)})
                break
        else:
            sections.setdefault("Other figures", []).append({"name": path.stem, "src": _data_uri(path), "caption": ""})
    return [{"title": title, "figures": figs} for title, figs in sections.items() if figs]


def _number(value: float) -> str:
    # Three significant digits, and floating-point dust (a gain of 6.7e-16) shown as the 0 it is.
    return "0" if abs(value) < 1e-9 else f"{value:.3g}"


def _frame_html(frame: pd.DataFrame, table_id: str | None = None) -> str:
    return frame.to_html(index=False, na_rep="–", float_format=_number, border=0,
                         table_id=table_id, classes="data", escape=True)


def summary_html(summary: pd.DataFrame) -> str:
    shown = summary[[c for c in SUMMARY_COLUMNS if c in summary]].rename(columns=SUMMARY_COLUMNS)
    return _frame_html(shown, table_id="summary")


def failures(summary: pd.DataFrame) -> pd.DataFrame:
    failed = summary[summary["status"] != "ok"]
    return failed[["dataset", "generator", "status"]]


def write_report(out, summary_csv, tables: dict, figures, captions_dir, config: dict, workflow_dir,
                 benchmarks_dir) -> Path:
    import jinja2

    summary = pd.read_csv(summary_csv)
    env = jinja2.Environment(loader=jinja2.PackageLoader("synthrisk.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]))
    page = env.get_template("report.html.j2").render(
        summary=summary_html(summary),
        n_pairs=len(summary),
        failures=_frame_html(failures(summary)) if (summary["status"] != "ok").any() else None,
        sections=figure_sections(figures, captions_dir),
        tables=[{"name": name, "html": _frame_html(pd.read_csv(path))} for name, path in tables.items()],
        config=yaml.safe_dump(config, sort_keys=False),
        seeds=config.get("seeds"),
        revision=git_revision(workflow_dir),
        versions=library_versions(PACKAGES),
        stages=_frame_html(stage_times(benchmark_records(benchmarks_dir))),
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
