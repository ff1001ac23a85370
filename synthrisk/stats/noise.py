"""Where the noise of every DP mechanism in synthrisk comes from (issue #27).

A DP guarantee holds only if nobody can replay the mechanism's noise. By default the noise is
therefore drawn from the operating system's entropy (`numpy.random.SeedSequence()`), apart from the
ordinary `seed`, which keeps controlling everything that is not DP noise (data splits, sampling
synthetic records from a fitted model, the analysis of a release). Two releases with the same seed
then differ.

Reproducible noise is available on explicit request: a `noise_seed` (a non-negative integer;
generator parameter `params: {noise_seed: 7}`, the `dp:` block's `noise_seed`, `synthrisk dp
--noise-seed`). The noise is then drawn from `SeedSequence([noise_seed, seed, ...])`, so runs with
different seeds (replicates, the audit's fits) never share noise, and the same config gives the
same tables. Whoever knows the noise seed can subtract the noise, so such a release is marked
NOT_PRIVATE in its guarantee.

Only numpy and the package's errors are imported here: the module is used in generator environments
of their own (synthcity's) as well.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

#: the guarantee of a release whose noise was drawn from a known seed
NOT_PRIVATE = "not private: noise seed is known"
#: what a DP release without other faults claims
DP_GUARANTEE = "(epsilon, delta)-DP"


def check_noise_seed(value, key: str = "noise_seed") -> int | None:
    """`value` as an int, None when absent; a ConfigError naming `key` unless it is a non-negative
    integer (a bool, a float such as 7.0 or a string is refused: a seed is a count, not a number)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise ConfigError(f"{key} must be a non-negative integer (or absent: DP noise from the operating "
                          f"system's entropy), got {value!r}")
    return int(value)


def noise_seed_sequence(noise_seed: int | None, *words: int) -> np.random.SeedSequence:
    """The seed sequence of one mechanism's noise: fresh operating-system entropy without a noise
    seed (`words` then play no part); `SeedSequence([noise_seed, *words])` with one, `words` being
    what tells runs apart (the run's seed, a stream number)."""
    if noise_seed is None:
        return np.random.SeedSequence()
    return np.random.SeedSequence([check_noise_seed(noise_seed), *(int(w) for w in words)])


def noise_generator(noise_seed: int | None, *words: int) -> np.random.Generator:
    """A numpy Generator for DP noise (noise_seed_sequence)."""
    return np.random.default_rng(noise_seed_sequence(noise_seed, *words))


def noise_integer(noise_seed: int | None, *words: int) -> int:
    """A 32-bit integer seed for DP noise, for libraries that take nothing else (synthcity seeds
    numpy's legacy global generator, which accepts at most 32 bits)."""
    return int(noise_seed_sequence(noise_seed, *words).generate_state(1, dtype=np.uint32)[0])


def guarantee(faults: list[str], noise_seed: int | None) -> str:
    """A release's guarantee: DP_GUARANTEE, or its faults (and NOT_PRIVATE when the noise seed is
    known) joined by "; "."""
    faults = list(faults) + ([NOT_PRIVATE] if noise_seed is not None else [])
    return "; ".join(faults) if faults else DP_GUARANTEE


def is_broken(guarantee_text: str | None) -> bool:
    """Whether a guarantee text states that the release is not DP or not private."""
    return bool(guarantee_text) and guarantee_text.startswith(("not DP", "not private"))
