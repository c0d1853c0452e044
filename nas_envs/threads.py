"""Thread pools scoped to surrogate inference and to GIN fitting.

Predictions of a few architectures are far too small for a thread pool: with another process busy, each parallel
region waits for a descheduled thread, and the partition of a BLAS product over threads changes its rounding.
Inference therefore runs with BLAS and torch limited to one thread, restored afterwards, so that a user's own
numpy and torch code keep their settings and every result is the same whatever the thread settings of the process
(``python scripts/env_speed.py`` measures the speed under load). A GIN fit runs the same way, so that a refit on
the same data writes the same weights on any machine (``nas-envs fit --lines``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache


@lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_thread() -> Iterator[None]:
    """One BLAS thread and, if torch is loaded, one torch intra-op thread, for the duration of the block."""
    torch = sys.modules.get("torch")
    previous = torch.get_num_threads() if torch is not None else None
    if previous is not None and previous != 1:
        torch.set_num_threads(1)
    # the BLAS pools set to one thread by hand: threadpoolctl's limit() queries every library each time, which
    # costs more than a one-architecture evaluation's products (python scripts/env_speed.py)
    widened = [(pool, pool.num_threads) for pool in _controller().lib_controllers
               if pool.user_api == "blas" and pool.num_threads != 1]
    for pool, _ in widened:
        pool.set_num_threads(1)
    try:
        yield
    finally:
        for pool, threads in widened:
            pool.set_num_threads(threads)
        if previous is not None and previous != 1:
            torch.set_num_threads(previous)
