"""RAPID for one attacker vs anonymeter's InferenceEvaluator, same data, same run.

Data: UCI Adult (adult.data + adult.test), `--n` real records (the members, default 30,000) and
`--n` synthetic records from synthrisk's `cart` generator fitted on them (not timed). Sensitive
attribute `income`, the 12 other columns are the attacker's knowledge, every real record attacked.

Timed, each on the same frames:
  synthrisk   `rapid(...)` with the RF attacker (`--trees`), the permutation test (`--permutations`)
              and attribution, plus the RF fit alone to show what share of RAPID the model fit is;
  anonymeter  `InferenceEvaluator(n_attacks=n).evaluate()`, in its own interpreter because
              anonymeter 1.1.0 pins numpy < 2 (built on demand in `.venv-anonymeter`, see
              `--anonymeter-python`); two attacker budgets:
                knn  its default attacker (nearest synthetic record in its mixed-type distance);
                rf   the same scikit-learn RF pipeline as synthrisk's, fitted on the synthetic data
                     inside the timed region and passed as `inference_model`.
anonymeter also runs its naive baseline attack (random synthetic guesses) inside `evaluate`; that
is part of its method, so it is part of its time.

    .venv/bin/python benchmarks/rapid_vs_anonymeter.py [--n 30000] [--trees 500]

Prints one row per method: seconds, ratio to synthrisk's RAPID, and the method's own risk figure
(RAPID share at risk; anonymeter's attack success rate: the two measure different things).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from synthrisk.data import load_dataset, load_schema
from synthrisk.generators import make_generator
from synthrisk.rapid import rapid
from synthrisk.rapid.attackers import make_attacker, model_frame

ROOT = Path(__file__).resolve().parents[1]
ANONYMETER = "anonymeter==1.1.0"

# Runs inside the anonymeter interpreter; it imports nothing from synthrisk (numpy 1.x there).
ANONYMETER_SIDE = r"""
import json, sys, time
import numpy as np, pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from anonymeter.evaluators import InferenceEvaluator
from anonymeter.evaluators.sklearn_inference_predictor import SklearnInferencePredictor

args = json.loads(sys.argv[1])
real, syn = pd.read_parquet(args["real"]), pd.read_parquet(args["synthetic"])
aux, secret, out = args["aux"], args["secret"], {}
for budget in args["budgets"]:
    start = time.perf_counter()
    model = None
    if budget == "rf":
        categorical = [c for c in aux if c in args["categorical"]]
        numeric = [c for c in aux if c not in args["categorical"]]
        prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
                                  ("num", "passthrough", numeric)], sparse_threshold=0.0)
        forest = RandomForestClassifier(n_estimators=args["trees"], max_features="sqrt", min_samples_split=10,
                                        n_jobs=args["jobs"], random_state=0)
        model = SklearnInferencePredictor(Pipeline([("prep", prep), ("model", forest)]).fit(syn[aux], syn[secret]))
    evaluator = InferenceEvaluator(ori=real, syn=syn, aux_cols=aux, secret=secret, regression=False,
                                   n_attacks=len(real), inference_model=model)
    evaluator.evaluate(n_jobs=args["jobs"])
    seconds = time.perf_counter() - start
    out[budget] = {"seconds": seconds, "attack_rate": float(evaluator.results().attack_rate.value)}
print(json.dumps(out))
"""


def anonymeter_python(path: Path) -> Path:
    if not path.exists():
        venv = path.parents[1]
        print(f"building {venv} with {ANONYMETER} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(path), "-m", "pip", "install", "--quiet", ANONYMETER, "pyarrow"], check=True)
    return path


def make_data(n: int, seed: int):
    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    adult = load_dataset(schema)
    if n > len(adult):
        raise SystemExit(f"--n {n}: Adult has {len(adult)} rows")
    real = adult.sample(n=n, random_state=seed).reset_index(drop=True)
    generator = make_generator({"backend": "cart"}, seed=seed, name="cart")
    generator.fit(real, schema)
    return schema, real, generator.sample(n, seed=seed)


def time_synthrisk(real, synthetic, schema, trees: int, permutations: int, jobs: int):
    start = time.perf_counter()
    # Label-permutation test only (null_refits=0): the README's timing is of one fit, as anonymeter's.
    result = rapid(real, synthetic, schema=schema, sensitive="income", attacker="rf", n_trees=trees,
                   n_permutations=permutations, n_jobs=jobs, null_refits=0)
    total = time.perf_counter() - start
    features = list(schema.quasi_identifiers)
    model = make_attacker("rf", schema, features, True, n_trees=trees, n_jobs=jobs)
    x_syn, y_syn = model_frame(synthetic, schema, features), model_frame(synthetic, schema, ["income"])["income"]
    start = time.perf_counter()
    model.fit(x_syn, y_syn)
    fit = time.perf_counter() - start
    return total, fit, result.rapid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30000)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budgets", nargs="+", default=["knn", "rf"], choices=["knn", "rf"])
    parser.add_argument("--anonymeter-python", type=Path, default=ROOT / ".venv-anonymeter/bin/python")
    args = parser.parse_args()

    schema, real, synthetic = make_data(args.n, seed=0)
    total, fit, value = time_synthrisk(real, synthetic, schema, args.trees, args.permutations, args.jobs)
    rows = [("synthrisk rapid (rf)", total, value), ("  of which: rf fit alone", fit, None)]

    with tempfile.TemporaryDirectory() as tmp:
        paths = {"real": f"{tmp}/real.parquet", "synthetic": f"{tmp}/synthetic.parquet"}
        # anonymeter needs plain columns: strings for categories, floats for numbers (NaN kept).
        for name, frame in (("real", real), ("synthetic", synthetic)):
            plain = frame.copy()
            for column in plain.columns:
                plain[column] = (plain[column].astype(str) if schema.is_categorical(column)
                                 else plain[column].astype(float))
            plain.to_parquet(paths[name])
        spec = {**paths, "aux": list(schema.quasi_identifiers), "secret": "income", "trees": args.trees,
                "jobs": args.jobs, "budgets": args.budgets, "categorical": list(schema.categorical)}
        done = subprocess.run([str(anonymeter_python(args.anonymeter_python)), "-c", ANONYMETER_SIDE,
                               json.dumps(spec)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"anonymeter side failed:\n{done.stderr[-3000:]}")
        peer = json.loads(done.stdout.strip().splitlines()[-1])
    for budget, timing in peer.items():
        rows.append((f"anonymeter InferenceEvaluator ({budget})", timing["seconds"], timing["attack_rate"]))

    print(f"n = {args.n} real x {args.n} synthetic Adult rows, {args.trees} trees, "
          f"{args.permutations} permutations, {args.jobs} jobs")
    print(f"{'method':42s} {'seconds':>9s} {'ratio':>7s} {'risk figure':>12s}")
    for name, seconds, risk in rows:
        risk_text = "" if risk is None else f"{risk:.3f}"
        print(f"{name:42s} {seconds:9.2f} {seconds / total:7.2f} {risk_text:>12s}")
    print(f"rf fit share of synthrisk's RAPID: {fit / total:.0%}")
    np.testing.assert_(fit <= total * 1.5, "the RF fit alone took far longer than RAPID: timings are unreliable")


if __name__ == "__main__":
    main()
