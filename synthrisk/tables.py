"""Writing one table in the formats a reader needs: CSV, Markdown, LaTeX (booktabs); shared by the
method packages and the report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_table_formats(frame: pd.DataFrame, stem: str | Path, floatfmt: str = ".3f",
                        formats=("csv", "md")) -> list[Path]:
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if "csv" in formats:
        frame.to_csv(stem.with_suffix(".csv"), index=False)
        written.append(stem.with_suffix(".csv"))
    if "md" in formats:
        stem.with_suffix(".md").write_text(frame.to_markdown(index=False, floatfmt=floatfmt) + "\n")
        written.append(stem.with_suffix(".md"))
    if "tex" in formats:
        stem.with_suffix(".tex").write_text(
            frame.style.format(precision=3, na_rep="--").hide(axis="index").to_latex(hrules=True))
        written.append(stem.with_suffix(".tex"))
    return written


def mean_spread(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, standard deviation, min and max of `value` over seeds, with the seed count."""
    grouped = frame.groupby(by, sort=True)[value]
    out = grouped.agg(mean="mean", sd="std", min="min", max="max", n_seeds="count").reset_index()
    return out.rename(columns={c: f"{value}_{c}" for c in ("mean", "sd", "min", "max")})
