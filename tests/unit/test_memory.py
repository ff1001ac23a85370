"""synthrisk.generators.memory.BetweenFits: frees a fit's reference cycles between fits, within its time budget."""

from __future__ import annotations

import gc
import time
import weakref

import numpy as np
import pytest

from synthrisk.generators.memory import BetweenFits


class _Model:
    """A fitted model that points back at itself, as a generator's leftovers can: only a full
    collection frees it."""

    def __init__(self):
        self.weights = np.ones(1_000_000)
        self.self_reference = self


@pytest.fixture
def no_automatic_collection():
    # CPython's own thresholds would collect at some point; the test asks what BetweenFits does
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _fit_and_drop() -> weakref.ref:
    model = _Model()
    return weakref.ref(model)


def test_a_fits_cycles_are_freed_by_the_collection_after_it(no_automatic_collection):
    memory = BetweenFits()
    left = _fit_and_drop()
    assert left() is not None           # a cycle: dropping the last name does not free it
    assert memory.collect()             # the first call always collects and times itself
    assert left() is None and memory.collections == 1
    without = [_fit_and_drop() for _ in range(5)]
    assert all(ref() is not None for ref in without)   # what piles up when nothing collects


def test_collections_take_at_most_their_share_of_the_time(no_automatic_collection):
    memory = BetweenFits(overhead=0.5)
    assert memory.collect()
    assert not memory.collect()         # right after one: too soon for a budget of half the time
    time.sleep(max(0.05, 4 * memory.cost / memory.overhead))
    assert memory.collect() and memory.collections == 2
    with pytest.raises(ValueError, match="overhead"):
        BetweenFits(overhead=0)


def test_compiled_programs_are_dropped_before_the_maps_run_out():
    """MST fits on many columns compile programs that stay mapped (about 1,250 maps a fit on Adult):
    past the limit JAX's caches are cleared, and the maps fall back; below it nothing is touched."""
    import jax
    import jax.numpy as jnp

    from synthrisk.generators.memory import map_count, release_compiled_code

    for k in range(5):  # a few distinct compiled programs
        jax.jit(lambda x, k=k: x * k + 1)(jnp.ones(3))
    assert map_count() > 0
    assert not release_compiled_code(limit=10 ** 9)
    assert release_compiled_code(limit=0)
    assert jax.jit(lambda x: x + 2)(jnp.ones(3))[0] == 3  # JAX still works after the clearing
