"""Resumable, crash-safe collection of real trainings into an append-only JSON-lines file.

A *job* is (source, subset, index, seed): the architecture is a pure function of (space, source, subset, index),
so a job means the same training in every process and on every run. The parent process is the only writer: it
appends one complete line per finished training with a single ``write`` followed by ``fsync``. On start it drops a
trailing partial line (only possible if the writer itself was killed mid-write; a complete record that lacks only
its newline is kept) and skips every job already in the file, so ``kill -9`` at any moment loses at most the
trainings in flight and never duplicates one.

Several collectors may share one file: under an exclusive lock (``<file>.lock``) each claims a job in
``<file>.claims`` before it trains it, and appends a record only if the job is not in the file yet. A job claimed by
a live collector is left to it; claims of collectors that died are ignored, so their jobs are run again. A claim
names its process by pid and start time (a reused pid does not hold it) and lapses after
:data:`CLAIM_LEASE_SECONDS`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from nas_envs.catalogue import family, load
from nas_envs.parallel import worker_pool
from nas_envs.spaces import get_space
from nas_envs.spaces.base import SearchSpace

logger = logging.getLogger(__name__)
# plus optimiser trajectories, named after their agent; "mutation-pair": architecture 2k is random, 2k + 1 the same
# one edit away (landscape roughness)
SOURCES = ("random", "param-free", "pool-heavy", "one-block", "mutation-pair")
SUBSETS = ("train", "noise")
# Distinct random streams per (source, subset), so that adding jobs to one never changes another's architectures.
_STREAM_IDS = {("random", "train"): 1, ("random", "noise"): 2, ("param-free", "train"): 3, ("param-free", "noise"): 4,
               ("pool-heavy", "train"): 5, ("pool-heavy", "noise"): 6, ("one-block", "train"): 7,
               ("one-block", "noise"): 8, ("mutation-pair", "train"): 9, ("mutation-pair", "noise"): 10}


@dataclass(frozen=True)
class Job:
    space: str
    source: str
    subset: str
    index: int
    replicate: int
    trajectory: str = ""  # for optimiser trajectories: the committed trajectory file the architectures come from

    @property
    def seed(self) -> int:
        """The training seed: distinct for every job of a stream."""
        return self.replicate * 100_000 + self.index

    @property
    def key(self) -> str:
        """Unique per training: a trajectory's file is named by its content, so two files of the same name in
        different folders are two streams."""
        stream = self.source
        if self.trajectory:
            stream = f"{self.source}:{Path(self.trajectory).stem}@{_file_digest(self.trajectory)[:12]}"
        return f"{stream}/{self.subset}/{self.index}/r{self.replicate}"

    @property
    def legacy_key(self) -> str | None:
        """The key records of a committed trajectory file were written under before keys named the content
        (``<source>:<stem>/...``): accepted for a file with exactly the committed file's content."""
        if not self.trajectory:
            return None
        from nas_envs.assets import assets_dir

        committed = assets_dir() / "data" / "trajectories" / self.source / Path(self.trajectory).name
        if not committed.is_file() or _file_digest(str(committed)) != _file_digest(self.trajectory):
            return None
        return f"{self.source}:{Path(self.trajectory).stem}/{self.subset}/{self.index}/r{self.replicate}"

    def done_in(self, done: set[str]) -> bool:
        return self.key in done or self.legacy_key in done


@lru_cache(maxsize=64)
def _digest_of(path: str, _size: int, _mtime: float) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    return _digest_of(str(Path(path).resolve()), stat.st_size, stat.st_mtime)


