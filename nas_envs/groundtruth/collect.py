"""Resumable, crash-safe collection of real trainings into an append-only collection file.

The parent process is the only writer (:mod:`nas_envs.groundtruth.records`). On start it repairs the file's tail and
skips every job (:mod:`nas_envs.groundtruth.jobs`) already in the file, so ``kill -9`` at any moment loses at most
the trainings in flight and never duplicates one. Several collectors may share one file: each claims a job
(:mod:`nas_envs.groundtruth.claims`) before it trains it, and appends a record only if the job is not in the file
yet.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from nas_envs.catalogue import family, resolve
from nas_envs.groundtruth.claims import claim
from nas_envs.groundtruth.jobs import Job, job_architecture
from nas_envs.groundtruth.records import AppendOnlyWriter, done_jobs, locked, repair_tail
from nas_envs.parallel import worker_pool
from nas_envs.spaces import get_space

logger = logging.getLogger(__name__)


def _init_worker(threads: int = 1) -> None:
    import torch

    torch.set_num_threads(threads)  # one-thread workers, one per core: measured faster than threads in one process


def run_job(protocol_name: str, job: Job, device: str = "cpu", reserve: bool = True) -> dict:
    """Measure one job (train it on ``device``; for CitySeg: score it with the supernet's weights on the CPU) and
    return its complete record. Runs in a worker process. ``reserve=False`` skips the reserve reading after a
    training (DARTS: about an eighth of its CPU time); the training and every other field are the same."""
    from dataclasses import replace

    from nas_envs.groundtruth.protocols import PROTOCOLS
    from nas_envs.groundtruth.train import environment_description

    protocol = PROTOCOLS[protocol_name] if reserve else replace(PROTOCOLS[protocol_name], n_reserve=0)
    space = get_space(job.space)
    genes = job_architecture(space, job)
    measured = resolve(family(protocol.space).measure)(protocol, genes.tolist(), job.seed, device=device)
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


def _run_local(protocol_name: str, jobs: Iterable[Job], workers: int, device: str, threads: int = 1,
               reserve: bool = True) -> Iterator[dict]:
    """Yield records as trainings finish, keeping at most ``workers`` in flight (on a GPU: ``workers`` processes
    share it, because one small network's training is bound by kernel launches, not by the GPU)."""
    pending = iter(jobs)
    with worker_pool(workers, initializer=partial(_init_worker, threads)) as pool:
        in_flight: dict[Future, Job] = {}
        for job in pending:
            in_flight[pool.submit(run_job, protocol_name, job, device, reserve)] = job
            if len(in_flight) >= workers:
                break
        while in_flight:
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                job = in_flight.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool as error:  # a worker killed (out of memory, a signal): say which job
                    raise RuntimeError(f"the worker training {job.key} died ({error}); nothing of it was written, "
                                       "and a rerun trains it again") from error
                next_job = next(pending, None)
                if next_job is not None:
                    in_flight[pool.submit(run_job, protocol_name, next_job, device, reserve)] = next_job


def _run_ray(protocol_name: str, jobs: Iterable[Job], workers: int, device: str, threads: int = 1,
             reserve: bool = True) -> Iterator[dict]:
    """The same training function as Ray tasks, one CPU each (one thread: ``threads`` is for local workers)."""
    from nas_envs.parallel import ray_imap_unordered

    return ray_imap_unordered(_ray_job, [(protocol_name, job, device, reserve) for job in jobs], workers)


def _ray_job(protocol_name: str, job: Job, device: str, reserve: bool = True) -> dict:
    _init_worker()
    return run_job(protocol_name, job, device, reserve)


def collect(
    path: Path, protocol_name: str, jobs: Iterable[Job], workers: int = 1, backend: str = "local",
    device: str = "cpu", threads: int = 1, reserve: bool = True,
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
        for record in runner(protocol_name, still_to_run(), workers, device, threads, reserve):
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
