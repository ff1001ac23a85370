"""An ensemble membership attack: a meta-classifier over the per-record signals the other attacks
read (Synth-MIA, Ward et al. 2025, and the MIDST challenge's ensembles found that no single attack
wins everywhere; "The DCR delusion", 2025, that releases DCR calls private fall to learnt ones).

Signals of a record x against a release and the reference records (the real records pooled:
members, holdout and aux), all on Gower distances (`gower.k_nearest`):
- DCR and NNDR: the distance to the nearest synthetic record, and its ratio to the second nearest;
- the distance to the nearest other real record, and the exposure score built from both
  (`exposure.exposure_scores`' log ratio);
- the synthetic records within Gower distance 0, 0.05 and 0.1 (of the 10 nearest), and a density
  ratio in DOMIAS's sense from neighbourhood counts: synthetic over real records within 0.1, each
  per record of its frame.

The classifier (scikit-learn's histogram gradient boosting) is trained where the labels are known
and judged only on records it did not train on:
- `shadow` (the generator in hand): the generator is refitted on random training sets drawn from the
  real records; in each refit's release, records of its training set are "in" and the others
  "out". The classifier then scores the members and the holdout on the release. It never saw their
  labels, so the reading (`exposure.judge_scores`) is exact when the release never saw its members.
- `split` (no generator): a seeded half of the members and holdout, chosen blind to who is a
  member, trains it on its labels; the other half is scored and read. Exact too, at half the records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import DataError
from .gower import GowerSpace, k_nearest

#: Gower radii of the neighbourhood counts, and the radius of the density ratio
RADII = (0.0, 0.05, 0.1)
DENSITY_RADIUS = 0.1
#: neighbours searched for the counts (a count is capped there)
NEIGHBOURS = 10
#: the exposure score's floor, as a share of one column's mismatch (as synthrisk.mia.exposure)
EPSILON_SHARE = 0.01
SIGNALS = ["dcr", "nndr", "nearest_real", "exposure", *(f"synthetic_within_{r:g}" for r in RADII),
           "density_ratio"]
MODES = ("shadow", "split")


def signals(records: pd.DataFrame, synthetic: pd.DataFrame, reference: pd.DataFrame, space: GowerSpace,
            includes_records: bool = True) -> pd.DataFrame:
    """SIGNALS of each of `records` (module doc); `reference` holds the records themselves when
    `includes_records` (then each record's own entry is skipped)."""
    tolerance = 1e-12
    to_synthetic, _ = k_nearest(records, synthetic, space, min(NEIGHBOURS, len(synthetic)))
    skip = 1 if includes_records else 0
    to_real, _ = k_nearest(records, reference, space, min(NEIGHBOURS + skip, len(reference)))
    to_real = to_real[:, skip:]
    eps = EPSILON_SHARE / space.n_columns
    dcr = to_synthetic[:, 0]
    second = to_synthetic[:, 1] if to_synthetic.shape[1] > 1 else to_synthetic[:, 0]
    out = {"dcr": dcr, "nndr": dcr / (second + eps), "nearest_real": to_real[:, 0],
           "exposure": np.log((to_real[:, 0] + eps) / (dcr + eps))}
    for r in RADII:
        out[f"synthetic_within_{r:g}"] = (to_synthetic <= r + tolerance).sum(axis=1)
    synthetic_density = (to_synthetic <= DENSITY_RADIUS + tolerance).sum(axis=1) / len(synthetic)
    real_density = (to_real <= DENSITY_RADIUS + tolerance).sum(axis=1) / len(reference)
    out["density_ratio"] = np.log((synthetic_density + 0.5 / len(synthetic)) / (real_density + 0.5 / len(reference)))
    return pd.DataFrame(out, columns=SIGNALS)


def _classifier(seed: int):
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1, random_state=seed)