def job_architecture(space: SearchSpace, job: Job) -> np.ndarray:
    """The architecture of a job: a pure function of the job, identical in every process and on every run."""
    if job.trajectory:
        return space.from_string(trajectory_architectures(job.trajectory)[job.index])
    if job.source == "mutation-pair":  # a random architecture (even index) and one edit of it (the next index)
        rng = np.random.default_rng([_STREAM_IDS[(job.source, job.subset)], job.index // 2])
        genes = space.sample(seed=rng)
        if job.index % 2:
            neighbours = space.neighbours(genes)
            genes = space.canonicalize(neighbours[int(rng.integers(len(neighbours)))])
        return genes
    rng = np.random.default_rng([_STREAM_IDS[(job.source, job.subset)], job.index])
    genes = space.sample(seed=rng)
    if job.source != "random":
        genes = space.poor_region_variant(genes, rng, region=job.source)
    return genes


@lru_cache(maxsize=8)
def trajectory_architectures(path: str, skip: int = 100) -> list[str]:
    """Distinct architectures of a committed file, in its order. An optimiser's trajectory: those it evaluated
    after its first ``skip`` evaluations (regularized evolution's random initial population). A list of final
    incumbents written by ``nas-envs incumbents`` (rows that name the ``agent`` whose search ended there): all."""
    seen: dict[str, None] = {}
    with open(path) as handle:
        for number, line in enumerate(handle):
            row = json.loads(line)
            if "agent" in row or number >= skip:
                seen.setdefault(row["architecture"], None)
    return list(seen)


def plan(space: str, source: str, subset: str, n: int, seeds: int, start: int = 0, trajectory: str = "") -> list[Job]:
    """Jobs for architectures ``start .. n-1`` of a stream, ``seeds`` seeds each (seeds adjacent in order).

    With ``trajectory`` (a trajectory file of ``nas-envs run``), the stream is that file's architectures and the
    source is the agent that produced it (the name of the file's folder).
    """
    if subset not in SUBSETS:
        raise ValueError(f"unknown subset {subset!r}; allowed: {SUBSETS}")
    indices = range(start, n)
    if trajectory:
        architectures = trajectory_architectures(trajectory)
        if n > len(architectures):
            raise ValueError(f"{trajectory} holds {len(architectures)} architectures after its initial population; "
                             f"asked {n}")
        source = Path(trajectory).parent.name
        search_space = get_space(space)
        if hasattr(search_space, "degenerate_rows"):  # CitySeg's head depth 0: scored at the nadir, never measured
            genes = np.stack([search_space.from_string(architectures[i]) for i in indices])
            indices = [i for i, bad in zip(indices, search_space.degenerate_rows(genes)) if not bad]
    elif source not in SOURCES or (source not in ("random", "mutation-pair")
                                   and source not in getattr(get_space(space), "poor_regions", ())):
        allowed = ("random", *getattr(get_space(space), "poor_regions", ()), "mutation-pair")
        raise ValueError(f"unknown source {source!r} for {space}; allowed: {allowed} or --trajectory FILE")
    return [Job(space, source, subset, i, s, trajectory) for i in indices for s in range(seeds)]


def read_records(path: Path) -> list[dict]:
    """All complete records of a collection file (a trailing partial line is ignored)."""
    return snapshot(path)[0]


def _complete_tail(data: bytes) -> bool:
    """Whether the bytes after the last newline are one complete JSON record (written without its newline)."""
    tail = data[data.rfind(b"\n") + 1 :]
    try:
        return bool(tail.strip()) and isinstance(json.loads(tail), dict)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def snapshot(path: Path) -> tuple[list[dict], str, int]:
    """(records, sha256, lines) of the complete records of a collection file, read once: the digest describes
    exactly the records returned, even while a collector appends. A last record that lacks only its newline is
    complete; a partial last line is left out with a warning."""
    if not path.exists():
        return [], hashlib.sha256(b"").hexdigest(), 0
    data = path.read_bytes()
    if _complete_tail(data):
        data += b"\n"
    elif data and not data.endswith(b"\n"):
        partial = len(data) - data.rfind(b"\n") - 1
        warnings.warn(f"{path}: a partial last line ({partial} bytes) is not read; the collector removes it when it "
                      "next starts", stacklevel=2)
    data = data[: data.rfind(b"\n") + 1]
    records = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: corrupted record ({error.msg})") from None
    return records, hashlib.sha256(data).hexdigest(), len(records)


def repair_tail(path: Path) -> int:
    """Truncate a trailing partial line, or end a complete last record with its missing newline; return the number
    of bytes removed."""
    if not path.exists():
        return 0
    with open(path, "rb+") as handle:
        data = handle.read()
        keep = data.rfind(b"\n") + 1
        if _complete_tail(data):
            handle.write(b"\n")
            keep = len(data)
        elif keep < len(data):
            handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
        return len(data) - keep


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock shared by every collector of ``path`` (``<path>.lock``; released if the holder dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


#: how long a claim holds at most: a collector that died on another machine (whose processes cannot be checked
#: from here) blocks its job no longer than this
CLAIM_LEASE_SECONDS = 12 * 3600


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where that cannot be read: with
    the pid it names one process, so a claim is never held by an unrelated process that reuses a dead one's pid."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(entry: dict) -> bool:
    """Whether the collector of a claim still runs: on this machine, a live process with the claim's pid and start
    time; on another, within the lease."""
    if time.time() - float(entry.get("claimed_at", time.time())) > CLAIM_LEASE_SECONDS:
        return False
    if entry["host"] != socket.gethostname():
        return True  # another machine's collector on a shared file system: trust its claim for the lease
    pid = int(entry["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = entry.get("started")
    return started is None or started == _process_start(pid)


def claim(path: Path, job_key: str, done: set[str]) -> bool:
    """Under the lock: claim ``job_key`` for this process unless it is done or claimed by a live collector. Lines of
    the claims file that are not claims (cut short by a crash, edited) claim nothing."""
    claims_path = path.with_name(path.name + ".claims")
    if job_key in done:
        return False
    if claims_path.exists():
        for line in claims_path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                if not isinstance(entry, dict) or entry.get("job") != job_key or entry.get("pid") == os.getpid():
                    continue
                if _alive(entry):
                    return False
            except (ValueError, TypeError, KeyError):
                continue
    entry = {"job": job_key, "host": socket.gethostname(), "pid": os.getpid(), "started": _process_start(os.getpid()),
             "claimed_at": time.time()}
    with open(claims_path, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    return True


def done_jobs(path: Path, protocol: str) -> set[str]:
    """The job keys of ``protocol`` that ``path`` already holds (call :func:`repair_tail` first)."""
    return {r["job"] for r in read_records(path) if r.get("protocol") == protocol}


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


def _init_worker(threads: int = 1) -> None:
    import torch

    torch.set_num_threads(threads)  # one-thread workers, one per core: measured faster than threads in one process


def run_job(protocol_name: str, job: Job, device: str = "cpu") -> dict:
    """Measure one job (train it on ``device``; for CitySeg: score it with the supernet's weights on the CPU) and
    return its complete record. Runs in a worker process."""
    from nas_envs.groundtruth.protocols import PROTOCOLS
    from nas_envs.groundtruth.train import environment_description

    protocol = PROTOCOLS[protocol_name]
    space = get_space(job.space)
    genes = job_architecture(space, job)
    measured = load(family(protocol.space).measure)(protocol, genes.tolist(), job.seed, device=device)
    return {
        "job": job.key,
        "space": job.space,
        "protocol": protocol_name,
        "arch": space.to_string(genes),
        "genes": genes.tolist(),
        "source": job.source,
        "subset": job.subset,
        "index": job.index,
        "replicate": job.replicate,
        "seed": job.seed,
        **measured,
        "environment": environment_description(device),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _run_local(protocol_name: str, jobs: Iterable[Job], workers: int, device: str, threads: int = 1
               ) -> Iterator[dict]:
    """Yield records as trainings finish, keeping at most ``workers`` in flight (on a GPU: ``workers`` processes
    share it, because one small network's training is bound by kernel launches, not by the GPU)."""
    pending = iter(jobs)
    with worker_pool(workers, initializer=partial(_init_worker, threads)) as pool:
        in_flight: set[Future] = set()
        for job in pending:
            in_flight.add(pool.submit(run_job, protocol_name, job, device))
            if len(in_flight) >= workers:
                break
        while in_flight:
            done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
                next_job = next(pending, None)
                if next_job is not None:
                    in_flight.add(pool.submit(run_job, protocol_name, next_job, device))


def _run_ray(protocol_name: str, jobs: Iterable[Job], workers: int, device: str, threads: int = 1
             ) -> Iterator[dict]:
    """The same training function as Ray tasks, one CPU each (one thread: ``threads`` is for local workers)."""
    from nas_envs.parallel import ray_imap_unordered

    return ray_imap_unordered(_ray_job, [(protocol_name, job, device) for job in jobs], workers)


def _ray_job(protocol_name: str, job: Job, device: str) -> dict:
    _init_worker()
    return run_job(protocol_name, job, device)


def collect(
    path: Path, protocol_name: str, jobs: Iterable[Job], workers: int = 1, backend: str = "local",
    device: str = "cpu", threads: int = 1,
) -> int:
    """Run the jobs not yet in ``path`` on ``device``, ``workers`` at a time with ``threads`` torch threads each;
    append each record as it finishes. Returns the number appended.

    Several collectors may share ``path`` (overlapping ranges, one per core): a job is checked against the file
    again when it starts, and its record again before it is written, so a job another collector has finished
    meanwhile is neither trained nor written twice."""
    from nas_envs.groundtruth.protocols import PROTOCOLS

    if not family(PROTOCOLS[protocol_name].space).measures_on_gpu and device != "cpu":
        raise ValueError(f"{PROTOCOLS[protocol_name].space} measurements run on the CPU only (CitySeg scorings); got "
                         f"device={device!r}")
    with locked(path):
        repaired = repair_tail(path)
    if repaired:
        logger.warning("collect: removed a partial last line (%d bytes) from %s", repaired, path)
    done = done_jobs(path, protocol_name)
    todo = [job for job in jobs if not job.done_in(done)]
    logger.info("collect: %d done in %s, %d to run with %d %s worker(s)", len(done), path, len(todo), workers, backend)
    if not todo:
        return 0

    def still_to_run() -> Iterator[Job]:
        for job in todo:
            with locked(path):
                done_now = done_jobs(path, protocol_name)
                mine = not job.done_in(done_now) and claim(path, job.key, done_now)
            if mine:
                yield job

    runner = {"local": _run_local, "ray": _run_ray}[backend]
    writer = AppendOnlyWriter(path)
    count = 0
    started = time.time()
    try:
        for record in runner(protocol_name, still_to_run(), workers, device, threads):
            with locked(path):
                if record["job"] in done_jobs(path, protocol_name):
                    logger.warning("collect: %s was written meanwhile by another collector; dropped", record["job"])
                    continue
                writer.append(record)
            count += 1
            elapsed = time.time() - started
            score = record["val_accuracy"] if "val_accuracy" in record else record["val_miou"]  # CitySeg: mIoU
            seconds = record["train_seconds"] if "train_seconds" in record else record["eval_seconds"]
            logger.info("collect: [%d/%d] %s val=%.4f took=%.0fs elapsed=%.0fs", count, len(todo), record["job"],
                        score, seconds, elapsed)
    finally:
        writer.close()
    return count


def merge(source: Path, destination: Callable[[str], Path]) -> dict[str, int]:
    """Append the records of ``source`` (a collection file made elsewhere) to ``destination(protocol)``, one
    checked record per line through the same append-only writer, skipping jobs the destination already holds.
    Returns the number appended per protocol."""
    records = read_records(source)
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
