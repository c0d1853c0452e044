"""Progress bars for long work: tqdm, shown on terminals, silent when the library's log level hides information
(``nas-envs --quiet``) or when the output is not a terminal."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def disabled() -> bool | None:
    """tqdm's ``disable``: True when quiet, None (terminals only) otherwise."""
    return None if logging.getLogger("nas_envs").isEnabledFor(logging.INFO) else True


def progress(iterable: Iterable[T], **options: Any) -> Iterable[T]:
    """``iterable`` with a progress bar (``options`` as tqdm's: ``desc``, ``total``, ``unit``...)."""
    return tqdm(iterable, disable=disabled(), **options)
