"""`synthrisk.figures`: saved figures, and figures discarded by callers that keep only tables."""

import matplotlib.pyplot as plt

from synthrisk import figures


def test_save_writes_the_figure_and_discarded_writes_nothing(tmp_path):
    fig, (ax,) = figures.subplots(1)
    ax.plot([0, 1], [0, 1])
    assert figures.save(fig, tmp_path / "kept" / "a.png").stat().st_size > 0
    with figures.discarded():
        fig, _ = figures.subplots(1)
        figures.save(fig, tmp_path / "gone" / "b.png")
        assert not plt.fignum_exists(fig.number)  # closed all the same
    assert not (tmp_path / "gone").exists()
    fig, _ = figures.subplots(1)  # the switch is restored on leaving
    assert figures.save(fig, tmp_path / "kept" / "c.png").exists()
