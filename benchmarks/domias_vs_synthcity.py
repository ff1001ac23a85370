"""synthrisk's `domias` vs synthcity 0.2.12's DomiasMIA_KDE, same attack set, same run.

Data: UCI Adult as `load_dataset` gives it (48,842 rows). For each size n: n members, and the
other rows split into holdout and aux sets of min(n, (48,842 - n) / 2) records each (`split_real`,
seed 0); `cart` fitted on the members (not timed), n synthetic records.

Attack set: synthrisk's `domias` draws it (El Emam et al.'s member share t = n / 48,842, aux
members at the population's share in the reference, disjoint from the scored members); synthcity
is given exactly those scored records, that reference sample and the synthetic data.

Timed, each on the same frames:
  synthrisk  `domias(...)`: product-kernel KDE (Gaussian for numeric, Aitchison-Aitken for
             categorical columns), Scott's factor, for p_synthetic and p_reference; AUC;
  synthcity  `DomiasMIAKDE.evaluate_p_R` (scipy.stats.gaussian_kde on both samples, as the DOMIAS
             paper's KDE variant), on the data encoded the way synthcity's `Metrics.evaluate` encodes
             it (its DataLoader.encode: label codes for string columns and columns with fewer than 15
             values, fitted on all frames together), then its score p_G / (p_R + 1e-10) and AUC.
             It runs in its own interpreter, `.venv-synthcity` (built on first use from
             envs/synthcity.txt, as the workflow's synthcity_env rule builds it: ~7 GB, minutes).
Also timed: p_synthetic alone with synthrisk's kernel and with statsmodels' KDEMultivariate (the
same product kernel, our bandwidths given so that no selection runs), the latter on the first
`--statsmodels-rows` attack records and extrapolated linearly (its pdf loops over queries).
synthcity's import (torch) is not timed. Besides synthcity's own score, the table shows the AUC
of its two densities as a plain ratio (log p_G - log p_R, no 1e-10): on raw Adult scales
(capital_gain up to 99,999) its densities are far below 1e-10, so the added constant makes its
score rank by p_G alone.

    .venv/bin/python benchmarks/domias_vs_synthcity.py [--sizes 10000 30000]

Measured (2026-12-03, 2 cores shared with other jobs, so times are rough):

| members x synthetic | attack set (members) | reference (members) | synthrisk s | synthcity s | AUC synthrisk | AUC synthcity | synthcity densities as a plain ratio |
|---|---|---|---|---|---|---|---|
| 10k x 10k | 12,575 (2,575) | 10,000 (2,047) | 1.8 | 4.6 | 0.594 | 0.527 | 0.564 |
| 30k x 30k | 24,421 (15,000) | 9,421 (5,787) | 5.5 | 15.8 | 0.571 | 0.510 | 0.551 |

synthcity's p_R was below 1e-10 for every attack record, so its AUC equals that of ranking by p_G
alone (synthrisk's p_synthetic-only ablation: 0.527 and 0.509). p_synthetic alone: synthrisk 0.7 s
and 3.2 s, statsmodels KDEMultivariate ~35 s and ~192 s (extrapolated from 300 records).
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
import pandas as pd

from synthrisk.data import load_dataset, load_schema, split_real
from synthrisk.domias import MixedEncoding, MixedKde, domias
from synthrisk.generators import make_generator

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the synthcity interpreter; it imports nothing from synthrisk.
SYNTHCITY_SIDE = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
from sklearn.metrics import roc_auc_score
warnings.filterwarnings("ignore")
from synthcity.metrics.eval_privacy import DomiasMIAKDE
from synthcity.plugins.core.dataloader import GenericDataLoader
from importlib.metadata import version
args = json.loads(sys.argv[1])
frames = {k: pd.read_parquet(args[k]) for k in ("synthetic", "reference", "attack")}
y = np.asarray(args["y"], dtype=bool)
start = time.perf_counter()
# Metrics.evaluate: one set of encoders fitted on all frames, then each frame encoded with them
_, encoders = GenericDataLoader(pd.concat(list(frames.values()), ignore_index=True)).encode()
encoded = {k: GenericDataLoader(v).encode(encoders)[0] for k, v in frames.items()}
p_g, p_r = DomiasMIAKDE().evaluate_p_R(encoded["synthetic"].dataframe(), encoded["synthetic"].dataframe(),
                                       encoded["reference"].numpy(), encoded["attack"].numpy(), "cpu")
score = p_g / (p_r + 1e-10)   # DomiasMIA._evaluate
seconds = time.perf_counter() - start
with np.errstate(divide="ignore", invalid="ignore"):
    plain = np.log(p_g) - np.log(p_r)
plain = np.where(np.isfinite(plain), plain, np.nan_to_num(plain, nan=0.0))
print(json.dumps({"seconds": seconds, "auc": float(roc_auc_score(y, score)),
                  "auc_plain_ratio": float(roc_auc_score(y, plain)),
                  "share_p_r_below_1e-10": float(np.mean(p_r < 1e-10)),
                  "version": version("synthcity")}))
"""


