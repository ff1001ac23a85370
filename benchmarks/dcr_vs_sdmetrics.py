"""synthrisk's `dcr` vs SDMetrics' DCROverfittingProtection, same data, same run.

Data: UCI Adult as `load_dataset` gives it (adult.data + adult.test, 48,842 rows, 13 columns).
For each size n: n members and min(n, 48,842 - n) holdout records drawn at random
(`split_real`, seed 0), `cart` fitted on the members (not timed), n synthetic records.

Timed, each on the same frames:
  synthrisk  `dcr(members, synthetic, holdout)`: two exact 2-nearest searches (members, holdout),
             share closer to members with interval and test, NNDR, exact copies;
  SDMetrics  `DCROverfittingProtection.compute_breakdown(...)` (sdmetrics 0.32.0, pinned in the main
             environment), in a child process whose address space is capped with
             resource.setrlimit(RLIMIT_AS) (`--memory-limit-gib`) so that a run that would exhaust
             memory fails with MemoryError instead of swapping the machine; its peak resident
             memory is reported. It is given the same members as synthrisk compares: when the holdout
             is smaller (n = 30,000), synthrisk subsamples the members to the holdout's size and
             SDMetrics gets that subsample (with all members its share would be biased upwards).

SDMetrics computes every synthetic x reference pair with pandas (a cross merge per 1,000 x 1,000
chunk), 3-7 microseconds a pair here depending on the load, i.e. about an hour at 20,000-30,000
rows. With `--sdmetrics-rows R`, sizes above `--sdmetrics-full-up-to` let SDMetrics score only the first R
synthetic records against the full member and holdout sets: its cost is the same for every chunk
of synthetic rows, so the time for all rows is extrapolated linearly (marked `~`), and its headline
numbers are compared with synthrisk's on the same R records.

Definitions that differ (so the headline numbers need not agree exactly):
  - numeric ranges: SDMetrics takes each range from the reference it measures against (the
    training sample for DCR to training, the validation sample for DCR to holdout), synthrisk from
    members and holdout together (one scale for both distances);
  - ties: SDMetrics counts a synthetic record as closer to training only if strictly closer
    (ties go to the holdout); synthrisk counts ties half. The table shows synthrisk's strict share
    (`share_closer_to_member_strict`) next to SDMetrics' `closer_to_training`, and both scores
    min(2 (1 - strict share), 1). As a check of the two engines, the last column runs synthrisk's
    nearest-record search on SDMetrics' definition (ranges from each reference, strict <; not timed).
    Checked record by record on 1,000 synthetic x 10,000 Adult rows: every nearest distance agrees
    with SDMetrics' calculate_dcr to 3e-17, and the shares differ on 2 records, both exact ties
    (d_train = d_holdout) that rounding makes 1e-17 apart in one engine and equal in the other.

    .venv/bin/python benchmarks/dcr_vs_sdmetrics.py [--sizes 5000 10000 20000 30000]
        [--sdmetrics-full-up-to 5000 --sdmetrics-rows 1000] [--memory-limit-gib 8]

Measured (2026-12-03, `--sdmetrics-full-up-to 5000 --sdmetrics-rows 1000`, 2 cores shared with
other jobs, load 1.5-5, so times are rough; `~` = SDMetrics scored 1,000 synthetic rows, time
extrapolated):

| members x synthetic (holdout) | synthrisk s | SDMetrics s | ratio | strict share synthrisk / SDMetrics | same engine, SDMetrics' ranges | SDMetrics peak RSS |
|---|---|---|---|---|---|---|
| 5k x 5k (5k) | 1.9 | 250 | 131x | 0.6554 / 0.6546 | 0.6554 | 906 MiB |
| 10k x 10k (10k) | 5.6 | ~1,313 | ~235x | 0.6400 / 0.6360 | 0.6380 | 919 MiB |
| 20k x 20k (20k) | 7.6 | ~2,901 | ~380x | 0.6050 / 0.6040 | 0.6050 | 929 MiB |
| 30k x 30k (18,842) | 11.8 (5.1 at lower load) | ~3,213 | ~273x | 0.5810 / 0.5810 | 0.5810 | 963 MiB |

sdmetrics 0.32.0 chunks both the synthetic and the reference data (SDMetrics#760 was about the
unchunked reference running out of memory near 30k rows), so its memory stays under 1 GiB at every
size here; it is its time (about an hour at 20-30k) that limits it. Two full (all-rows) runs at 30k
were ended from outside this script: the first's SDMetrics child by SIGTERM after 48 minutes, the
second whole run without output after about 28 minutes (resident memory sampled at 0.75-0.9 GiB,
far from the 8 GiB cap; a MemoryError would have been reported), so the 30k row is the 1,000-row
extrapolation.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from synthrisk.data import load_dataset, load_schema, split_real
from synthrisk.dcr import dcr
from synthrisk.dcr.core import _SUBSAMPLE_STREAM
from synthrisk.generators import make_generator
from synthrisk.mia import GowerSpace, nearest_synthetic

ROOT = Path(__file__).resolve().parents[1]

# Runs in a child interpreter under an address-space limit; it imports nothing from synthrisk.
SDMETRICS_SIDE = r"""
import json, resource, sys, time
import pandas as pd
args = json.loads(sys.argv[1])
out = {}
try:
    from sdmetrics.single_table import DCROverfittingProtection
    members, holdout = pd.read_parquet(args["members"]), pd.read_parquet(args["holdout"])
    synthetic = pd.read_parquet(args["synthetic"]).iloc[:args["rows"]]
    start = time.perf_counter()
    result = DCROverfittingProtection.compute_breakdown(
        real_training_data=members, synthetic_data=synthetic, real_validation_data=holdout,
        metadata=args["metadata"], table_name=None)
    out = {"seconds": time.perf_counter() - start, "score": float(result["score"]),
           "closer_to_training": float(result["synthetic_data_percentages"]["closer_to_training"])}
