"""A progress bar for long commands on a terminal (tqdm): which measure runs, how many are done, and
the time left at the pace so far. Off when stderr is not a terminal (logs, CI, pipes) or when the
command prints JSON; then each step is a plain line on stderr, as before."""

from __future__ import annotations

import sys
from collections.abc import Callable


class StepProgress:
    """`announce(message)` for `synthrisk.measures.runner.run_units`: a tqdm bar over `total` steps
    when `enabled` (None: when stderr is a terminal), else `fallback(message)` lines."""

    def __init__(self, total: int, fallback: Callable[[str], None], enabled: bool | None = None,
                 unit: str = "measure"):
        self.fallback = fallback
        enabled = sys.stderr.isatty() if enabled is None else enabled
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True,
                            bar_format="{desc} {bar} {n_fmt}/{total_fmt} [{elapsed} elapsed, {remaining} left]")

    def announce(self, message: str) -> None:
        if self.bar is None:
            self.fallback(message)
            return
        if message.endswith(" ..."):  # a step starts: name it on the bar
            self.bar.set_description_str(message[:-4].split("] ", 1)[-1])
        else:  # a step ended: its line above the bar, and one step done
            self.bar.write(f"synthrisk: {message}", file=sys.stderr)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> StepProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FitProgress:
    """`progress(done, total)` for the refits of the generator in hand: a second tqdm bar under the
    audit's when `enabled` (None: when stderr is a terminal), else a line to `fallback` at each tenth
    of the refits, with the time left at the pace so far."""

    def __init__(self, fallback: Callable[[str], None], enabled: bool | None = None):
        self.fallback = fallback
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.bar = None
        self.start = None  # the clock starts at the first call (the refits', not the audit's, pace)
        self.said = 0

    def __call__(self, done: int, total: int) -> None:
        import time

        if self.start is None:
            self.start = time.perf_counter()
        if self.enabled:
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="refit", file=sys.stderr, dynamic_ncols=True, position=1,
                                leave=False, desc="generator refits",
                                bar_format="{desc} {bar} {n_fmt}/{total_fmt} [{elapsed} elapsed, {remaining} left]")
            self.bar.update(done - self.bar.n)
            if done >= total:
                self.close()
            return
        tenth = done * 10 // total
        if done and tenth > self.said:
            self.said = tenth
            elapsed = time.perf_counter() - self.start
            left = elapsed / done * (total - done)
            self.fallback(f"generator refits: {done}/{total}, {elapsed:.0f} s elapsed, about {left:.0f} s left")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
