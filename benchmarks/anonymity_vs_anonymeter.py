r"""synthrisk.anonymity vs anonymeter 1.1.0: the same attacks on the same frames, risk and time.

Data: UCI Adult (adult.data + adult.test); `--n` members and `--n` control records drawn without
replacement (synthrisk.data.split_real, seed 0), and `--n` synthetic records from each generator
fitted on the members (not timed): `cart` (the case under study) and `identity` (the members
themselves: the positive control every evaluator must flag).

Each evaluator runs with the same `--n-attacks` on both sides:
  singling-out univariate / multivariate (3 columns per query, all 13 columns),
  linkability (auxiliary columns: the 12 quasi-identifiers split in two halves in schema order,
               1 neighbour),
  inference   (secret: each sensitive attribute, here `income`; known: the quasi-identifiers).
anonymeter runs in its own interpreter (it pins numpy < 2; `.venv-anonymeter`, built on demand by
benchmarks/rapid_vs_anonymeter.py's helper) on the same frames written to parquet (categories as
strings, numbers as floats), with `--jobs` jobs; its time includes its naive baseline and, for
singling-out, its control-size correction, as ours does.

    PYTHONPATH=. .venv/bin/python benchmarks/anonymity_vs_anonymeter.py [--n 10000] [--n-attacks 2000]
    # our evaluators alone on 30,000 members x 30,000 synthetic records (the rest of Adult is control):
    PYTHONPATH=. .venv/bin/python benchmarks/anonymity_vs_anonymeter.py --ours-only --n 30000 --control-n 18842 \
        --generators cart
    # the control-size correction of singling-out (a control set a quarter of the members):
    PYTHONPATH=. .venv/bin/python benchmarks/anonymity_vs_anonymeter.py --control-n 2500 --n-attacks 1000 \
        --evaluators "singling_out multivariate"

Prints one row per generator and evaluator: our risk [CI], anonymeter's risk [CI], whether the
intervals overlap, the success counts (main / control / baseline) of both, and each side's seconds
with the ratio anonymeter / ours. Both are random attacks (different random streams): the figures
agree when the intervals overlap, not digit for digit. Known differences, explained in the
modules' docstrings: anonymeter's inference baseline is far below random guessing (its guesses are
aligned with the targets by index label), and its singling-out control-size correction fits the
number of queries evaluated instead of the number that single out, so with a control set smaller
than the members it scales the control successes down instead of up and reports a higher risk
(the `--control-n 2500` run above).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from synthrisk.anonymity import default_aux_cols, inference, linkability, singling_out
from synthrisk.data import load_dataset, load_schema, split_real
from synthrisk.data.split import ROW_ID
from synthrisk.generators import make_generator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rapid_vs_anonymeter import ANONYMETER, anonymeter_python  # the venv builder

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the anonymeter interpreter; it imports nothing from synthrisk (numpy 1.x there).
# run() is called twice in one process: on argv[1], a small warm-up (numba compiles anonymeter's
# kernels; output dropped, as ours are compiled before timing), then on argv[2], timed and printed.
ANONYMETER_SIDE = r"""
import json, sys, time, warnings
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

warnings.filterwarnings("ignore")


def run(args):
    members, control = pd.read_parquet(args["members"]), pd.read_parquet(args["control"])
    n, seed, out = args["n_attacks"], args["seed"], {}
    for generator, path in args["synthetic"].items():
        syn = pd.read_parquet(path)
        evaluators = {
            "singling_out univariate": lambda: SinglingOutEvaluator(members, syn, n_attacks=n, control=control,
                                                                    seed=seed),
            "singling_out multivariate": lambda: SinglingOutEvaluator(members, syn, n_attacks=n, n_cols=3,
                                                                      control=control, seed=seed),
            "linkability": lambda: LinkabilityEvaluator(members, syn, aux_cols=tuple(args["aux_cols"]), n_attacks=n,
                                                        n_neighbors=1, control=control),
        }
        for secret in args["secrets"]:
            evaluators[f"inference {secret}"] = lambda s=secret: InferenceEvaluator(
                members, syn, aux_cols=args["known"][s], secret=s, n_attacks=n, control=control)
        evaluators = {k: v for k, v in evaluators.items() if k.rsplit(" ", 1)[0] in args["evaluators"]
                      or k in args["evaluators"]}
        for name, make in evaluators.items():
            start = time.perf_counter()
            evaluator = make()
            if name.startswith("singling_out"):
                evaluator.evaluate(mode=name.split()[1])
            else:
                evaluator.evaluate(n_jobs=args["jobs"])
            seconds = time.perf_counter() - start
            results = evaluator.results()
            risk = results.risk()
            out[f"{generator}|{name}"] = {
                "seconds": seconds, "risk": risk.value, "ci": list(risk.ci), "main": float(results.n_success),
                "control": float(results.n_control), "baseline": float(results.n_baseline)}
            print("anonymeter", generator, name, f"{seconds:.1f}s", file=sys.stderr, flush=True)
    return out


