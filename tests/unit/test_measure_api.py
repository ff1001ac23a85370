"""One measure at a time (synthrisk.measure): every registered measure through one function of
(name, train, synthetic, holdout, *, ...) returning one `Measurement`, run as the audit runs it, on
small real data (Adult, 350 records per file; RAPID with one cheap attacker, the control-set attacks
with few queries)."""

import dataclasses
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthrisk
from synthrisk import measure_api
from synthrisk.errors import ConfigError, SchemaError
from synthrisk.measures import EVIDENCE_COLUMNS, Measure, builtin_measures
from synthrisk.measures.base import OUTCOME_COLUMNS
from synthrisk.measures.policy import LEVELS

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").exists())
#: every built-in measure (the registry, walked)
NAMES = sorted(builtin_measures())
#: cheap settings of the measures that have costly defaults
CHEAP = {"dcr": {"permutations": 199}, "rapid": {"attackers": ["cart"], "permutations": 19, "null_refits": 0},
         "singling_out": {"n_attacks": 100}, "linkability": {"n_attacks": 100}, "inference": {"n_attacks": 100},
         "shadow_models": {"generator": "independent", "shadow_datasets": 20, "eval_datasets": 20, "n_outliers": 10,
                           "n_random": 10, "n_trees": 20},
         "mama_mia": {"generator": {"backend": "mst", "params": {"epsilon": 10.0}}, "runs": 3},
         "ensemble": {"generator": "independent", "refits": 3, "per_refit": 100}}
FIELDS = ["measure", "risk", "attack", "metric", "value", "reference", "ci_low", "ci_high", "p_value", "level",
          "verdict", "records", "evidence", "details", "outcomes", "notes", "schema"]
#: the measures that attack nobody one member at a time (DCR compares distances of the release's records)
NO_OUTCOMES = {"utility", "dcr", "shadow_models"}


@pytest.fixture(scope="module")
def split(adult):
    """Members, holdout, records of the population the generator never saw, and the attacker's
    auxiliary records: disjoint Adult rows."""
    sample = adult.sample(1400, random_state=29).reset_index(drop=True)
    return tuple(sample.iloc[i:i + 350].reset_index(drop=True) for i in range(0, 1400, 350))


@pytest.fixture(scope="module")
def copies(split, adult_schema):
    """Every measure on a release that is the training records themselves."""
    train, holdout, _, aux = split
    results = {}
    for name in NAMES:
        extra = {"aux": aux} if name == "domias" else {}
        results[name] = synthrisk.measure(name, train, train, holdout, schema=adult_schema, **extra,
                                          **CHEAP.get(name, {}))
    return results


# mia on an identity release: AUC 1 with the zero-width Hanley-McNeil interval [1, 1], a certain effect
@pytest.mark.parametrize("name", ["dcr", "mia"])
def test_copies_of_the_training_records_are_a_membership_risk(copies, name):
    found = copies[name]
    assert found.risk == "membership"
    assert found.level == LEVELS["at_risk"], found.verdict
    assert found.value > found.reference
    assert found.verdict.startswith("at risk")


@pytest.mark.parametrize("name", ["dcr", "mia"])
def test_records_the_generator_never_saw_are_not_a_membership_risk(split, adult_schema, name):
    train, holdout, unseen, _ = split
    found = synthrisk.measure(name, train, unseen, holdout, schema=adult_schema, **CHEAP.get(name, {}))
    assert found.level in LEVELS.values()
    assert found.level != LEVELS["at_risk"], found.verdict


#: the membership measures whose attacks score every member and holdout record
SCORING = ["mia", "domias", "exposure", "mama_mia", "ensemble"]


