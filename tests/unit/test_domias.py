import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers import synthetic_from
from statsmodels.nonparametric.kernel_density import KDEMultivariate

from synthrisk.data import split_real
from synthrisk.data.schema import DatasetSchema
from synthrisk.domias import MixedEncoding, MixedKde, domias
from synthrisk.errors import ConfigError, DataError
from synthrisk.mia import membership_attack


@pytest.fixture(scope="module")
def adult_parts(adult):
    return split_real(adult, 2000, 2000, 2000, seed=3)


@pytest.mark.filterwarnings("ignore:After 0.17:FutureWarning")  # statsmodels' own random state use
def test_density_equals_statsmodels_product_kernel(adult, adult_schema):
    """Same bandwidths, same kernels (Gaussian 'c', Aitchison-Aitken 'u'): the same density.
    statsmodels counts a column's levels in the fitted data, so the encoding is given those counts."""
    rows = np.random.default_rng(1).permutation(len(adult))
    fit, query = adult.iloc[rows[:1500]].reset_index(drop=True), adult.iloc[rows[1500:1900]].reset_index(drop=True)
    encoding = MixedEncoding.fit([fit], adult_schema)
    num, cat = encoding.encode(fit)
    observed = np.array([len(np.unique(cat[:, k])) for k in range(cat.shape[1])])
    encoding = dataclasses.replace(encoding, n_levels=observed)
    kde = MixedKde(encoding, bandwidth=0.3).fit(fit)
    q_num, q_cat = encoding.encode(query)
    seen = np.all([np.isin(q_cat[:, k], cat[:, k]) for k in range(cat.shape[1])], axis=0)
    reference = KDEMultivariate(np.hstack([num, cat.astype(float)]),
                                var_type="c" * num.shape[1] + "u" * cat.shape[1],
                                bw=np.concatenate([kde.h_, kde.lambda_]))
    expected = np.log(reference.pdf(np.hstack([q_num, q_cat.astype(float)])[seen]))
    np.testing.assert_allclose(kde.log_density(query.iloc[np.flatnonzero(seen)], block_size=33), expected,
                               rtol=0, atol=1e-10)


def test_density_with_missing_values_integrates_to_one():
    """One numeric column with missing values and one categorical column: the density summed over
    the levels, integrated over the numeric axis plus the missing point, is one."""
    schema = DatasetSchema.from_dict({
        "name": "tiny", "source": {"path": "-"},
        "columns": {"x": {"type": "continuous"}, "g": {"type": "categorical", "levels": ["a", "b", "c"]}},
        "quasi_identifiers": ["x"], "sensitive": ["g"]})
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    x[rng.random(60) < 0.2] = np.nan
    fit = schema.conform(pd.DataFrame({"x": x, "g": rng.choice(["a", "b", "c"], 60)}))
    kde = MixedKde(MixedEncoding.fit([fit], schema), bandwidth=0.4).fit(fit)
    grid = np.linspace(-12, 12, 24001)
    total = 0.0
    for level in "abc":
        observed = pd.DataFrame({"x": grid, "g": level})
        missing = pd.DataFrame({"x": [np.nan], "g": [level]})
        total += np.exp(kde.log_density(schema.conform(observed))).sum() * (grid[1] - grid[0])
        total += np.exp(kde.log_density(schema.conform(missing)))[0]
    assert abs(total - 1) < 1e-6, total


def test_density_by_its_definition_with_missing_values(mixed, mixed_schema):
    """Per-pair kernels written out (module docstring), against the compiled sum."""
    fit, query = mixed.iloc[:150].reset_index(drop=True), mixed.iloc[150:200].reset_index(drop=True)
    encoding = MixedEncoding.fit([mixed], mixed_schema)
    kde = MixedKde(encoding).fit(fit)
    num, cat = encoding.encode(fit)
    q_num, q_cat = encoding.encode(query)
    b = kde.factor_
    mean, sd = np.nanmean(num, axis=0), np.nanstd(num, axis=0, ddof=1)
    expected = []
    for i in range(len(query)):
        total = 0.0
        for j in range(len(fit)):
            value = 1.0
            for k in range(cat.shape[1]):
                c, lam = encoding.n_levels[k], b * (encoding.n_levels[k] - 1) / encoding.n_levels[k]
                value *= (1 - lam) if q_cat[i, k] == cat[j, k] else lam / (c - 1)
            for k in range(num.shape[1]):
                a, v, h, lam = q_num[i, k], num[j, k], b * sd[k], b / 2
                def normal(z, s):
                    return math.exp(-0.5 * (z / s) ** 2) / (s * math.sqrt(2 * math.pi))

                if np.isnan(a) and np.isnan(v):
                    value *= 1 - lam
                elif np.isnan(a):
                    value *= lam
                elif np.isnan(v):
                    value *= lam * normal(a - mean[k], sd[k])
                else:
                    value *= (1 - lam) * normal(a - v, h)
            total += value
        expected.append(math.log(total / len(fit)))
    np.testing.assert_allclose(kde.log_density(query), expected, rtol=0, atol=1e-10)


