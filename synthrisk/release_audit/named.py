"""The people the audit names, across its four risks, and who each risk's verdict exposes
(`exposed`: the members it names, and the members' subgroups its attack gets right most, by
RAPID's attribution on the attack's outcomes).

One measure names members with tested error rates: the per-person membership evidence
(`synthrisk.mia.exposure`), a conformal p-value per member against the holdout's scores and
Benjamini-Hochberg at the policy's `naming_fdr`, and the rare-copies count test
(`synthrisk.mia.rare_copies`), which names the copied rare members when it rejects at the policy's
`rare_copies_level` (a level, not a false-discovery rate: beside them the matched rare holdout
records say how many a release that never saw them would match). With the generator in hand the
attacks that refit it name members too (the ensemble, and MAMA-MIA for MST), each at `naming_fdr`,
behind a gate (`gated`, a fixed sequence): they are heard only once the exposure evidence has named
someone. In a release that never saw its members anyone is then named exactly as often as the
exposure evidence names anyone, at most `naming_fdr` + `rare_copies_level`, and the audit with the
generator names everyone the audit as it ships names. Splitting the rate among the attacks instead (Bonferroni) would cost the
exposure evidence most of its power, because a conformal p-value against n holdout records is at
least 1 / (n + 1): on Adult at 1,000 members, releases with 5 % member copies had anyone named in
113 of 200 splits at 0.045 and in none at 0.0225 (benchmarks/exposure_naming.py). The price: among
the members named, each attack's list keeps its false-discovery rate, and the union's is at most
the sum of theirs. The singling-out, linkability and inference
attacks give one yes/no per attacked record (isolated, linked, secret guessed). A yes/no outcome's
conformal p-value against the control records is at least their success rate (a few per cent for
linkability, often over half for an attribute), so it never clears Benjamini-Hochberg alone: it
cannot tell this person from anyone like them.

So under those risks a member is named when the membership evidence names them *and* the risk's
attack got them right: the release gives the person away, and the attack shows what it reveals
about them. Each risk's list is a subset of the members the naming attacks name, so in a release
that never saw its members nobody is named under any risk with probability at most `naming_fdr` +
`rare_copies_level`: no further test is spent. A subset of the named need not keep their false-discovery rate, so it is
measured by simulation: the pre-registered calibration of the audit records, per risk, how many of
the members named a release does not hold (benchmarks/shipped_calibration.py, `n_false`).
"""

from __future__ import annotations

import pandas as pd

from ..data.split import ROW_ID
from ..data.subgroups import OTHER, attribute_risk
from ..io import finite_or_null
from ..measures.base import OUTCOME_COLUMNS, no_outcomes
from ..measures.runner import Outcome

#: the per-person columns of a named member (the naming attack's score and p-value)
PERSON = ["row_id", "score", "p_value", "named_by"]
#: every run's outcomes in one frame: its measure and unit ("" for a measure without units) beside them
OUTCOMES = ["measure", "unit", *OUTCOME_COLUMNS]
#: subgroups shown per risk, and the fewest members a subgroup must hold to be shown (smaller
#: ones describe a handful of identifiable people, and their rates are noise)
N_SUBGROUPS, MIN_SUBGROUP = 5, 20


def all_outcomes(runs: list[Outcome]) -> pd.DataFrame:
    """What every attack of every finished run did to each member (OUTCOMES), in one frame."""
    frames = [r.outcomes.assign(measure=r.measure_name, unit=r.unit or "") for r in runs
              if r.status == "ok" and len(r.outcomes)]
    return pd.concat(frames or [no_outcomes().assign(measure="", unit="")], ignore_index=True)[OUTCOMES]


