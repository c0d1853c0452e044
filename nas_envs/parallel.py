"""Fanning work out to local worker processes or Ray tasks.

Local workers are tied to their parent: when the parent dies (``kill -9`` included) they are killed at once, so no
worker outlives the command that started it, writes after it, or holds its caller's pipes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int, initializer: Callable[[], None] | None) -> None:
    """Worker initializer: on Linux the kernel sends SIGKILL when the parent dies; elsewhere a watchdog thread
    polls the parent's pid. Then the caller's own initializer."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not sys.platform.startswith("linux"):
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if initializer is not None:
        initializer()


def worker_pool(workers: int, initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this process (see the module docstring)."""
    return ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_die_with_parent,
                               initargs=(os.getpid(), initializer))


def ray_imap_unordered(function: Callable[..., Any], argument_tuples: Iterable[tuple], workers: int) -> Iterator[Any]:
    """Run ``function(*arguments)`` as one-CPU Ray tasks; yield the results as they finish.

    Joins the cluster named by ``RAY_ADDRESS`` if set, otherwise starts a local instance with ``workers`` CPUs.
    """
    try:
        import ray
    except ImportError:
        raise RuntimeError("the ray backend needs Ray: pip install 'nas-envs[ray]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=None if os.environ.get("RAY_ADDRESS") else workers, include_dashboard=False)
    task = ray.remote(num_cpus=1)(function)
    pending = [task.remote(*arguments) for arguments in argument_tuples]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])
