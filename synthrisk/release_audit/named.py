"""The people the audit names, across its four risks.

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

from ..measures.runner import Outcome

#: the per-person columns of a named member (the naming attack's score and p-value)
PERSON = ["row_id", "score", "p_value", "named_by"]


def run_of(row: dict, runs: list[Outcome]) -> Outcome | None:
    """The run whose records hold the attack of a verdict or evidence row (its `unit`: RAPID's
    attacker x sensitive unit; empty for a measure without units)."""
    unit = row.get("unit")
    unit = unit if isinstance(unit, str) and unit else None
    return next((r for r in runs if r.measure_name == row["measure"] and r.unit == unit and r.status == "ok"), None)


def records_of(row: dict, runs: list[Outcome]) -> pd.DataFrame:
    run = run_of(row, runs)
    return run.records if run else pd.DataFrame()


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


def named_people(evidence: pd.DataFrame | None, runs: list[Outcome], measures: dict) -> pd.DataFrame:
    """The members named by the attacks that name people themselves (PERSON columns; one row per
    member, the smallest p-value kept); none without `evidence`."""
    found = []
    for row in ([] if evidence is None else evidence.to_dict("records")):
        if _names_itself(row):
            measure = measures[row["measure"]][0]
            for person in measure.identified_members(row, records_of(row, runs)):
                found.append({"row_id": person["row_id"], "score": person["score"], "p_value": person["p_value"],
                              "named_by": person["attack"]})
    if not found:
        return pd.DataFrame(columns=PERSON)
    people = pd.DataFrame(found).sort_values(["p_value", "row_id"], kind="stable")
    return people.drop_duplicates("row_id").reset_index(drop=True)


def also_named(row: dict, measure, records: pd.DataFrame, people: pd.DataFrame) -> pd.DataFrame:
    """The named `people` whom the row's attack got right (`Measure.got_right`), PERSON columns."""
    if people.empty or records.empty:
        return people.iloc[:0]
    right = measure.got_right(row, records)
    if right is None:
        return people.iloc[:0]
    return people[people["row_id"].isin(set(right.astype("int64")))]


def with_named(evidence: pd.DataFrame, runs: list[Outcome], measures: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`evidence`, `gated`, where each attack of a risk that no attack of its own names people for gets
    `n_identified` = the named people it got right and `named_by` = the attack that named them, the
    named people: `named_people`)."""
    evidence = gated(evidence, measures).copy()  # `collect_evidence` gave every row `named_by` (empty)
    people = named_people(evidence, runs, measures)
    if people.empty:
        return evidence, people
    naming_risks = {row["risk"] for row in evidence.to_dict("records") if _names_itself(row)}
    named_by = "; ".join(dict.fromkeys(people["named_by"]))
    for index, row in evidence.iterrows():
        if row["risk"] in naming_risks:
            continue
        measure = measures[row["measure"]][0]
        found = also_named(row.to_dict(), measure, records_of(row.to_dict(), runs), people)
        if len(found):
            evidence.loc[index, ["n_identified", "named_by"]] = [len(found), named_by]
    return evidence, people


def identified(row: dict, measure, records: pd.DataFrame, people: pd.DataFrame) -> list[dict]:
    """The page's and the JSON's list of the members a verdict row names: the measure's own, or the
    named people its attack got right (each with the naming attack's score and p-value)."""
    if not int(row.get("n_identified") or 0):
        return []
    if not row.get("named_by"):
        return measure.identified_members(row, records)
    return [{"row_id": int(p.row_id), "attack": row["attack"], "score": float(p.score), "p_value": float(p.p_value),
             "named_by": p.named_by} for p in also_named(row, measure, records, people).itertuples()]
