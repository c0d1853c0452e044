"""Writing files and folders so that a crash leaves the old version or the new one, never half of one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: Path, content: str | bytes | Callable[[Path], None]) -> Path:
    """Write ``content`` (text, bytes, or a function that writes the file it is given) to a temporary file beside
    ``path``, flush it to disk and rename it over ``path``; returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if callable(content):
            content(tmp)
        else:
            with open(tmp, "wb" if isinstance(content, bytes) else "w") as handle:
                handle.write(content)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def replace_folder(source: Path, destination: Path) -> None:
    """Move the finished folder ``source`` to ``destination``, replacing what is there: a crash leaves the old
    folder (at ``destination``, or for a moment at ``<destination>.old``) or the new one."""
    old = destination.with_name(destination.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if destination.exists():
        destination.rename(old)
    source.rename(destination)
    shutil.rmtree(old, ignore_errors=True)