def test_identity_is_detected_and_independent_is_chance(adult_parts, adult_schema):
    train, holdout, aux = adult_parts["train"], adult_parts["holdout"], adult_parts["aux"]
    identity = domias(train, synthetic_from(adult_parts, adult_schema, "identity"), holdout, schema=adult_schema,
                      aux=aux, member_share=0.5)
    assert identity.auc > 0.7, identity.auc
    assert identity.to_json()["tpr_at_fpr"]["1e-02"] > 0.05
    independent = domias(train, synthetic_from(adult_parts, adult_schema, "independent"), holdout,
                         schema=adult_schema, aux=aux, member_share=0.5)
    n_m, n_nm = independent.summary["n_members"], independent.summary["n_non_members"]
    se = math.sqrt((n_m + n_nm + 1) / (12 * n_m * n_nm))  # AUC's standard error under the null
    assert abs(independent.auc - 0.5) < 4 * se, independent.auc
    assert abs(independent.summary["no_reference"]["auc"] - 0.5) < 4 * se


def test_attack_set_design_is_the_kde_attacks(adult_parts, adult_schema, adult):
    """At El Emam's share, with the KDE attack's aux composition, both attacks score the same records
    and draw the same aux members, none of them scored."""
    syn = synthetic_from(adult_parts, adult_schema, "cart")
    train, holdout, aux = adult_parts["train"], adult_parts["holdout"], adult_parts["aux"]
    ours = domias(train, syn, holdout, schema=adult_schema, aux=aux, population_size=len(adult), seed=2,
                  aux_member_fraction=0.5)
    kde = membership_attack(train, syn, holdout, schema=adult_schema, aux=aux, seed=2,
                            population_size=len(adult), member_share="sampling_fraction")
    assert ours.summary["member_share_target"] == pytest.approx(2000 / len(adult))
    np.testing.assert_array_equal(ours.records.row_id, kde.records.row_id)
    np.testing.assert_array_equal(ours.records.member, kde.records.member)
    np.testing.assert_array_equal(ours.aux_member_ids, kde.aux_member_ids)
    assert not set(ours.aux_member_ids) & set(ours.records.row_id)
    # default: the reference holds members at the population's share
    default = domias(train, syn, holdout, schema=adult_schema, aux=aux, population_size=len(adult), seed=2)
    assert default.summary["aux_member_share"] == pytest.approx(2000 / len(adult), abs=1e-3)
    assert default.summary["n_aux_members"] == round(2000 / len(adult) * 2000)


def test_deterministic_and_plain_json(adult_parts, adult_schema):
    syn = synthetic_from(adult_parts, adult_schema, "cart", n=1500)
    args = (adult_parts["train"].iloc[:1500], syn, adult_parts["holdout"].iloc[:1500])
    options = {"schema": adult_schema, "aux": adult_parts["aux"].iloc[:800], "member_share": 0.3, "seed": 4}
    a, b = domias(*args, **options), domias(*args, **options)
    assert a.to_json() == b.to_json()
    pd.testing.assert_frame_equal(a.records, b.records)
    assert json.loads(json.dumps(a.to_json())) == a.to_json()
    assert list(a.records.columns) == ["row_id", "member", "score", "log_p_synthetic", "log_p_reference"]
    assert a.summary["member_share"] == pytest.approx(0.3, abs=0.01)


def test_bad_inputs(adult_parts, adult_schema):
    m, nm, aux = adult_parts["train"].iloc[:100], adult_parts["holdout"].iloc[:100], adult_parts["aux"].iloc[:100]
    with pytest.raises(DataError, match="domias: aux is empty.*population sample"):
        domias(m, m, nm, aux=None, schema=adult_schema, member_share="all")
    with pytest.raises(DataError, match="domias: aux is empty"):
        domias(m, m, nm, aux=aux.iloc[:0], schema=adult_schema, member_share="all")
    with pytest.raises(DataError, match="domias: holdout is empty"):
        domias(m, m, nm.iloc[:0], aux=aux, schema=adult_schema, member_share="all")
    with pytest.raises(ConfigError, match="needs the population size"):
        domias(m, m, nm, aux=aux, schema=adult_schema)
    with pytest.raises(ConfigError, match="bandwidth must be"):
        domias(m, m, nm, aux=aux, schema=adult_schema, member_share="all", bandwidth=2.0)
