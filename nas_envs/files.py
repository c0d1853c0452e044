"""Writing files and folders so that a crash leaves the old version or the new one, never half of one; and JSON-lines
files that only grow, one complete line per record (collections of trainings, MOEA runs)."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
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


def complete_tail(data: bytes) -> bool:
    """Whether the bytes after the last newline are one complete JSON record (written without its newline)."""
    tail = data[data.rfind(b"\n") + 1 :]
    try:
        return bool(tail.strip()) and isinstance(json.loads(tail), dict)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def repair_tail(path: Path) -> int:
    """Truncate a trailing partial line, or end a complete last record with its missing newline; return the number
    of bytes removed."""
    if not path.exists():
        return 0
    with open(path, "rb+") as handle:
        data = handle.read()
        keep = data.rfind(b"\n") + 1
        if complete_tail(data):
            handle.write(b"\n")
            keep = len(data)
        elif keep < len(data):
            handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
        return len(data) - keep


class AppendOnlyWriter:
    """Appends one JSON object per line, each with one write and an fsync.

    Before each line it checks that its open file is still the one at ``path``: tools that rewrite a file (``git
    checkout``, ``git stash``) put a new file there, and lines appended to the old, deleted one would be lost."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._fd = self._open()

    def _open(self) -> int:
        return os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _reopen_if_replaced(self) -> None:
        opened = os.fstat(self._fd)
        try:
            current = os.stat(self._path)
            replaced = (current.st_dev, current.st_ino) != (opened.st_dev, opened.st_ino)
        except FileNotFoundError:
            replaced = True
        if replaced:
            os.close(self._fd)
            self._fd = self._open()

    def append(self, record: dict) -> None:
        self._reopen_if_replaced()
        data = (json.dumps(record, sort_keys=True) + "\n").encode()
        written = os.write(self._fd, data)
        if written != len(data):  # a short write on a full disk: leave a partial line for repair_tail
            raise OSError(f"short write: {written} of {len(data)} bytes")
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def complete_lines(path: Path) -> bytes:
    """The bytes of a JSON-lines file up to its last complete record, each line ending in a newline: a last record
    that lacks only its newline is complete; a partial last line (its writer killed mid-line) is left out with a
    warning. Empty for a file that does not exist."""
    data = path.read_bytes() if path.exists() else b""
    if complete_tail(data):
        return data + b"\n"
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        warnings.warn(f"{path}: a partial last line ({len(data) - complete} bytes) is not read; its writer resumes "
                      "past it", stacklevel=3)
    return data[:complete]


@contextmanager
def locked(path: Path, wait: bool = True) -> Iterator[None]:
    """An exclusive lock shared by every writer of ``path`` (``<path>.lock``; released if the holder dies). Without
    ``wait``, a lock another process holds is refused at once with a :class:`RuntimeError` naming the file."""
    from filelock import FileLock, Timeout  # an extra's module: only commands that write result files need it

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path.with_name(path.name + ".lock"), timeout=-1 if wait else 0)
    try:
        lock.acquire()
    except Timeout:
        raise RuntimeError(f"{path} is being written by another process (its lock {lock.lock_file} is held); wait "
                           "for it to finish, or write to another file") from None
    try:
        yield
    finally:
        lock.release()


def read_json_lines(path: Path, check: Callable[[dict], str | None] | None = None) -> list[dict]:
    """The objects of a JSON-lines file that only grows. A partial last line (its writer killed mid-line; it
    resumes past it) is left out with a warning; anything else that is not one JSON object a line (a blank line,
    corrupted JSON or text, ``[]``, or what ``check`` names: it returns what is wrong, or None) is refused as
    ``FILE:LINE: what is wrong``."""
    return parse_json_lines(path, complete_lines(Path(path)), check)


def parse_json_lines(path: Path, data: bytes, check: Callable[[dict], str | None] | None = None) -> list[dict]:
    """:func:`read_json_lines` of the complete lines ``data`` read from ``path`` (named in the errors)."""
    rows = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}:{number}: not a JSON line ({getattr(error, 'msg', None) or error})") from None
        problem = f"a JSON {type(row).__name__} where an object is expected" if not isinstance(row, dict) else \
            check(row) if check is not None else None
        if problem:
            raise ValueError(f"{path}:{number}: {problem}")
        rows.append(row)
    return rows


def append_new(path: Path, rows: list[dict], key: Callable[[dict], Hashable],
               check: Callable[[dict], str | None] | None = None) -> int:
    """Append the ``rows`` whose ``key`` the file does not hold yet, under the file's lock (so that two writers
    at once never write a row twice); returns how many were appended."""
    with locked(path):
        repair_tail(path)
        present = {key(row) for row in read_json_lines(path, check)}
        fresh = [row for row in rows if key(row) not in present]
        writer = AppendOnlyWriter(path)
        try:
            for row in fresh:
                writer.append(row)
        finally:
            writer.close()
    return len(fresh)
