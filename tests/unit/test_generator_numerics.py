"""SDV's neural synthesizers fit on fixed numerics (issue #27 item 11): one thread in torch, MKL,
OpenMP and OpenBLAS, torch's deterministic algorithms and MKL's reproducibility mode, whatever the
process was set to before, and everything restored after; so two same-seed fits in one process, and
a fit in a test and in a workflow job (one thread), give the same data."""

import os

import pandas as pd
import pytest

from synthrisk.data import split_real
from synthrisk.generators import make_generator

torch = pytest.importorskip("torch")


def test_fixed_numerics_pins_and_restores():
    from threadpoolctl import threadpool_info, threadpool_limits

    from synthrisk.generators.sdv import fixed_numerics

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        torch.set_num_threads(2)
        torch.use_deterministic_algorithms(False)
        # two threads in every pool first (tests/conftest.py starts the BLAS pools at one)
        with threadpool_limits(limits=2):
            assert any(pool["num_threads"] == 2 for pool in threadpool_info())
            with fixed_numerics():
                assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
                assert all(pool["num_threads"] == 1 for pool in threadpool_info())
                assert os.environ["MKL_CBWR"]
            assert any(pool["num_threads"] == 2 for pool in threadpool_info())
        assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def test_same_seed_fits_agree_whatever_the_threads_outside(adult, adult_schema):
    train = split_real(adult, 600, 10, 0, seed=0)["train"].drop(columns="row_id")
    spec = {"backend": "sdv", "model": "TVAESynthesizer", "params": {"epochs": 1}}
    threads = torch.get_num_threads()
    samples = []
    try:
        for outside in (2, 1):
            torch.set_num_threads(outside)
            samples.append(make_generator(spec, seed=3).fit(train, adult_schema).sample(300, seed=3))
            assert torch.get_num_threads() == outside
    finally:
        torch.set_num_threads(threads)
    pd.testing.assert_frame_equal(samples[0], samples[1])