@pytest.mark.parametrize("name", SCORING)
def test_a_scoring_membership_attack_reads_its_tpr_at_three_low_fprs(copies, split, adult_schema, name):
    """Carlini et al. (2022): TPR at FPR 0.1 %, 1 % and 10 %, read on the members scored. On the
    training records themselves an attack that sees the release as a copy flags most members at 10 %
    FPR; at 350 holdout records 0.1 % is not resolved (one false positive is 0.3 %), so it is NaN."""
    from synthrisk.measures.base import TPR_COLUMNS

    rows = copies[name].evidence
    assert set(TPR_COLUMNS) | {"n_scored"} <= set(rows)
    assert rows["tpr_at_1e-03"].isna().all()
    assert rows["tpr_at_1e-01"].between(0, 1).all() and rows["tpr_at_1e-02"].between(0, 1).all()
    assert (rows["tpr_at_1e-02"] <= rows["tpr_at_1e-01"]).all()
    assert (rows["n_scored"] > 0).all() and (rows["n_scored"] <= 350).all()
    if name in ("mia", "exposure"):  # they read the release's distance to each record: copies are nearest
        assert rows["tpr_at_1e-01"].max() > 0.5


def test_an_attack_without_a_per_member_score_reports_no_tpr(copies):
    rows = copies["dcr"].evidence
    assert rows["tpr_at_1e-01"].isna().all() and rows["n_scored"].isna().all()


@pytest.mark.parametrize("name", NAMES)
def test_every_measure_returns_one_result_type(copies, name):
    found = copies[name]
    assert isinstance(found, measure_api.Measurement)
    assert [f.name for f in dataclasses.fields(found)] == FIELDS
    assert found.measure == name and found.risk == builtin_measures()[name].risk
    assert isinstance(found.records, pd.DataFrame) and len(found.records)
    assert list(found.evidence.columns) == EVIDENCE_COLUMNS
    # what each attack did to each member, named by the attack of its evidence row
    assert list(found.outcomes.columns) == ["unit", *OUTCOME_COLUMNS]
    assert bool(len(found.outcomes)) == (name not in NO_OUTCOMES), name
    assert set(found.outcomes["attack"]) <= set(found.evidence["attack"]), name
    assert set(found.outcomes["row_id"]) <= set(range(350)), name  # members only: train is numbered first
    assert isinstance(found.details, dict) and isinstance(found.notes, list)
    assert list(found.schema.sensitive) == ["income"]
    if name == "utility":
        assert found.level is None and found.attack is None and found.reference is None and found.p_value is None
        assert found.evidence.empty
        assert found.value == pytest.approx(found.details["quality"]) and 0 < found.value <= 1
        assert set(found.records.columns) >= {"target", "metric", "synthetic", "real", "ratio"}
        assert repr(found).startswith("Measurement(utility: SDMetrics quality")
        return
    assert found.level in LEVELS.values()
    assert found.attack in set(found.evidence["attack"])
    row = found.evidence[found.evidence["attack"] == found.attack].iloc[0]
    assert found.value == pytest.approx(row["value"]) and found.reference == pytest.approx(row["reference"])
    assert found.metric == row["metric"]
    assert found.ci_low <= found.value <= found.ci_high
    assert 0 <= found.p_value <= 1
    assert found.level in repr(found) and found.attack in repr(found)
    if name == "rapid":
        # one unit per attacker x sensitive attribute: the records carry the unit's keys, details one summary per unit
        assert list(found.records.columns[:2]) == ["attacker", "sensitive"]
        assert set(found.details) == {"cart-income"} and found.details["cart-income"]["status"] == "ok"
        assert found.metric == "RAPID member excess"  # with a holdout
    else:
        assert found.details["status"] == "ok" and "dataset" not in found.details


