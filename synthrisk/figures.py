"""Matplotlib figures for any package that makes them (method packages import this, not the report):
the Agg backend keeps them headless and deterministic."""

from __future__ import annotations

import contextlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.grid": True, "grid.alpha": 0.3,
                     "svg.hashsalt": "synthrisk", "pdf.compression": 0})


_discarding = False


def save(fig, path: str | Path) -> Path:
    path = Path(path)
    if not _discarding:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, metadata={"Software": None} if path.suffix == ".png" else None)
    plt.close(fig)
    return path


@contextlib.contextmanager
def discarded():
    """Within it, `save` closes figures without rendering them: for callers that keep only the
    tables (the calibration study audits thousands of releases, and rendering took 15 % of each)."""
    global _discarding
    before, _discarding = _discarding, True
    try:
        yield
    finally:
        _discarding = before


def subplots(n_panels: int, width: float = 4.2, height: float = 3.4, ncols: int | None = None):
    ncols = ncols or min(n_panels, 3)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n_panels])
