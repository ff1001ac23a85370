"""Memory of a process that fits generators many times (the audit stages' blocks).

A fitted generator can leave reference cycles that hold its model (synthcity's PrivBayes: about
200 MB per fit at epsilon 0.5 and 2). CPython frees cycles only in a full collection, which its
thresholds trigger rarely, so a block of 100 such fits grew to 9.7 GB; a collection after every
fit kept it at the first fit's size (measured in .venv-synthcity: 1.43 GB after 8 fits, 2.30 GB
without). A full collection is not free, though (65 ms in the main environment, 230 ms in
synthcity's, against 0.02 s for one MST fit), so `BetweenFits` collects only when the time since
its last collection is at least `1 / overhead` times what that collection took: at most
`overhead` of the block's time, whatever the generator. With it the block of 100 PrivBayes fits
peaked at 2.45 GB.
"""

from __future__ import annotations

import gc
import sys
import time

#: at most this share of a block's time goes to collections
OVERHEAD = 0.1
#: JAX's compiled programs are dropped when the process holds more memory maps than this. Each MST
#: fit on Adult's 13 columns compiles programs of its own tree and left about 1,250 maps behind, so
#: the 51st fit of one process hit Linux's default limit of 65,530 (vm.max_map_count) and LLVM aborted
#: the process ("Cannot allocate memory"); `jax.clear_caches()` keeps the count flat (1,577 after 6
#: fits, against 9,432). Clearing only past half the limit keeps the fast path of the ε audit's
#: small tables, whose few trees are compiled once and reused.
MAX_MAPS = 30_000


def map_count() -> int:
    """The process's memory maps (0 where /proc is not there)."""
    try:
        with open("/proc/self/maps") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return 0


def release_compiled_code(limit: int | None = None) -> bool:
    """Drop JAX's compiled programs when the process holds more than `limit` memory maps (default
    MAX_MAPS); whether it did."""
    jax = sys.modules.get("jax")
    if jax is None or map_count() <= (MAX_MAPS if limit is None else limit):
        return False
    jax.clear_caches()
    return True


class BetweenFits:
    def __init__(self, overhead: float = OVERHEAD):
        if not 0 < overhead <= 1:
            raise ValueError(f"overhead must be in (0, 1], got {overhead}")
        self.overhead = overhead
        self.cost = 0.0          # seconds the last collection took (0 before the first: it collects)
        self.last = time.perf_counter()
        self.collections = 0

    def collect(self) -> bool:
        """After a fit: JAX's compiled programs dropped when they pile up (`release_compiled_code`),
        and a full collection if enough time has passed since the last one."""
        release_compiled_code()
        now = time.perf_counter()
        if now - self.last < self.cost / self.overhead:
            return False
        gc.collect()
        self.last = time.perf_counter()
        self.cost = self.last - now
        self.collections += 1
        return True
