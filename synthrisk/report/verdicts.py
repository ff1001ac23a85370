"""The verdicts as the first thing a reader sees, in one form for the workflow report and the audit
page: a matrix of releases (dataset × generator; one row in an audit) by risk, each cell coloured by
its level and naming the strongest attack, its value and its reference. The level's colour and
class are stated here once; both pages take their CSS from `LEVEL_CSS`."""

from __future__ import annotations

import html

import pandas as pd

from ..measures.base import RISKS
from ..measures.policy import LEVELS

#: level -> CSS class of a verdict cell or block
LEVEL_CLASSES = {LEVELS["at_risk"]: "at-risk", LEVELS["inconclusive"]: "inconclusive", LEVELS["below"]: "below",
                 "not measured": "not-measured"}
#: CSS class -> (border, background) colours: green only for a risk shown to be below its threshold
LEVEL_COLOURS = {"at-risk": ("#c0392b", "#fdf1ef"), "inconclusive": ("#d08a00", "#fff8ea"),
                 "below": ("#27864a", "#f0f8f2"), "not-measured": ("#999", "#fafafa")}
LEVEL_CSS = "\n".join(
    f".risk.{name}, .answer.{name}, table.verdicts td.{name} {{ border-left-color: {border}; background: {background}; }}"
    for name, (border, background) in LEVEL_COLOURS.items()) + """
table.verdicts { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; width: 100%; table-layout: fixed; }
table.verdicts th, table.verdicts td { border: 1px solid #ddd; padding: 0.35em 0.5em; vertical-align: top; text-align: left;
  overflow-wrap: anywhere; }
table.verdicts th { background: #f0f3f6; }
table.verdicts td.cell { border-left-width: 5px; }
table.verdicts .level { font-weight: bold; display: block; }
table.verdicts .attack { font-size: 0.85em; color: #333; }
table.verdicts .policy { font-size: 0.8em; color: #555; display: block; }
"""


def level_class(level: str) -> str:
    return LEVEL_CLASSES.get(level, "not-measured")


def _number(value) -> str:
    return "–" if value is None or pd.isna(value) else f"{float(value):.3f}"


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return '<td class="cell not-measured"><span class="level">not measured</span></td>'
    attack = ""
    if isinstance(row.get("attack"), str) and row["attack"]:
        attack = (f'<span class="attack">{html.escape(row["attack"])}: {_number(row.get("value"))} vs '
                  f'{_number(row.get("reference"))} [{_number(row.get("ci_low"))}, {_number(row.get("ci_high"))}]</span>')
    level = str(row["level"])
    return (f'<td class="cell {level_class(level)}" title="{html.escape(str(row.get("verdict", "")))}">'
            f'<span class="level">{html.escape(level)}</span>{attack}{_policy_line(row, level)}</td>')


def _policy_line(row: pd.Series, level: str) -> str:
    """The policy the cell was judged by, shown in the cell rather than only in its hover text: the
    threshold and the level of the risk's Holm family, and for "inconclusive" how many times the records would decide
    it. Empty for rows that do not carry them (the audit page states them in each risk's own block)."""
    if pd.isna(row.get("threshold", float("nan"))) or pd.isna(row.get("alpha", float("nan"))):
        return ""
    text = f"threshold {float(row['threshold']):g}; Holm at {float(row['alpha']):g}"
    factor = row.get("decide_factor", float("nan"))
    if level == LEVELS["inconclusive"] and not pd.isna(factor) and float(factor) != float("inf"):
        text += f"; about {float(factor):.1f} times the records would decide it"
    return f'<span class="policy">{html.escape(text)}</span>'


def verdict_matrix_html(risk: pd.DataFrame, table_id: str = "verdicts") -> str:
    """`risk` (results/tables/risk.csv, or the audit's risk rows): one row per dataset × generator ×
    risk with its level, strongest attack, value, reference and interval. One table row per release,
    one column per risk; a risk without a row is 'not measured'."""
    keys = ["dataset", "generator"]
    header = "".join(f"<th>{html.escape(label)}</th>" for label in RISKS.values())
    rows = []
    for (dataset, generator), found in risk.groupby(keys, sort=False):
        by_risk = {r["risk"]: r for _, r in found.iterrows()}
        cells = "".join(_cell(by_risk.get(name)) for name in RISKS)
        rows.append(f"<tr><th>{html.escape(str(dataset))}</th><th>{html.escape(str(generator))}</th>{cells}</tr>")
    return (f'<table class="verdicts" id="{table_id}"><colgroup><col style="width:9%"><col style="width:11%"></colgroup>'
            f"<thead><tr><th>dataset</th><th>generator</th>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