def synthcity_python(path: Path) -> Path:
    if not path.exists():
        venv = path.parents[1]
        print(f"building {venv} from envs/synthcity.txt (once; ~7 GB)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(path), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "-r", str(ROOT / "envs/synthcity.txt")], check=True)
    return path


def plain(frame: pd.DataFrame, schema) -> pd.DataFrame:
    frame = frame.drop(columns="row_id", errors="ignore").copy()
    for column in frame.columns:
        frame[column] = frame[column].astype(str) if schema.is_categorical(column) else frame[column].astype(float)
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthcity-python", type=Path, default=ROOT / ".venv-synthcity/bin/python")
    parser.add_argument("--statsmodels-rows", type=int, default=300,
                        help="attack records whose p_synthetic statsmodels' KDEMultivariate computes (0: skip)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    adult = load_dataset(schema)
    python = synthcity_python(args.synthcity_python)
    part = adult.iloc[:300]
    domias(part.iloc[:100], part, part.iloc[100:200], aux=part.iloc[200:], schema=schema, member_share="all")  # compile
    rows = []
    for n in args.sizes:
        rest = min(n, (len(adult) - n) // 2)
        parts = split_real(adult, n, rest, rest, seed=args.seed)
        members, holdout, aux = parts["train"], parts["holdout"], parts["aux"]
        synthetic = make_generator({"backend": "cart"}, seed=args.seed).fit(
            members.drop(columns="row_id"), schema).sample(n, args.seed)
        start = time.perf_counter()
        ours = domias(members, synthetic, holdout, aux=aux, schema=schema, population_size=len(adult), seed=args.seed)
        ours_seconds = time.perf_counter() - start
        summary = ours.to_json()
        # the same attack set and reference sample, as domias built them
        by_id = pd.concat([members, holdout]).set_index("row_id")
        attack = by_id.loc[ours.records.row_id.to_numpy()]
        aux_members = members.set_index("row_id").loc[ours.aux_member_ids]
        reference = pd.concat([aux_members, aux.set_index("row_id").iloc[:len(aux) - len(aux_members)]])
        with tempfile.TemporaryDirectory() as tmp:
            spec = {"y": ours.records.member.tolist()}
            for name, frame in (("synthetic", synthetic), ("reference", reference), ("attack", attack)):
                spec[name] = f"{tmp}/{name}.parquet"
                plain(frame.reset_index(drop=True), schema).to_parquet(spec[name])
            done = subprocess.run([str(python), "-c", SYNTHCITY_SIDE, json.dumps(spec)], check=False, capture_output=True,
                                  text=True)
        if done.returncode != 0:
            raise SystemExit(f"synthcity side failed:\n{done.stderr[-3000:]}")
        peer = json.loads(done.stdout.strip().splitlines()[-1])
        # The same product kernel in statsmodels (KDEMultivariate, our bandwidths given, no selection):
        # p_synthetic on the first R attack records, timed and extrapolated to the whole attack set.
        real = pd.concat([members, holdout, aux]).drop(columns="row_id")
        encoding = MixedEncoding.fit([schema.conform(real), schema.conform(synthetic)], schema)
        kde = MixedKde(encoding).fit(schema.conform(synthetic))
        start = time.perf_counter()
        kde.log_density(schema.conform(attack.reset_index(drop=True)))
        ours_p_syn = time.perf_counter() - start
        statsmodels_seconds = None
        if args.statsmodels_rows:
            from statsmodels.nonparametric.kernel_density import KDEMultivariate
            f_num, f_cat = encoding.encode(schema.conform(synthetic))
            q_num, q_cat = encoding.encode(schema.conform(attack.iloc[:args.statsmodels_rows].reset_index(drop=True)))
            model = KDEMultivariate(np.hstack([f_num, f_cat]), var_type="c" * f_num.shape[1] + "u" * f_cat.shape[1],
                                    bw=np.concatenate([kde.h_, kde.lambda_]))
            start = time.perf_counter()
            model.pdf(np.hstack([q_num, q_cat]))
            statsmodels_seconds = (time.perf_counter() - start) * len(attack) / len(q_num)
        row = {"n_members": n, "n_synthetic": n, "n_holdout": rest, "n_aux": rest,
               "n_attack": summary["n_attack"], "n_attack_members": summary["n_members"],
               "n_reference": len(reference), "n_reference_members": summary["n_aux_members"],
               "member_share": summary["member_share"], "synthrisk_seconds": ours_seconds,
               "synthrisk_auc": summary["auc"], "synthrisk_auc_no_reference": summary["no_reference"]["auc"],
               "synthrisk_tpr_at_fpr": summary["tpr_at_fpr"], "synthcity": peer,
               "p_synthetic_seconds": {"synthrisk": ours_p_syn, "statsmodels_extrapolated": statsmodels_seconds,
                                       "statsmodels_rows": args.statsmodels_rows}}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    print(f"Adult, cart synthetic data, seed {args.seed}, synthcity {rows[0]['synthcity']['version'] if rows else ''}")
    print("| members x synthetic | attack set (members) | reference (members) | synthrisk s | synthcity s | ratio | "
          "AUC synthrisk | AUC synthrisk p_syn only | AUC synthcity | AUC synthcity densities, plain ratio | "
          "synthcity p_R < 1e-10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        peer = row["synthcity"]
        print(f"| {row['n_members']:,} x {row['n_synthetic']:,} | {row['n_attack']:,} ({row['n_attack_members']:,}) "
              f"| {row['n_reference']:,} ({row['n_reference_members']:,}) | {row['synthrisk_seconds']:.1f} "
              f"| {peer['seconds']:.1f} | {peer['seconds'] / row['synthrisk_seconds']:.1f}x "
              f"| {row['synthrisk_auc']:.4f} | {row['synthrisk_auc_no_reference']:.4f} | {peer['auc']:.4f} "
              f"| {peer['auc_plain_ratio']:.4f} | {peer['share_p_r_below_1e-10']:.0%} |")
    print()
    print("p_synthetic alone (product kernel, same bandwidths), whole attack set:")
    print("| members x synthetic | synthrisk s | statsmodels KDEMultivariate s (extrapolated from R rows) | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        timing = row["p_synthetic_seconds"]
        if timing["statsmodels_extrapolated"] is not None:
            print(f"| {row['n_members']:,} x {row['n_synthetic']:,} | {timing['synthrisk']:.1f} "
                  f"| ~{timing['statsmodels_extrapolated']:.0f} (R = {timing['statsmodels_rows']}) "
                  f"| ~{timing['statsmodels_extrapolated'] / timing['synthrisk']:.0f}x |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
