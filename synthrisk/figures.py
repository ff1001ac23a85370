"""Matplotlib figures for any package that makes them (method packages import this, not the report):
the Agg backend keeps them headless and deterministic."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.grid": True, "grid.alpha": 0.3,
                     "svg.hashsalt": "synthrisk", "pdf.compression": 0})


_discarding = False
#: within `rendered()`: the figures saved so far, file stem -> PNG bytes
_rendered: dict[str, bytes] | None = None


def save(fig, path: str | Path) -> Path:
    """Write `fig` to `path` (within `rendered()`: into memory under the path's stem; within
    `discarded()`: nowhere) and close it."""
    path = Path(path)
    metadata = {"Software": None} if path.suffix == ".png" else None
    if _discarding:
        pass
    elif _rendered is not None:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=path.suffix.lstrip(".") or "png", metadata=metadata)
        _rendered[path.stem] = buffer.getvalue()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, metadata=metadata)
    plt.close(fig)
    return path


@contextlib.contextmanager
def rendered():
    """Within it, `save` renders each figure into memory instead of a file: the dict it yields maps
    a figure's file stem to its bytes (the audit's page embeds them, and nothing is written)."""
    global _rendered
    before, _rendered = _rendered, {}
    try:
        yield _rendered
    finally:
        _rendered = before


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
