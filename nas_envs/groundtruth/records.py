"""Collection files: append-only JSON lines, one complete record per finished training, read and written safely.

The writer appends one complete line per record with a single ``write`` followed by ``fsync``. A trailing partial
line (only possible if the writer itself was killed mid-write) is dropped on repair and left out by readers; a
complete record that lacks only its newline is kept. Everyone who writes a file holds its lock (``<file>.lock``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from pathlib import Path

# the collection's writer and repair are those of every JSON-lines file (re-exported for the collector)
from nas_envs.files import (  # noqa: F401
    AppendOnlyWriter,
    complete_lines,
    complete_tail,
    locked,
    parse_json_lines,
    repair_tail,
)


def read_records(path: Path) -> list[dict]:
    """All complete records of a collection file (a trailing partial line is ignored)."""
    return snapshot(path)[0]


def read_protocol_records(path: Path, protocol: str) -> list[dict]:
    """The complete records of ``protocol`` in a collection file (other protocols' records are left out), or an
    error when it holds none."""
    records = [r for r in read_records(path) if r["protocol"] == protocol]
    if not records:
        raise ValueError(f"{path} holds no records of protocol {protocol}")
    return records


def snapshot(path: Path, lines: int | None = None) -> tuple[list[dict], str, int]:
    """(records, sha256, lines) of the complete records of a collection file, read once: the digest describes
    exactly the records returned, even while a collector appends. A last record that lacks only its newline is
    complete; a partial last line is left out with a warning. ``lines``: only the first that many (a fit repeated
    on the data an earlier one read); refused where the file holds fewer."""
    data = complete_lines(path)
    if lines is not None:
        held = data.splitlines(keepends=True)
        if not 1 <= lines <= len(held):
            raise ValueError(f"{path} holds {len(held)} complete lines; asked for the first {lines} (give 1 to "
                             f"{len(held)})")
        data = b"".join(held[:lines])
    records = parse_json_lines(path, data, record_problem)
    return records, hashlib.sha256(data).hexdigest(), len(records)


def snapshot_prefix(path: Path, lines: int, sha256: str) -> list[dict]:
    """The first ``lines`` records of a collection file, checked against the ``sha256`` a fit recorded for them
    (:func:`snapshot`): the records a bundle was fitted on, however much the file has grown since."""
    data = b"".join(complete_lines(path).splitlines(keepends=True)[:lines])
    if data.count(b"\n") < lines or hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{path}: its first {lines} lines are not the ones fitted on (sha256 {sha256[:12]}...): the "
                         "collection file was rewritten, or is not the one the bundle was fitted on")
    return parse_json_lines(path, data, record_problem)


#: measured fractions a record may hold, each finite and in [0, 1]
FRACTIONS = ("val_accuracy", "test_accuracy", "reserve_accuracy", "val_miou")
#: measured seconds, each finite and >= 0
SECONDS = ("train_seconds", "train_cpu_seconds", "eval_seconds")


def record_problem(record: object) -> str | None:
    """What makes a line no record of a collection file, in a few words naming the field; None for a good one.
    Losses may be infinite or NaN (a diverged training records its loss as it was); measured accuracies and
    seconds never are."""
    if not isinstance(record, dict):
        return f"not a record (a JSON {type(record).__name__}, where an object is expected)"
    for key in ("protocol", "job", "arch", "source", "subset"):
        if not isinstance(record.get(key), str) or not record[key]:
            return f"field {key!r} missing or not a non-empty string"
    for key in FRACTIONS:
        if key in record and not _finite_in(record[key], 0.0, 1.0):
            return f"field {key!r} is {record[key]!r}; a measured fraction is a finite number in [0, 1]"
    for key in SECONDS:
        if key in record and not _finite_in(record[key], 0.0, math.inf):
            return f"field {key!r} is {record[key]!r}; measured seconds are a finite number >= 0"
    curve = record.get("val_accuracy_curve", [])
    if not isinstance(curve, list) or not all(_finite_in(value, 0.0, 1.0) for value in curve):
        return "field 'val_accuracy_curve' must be a list of finite numbers in [0, 1]"
    if not isinstance(record.get("genes"), list) or not all(type(g) is int for g in record["genes"]):
        return "field 'genes' missing or not a list of integers"
    return None


def _finite_in(value: object, low: float, high: float) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and low <= value <= high


def done_jobs(path: Path, protocol: str) -> set[str]:
    """The job keys of ``protocol`` that ``path`` already holds (call :func:`repair_tail` first)."""
    return {r["job"] for r in read_records(path) if r.get("protocol") == protocol}


def merge(source: Path, destination: Callable[[str], Path]) -> dict[str, int]:
    """Append the records of ``source`` (a collection file made elsewhere) to ``destination(protocol)``, one
    checked record per line through the same append-only writer, skipping jobs the destination already holds.
    Returns the number appended per protocol."""
    from nas_envs.groundtruth.protocols import PROTOCOLS

    records = read_records(source)
    unknown = sorted({r["protocol"] for r in records} - set(PROTOCOLS))
    if unknown:
        raise ValueError(f"{source}: records of unknown protocols {unknown[:3]}; allowed: the protocols of "
                         f"nas_envs.groundtruth.protocols ({', '.join(sorted(PROTOCOLS))}); nothing was merged")
    added: dict[str, int] = {}
    for protocol in sorted({r["protocol"] for r in records}):
        path = destination(protocol)
        with locked(path):
            repair_tail(path)
            done = done_jobs(path, protocol)
            writer = AppendOnlyWriter(path)
            try:
                for record in records:
                    if record["protocol"] == protocol and record["job"] not in done:
                        writer.append(record)
                        done.add(record["job"])
                        added[protocol] = added.get(protocol, 0) + 1
            finally:
                writer.close()
    return added
