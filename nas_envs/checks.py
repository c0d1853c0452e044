"""Checks of option values at the public boundary, shared by the benchmarks and the environments."""

from __future__ import annotations

import numpy as np


def check_flag(name: str, value: object) -> bool:
    """A documented boolean option: ``True``/``False`` (numpy bools included), never a truthy string or number."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)