except MemoryError:
    out = {"error": "MemoryError"}
out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def plain(frame, schema):
    """Strings for categories, floats for numbers: what SDMetrics' metadata types expect."""
    frame = frame.drop(columns="row_id", errors="ignore").copy()
    for column in frame.columns:
        frame[column] = frame[column].astype(str) if schema.is_categorical(column) else frame[column].astype(float)
    return frame


def run_sdmetrics(members, holdout, synthetic, schema, rows, limit_gib, timeout):
    metadata = {"columns": {c: {"sdtype": "categorical" if schema.is_categorical(c) else "numerical"}
                            for c in schema.columns}}
    limit = int(limit_gib * 2**30)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, frame in (("members", members), ("holdout", holdout), ("synthetic", synthetic)):
            paths[name] = f"{tmp}/{name}.parquet"
            plain(frame, schema).to_parquet(paths[name])
        spec = {**paths, "rows": rows, "metadata": metadata}
        try:
            done = subprocess.run([sys.executable, "-c", SDMETRICS_SIDE, json.dumps(spec)], check=False, capture_output=True,
                                  text=True, preexec_fn=cap, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout} s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return {"error": tail[0][:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000, 30000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sdmetrics-full-up-to", type=int, default=None,
                        help="sizes above this score only --sdmetrics-rows synthetic records in SDMetrics")
    parser.add_argument("--sdmetrics-rows", type=int, default=1000)
    parser.add_argument("--memory-limit-gib", type=float, default=8.0)
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per SDMetrics run")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    adult = load_dataset(schema)
    dcr(adult.iloc[:50], adult.iloc[100:150], adult.iloc[50:100], schema=schema)  # load the compiled kernels
    rows = []
    for n in args.sizes:
        n_holdout = min(n, len(adult) - n)
        parts = split_real(adult, n, n_holdout, 0, seed=args.seed)
        members, holdout = parts["train"], parts["holdout"]
        synthetic = make_generator({"backend": "cart"}, seed=args.seed).fit(
            members.drop(columns="row_id"), schema).sample(n, args.seed)
        start = time.perf_counter()
        ours = dcr(members, synthetic, holdout, schema=schema, seed=args.seed)
        ours_seconds = time.perf_counter() - start
        summary = ours.to_json()
        compared = members
        if summary["subsampled"] == "members":  # the subsample dcr compared (same seeded draw)
            rng = np.random.default_rng([args.seed, _SUBSAMPLE_STREAM])
            compared = members.iloc[np.sort(rng.permutation(len(members))[:summary["n_compared"]])]
        subset = args.sdmetrics_full_up_to is not None and n > args.sdmetrics_full_up_to
        k = min(args.sdmetrics_rows, n) if subset else n
        peer = run_sdmetrics(compared, holdout, synthetic, schema, k, args.memory_limit_gib, args.timeout)
        strict = float(np.mean(ours.records.closer_to_member.to_numpy()[:k] == 1.0))
        # synthrisk's engine on SDMetrics' definition (ranges from each reference; strict <), untimed
        typed = {name: schema.conform(frame.drop(columns="row_id")) for name, frame in
                 (("members", compared), ("holdout", holdout))}
        head = synthetic.iloc[:k]
        d_m = nearest_synthetic(head, typed["members"], GowerSpace.fit(typed["members"], schema))[0]
        d_h = nearest_synthetic(head, typed["holdout"], GowerSpace.fit(typed["holdout"], schema))[0]
        aligned = float(np.mean(d_m < d_h))
        row = {"n_members": n, "n_holdout": n_holdout, "n_compared": summary["n_compared"], "n_synthetic": n,
               "sdmetrics_rows": k, "synthrisk_seconds": ours_seconds,
               "synthrisk_share_ties_half": summary["share_closer_to_member"],
               "synthrisk_share_strict_on_rows": strict, "synthrisk_score_on_rows": min(2 * (1 - strict), 1.0),
               "synthrisk_engine_sdmetrics_ranges_strict_share": aligned,
               "sdmetrics": peer}
        if "seconds" in peer:
            row["sdmetrics_seconds_all_rows"] = peer["seconds"] * n / k
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    print(f"Adult, cart synthetic data, seed {args.seed}; SDMetrics under RLIMIT_AS = {args.memory_limit_gib:g} GiB")
    print("| members x synthetic (holdout; compared) | synthrisk s | SDMetrics s | ratio | share ties half | "
          "strict share: synthrisk / SDMetrics (rows) | score: synthrisk / SDMetrics | "
          "strict share, synthrisk engine on SDMetrics' ranges | SDMetrics peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        peer = row["sdmetrics"]
        head = (f"| {row['n_members']:,} x {row['n_synthetic']:,} ({row['n_holdout']:,}; {row['n_compared']:,}) "
                f"| {row['synthrisk_seconds']:.2f} ")
        if "seconds" not in peer:
            print(head + f"| failed: {peer.get('error')} | | {row['synthrisk_share_ties_half']:.4f} | | "
                         f"| {row['synthrisk_engine_sdmetrics_ranges_strict_share']:.4f} "
                         f"| {peer.get('peak_rss_mib', float('nan')):.0f} MiB |")
            continue
        approx = "~" if row["sdmetrics_rows"] < row["n_synthetic"] else ""
        seconds = row["sdmetrics_seconds_all_rows"]
        print(head + f"| {approx}{seconds:.0f} | {approx}{seconds / row['synthrisk_seconds']:.0f}x "
              f"| {row['synthrisk_share_ties_half']:.4f} "
              f"| {row['synthrisk_share_strict_on_rows']:.4f} / {peer['closer_to_training']:.4f} "
              f"({row['sdmetrics_rows']:,}) | {row['synthrisk_score_on_rows']:.4f} / {peer['score']:.4f} "
              f"| {row['synthrisk_engine_sdmetrics_ranges_strict_share']:.4f} | {peer['peak_rss_mib']:.0f} MiB |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