def test_the_one_function_takes_the_measure_then_train_synthetic_holdout(split):
    """One signature for every measure: the name, then (train, synthetic, holdout) the only
    positional arguments, everything else a keyword; the per-measure functions are gone."""
    parameters = list(inspect.signature(measure_api.measure).parameters.values())
    assert [p.name for p in parameters[:4]] == ["name", "train", "synthetic", "holdout"]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters[:4])
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in parameters[4:])
    keywords = {p.name: p.default for p in parameters[4:]}
    assert {k: keywords[k] for k in ("schema", "sensitive", "policy", "seed")} == \
        {"schema": None, "sensitive": None, "policy": None, "seed": 0}
    assert parameters[-1].kind is parameters[-1].VAR_KEYWORD
    assert synthrisk.measure is measure_api.measure and set(synthrisk.__all__) == {"Audit", "Measurement", "audit",
                                                                                   "measure"}
    train, holdout, _, _ = split
    with pytest.raises(TypeError):
        synthrisk.measure("dcr", train, train, holdout, None)


def _methods():
    from synthrisk.anonymity import inference, linkability, singling_out
    from synthrisk.dcr import dcr
    from synthrisk.domias.core import domias
    from synthrisk.mia.attacks import membership_attack
    from synthrisk.mia.ensemble import ensemble_scores
    from synthrisk.mia.exposure import exposure
    from synthrisk.rapid import rapid
    from synthrisk.shadow_mia.release import attack_release
    from synthrisk.utility.core import utility

    return [dcr, exposure, membership_attack, domias, ensemble_scores, singling_out, linkability, inference, utility,
            rapid, attack_release]


@pytest.mark.parametrize("method", _methods(), ids=lambda f: f.__name__)
def test_every_method_takes_the_records_in_one_order(method):
    """Under the measures, every method takes (members, synthetic, holdout) and nothing else by
    position; the schema and the settings are keywords, so a call in another order fails loudly
    instead of swapping the members and the holdout."""
    parameters = list(inspect.signature(method).parameters.values())
    assert [p.name for p in parameters[:3]] in (["members", "synthetic", "holdout"], ["real", "synthetic", "holdout"])
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters[:3])
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters[3:]), [p.name for p in parameters[3:]]
    assert "schema" in {p.name for p in parameters[3:]}


def test_an_unknown_setting_is_refused_by_name(split, adult_schema):
    train, holdout, _, _ = split
    with pytest.raises(ConfigError, match=r"dcr: unknown key\(s\) \['permutatoins'\]; known: .*'permutations'"):
        synthrisk.measure("dcr", train, train, holdout, schema=adult_schema, permutatoins=9)
    with pytest.raises(ConfigError, match="rapid: unknown key.*'attacker'"):
        synthrisk.measure("rapid", train, train, holdout, schema=adult_schema, attacker="cart")
    with pytest.raises(ConfigError, match="unknown measure 'dcrr'"):
        synthrisk.measure("dcrr", train, train, holdout, schema=adult_schema)


def test_a_missing_column_is_named_with_its_dataframe(split, adult_schema):
    train, holdout, _, _ = split
    with pytest.raises(SchemaError, match=r"the synthetic DataFrame: column\(s\) \['age'\] .* missing"):
        synthrisk.measure("mia", train, train.drop(columns=["age"]), holdout, schema=adult_schema)
    with pytest.raises(SchemaError, match=r"the holdout DataFrame: column\(s\) \['sex'\]"):
        synthrisk.measure("dcr", train, train, holdout.drop(columns=["sex"]), schema=adult_schema)


def test_what_a_measure_needs_is_explained(split, adult_schema):
    train, holdout, _, _ = split
    with pytest.raises(ConfigError, match="domias: does not apply to these inputs: DOMIAS needs the attacker's "
                                          "auxiliary records"):
        synthrisk.measure("domias", train, train, holdout, schema=adult_schema)
    with pytest.raises(ConfigError, match="rapid: name the sensitive column.*sensitive=.*schema="):
        synthrisk.measure("rapid", train, train, holdout, attackers=["cart"])
    with pytest.raises(ConfigError, match="dcr: does not apply to these inputs: DCR needs holdout records"):
        synthrisk.measure("dcr", train, train, schema=adult_schema)
    # the linear attacker infers continuous attributes only, and income is categorical
    with pytest.raises(ConfigError, match=r"rapid: nothing to run: .*\['income'\] with the settings \{'attackers': \['linear"):
        synthrisk.measure("rapid", train, train, holdout, schema=adult_schema, attackers=["linear"])
    # without a holdout RAPID's verdict is its chance test, which permutations 0 would leave out
    with pytest.raises(RuntimeError, match="permutations 0 leaves RAPID untested against chance when no holdout"):
        synthrisk.measure("rapid", train, train, schema=adult_schema, attackers=["cart"], permutations=0)


