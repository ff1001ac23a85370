import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthrisk.data.simulate import simulate
from synthrisk.errors import ConfigError, DataError, SchemaError
from synthrisk.generators import make_generator
from synthrisk.mia import GowerSpace, gower_matrix, membership_attack, nearest_synthetic
from synthrisk.mia.kde import DistanceDensity, member_probability
from synthrisk.study.workflow import write_summary


def brute_force_gower(a: pd.DataFrame, b: pd.DataFrame, schema, ranges) -> np.ndarray:
    """Gower by its definition, one pair at a time (with this project's missing-value rule)."""
    out = np.zeros((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            total = 0.0
            for column in schema.columns:
                x, y = a[column].iloc[i], b[column].iloc[j]
                if schema.is_categorical(column):
                    total += float(not ((pd.isna(x) and pd.isna(y)) or x == y))
                elif pd.isna(x) or pd.isna(y):
                    total += 0.0 if (pd.isna(x) and pd.isna(y)) else 1.0
                else:
                    total += min(abs(float(x) - float(y)) / ranges[column], 1.0)
            out[i, j] = total / len(schema.columns)
    return out


def test_engine_matches_brute_force_with_missing_values(mixed, mixed_schema):
    a, b = mixed.iloc[:60].reset_index(drop=True), mixed.iloc[60:200].reset_index(drop=True)
    space = GowerSpace.fit(mixed, mixed_schema)
    ranges = {c: float(mixed[c].astype(float).max() - mixed[c].astype(float).min()) for c in mixed_schema.numeric}
    reference = brute_force_gower(a, b, mixed_schema, ranges)
    np.testing.assert_allclose(gower_matrix(a, b, space), reference, atol=1e-12)
    distance, index = nearest_synthetic(a, b, space, block_size=7)
    np.testing.assert_allclose(distance, reference.min(axis=1), atol=1e-12)
    np.testing.assert_array_equal(index, reference.argmin(axis=1))  # ties: lowest index, like argmin


def test_zero_range_column_counts_mismatches(mixed_schema, mixed):
    const = mixed.assign(num=1.0)
    space = GowerSpace.fit(const, mixed_schema)
    other = const.assign(num=2.0)
    d, _ = nearest_synthetic(const.iloc[:5], other, space)
    assert np.all(d >= 1 / 4 - 1e-12) and np.all(np.isfinite(d))


def test_kde_probabilities_bounded_and_monotone():
    rng = np.random.default_rng(0)
    near = np.concatenate([np.zeros(50), rng.beta(2, 30, 500)])
    far = rng.beta(4, 20, 500)
    grid = np.linspace(0.0, 0.4, 200)
    p = member_probability(grid, DistanceDensity().fit(near), DistanceDensity().fit(far), 0.5)
    assert np.all((p >= 0) & (p <= 1))
    assert p[0] > 0.9  # exact copies: point mass only the members have
    middle = (grid > 0.01) & (grid < 0.15)  # where both samples have data; the tails are sparse
    assert np.all(np.diff(p[middle]) <= 1e-9)
    density = DistanceDensity().fit(far)
    x = np.linspace(1e-6, 1, 20001)
    assert abs(density.density(x).sum() * (x[1] - x[0]) + density.pi0_ - 1) < 1e-2  # reflection keeps the mass


@pytest.fixture(scope="module")
def population(sim_schema):
    return sim_schema.conform(simulate(3000, strength=0.8, seed=9))


def attack(population, schema, backend, seed=0):
    members, non_members, aux = population.iloc[:1000], population.iloc[1000:2000], population.iloc[2000:]
    synthetic = make_generator({"backend": backend}, seed=seed).fit(members, schema).sample(1000, seed)
    return membership_attack(members, synthetic, non_members, schema=schema, aux=aux, seed=seed)


def test_identity_is_attackable_and_independent_is_chance(population, sim_schema):
    identity = attack(population, sim_schema, "identity")
    assert identity.true_distribution["auc"] > 0.999 and identity.baseline["auc"] > 0.999
    assert identity.true_distribution["tpr_at_fpr"]["1e-03"] > 0.99
    independent = attack(population, sim_schema, "independent")
    se = np.sqrt((1000 + 1000 + 1) / (12 * 1000 * 1000))  # AUC's standard error under the null
    for metrics in (independent.true_distribution, independent.baseline, independent.realistic):
        assert abs(metrics["auc"] - 0.5) < 4 * se, metrics["auc"]


def test_deterministic_and_resolution_limit(population, sim_schema):
    a, b = attack(population, sim_schema, "cart", seed=2), attack(population, sim_schema, "cart", seed=2)
    assert a.to_json() == b.to_json()
    assert set(a.true_distribution["tpr_at_fpr"]) == {"1e-01", "1e-02", "1e-03"}  # 1000 non-members
    assert a.true_distribution["fpr_floor"] == 1e-3


def test_bad_inputs(population, sim_schema):
    m, nm = population.iloc[:100], population.iloc[100:200]
    with pytest.raises(SchemaError, match=r"synthetic: column\(s\) \['x1'\] of schema .* are missing"):
        membership_attack(m, m.drop(columns="x1"), nm, schema=sim_schema, realistic=False)
    with pytest.raises(DataError, match="non-members is empty"):
        membership_attack(m, m, nm.iloc[:0], schema=sim_schema, realistic=False)
    with pytest.raises(ConfigError, match="needs an auxiliary set"):
        membership_attack(m, m, nm, schema=sim_schema)
    with pytest.raises(ConfigError, match=r"thresholds must lie in \[0, 1\]"):
        membership_attack(m, m, nm, schema=sim_schema, realistic=False, thresholds=[0.1, 1.5])


def test_cli_prints_the_design_json(tmp_path, population):
    population.iloc[:300].to_parquet(tmp_path / "m.parquet")
    population.iloc[300:600].to_parquet(tmp_path / "nm.parquet")
    population.iloc[600:900].to_csv(tmp_path / "syn.csv", index=False)
    population.iloc[900:1200].to_parquet(tmp_path / "aux.parquet")
    done = subprocess.run([sys.executable, "-m", "synthrisk.cli", "mia", "--members", str(tmp_path / "m.parquet"),
                           "--non-members", str(tmp_path / "nm.parquet"), "--synthetic", str(tmp_path / "syn.csv"),
                           "--aux", str(tmp_path / "aux.parquet"), "--schema", "config/datasets/simulation.yaml",
                           "--json"], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    for block in (out, out["baseline"], out["realistic"]):
        assert {"auc", "f1", "precision", "tpr_at_fpr"} <= set(block)


def _direct_log_sum(sources, targets, h):
    """log sum_j exp(-(y - s_j)^2 / 2h^2) by its definition, every pair (logsumexp: no underflow)."""
    from scipy.special import logsumexp

    return logsumexp(-0.5 * ((targets[:, None] - sources[None, :]) / h) ** 2, axis=1)


def test_fast_gauss_sum_matches_the_direct_sum_in_the_body_and_the_tails():
    """log_gauss_sum against the direct sum: clusters, gaps, exact repeats, one source, bandwidths
    from 1e-5 to 0.2, targets far outside the data. Its stated bound is 1e-10 (relative, on S)."""
    from synthrisk.mia.gauss_sum import log_gauss_sum, relative_error_bound

    assert relative_error_bound() < 1.1e-10
    rng = np.random.default_rng(0)
    worst_body = worst_tail = 0.0
    for case in range(40):
        n, m = int(rng.integers(1, 2500)), int(rng.integers(1, 1500))
        parts = [np.abs(rng.normal(rng.uniform(0, 0.5), rng.uniform(1e-4, 0.1), n))]
        if case % 4 == 0:
            parts.append(np.repeat(rng.uniform(0, 1, 3), 50))  # exact repeats
        if case % 5 == 0:
            parts.append(rng.uniform(0.8, 1.0, 7))  # a far, sparse cluster
        sources = np.concatenate(parts)
        targets = np.concatenate([rng.uniform(-1.0, 2.0, m), sources[:20], [sources.min() - 0.3]])
        h = float(10 ** rng.uniform(-5, np.log10(0.2)))
        fast, direct = log_gauss_sum(sources, targets, h), _direct_log_sum(sources, targets, h)
        assert np.isfinite(fast).all()
        body = direct > -700  # where exp(log S) is a normal double
        worst_body = max(worst_body, float(np.max(np.abs(fast[body] - direct[body]), initial=0.0)))
        # far in a tail log S is of order -(distance/h)^2/2: its own rounding is relative to |log S|
        worst_tail = max(worst_tail, float(np.max(np.abs(fast - direct) / np.maximum(np.abs(direct), 1.0))))
    assert worst_body < 1e-9, worst_body  # relative error of S below 1e-9 (the brief's floor: 1e-6)
    assert worst_tail < 1e-9, worst_tail
    # skip_below: blocks certainly below it are -inf, the others unchanged
    sources, targets = np.abs(rng.normal(0.05, 0.01, 500)), np.linspace(0, 1, 300)
    full, cut = log_gauss_sum(sources, targets, 0.002), log_gauss_sum(sources, targets, 0.002, skip_below=-50.0)
    assert np.array_equal(full[np.isfinite(cut)], cut[np.isfinite(cut)])
    assert np.all(full[~np.isfinite(cut)] < -50.0) and np.isinf(cut).any()
    assert np.isneginf(log_gauss_sum(np.zeros(0), targets, 0.1)).all() and len(log_gauss_sum(sources, [], 0.1)) == 0
    import numba  # each block is summed by one thread: the result does not depend on their number

    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        alone = log_gauss_sum(sources, targets, 0.002)
    finally:
        numba.set_num_threads(threads)
    assert np.array_equal(alone, full)


def test_distance_density_equals_the_exact_reflected_kde():
    """The density (reflection at 0 and 1, point mass at 0, Silverman bandwidth) against
    scikit-learn's exact KernelDensity summed at x, -x and 2 - x, as synthrisk computed it before
    issue #28; and the posteriors of member_probability against the same exact sums."""
    from sklearn.neighbors import KernelDensity

    from synthrisk.mia.kde import DistanceDensity

    def exact(fitted, x):
        d = np.asarray(fitted, float)
        positive = d[d > 1e-12]
        kde = KernelDensity(bandwidth=DistanceDensity().fit(d).bandwidth_).fit(positive[:, None])
        pi0 = ((d <= 1e-12).sum() + 0.5) / (len(d) + 1.0)
        return (1 - pi0) * sum(np.exp(kde.score_samples(v[:, None])) for v in (x, -x, 2.0 - x))

    rng = np.random.default_rng(3)
    fitted = np.concatenate([np.zeros(40), np.abs(rng.normal(0.05, 0.03, 3000)), [0.7, 0.99]])
    queries = np.concatenate([np.abs(rng.normal(0.05, 0.03, 4000)), [1e-6, 0.4, 0.999, 1.0], np.linspace(0, 1, 500)])
    density = DistanceDensity().fit(fitted)
    fast, reference = density.density(queries), exact(fitted, queries)
    body = reference > 1e-300
    assert np.max(np.abs(np.log(fast[body]) - np.log(reference[body]))) < 1e-9
    assert np.all(fast[~body] < 1e-290)  # both underflow to (about) 0 in the same far tails
    far = np.abs(rng.normal(0.12, 0.02, 2000))
    p = member_probability(queries, density, DistanceDensity().fit(far), 0.3)
    f_m, f_nm = reference, exact(far, queries)
    with np.errstate(invalid="ignore"):
        p_exact = 0.3 * f_m / (0.3 * f_m + 0.7 * f_nm)
    compared = (queries > 1e-12) & (f_m + f_nm > 1e-300)  # 0 is the point masses' (tested above)
    assert compared.sum() > 4000 and np.max(np.abs(p[compared] - p_exact[compared])) < 1e-12


# --- Attack-set design (El Emam et al. 2022), τ rules and the aux set (issue #13 §5) ---------------
# (imports inside the tests, so that each of them fails on its own against code without the feature)

DEFAULT_GRID = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2)


@pytest.fixture(scope="module")
def with_ids(population):
    """The simulated population with the row ids the workflow's split files carry."""
    return population.assign(row_id=np.arange(len(population)))


def _parts(frame):
    return frame.iloc[:1000], frame.iloc[1000:2000], frame.iloc[2000:]


def _identity_attack(frame, schema, **kwargs):
    members, non_members, aux = _parts(frame)
    generator = make_generator({"backend": "identity"}, seed=0).fit(members.drop(columns="row_id"), schema)
    synthetic = generator.sample(1000, 0)
    return membership_attack(members, synthetic, non_members, schema=schema, aux=aux, **kwargs)


def test_member_share_is_the_sampling_fraction_or_the_configured_share(with_ids, sim_schema):
    # El Emam's default: 1000 members drawn from a population of 6000 -> t = 1/6 of the attack set.
    result = _identity_attack(with_ids, sim_schema, population_size=6000)
    y = result.records["member"]
    assert abs(y.mean() - 1 / 6) < 1e-3 and result.summary["member_share"] == pytest.approx(y.mean())
    assert result.summary["member_share_target"] == pytest.approx(1 / 6)
    assert result.summary["member_share_rule"].startswith("sampling_fraction")
    assert (y == 0).sum() == 1000  # every non-member kept, members subsampled
    assert result.baseline_oracle["f1_naive"] == pytest.approx(2 * y.mean() / (1 + y.mean()))
    # A configured share above the natural one subsamples the non-members instead.
    result = _identity_attack(with_ids, sim_schema, member_share=0.8)
    assert abs(result.records["member"].mean() - 0.8) < 1e-3
    assert result.to_json()["member_share_target"] == 0.8
    # Deterministic: the same seed draws the same attack set, another seed another one.
    again = _identity_attack(with_ids, sim_schema, member_share=0.8)
    assert again.records["row_id"].tolist() == result.records["row_id"].tolist()
    other = _identity_attack(with_ids, sim_schema, member_share=0.8, seed=1)
    assert other.records["row_id"].tolist() != result.records["row_id"].tolist()


def test_share_resolution_and_the_member_floor():
    from synthrisk.mia.attacks import plan_attack_set, resolve_member_share

    assert resolve_member_share("sampling_fraction", 300, 1200)[0] == 0.25
    assert resolve_member_share(None, 300, 1200)[0] == 0.25
    assert resolve_member_share(None, 300, None)[0] is None
    assert resolve_member_share(0.4, 300, None)[0] == 0.4
    for bad in (0.0, 1.0, "half"):
        with pytest.raises(ConfigError, match="member_share"):
            resolve_member_share(bad, 300, 1200)
    with pytest.raises(ConfigError, match="population size"):
        resolve_member_share("sampling_fraction", 300, None)
    # Adult's paper config: 32,561 members of 48,842 rows, 8,000 holdout, half of 8,000 aux are members.
    plan = plan_attack_set(32561, 8000, 32561 / 48842, 4000)
    assert (plan.n_non_members, plan.n_aux_members) == (8000, 4000)
    assert plan.n_members / (plan.n_members + 8000) == pytest.approx(32561 / 48842, abs=1e-4)
    assert plan.n_members + plan.n_aux_members <= 32561
    # The tiny test config: t = 0.006 would leave one member; the floor scores 20 and says so.
    plan = plan_attack_set(300, 200, 300 / 48842, 100, min_members=20)
    assert (plan.n_members, plan.n_non_members, plan.n_aux_members) == (20, 200, 100) and plan.notes


def test_aux_members_are_disjoint_from_the_scored_members(with_ids, sim_schema):
    for kwargs in ({}, {"population_size": 6000}, {"member_share": 0.8}):
        result = _identity_attack(with_ids, sim_schema, aux_member_fraction=0.5, **kwargs)
        scored = set(result.records.loc[result.records["member"] == 1, "row_id"])
        aux_members = set(result.aux_member_ids)
        assert len(aux_members) == result.summary["n_aux_members"] == 500  # half of the 1000 aux records
        assert aux_members <= set(range(1000))  # drawn from the members...
        assert not aux_members & scored  # ...but never from the scored ones
        assert result.summary["aux_members_disjoint_from_attack_set"] is True


def test_label_free_tau_ignores_the_labels(with_ids, sim_schema):
    """Swap half the members with non-members: same records, same synthetic data, same distances,
    other labels. The label-free τ (Method 1, realistic KDE) must not move; the oracle τ's F1 does."""
    from synthrisk.mia.attacks import method1_label_free_tau

    members, non_members, aux = _parts(with_ids)
    generator = make_generator({"backend": "identity"}, seed=0).fit(members.drop(columns="row_id"), sim_schema)
    synthetic = generator.sample(1000, 0)
    swapped_members = pd.concat([members.iloc[:500], non_members.iloc[:500]])
    swapped_non = pd.concat([members.iloc[500:], non_members.iloc[500:]])
    kwargs = {"aux": aux, "aux_member_fraction": 0.0, "member_share": "all"}  # score every record
    true = membership_attack(members, synthetic, non_members, schema=sim_schema, **kwargs)
    permuted = membership_attack(swapped_members, synthetic, swapped_non, schema=sim_schema, **kwargs)
    assert sorted(true.records["distance"]) == sorted(permuted.records["distance"])
    assert true.baseline["tau"] == permuted.baseline["tau"]
    assert true.baseline["f1_estimated_by_attacker"] == permuted.baseline["f1_estimated_by_attacker"]
    assert true.realistic["tau"] == permuted.realistic["tau"]
    assert true.baseline_oracle["f1"] > permuted.baseline_oracle["f1"] + 0.2  # the oracle reads the labels
    # The rule itself sees only distances: shuffling them changes nothing.
    rng = np.random.default_rng(0)
    d = true.records["distance"].to_numpy()
    reference = np.abs(rng.normal(0.1, 0.05, 500))
    assert method1_label_free_tau(d, reference, 0.5, DEFAULT_GRID) == method1_label_free_tau(
        rng.permutation(d), reference, 0.5, DEFAULT_GRID)
    # Identity copies every member: the label-free Method 1 finds them almost as well as the oracle.
    assert true.baseline["f1"] > 0.9 and true.baseline["tau"] <= true.baseline_oracle["tau"] + 1e-12


def test_without_aux_method1_has_no_label_free_tau(with_ids, sim_schema):
    from synthrisk.mia.attacks import ORACLE_RULE

    members, non_members, _ = _parts(with_ids)
    result = membership_attack(members, members, non_members, schema=sim_schema, realistic=False)
    assert result.baseline["f1"] is None and "not available" in result.baseline["tau_rule"]
    assert result.baseline_oracle["tau_rule"] == ORACLE_RULE and result.baseline_oracle["f1"] > 0.9


def test_tables_name_every_tau_rule(tmp_path, with_ids, sim_schema):
    from synthrisk.io import write_json
    from synthrisk.measures import builtin_measures
    from synthrisk.mia.summary import best_f1, collect, summarise

    paths = []
    for seed in (0, 1):
        result = _identity_attack(with_ids, sim_schema, population_size=6000, seed=seed)
        info = {"dataset": "sim", "generator": "identity", "seed": seed, **result.to_json(), "roc": result.roc(),
                "status": "ok", "error": None}
        paths.append(tmp_path / f"seed{seed}.json")
        write_json(info, paths[-1])
    json_out = json.loads(paths[0].read_text())
    assert json_out["member_share_target"] == pytest.approx(1 / 6)
    assert json_out["baseline"]["tau_rule"].startswith("label-free:")
    assert json_out["baseline_oracle_tau"]["tau_rule"].startswith("oracle")
    assert json_out["realistic_oracle_tau"]["tau_rule"].startswith("oracle")
    runs, grid, _ = collect([json.loads(p.read_text()) for p in paths])
    table = summarise(runs).set_index("attack")
    assert set(table.index) == {"kde_true", "kde_realistic", "kde_realistic_oracle_tau", "method1",
                                "method1_oracle_tau"}
    for attack, rule in table["tau_rule"].items():
        expected = ("oracle" if attack.endswith("_oracle_tau") else
                    "true distribution" if attack == "kde_true" else "label-free:")  # kde_true is fitted on labels
        assert rule.startswith(expected), (attack, rule)
    assert table["member_share"].round(3).eq(round(1 / 6, 3)).all() and "member_share_target" in table
    assert (table.loc["method1_oracle_tau", "f1_mean"] >= table.loc["method1", "f1_mean"] - 1e-12)
    summary = best_f1(grid, summarise(runs))
    for column in ("mia_f1_oracle_tau_method1", "mia_f1_label_free_tau_method1",
                   "mia_f1_gain_oracle_tau_kde_realistic", "mia_f1_gain_label_free_tau_kde_realistic"):
        assert column in summary and summary[column].notna().all(), column
    assert not [c for c in summary if "best" in c]
    mia = builtin_measures()["mia"]
    write_summary(mia, [str(p) for p in paths], tmp_path / "tables", tmp_path / "figures", mia.settings(None))
    thresholds = pd.read_csv(tmp_path / "tables/mia_thresholds.csv")
    assert {"tau_rule", "member_share"} <= set(thresholds) and (tmp_path / "figures/mia_f1_sim.png").exists()


def test_tpr_at_low_fpr_test_holds_its_level_and_catches_a_small_leak():
    """Under exchangeable scores the beta-binomial p-value of TPR at FPR 1e-2 rejects at most at
    its level; 10 % of members scoring above every non-member is caught although the AUC moves by
    about 0.05."""
    from synthrisk.mia.metrics import score_metrics, tpr_against_chance

    rng = np.random.default_rng(0)
    n1, n0 = 300, 3000
    y = np.r_[np.ones(n1), np.zeros(n0)]
    p = [tpr_against_chance(score_metrics(y, rng.normal(size=n1 + n0))["tpr_at_fpr"]["1e-02"], 0.01, n1, n0)
         for _ in range(400)]
    assert np.mean(np.array(p) < 0.05) <= 0.06
    scores = rng.normal(size=n1 + n0)
    scores[:30] = 10.0  # 10 % of the members copied: they score above every non-member
    metrics = score_metrics(y, scores)
    assert metrics["auc"] < 0.56 and tpr_against_chance(metrics["tpr_at_fpr"]["1e-02"], 0.01, n1, n0) < 1e-6
    assert tpr_against_chance(0.5, 0.01, n1, 50) is None  # 50 non-members cannot resolve FPR 1e-2


def test_attack_set_cap_scores_a_sample_at_the_same_share_and_says_so(with_ids, sim_schema):
    """Issue #28: above mia.max_attack a seeded sample of the attack set is scored, at the same
    member share, drawn from the uncapped attack set; at or below the cap nothing changes."""
    from synthrisk.mia.attacks import plan_attack_set

    plan = plan_attack_set(25000, 25000, 0.5, 0, max_attack=20000)
    assert (plan.n_members, plan.n_non_members) == (10000, 10000) and "max_attack = 20,000" in plan.subsample_note
    assert plan_attack_set(25000, 25000, 0.5, 0, max_attack=50000).subsample_note is None
    kwargs = {"population_size": 6000, "realistic": False}
    full = _identity_attack(with_ids, sim_schema, max_attack=None, **kwargs)
    n = len(full.records)
    at_cap = _identity_attack(with_ids, sim_schema, max_attack=n, **kwargs)
    assert {**at_cap.to_json(), "max_attack": None} == full.to_json()
    assert full.summary["subsample_note"] is None and not full.summary["capped"]
    capped = _identity_attack(with_ids, sim_schema, max_attack=600, **kwargs)
    records = capped.records
    assert len(records) == 600 and capped.summary["capped"]
    assert abs(records["member"].mean() - full.records["member"].mean()) < 2e-3
    assert set(records["row_id"]) <= set(full.records["row_id"])
    by_id = full.records.set_index("row_id")["distance"]
    np.testing.assert_array_equal(records["distance"].to_numpy(), by_id.loc[records["row_id"]].to_numpy())
    assert capped.summary["n_attack"] == 600 and capped.summary["subsample_note"] in capped.summary["design_notes"]
    with pytest.raises(ConfigError, match="max_attack"):
        _identity_attack(with_ids, sim_schema, max_attack=3, **kwargs)


def test_tpr_at_a_low_fpr_is_the_largest_reachable_even_on_tied_scores():
    """Against a count of members above each threshold: two tie groups on one straight ROC segment
    used to lose the corner between them (roc_curve drops collinear points by default)."""
    from synthrisk.mia.metrics import score_metrics, tpr_at_fpr

    members = np.r_[3, 3, 2, 2, 1, 1, np.zeros(994)]
    others = np.r_[3, 2, 1, np.full(197, -1.0)]
    rng = np.random.default_rng(3)

    def brute(m, o, level):
        thresholds = np.unique(np.r_[m, o, np.inf])
        reachable = [np.mean(m >= t) for t in thresholds if np.mean(o >= t) <= level + 1e-15]
        return max(reachable)

    for m, o in [(members, others), (rng.integers(0, 5, 300).astype(float), rng.integers(0, 4, 1000).astype(float))]:
        found = tpr_at_fpr(m, o)
        assert set(found) == {f"{level:.0e}" for level in (0.1, 0.01, 0.001) if level >= 1 / len(o) - 1e-15}
        for key, tpr in found.items():
            assert tpr == pytest.approx(brute(m, o, float(key)))
        y = np.r_[np.ones(len(m)), np.zeros(len(o))]
        assert score_metrics(y, np.r_[m, o])["tpr_at_fpr"] == found
    assert tpr_at_fpr(members, others)["1e-02"] == pytest.approx(0.004)