run(json.loads(sys.argv[1]))
print(json.dumps(run(json.loads(sys.argv[2]))))
"""


def plain(frame: pd.DataFrame, schema) -> pd.DataFrame:
    """What anonymeter needs: strings for categories, floats for numbers (NaN kept), no row_id."""
    frame = frame.drop(columns=[ROW_ID], errors="ignore").copy()
    for column in frame.columns:
        frame[column] = frame[column].astype(str) if schema.is_categorical(column) else frame[column].astype(float)
    return frame


EVALUATORS = ("singling_out univariate", "singling_out multivariate", "linkability", "inference")


def ours(members, synthetic, control, schema, n_attacks: int, seed: int, evaluators=EVALUATORS) -> dict:
    aux = default_aux_cols(schema)
    runs = {
        "singling_out univariate": lambda: singling_out(members, synthetic, control, schema=schema,
                                                        n_attacks=n_attacks, mode="univariate", seed=seed),
        "singling_out multivariate": lambda: singling_out(members, synthetic, control, schema=schema,
                                                          n_attacks=n_attacks, mode="multivariate", n_cols=3,
                                                          seed=seed),
        "linkability": lambda: linkability(members, synthetic, control, schema=schema, aux_cols=aux,
                                           n_attacks=n_attacks, n_neighbors=1, seed=seed),
    }
    for secret in schema.sensitive:
        runs[f"inference {secret}"] = (lambda s=secret: inference(members, synthetic, control, schema=schema,
                                                                 secret=s, n_attacks=n_attacks, seed=seed))
    out = {}
    for name, run in runs.items():
        if name not in evaluators and name.rsplit(" ", 1)[0] not in evaluators:
            continue
        start = time.perf_counter()
        result = run().to_json()
        out[name] = {"seconds": time.perf_counter() - start, "risk": result["risk"],
                     "ci": [result["ci_low"], result["ci_high"]], "main": result["main"]["n_success"],
                     "control": result["control"]["n_success"], "baseline": result["baseline"]["n_success"]}
        print("synthrisk", name, f"{out[name]['seconds']:.1f}s", file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10000, help="members and synthetic records (each)")
    parser.add_argument("--control-n", type=int, help="control records (default: --n)")
    parser.add_argument("--n-attacks", type=int, default=2000)
    parser.add_argument("--evaluators", nargs="+", default=list(EVALUATORS), choices=EVALUATORS)
    parser.add_argument("--generators", nargs="+", default=["cart", "identity"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--anonymeter-python", type=Path, default=ROOT / ".venv-anonymeter/bin/python")
    parser.add_argument("--ours-only", action="store_true", help="time synthrisk's evaluators only (no anonymeter)")
    parser.add_argument("--json", type=Path, help="also write all figures here")
    args = parser.parse_args()

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    control_n = args.control_n or args.n
    parts = split_real(load_dataset(schema), args.n, control_n, 0, seed=args.seed)
    members, control = parts["train"], parts["holdout"]
    synthetic = {}
    for backend in args.generators:
        generator = make_generator({"backend": backend}, seed=args.seed, name=backend)
        synthetic[backend] = generator.fit(members.drop(columns=[ROW_ID]), schema).sample(args.n, seed=args.seed)
    # Compile the numba kernels outside the timed region (anonymeter's are compiled on first use
    # inside its region: it is warmed up the same way below).
    ours(members.iloc[:300], synthetic[args.generators[0]].iloc[:300], control.iloc[:300], schema, 20, args.seed)

    mine = {f"{g}|{name}": row for g, frame in synthetic.items()
            for name, row in ours(members, frame, control, schema, args.n_attacks, args.seed, args.evaluators).items()}

    if args.ours_only:
        print(f"\nAdult: {args.n} members, {control_n} control, {args.n} synthetic records per generator; "
              f"n_attacks = {args.n_attacks}; seed {args.seed}")
        for key, row in mine.items():
            generator, name = key.split("|")
            print(f"{generator:9s} {name:26s} {_risk(row):>24s} {_counts(row):>17s} {row['seconds']:7.2f} s")
        return

    with tempfile.TemporaryDirectory() as tmp:
        paths = {"members": f"{tmp}/members.parquet", "control": f"{tmp}/control.parquet"}
        plain(members, schema).to_parquet(paths["members"])
        plain(control, schema).to_parquet(paths["control"])
        syn_paths = {}
        for g, frame in synthetic.items():
            syn_paths[g] = f"{tmp}/synthetic_{g}.parquet"
            plain(frame, schema).to_parquet(syn_paths[g])
        spec = {**paths, "n_attacks": args.n_attacks, "seed": args.seed, "jobs": args.jobs, "evaluators": args.evaluators,
                "aux_cols": [list(c) for c in default_aux_cols(schema)], "secrets": list(schema.sensitive),
                "known": {s: [c for c in schema.quasi_identifiers if c != s] for s in schema.sensitive}}
        python = str(anonymeter_python(args.anonymeter_python))
        # Warm-up on a small sample (see ANONYMETER_SIDE), not timed.
        small = {**spec, "members": f"{tmp}/m_small.parquet", "control": f"{tmp}/c_small.parquet",
                 "synthetic": {"warmup": f"{tmp}/s_small.parquet"}, "n_attacks": 20}
        plain(members.iloc[:300], schema).to_parquet(small["members"])
        plain(control.iloc[:300], schema).to_parquet(small["control"])
        plain(synthetic[args.generators[0]].iloc[:300], schema).to_parquet(small["synthetic"]["warmup"])
        spec["synthetic"] = syn_paths
        # Its progress goes to stderr as it runs; its figures come back on stdout.
        done = subprocess.run([python, "-c", ANONYMETER_SIDE, json.dumps(small), json.dumps(spec)],
                              stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"anonymeter side failed with exit code {done.returncode} (its error is above)")
        peer = json.loads(done.stdout.strip().splitlines()[-1])

    print(f"\nAdult: {args.n} members, {control_n} control, {args.n} synthetic records per generator; "
          f"n_attacks = {args.n_attacks}; seed {args.seed}; {args.jobs} jobs for anonymeter ({ANONYMETER})")
    header = (f"{'generator':9s} {'evaluator':26s} {'synthrisk risk [CI]':>24s} {'anonymeter risk [CI]':>24s} "
              f"{'overlap':>7s}  {'ours m/c/b':>17s} {'anonymeter m/c/b':>19s} {'ours s':>7s} {'anon s':>7s} "
              f"{'ratio':>6s}")
    print(header)
    print("-" * len(header))
    for key, row in mine.items():
        other = peer[key]
        generator, name = key.split("|")
        overlap = row["ci"][0] <= other["ci"][1] and other["ci"][0] <= row["ci"][1]
        print(f"{generator:9s} {name:26s} {_risk(row):>24s} {_risk(other):>24s} {'yes' if overlap else 'NO':>7s}  "
              f"{_counts(row):>17s} {_counts(other):>19s} {row['seconds']:7.2f} {other['seconds']:7.2f} "
              f"{other['seconds'] / row['seconds']:6.1f}")
    if args.json:
        args.json.write_text(json.dumps({"synthrisk": mine, "anonymeter": peer, "settings": vars(args)}, indent=1,
                                        default=str))


def _risk(row: dict) -> str:
    return f"{row['risk']:.3f} [{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]"


def _counts(row: dict) -> str:
    return f"{row['main']:.0f}/{row['control']:.0f}/{row['baseline']:.0f}"


if __name__ == "__main__":
    main()