def shadow_training(real: pd.DataFrame, schema: DatasetSchema, space: GowerSpace, spec: dict, name: str, n: int,
                    refits: int, per_refit: int, seed: int, progress=None, refit=None) -> tuple[np.ndarray, np.ndarray]:
    """(signals, in/out) from `refits` releases of the generator fitted on `n` records drawn from the
    real records; `per_refit` "in" and as many "out" records of each are kept. `refit`: how a fit is
    run (`run_generator`'s signature; default: in this process)."""
    from ..generators.base import with_noise_seed
    from ..generators.memory import BetweenFits
    from ..generators.run import run_generator

    refit = refit or run_generator
    spec = with_noise_seed(spec, seed)
    rng = np.random.default_rng([seed, 0xE115])
    features, labels = [], []
    memory = BetweenFits()
    for j in range(refits):
        order = rng.permutation(len(real))
        inside, outside = order[:n], order[n:]
        # never raises on a failed fit: the status says what happened
        release, status = refit(name, spec, real.iloc[inside].reset_index(drop=True), schema, n=n,
                                seed=int(np.random.SeedSequence([seed, j]).generate_state(1)[0]))
        memory.collect()
        if progress is not None:
            progress(j + 1, refits)
        if status["status"] != "ok" or not len(release):
            continue
        k = min(per_refit, len(inside), len(outside))
        chosen = np.r_[rng.choice(inside, k, replace=False), rng.choice(outside, k, replace=False)]
        release = schema.conform(release[list(schema.columns)], what=f"ensemble refit {j}")
        features.append(signals(real.iloc[chosen], release, real, space).to_numpy())
        labels.append(np.r_[np.ones(k), np.zeros(k)])
    if not features:
        raise DataError(f"ensemble: every one of the {refits} refits of {name!r} failed")
    return np.vstack(features), np.concatenate(labels)


def ensemble_scores(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *,
                    schema: DatasetSchema, aux: pd.DataFrame | None = None, mode: str = "shadow", spec: dict | None = None,
                    name: str | None = None, refits: int = 20, per_refit: int = 500, seed: int = 0,
                    progress=None, refit=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """(positions, scores, facts): the meta-classifier's probability of "in" for the records it did
    not train on, by position among the members then the holdout records (all of them in `shadow`
    mode, the scored half in `split` mode); `facts` says what trained it. `refit`: how a shadow fit
    is run (`generators.run.run_generator`'s signature; default: in this process)."""
    columns = list(schema.columns)
    frames = [members[columns], holdout[columns]] + ([aux[columns]] if aux is not None and len(aux) else [])
    real = pd.concat(frames, ignore_index=True)
    space = GowerSpace.fit(real, schema)
    m, h = len(members), len(holdout)
    own = signals(real.iloc[: m + h], synthetic[columns], real, space).to_numpy()
    label = np.r_[np.ones(m), np.zeros(h)]
    model = _classifier(seed)
    if mode == "shadow":
        if spec is None:
            raise DataError("ensemble: mode 'shadow' needs the generator in hand")
        x, y = shadow_training(real, schema, space, spec, name or str(spec.get("backend")), m, refits, per_refit,
                               seed, progress, refit)
        model.fit(x, y)
        return np.arange(m + h), model.predict_proba(own)[:, 1], {"mode": mode, "refits": refits,
                                                                   "trained_on": int(len(y))}
    if mode != "split":
        raise DataError(f"ensemble: mode must be one of {list(MODES)}, got {mode!r}")
    # a half of the members and holdout pooled, drawn blind to the labels, trains; the other half is read
    train = np.zeros(m + h, dtype=bool)
    train[np.random.default_rng([seed, 0x5717]).permutation(m + h)[: (m + h) // 2]] = True
    if len(set(label[train])) < 2 or len(set(label[~train])) < 2:
        raise DataError("ensemble: a half of the records holds no member or no holdout record")
    model.fit(own[train], label[train])
    return np.flatnonzero(~train), model.predict_proba(own[~train])[:, 1], {"mode": mode,
                                                                            "trained_on": int(train.sum())}
