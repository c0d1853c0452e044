"""Collection jobs: what to train, named so that a job means the same training in every process and on every run.

A *job* is (source, subset, index, seed): the architecture is a pure function of (space, source, subset, index),
drawn from a random stream of its own per (source, subset), so that adding jobs to one stream never changes
another's architectures.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from nas_envs.files import read_json_lines
from nas_envs.spaces import get_space
from nas_envs.spaces.base import SearchSpace

# Where architectures come from: uniformly random, the spaces' poor regions, "mutation-pair" (architecture 2k random,
# 2k + 1 the same one edit away: landscape roughness); plus optimiser trajectories, named after their agent.
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


def trajectory_architectures(path: str, skip: int = 100) -> list[str]:
    """Distinct architectures of a committed file, in its order. An optimiser's trajectory: those it evaluated
    after its first ``skip`` evaluations (regularized evolution's random initial population). A list of final
    incumbents written by ``nas-envs incumbents`` or a search round's list (rows that name the ``agent`` whose
    search visited them): all."""
    return list(_trajectory_rows(path, skip))


def trajectory_sources(path: str) -> list[str]:
    """The source of each of :func:`trajectory_architectures`: the row's own ``source`` (a search round's list
    names each row's agent), else the name of the file's folder (the agent of a trajectory, ``incumbents``...)."""
    return [row.get("source") or Path(path).parent.name for row in _trajectory_rows(path).values()]


def trajectory_kinds(path: str) -> list[str]:
    """The ``kind`` of each of :func:`trajectory_architectures` a search round's list names (``final``, ``top``,
    ``rest``), "" where a row names none."""
    return [row.get("kind", "") for row in _trajectory_rows(path).values()]


def architecture_row_problem(row: dict) -> str | None:
    """What makes a row of a trajectory or list no row of one (None for a good one)."""
    if not isinstance(row.get("architecture"), str):
        return "no 'architecture' string"
    if not isinstance(row.get("source", ""), str):
        return "a 'source' that is not a string"
    if not isinstance(row.get("kind", ""), str):
        return "a 'kind' that is not a string"
    return None


def read_architecture_rows(path: str | Path) -> list[dict]:
    """The rows of a trajectory, list of incumbents or search round's list, each with its ``architecture``; anything
    else is refused as ``FILE:LINE: what is wrong``."""
    return read_json_lines(Path(path), architecture_row_problem)


@lru_cache(maxsize=8)
def _trajectory_rows(path: str, skip: int = 100) -> dict[str, dict]:
    """architecture -> its first row, for the rows that count (see :func:`trajectory_architectures`), in the file's
    order."""
    seen: dict[str, dict] = {}
    for number, row in enumerate(read_architecture_rows(path)):
        if "agent" in row or number >= skip:
            seen.setdefault(row["architecture"], row)
    return seen


def plan(space: str, source: str, subset: str, n: int, seeds: int, start: int = 0, trajectory: str = "") -> list[Job]:
    """Jobs for architectures ``start .. n-1`` of a stream, ``seeds`` seeds each (seeds adjacent in order).

    With ``trajectory`` (a committed trajectory or list), the stream is that file's architectures and the source
    is the agent that produced each (:func:`trajectory_sources`).
    """
    if subset not in SUBSETS:
        raise ValueError(f"unknown subset {subset!r}; allowed: {SUBSETS}")
    indices = range(start, n)
    if trajectory:
        architectures = trajectory_architectures(trajectory)
        if n > len(architectures):
            raise ValueError(f"{trajectory} holds {len(architectures)} architectures after its initial population; "
                             f"asked {n}")
        search_space = get_space(space)
        if hasattr(search_space, "degenerate_rows"):  # CitySeg's head depth 0: scored at the nadir, never measured
            genes = np.stack([search_space.from_string(architectures[i]) for i in indices])
            indices = [i for i, bad in zip(indices, search_space.degenerate_rows(genes)) if not bad]
        sources = trajectory_sources(trajectory)
        return [Job(space, sources[i], subset, i, s, trajectory) for i in indices for s in range(seeds)]
    elif source not in SOURCES or (source not in ("random", "mutation-pair")
                                   and source not in getattr(get_space(space), "poor_regions", ())):
        allowed = ("random", *getattr(get_space(space), "poor_regions", ()), "mutation-pair")
        raise ValueError(f"unknown source {source!r} for {space}; allowed: {allowed} or --trajectory FILE")
    return [Job(space, source, subset, i, s, trajectory) for i in indices for s in range(seeds)]