def outcomes_of(row: dict, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The outcomes of the attack of a verdict or evidence row: its measure, its `unit` (RAPID's
    attacker x sensitive unit; empty for a measure without units) and its attack."""
    unit = row.get("unit")
    unit = unit if isinstance(unit, str) and unit else ""
    return outcomes[(outcomes["measure"] == row["measure"]) & (outcomes["unit"] == unit)
                    & (outcomes["attack"] == row["attack"])]


def _names_itself(row: dict) -> bool:
    return int(row.get("n_identified") or 0) > 0 and not row.get("named_by")


#: why a gated attack's members are not named (the evidence row's detail)
GATED = ("names nobody here: the attacks that refit the generator name members only once the exposure evidence "
         "has named someone")


def gated(evidence: pd.DataFrame, measures: dict) -> pd.DataFrame:
    """`evidence` where the rows of naming attacks that refit the generator name nobody unless an
    attack of the audit as it ships (one that does not refit it) has named someone."""
    if evidence is None or evidence.empty:
        return evidence

    def refits(row) -> bool:
        return bool(getattr(measures[row["measure"]][0], "refits_generator", False))

    rows = evidence.to_dict("records")
    if any(_names_itself(row) and not refits(row) for row in rows):
        return evidence
    shut = [i for i, row in zip(evidence.index, rows) if _names_itself(row) and refits(row)]
    if not shut:
        return evidence
    evidence = evidence.copy()
    evidence.loc[shut, "n_identified"] = 0
    evidence.loc[shut, "detail"] = [f"{d}; {GATED}" if isinstance(d, str) and d else GATED
                                    for d in evidence.loc[shut, "detail"]]
    return evidence


def _named_by_itself(row: dict, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The members the row's attack names itself, the strongest evidence first."""
    mine = outcomes_of(row, outcomes)
    return mine[mine["named"]].sort_values(["p_value", "score", "row_id"], ascending=[True, False, True],
                                           kind="stable")


def named_people(evidence: pd.DataFrame | None, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The members named by the attacks that name people themselves (PERSON columns; one row per
    member, the smallest p-value kept); none without `evidence`."""
    found = [_named_by_itself(row, outcomes)[PERSON]
             for row in ([] if evidence is None else evidence.to_dict("records")) if _names_itself(row)]
    found = [f for f in found if len(f)]
    if not found:
        return pd.DataFrame(columns=PERSON)
    people = pd.concat(found, ignore_index=True).sort_values(["p_value", "row_id"], kind="stable")
    return people.drop_duplicates("row_id").reset_index(drop=True)


def also_named(row: dict, outcomes: pd.DataFrame, people: pd.DataFrame) -> pd.DataFrame:
    """The named `people` whom the row's attack got right, PERSON columns."""
    if people.empty:
        return people.iloc[:0]
    mine = outcomes_of(row, outcomes)
    return people[people["row_id"].isin(set(mine.loc[mine["hit"], "row_id"].astype("int64")))]


def with_named(evidence: pd.DataFrame, outcomes: pd.DataFrame, measures: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`evidence`, `gated`, where each attack of a risk that no attack of its own names people for gets
    `n_identified` = the named people it got right and `named_by` = the attack that named them, the
    named people: `named_people`)."""
    evidence = gated(evidence, measures).copy()  # `collect_evidence` gave every row `named_by` (empty)
    people = named_people(evidence, outcomes)
    if people.empty:
        return evidence, people
    naming_risks = {row["risk"] for row in evidence.to_dict("records") if _names_itself(row)}
    named_by = "; ".join(dict.fromkeys(people["named_by"]))
    for index, row in evidence.iterrows():
        if row["risk"] in naming_risks:
            continue
        found = also_named(row.to_dict(), outcomes, people)
        if len(found):
            evidence.loc[index, ["n_identified", "named_by"]] = [len(found), named_by]
    return evidence, people


def identified(row: dict, outcomes: pd.DataFrame, people: pd.DataFrame) -> list[dict]:
    """The page's and the JSON's list of the members a verdict row names: the attack's own, or the
    named people its attack got right (each with the naming attack's score and p-value)."""
    if not int(row.get("n_identified") or 0):
        return []
    if not row.get("named_by"):
        return [{"row_id": int(p.row_id), "attack": p.named_by, "score": float(p.score), "p_value": float(p.p_value)}
                for p in _named_by_itself(row, outcomes).itertuples()]
    return [{"row_id": int(p.row_id), "attack": row["attack"], "score": float(p.score), "p_value": float(p.p_value),
             "named_by": p.named_by} for p in also_named(row, outcomes, people).itertuples()]


def subgroups(outcomes: pd.DataFrame, members: pd.DataFrame, schema) -> list[dict]:
    """The members' subgroups (a quasi-identifier's level or quintile) with the highest share that an
    attack gets right (its `outcomes`: the attacked members and its hits), with their size and the
    share over all attacked members: RAPID's attribution (`synthrisk.data.subgroups.attribute_risk`).
    None when it got every attacked member right, or lists only its hits (singling out's queries): no
    subgroup then stands out."""
    hits = outcomes["hit"].to_numpy(bool)
    if not hits.any() or hits.all():
        return []
    attacked = members.set_index(ROW_ID).loc[outcomes[ROW_ID].to_numpy()].reset_index()
    groups = attribute_risk(attacked, hits, schema, min_group=MIN_SUBGROUP)
    groups = groups[(groups["group"] != OTHER) & (groups["n"] >= MIN_SUBGROUP)]
    overall = float(hits.mean())
    # Only groups more exposed than the attacked members as a whole: when every group sits at the
    # overall share (an identity release exposes everyone), no subgroup stands out.
    groups = groups[groups["rapid"] > overall + 1e-12]
    top = groups.sort_values(["rapid", "n"], ascending=[False, False]).head(N_SUBGROUPS)
    return [{"column": r.quasi_identifier, "group": r.group, "n": int(r.n), "n_exposed": int(r.n_at_risk),
             "share_exposed": float(r.rapid), "share_exposed_overall": overall} for r in top.itertuples()]


def exposed(risks: pd.DataFrame, outcomes: pd.DataFrame, people: pd.DataFrame, members: pd.DataFrame,
            schema) -> dict[str, dict]:
    """Per measured risk (a row of the risk table), who its verdict exposes: `identified`, the members
    it names (`identified`), and `subgroups`, the members' subgroups its attack gets right most
    (`subgroups`), for an attack that beats its reference or names someone: the subgroups of one that
    does neither would rank noise."""
    found = {}
    for row in risks.to_dict("records"):
        row = finite_or_null(row)
        shown = bool(row["beats"]) or bool(row.get("n_identified"))
        mine = outcomes_of(row, outcomes)
        found[row["risk"]] = {"identified": identified(row, outcomes, people),
                              "subgroups": subgroups(mine, members, schema) if shown else []}
    return found
