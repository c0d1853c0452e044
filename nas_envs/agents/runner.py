"""Run an agent for N seeds on a simulated budget and write one JSON-lines trajectory per seed.

Layout: ``OUT/<agent>/seed_<k>.jsonl`` (one row per evaluated architecture, see
:class:`nas_envs.agents.trajectory.TrajectoryRecorder`) and ``OUT/<agent>/run.json`` (the settings). Seeds fan out over
local processes, or over Ray tasks for users with a cluster.
"""

from __future__ import annotations

import json
import re
import sys
import time
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

import nas_envs  # noqa: F401 - registers the environment ids
from nas_envs.agents.trajectory import Evaluator, SearchBudgetSpent, TrajectoryRecorder
from nas_envs.extras import available, require
from nas_envs.parallel import ray_imap_unordered, worker_pool

AGENT_NAMES = ("rs", "re", "ls", "de", "bananas", "tpe", "reinforce", "ppo")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Simulated seconds from '86400', '1440m', '24h' or '1d'."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smhd]?)\s*", str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"budget must be a positive duration such as 3600, 90m, 24h or 2d; got {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


@dataclass(frozen=True)
class RunSettings:
    env_id: str
    agent: str
    budget_seconds: float
    max_evaluations: int | None = None
    noise: bool = True
    agent_kwargs: dict = field(default_factory=dict)
    env_kwargs: dict = field(default_factory=dict)  # e.g. {"surrogate": "gin"}


#: the optional module each agent needs, and the extra that installs it
AGENT_NEEDS = {"reinforce": ("torch", "rl"), "ppo": ("sb3_contrib", "rl"), "tpe": ("optuna", "tpe"),
               "bananas": ("xgboost", "xgboost")}


def make_agent(name: str, **kwargs):
    if name in AGENT_NEEDS:
        require(*AGENT_NEEDS[name], f"the {name} agent")
    if name == "reinforce":
        from nas_envs.agents.reinforce import Reinforce

        return Reinforce(**kwargs)
    if name == "ppo":
        from nas_envs.agents.ppo import MaskablePPOAgent

        return MaskablePPOAgent(**kwargs)
    from nas_envs.agents.blackbox import AGENTS

    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; allowed: {AGENT_NAMES}")
    return AGENTS[name](**kwargs)


def run_seed(settings: RunSettings, seed: int) -> list[dict]:
    """One search with one seed; returns the trajectory rows."""
    if available("torch"):  # small networks: one thread is faster than a pool that waits on the other cores
        import torch

        torch.set_num_threads(1)
    agent = make_agent(settings.agent, **settings.agent_kwargs)
    env = TrajectoryRecorder(gym.make(settings.env_id, budget_seconds=settings.budget_seconds, noise=settings.noise,
                                      **settings.env_kwargs))
    try:
        if getattr(agent, "needs_env", False):  # RL agents that drive the environment themselves
            agent.run_env(env, seed, max_evaluations=settings.max_evaluations)
        else:
            evaluator = Evaluator(env, seed=seed, max_evaluations=settings.max_evaluations)
            agent.run(evaluator, env.unwrapped.space, np.random.default_rng(seed))
    except SearchBudgetSpent:
        pass
    finally:
        env.close()
    return env.rows


def write_trajectory(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    tmp.replace(path)  # a killed run leaves no half-written trajectory


def _seed_task(settings: RunSettings, seed: int, out: Path) -> tuple[int, int, float]:
    started = time.perf_counter()
    rows = run_seed(settings, seed)
    write_trajectory(out / settings.agent / f"seed_{seed}.jsonl", rows)
    return seed, len(rows), time.perf_counter() - started


def run(
    settings: RunSettings, seeds: list[int], out: Path, workers: int = 1, backend: str = "local", log=sys.stderr
) -> Path:
    """Run every seed and write the trajectories under ``out/<agent>/``; returns that folder."""
    folder = out / settings.agent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({**asdict(settings), "seeds": seeds}, indent=2) + "\n")
    done = 0

    def report(seed: int, count: int, seconds: float) -> None:
        nonlocal done
        done += 1
        bar = "#" * (20 * done // len(seeds))
        print(f"[{bar:<20}] {done}/{len(seeds)} {settings.agent} seed {seed}: {count} evaluations, "
              f"{seconds:.1f} s wall-clock", file=log, flush=True)

    if backend == "ray":
        for result in ray_imap_unordered(_seed_task, [(settings, seed, out) for seed in seeds], workers):
            report(*result)
    elif workers <= 1:
        for seed in seeds:
            report(*_seed_task(settings, seed, out))
    else:
        with worker_pool(workers) as pool:
            futures = [pool.submit(_seed_task, settings, seed, out) for seed in seeds]
            for future in as_completed(futures):
                report(*future.result())
    return folder


def load_runs(folder: Path) -> dict[str, list[list[dict]]]:
    """Trajectories below ``folder``: agent name -> one row list per seed."""
    runs: dict[str, list[list[dict]]] = {}
    for path in sorted(Path(folder).glob("*/seed_*.jsonl")):
        with open(path) as handle:
            runs.setdefault(path.parent.name, []).append([json.loads(line) for line in handle])
    if not runs:
        raise FileNotFoundError(f"no trajectories (<agent>/seed_<k>.jsonl) found below {folder}")
    return runs
