"""Fanning work out as Ray tasks, for users with a cluster (``RAY_ADDRESS``) or a local Ray instance."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def ray_imap_unordered(function: Callable[..., Any], argument_tuples: Iterable[tuple], workers: int) -> Iterator[Any]:
    """Run ``function(*arguments)`` as one-CPU Ray tasks; yield the results as they finish.

    Joins the cluster named by ``RAY_ADDRESS`` if set, otherwise starts a local instance with ``workers`` CPUs.
    """
    try:
        import ray
    except ImportError:
        raise RuntimeError("the ray backend needs Ray: pip install 'ray[default]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=None if os.environ.get("RAY_ADDRESS") else workers, include_dashboard=False)
    task = ray.remote(num_cpus=1)(function)
    pending = [task.remote(*arguments) for arguments in argument_tuples]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])
