"""Exact Gower nearest-neighbour search: synthrisk's numba kernel vs named peers, same run.

Peers: scipy cKDTree(p=1) on the L1 embedding (numeric / (range p), one-hot / (2p)), chunked
brute force with scipy.spatial.distance.cdist('cityblock') on the same embedding, and the `gower`
package (gower_matrix per block of queries, as users call it) when installed
(`pip install gower==0.1.2`). Data: Adult-like mixed records, 5 numeric + 5 categorical columns,
no missing values (the embedding peers cannot express this project's missing-value rule).

    .venv/bin/python benchmarks/gower_nn.py --sizes 5000 20000 [--peers ckdtree cdist gower]

Prints one row per size and method: seconds, ratio to synthrisk, peak traced memory (MiB), and the
largest absolute difference of nearest distances from synthrisk's (must be < 1e-9).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from synthrisk.data.schema import DatasetSchema
from synthrisk.mia import GowerSpace, nearest_synthetic

SCHEMA = DatasetSchema.from_dict({
    "name": "bench", "source": {"path": "-"},
    "columns": {**{f"n{k}": {"type": "continuous"} for k in range(5)},
                **{f"c{k}": {"type": "categorical"} for k in range(5)}},
    "quasi_identifiers": [f"n{k}" for k in range(5)] + [f"c{k}" for k in range(4)], "sensitive": ["c4"],
})


def make(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = {f"n{k}": np.round(rng.gamma(2.0, 10.0, n), 0) for k in range(5)}  # integer-valued, like age/hours
    for k, levels in enumerate((2, 5, 9, 16, 40)):
        frame[f"c{k}"] = rng.integers(0, levels, n).astype(str)
    return SCHEMA.conform(pd.DataFrame(frame))


def embedding(frame: pd.DataFrame, space: GowerSpace, levels: dict) -> np.ndarray:
    p = space.n_columns
    numeric = (frame[list(space.numeric)].to_numpy(float) - space.minimum) / (space.ranges * p)
    onehot = [np.equal.outer(frame[c].to_numpy(), levels[c]).astype(float) / (2 * p) for c in space.categorical]
    return np.hstack([numeric] + onehot)


def run_synthrisk(q, s, space):
    return nearest_synthetic(q, s, space)[0]


def run_ckdtree(q, s, space):
    levels = {c: np.unique(np.concatenate([q[c], s[c]])) for c in space.categorical}
    tree = cKDTree(embedding(s, space, levels))
    return tree.query(embedding(q, space, levels), k=1, p=1, workers=-1)[0]


def run_cdist(q, s, space, block=512):
    levels = {c: np.unique(np.concatenate([q[c], s[c]])) for c in space.categorical}
    eq, es = embedding(q, space, levels), embedding(s, space, levels)
    return np.concatenate([cdist(eq[i:i + block], es, "cityblock").min(axis=1) for i in range(0, len(eq), block)])


def run_gower(q, s, space, block=256):
    import gower

    both = pd.concat([q, s], ignore_index=True).astype({c: float for c in space.numeric})
    out = []
    for i in range(0, len(q), block):
        m = gower.gower_matrix(both.iloc[i:min(i + block, len(q))], both.iloc[len(q):],
                               cat_features=[c in space.categorical for c in both.columns])
        out.append(m.min(axis=1))
    return np.concatenate(out).astype(float)


PEERS = {"ckdtree": run_ckdtree, "cdist": run_cdist, "gower": run_gower}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--peers", nargs="+", default=["ckdtree", "cdist"], choices=list(PEERS))
    args = parser.parse_args()
    nearest_synthetic(make(10, 0), make(10, 1), GowerSpace.fit(make(10, 0), SCHEMA))  # JIT warm-up
    print(f"{'n':>7} {'method':>10} {'seconds':>9} {'ratio':>7} {'peak MiB':>9} {'max |diff|':>11}")
    for n in args.sizes:
        q, s = make(n, 1), make(n, 2)
        space = GowerSpace.fit(pd.concat([q, s]), SCHEMA)
        reference = None
        for name, fn in [("synthrisk", run_synthrisk)] + [(p, PEERS[p]) for p in args.peers]:
            tracemalloc.start()
            start = time.perf_counter()
            try:
                d = fn(q, s, space)
            except Exception as exc:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
                print(f"{n:>7} {name:>10} failed: {type(exc).__name__}: {exc}")
                tracemalloc.stop()
                continue
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            if reference is None:
                reference, base = d, seconds
            print(f"{n:>7} {name:>10} {seconds:>9.2f} {seconds / base:>7.1f} {peak:>9.1f} "
                  f"{np.abs(d - reference).max():>11.2e}")


if __name__ == "__main__":
    main()