def test_an_inferred_schema_and_the_policy_are_the_audits(split):
    """Without a schema one is inferred from `train` (the sensitive column named); a stricter policy
    reads the same copies as inconclusive, not at risk."""
    train, holdout, _, _ = split
    strict = {"thresholds": {"membership": 0.99}}
    found = synthrisk.measure("dcr", train, train, holdout, sensitive="income", policy=strict, permutations=99)
    assert list(found.schema.sensitive) == ["income"] and found.schema.origin.startswith("schema inferred from")
    assert found.level == LEVELS["inconclusive"], found.verdict
    assert "0.99" in found.verdict


def test_a_plug_in_measure_runs_through_the_generic_function(split, adult_schema):
    """The docs' example measure (docs/extending.md), as an unregistered instance: the registry is
    shared by the process."""
    text = (ROOT / "docs" / "extending.md").read_text()
    source = re.search(r"```python\n(.*?)```", text.split("<!-- add-a-measure:", 1)[1], re.S).group(1)
    scope = {}
    exec(compile(source.replace("@register_measure\n", ""), "docs/extending.md", "exec"), scope)  # noqa: S102
    train, holdout, _, _ = split
    found = synthrisk.measure(scope["ExactCopies"](), train, train, holdout, schema=adult_schema)
    assert found.measure == "exact_copies" and found.risk == "membership"
    assert found.value == pytest.approx(1.0) and found.reference == pytest.approx(0.0)
    assert found.level != LEVELS["below"]
    assert found.records["copied"].sum() == len(train)
    assert "exact_copies" not in builtin_measures()


def test_the_docs_example_runs_as_written(split, adult_schema):
    text = (ROOT / "docs" / "api.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if b.startswith("# One measure at a time"))
    train, holdout, synthetic, _ = split
    scope = {"train": train, "synthetic": synthetic, "holdout": holdout}
    exec(compile(block, "docs/api.md", "exec"), scope)  # noqa: S102 - the docs' own example
    assert scope["membership"].level in LEVELS.values() and scope["membership"].measure == "dcr"
    assert len(scope["closest"]) == len(synthetic)
    assert scope["inference"].attack == "cart -> income"
    assert np.isfinite(scope["inference"].value)


def test_the_method_subpackages_are_plain_modules_and_import_lazily():
    """`synthrisk.dcr`, `rapid`, ... are the methods' subpackages, nothing else; `import synthrisk`
    loads no pandas until the API is used."""
    check = ("import sys\n"
             "import synthrisk\n"
             "assert 'pandas' not in sys.modules\n"
             "import synthrisk.dcr, synthrisk.rapid.core\n"
             "assert not callable(synthrisk.dcr) and synthrisk.rapid.core.__name__ == 'synthrisk.rapid.core'\n"
             "assert callable(synthrisk.measure) and callable(synthrisk.audit)\n")
    subprocess.run([sys.executable, "-c", check], check=True, cwd=ROOT)


class Broken(Measure):
    """A plug-in that fails on any input (not registered)."""

    name = "broken"
    title = "Broken"
    risk = "membership"

    def run(self, data, settings, unit):
        raise ValueError("boom on purpose")


def test_a_failing_measure_raises_its_error(split, adult_schema, capsys):
    train, holdout, _, _ = split
    with pytest.raises(RuntimeError, match="broken failed: ValueError: boom on purpose"):
        synthrisk.measure(Broken, train, train, holdout, schema=adult_schema)
    assert "boom on purpose" in capsys.readouterr().err
