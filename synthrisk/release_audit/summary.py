"""What the audit's runs add up to, every decision taken (`Summary`): each measure's own `tabulate`
turns its runs into tables, `synthrisk.measures.verdict` reads every attack against its reference
and decides each risk, and `named` says whom each risk's verdict exposes. With one release and one
seed an attack beats its reference when its own test says so on this release. The report words
these decisions (and files them under the three criteria); the page draws them."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from ..measures.policy import Policy
from ..measures.runner import Outcome
from ..measures.verdict import collect_evidence, measure_verdicts, release_answer, risk_table
from .inputs import AuditInput
from .named import all_outcomes, exposed, with_named


def tabulate(runs: list[Outcome], measures: dict) -> dict[str, pd.DataFrame]:
    """Every measure's tables (its own `tabulate` of its runs' summaries), one mapping of table name
    to frame (the measures' table names are distinct)."""
    tables: dict[str, pd.DataFrame] = {}
    for name, (measure, settings) in measures.items():
        summaries = [r.summary for r in runs if r.measure_name == name]
        if summaries:
            tables.update(measure.tabulate(summaries, settings))
    return tables


class Summary(NamedTuple):
    """What the audit's runs add up to, every decision taken: the measures' tables, every attack's
    evidence row, the risk table (one verdict per risk), what every attack did to each member
    (`named.all_outcomes`), the people the per-person evidence names (`named.named_people`), each
    risk measure's own verdict by name (`verdict.measure_verdicts`), the answer to "does this audit
    support releasing this file?" (`verdict.release_answer`), per measured risk who its verdict
    exposes (`named.exposed`), and the policy they were read under (the page's evidence figure marks
    the attacks that beat their reference under it)."""

    tables: dict
    evidence: pd.DataFrame
    risks: pd.DataFrame
    outcomes: pd.DataFrame
    people: pd.DataFrame
    verdicts: dict
    answer: str
    exposed: dict
    policy: Policy


def summarise(runs: list[Outcome], measures: dict, data: AuditInput, policy: Policy | None = None) -> Summary:
    """The runs' `Summary` on the audit's input `data`, under `policy` (default `Policy()`); the members
    the per-person evidence names count under every risk whose attack got them right (`named`)."""
    policy = policy or Policy()
    tables = tabulate(runs, measures)
    summarised = {name: m for name, (m, _) in measures.items() if any(r.measure_name == name for r in runs)}
    evidence = collect_evidence(summarised, tables)
    outcomes = all_outcomes(runs)
    evidence, people = with_named(evidence, outcomes, measures)
    risks = risk_table(evidence, policy)
    return Summary(tables, evidence, risks, outcomes, people, verdicts=measure_verdicts(evidence, policy),
                   answer=release_answer(dict(zip(risks["risk"], risks["level"]))),
                   exposed=exposed(risks, outcomes, people, data.members, data.schema), policy=policy)
