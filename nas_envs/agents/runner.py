"""Run an agent for N seeds on a simulated budget and write one JSON-lines trajectory per seed.

Layout: ``OUT/<agent>/seed_<k>.jsonl`` (one row per evaluated architecture, see
:class:`nas_envs.agents.trajectory.TrajectoryRecorder`) and ``OUT/<agent>/run.json`` (the settings). Seeds fan out over
local processes, or over Ray tasks for users with a cluster.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import gymnasium as gym
import numpy as np
from tqdm.auto import tqdm

import nas_envs  # noqa: F401 - registers the environment ids
from nas_envs.agents.trajectory import Evaluator, SearchBudgetSpent, TrajectoryRecorder
from nas_envs.catalogue import ENV_BUNDLES, release_of
from nas_envs.extras import require
from nas_envs.files import write_atomically
from nas_envs.parallel import ray_imap_unordered, worker_pool
from nas_envs.progress import disabled as progress_disabled
from nas_envs.spaces import get_space
from nas_envs.spaces.base import SearchSpace

AGENT_NAMES = ("rs", "re", "ls", "de", "bananas", "tpe", "reinforce", "ppo")  # they run on every environment
MULTI_FIDELITY_AGENT_NAMES = ("sh", "hyperband")  # they need a multi-fidelity environment
logger = logging.getLogger(__name__)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Simulated seconds from a duration with its unit: '3600s', '90m', '24h' or '2d' (a bare number is refused:
    '24' could mean hours as easily as seconds)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smhd])\s*", str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"budget must be a positive duration with its unit, such as 3600s, 90m, 24h or 2d; got "
                         f"{text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass(frozen=True)
class RunSettings:
    env_id: str
    agent: str
    budget_seconds: float
    max_evaluations: int | None = None
    noise: bool = True
    agent_kwargs: dict = field(default_factory=dict)
    env_kwargs: dict = field(default_factory=dict)  # e.g. {"surrogate": "gin"}

    def identity(self) -> dict:
        """What makes runs comparable: everything but the seed, with the defaults the environment fills in (its
        pinned bundle, the default surrogate) written out, so that equal runs have equal identities."""
        env_kwargs = dict(self.env_kwargs)
        env_kwargs.setdefault("bundle", ENV_BUNDLES.get(self.env_id))
        surrogate = release_of(self.env_id)[0].default_surrogate if self.env_id in ENV_BUNDLES else None
        if surrogate is not None:
            env_kwargs.setdefault("surrogate", surrogate)
        return {"env_id": self.env_id, "agent": self.agent, "budget_seconds": float(self.budget_seconds),
                "max_evaluations": self.max_evaluations, "noise": self.noise,
                "agent_kwargs": dict(sorted(self.agent_kwargs.items())), "env_kwargs": dict(sorted(env_kwargs.items()))}

    @classmethod
    def from_record(cls, record: dict) -> "RunSettings":
        """The settings a ``run.json`` holds (its ``seeds`` and ``identity`` entries aside)."""
        names = ("env_id", "agent", "budget_seconds", "max_evaluations", "noise", "agent_kwargs", "env_kwargs")
        return cls(**{name: record[name] for name in names if name in record})


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
    from nas_envs.agents.hyperband import MULTI_FIDELITY_AGENTS

    agents = {**AGENTS, **MULTI_FIDELITY_AGENTS}
    if name not in agents:
        raise ValueError(f"unknown agent {name!r}; allowed: {AGENT_NAMES + MULTI_FIDELITY_AGENT_NAMES}")
    return agents[name](**kwargs)


def multi_fidelity(env_id: str) -> bool:
    """Whether a registered id's environment trains architectures epoch by epoch."""
    return bool(getattr(gym.envs.registration.load_env_creator(gym.spec(env_id).entry_point), "multi_fidelity", False))


def agent_env_kwargs(agent: object, env_id: str) -> dict:
    """The environment options an RL agent learns best with (its ``env_kwargs``), where the environment has them:
    the trajectory records the benchmark's score whatever the reward the agent learns from."""
    entry = gym.envs.registration.load_env_creator(gym.spec(env_id).entry_point)
    wanted = getattr(agent, "env_kwargs", {})
    return {key: value for key, value in wanted.items() if value in getattr(entry, f"{key}_modes", ())}


def run_seed(settings: RunSettings, seed: int) -> list[dict]:
    """One search with one seed; returns the trajectory rows."""
    agent = make_agent(settings.agent, **settings.agent_kwargs)
    env = TrajectoryRecorder(gym.make(settings.env_id, budget_seconds=settings.budget_seconds, noise=settings.noise,
                                      **agent_env_kwargs(agent, settings.env_id), **settings.env_kwargs))
    try:
        play(agent, env, seed, settings.max_evaluations)
    finally:
        env.close()
    return env.rows


def play(agent: object, env: TrajectoryRecorder, seed: int, max_evaluations: int | None = None) -> None:
    """Let ``agent`` search on ``env`` (seeded with ``seed``) until its budget or ``max_evaluations`` is spent."""
    try:
        if getattr(agent, "needs_env", False):  # RL agents that drive the environment themselves
            agent.run_env(env, seed, max_evaluations=max_evaluations)
        else:
            evaluator = Evaluator(env, seed=seed, max_evaluations=max_evaluations)
            agent.run(evaluator, env.unwrapped.space, np.random.default_rng(seed))
    except SearchBudgetSpent:
        pass


def write_trajectory(path: Path, rows: list[dict]) -> None:
    """One seed's rows as JSON lines; a killed run leaves no half-written trajectory."""
    write_atomically(path, "".join(json.dumps(row) + "\n" for row in rows))


def settings_digest(identity: dict) -> str:
    """A short digest of a run's identity, stored in every trajectory row: a seed file copied in from a run of
    other settings is recognised as such by every reader."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


class NothingEvaluatedError(ValueError):
    """A run's budget ended before its agent completed one evaluation."""


def first_evaluation_seconds(settings: RunSettings, seed: int) -> float:
    """Simulated seconds until the agent's first completed evaluation with this seed (budget permitting)."""
    unbounded = RunSettings(**{**asdict(settings), "budget_seconds": 10 * 365 * 86400.0, "max_evaluations": 1})
    return float(run_seed(unbounded, seed)[0]["sim_time"])


def _seed_task(settings: RunSettings, seed: int, out: Path) -> tuple[str, int, int, float]:
    started = time.perf_counter()
    digest = settings_digest(settings.identity())
    rows = [{**row, "run": digest} for row in run_seed(settings, seed)]
    if not rows:
        needed = first_evaluation_seconds(settings, seed)
        raise NothingEvaluatedError(
            f"{settings.env_id}, agent {settings.agent}, seed {seed}: nothing was evaluated within the budget of "
            f"{settings.budget_seconds:g} simulated seconds; its first evaluation completes after {needed:.0f} s"
            + (" (it first trains many architectures for a few epochs)"
               if settings.agent in MULTI_FIDELITY_AGENT_NAMES else "")
            + f": give a budget of at least {math.ceil(needed / 60)}m")
    write_trajectory(out / settings.agent / f"seed_{seed}.jsonl", rows)
    return f"{settings.env_id} {settings.agent}", seed, len(rows), time.perf_counter() - started


class SettingsMismatchError(ValueError):
    """A run folder holds runs of other settings than those asked for."""


def run(settings: RunSettings, seeds: list[int], out: Path, workers: int = 1, backend: str = "local") -> Path:
    """Run every seed not yet in ``out/<agent>/`` and write its trajectory there; returns that folder.

    A folder holds runs of one setting: ``run`` refuses a folder whose ``run.json`` names other settings, and
    skips seeds whose trajectory is already there, so a rerun never mixes settings or duplicates a seed.
    """
    todo = prepare_folder(settings, seeds, out)
    run_tasks([(settings, seed, out) for seed in todo], workers, backend, f"{settings.agent} seeds")
    return out / settings.agent


def run_grid(envs: list[str], agents: list[str], seeds: list[int], out: Path, budget_seconds: float,
             workers: int = 1, backend: str = "local", **settings: object) -> list[Path]:
    """Every (environment, agent, seed) of a grid as one task with one output file,
    ``out/<env id>/<agent>/seed_<k>.jsonl`` (the layout of :func:`run` under ``out/<env id>/``), all fanned out
    at once: each task is deterministic, so a cluster and a laptop write the same files. ``settings``: the other
    fields of :class:`RunSettings`, the same for every cell. Returns the folders, one per (environment, agent)."""
    cells = [RunSettings(env_id=env_id, agent=agent, budget_seconds=budget_seconds, **settings)
             for env_id in envs for agent in agents]
    tasks = [(cell, seed, out / cell.env_id) for cell in cells
             for seed in prepare_folder(cell, seeds, out / cell.env_id)]
    run_tasks(tasks, workers, backend, "grid runs")
    return [out / cell.env_id / cell.agent for cell in cells]


def prepare_folder(settings: RunSettings, seeds: list[int], out: Path) -> list[int]:
    """Check ``out/<agent>/`` holds no runs of other settings, record the settings and seeds there, and return the
    seeds whose trajectory is not there yet (an empty or damaged one is run again and replaced)."""
    folder = out / settings.agent
    record_path = folder / "run.json"
    previous: list[int] = []
    if record_path.exists():
        record, held = read_run_record(record_path)
        if held != settings.identity():
            differ = "; ".join(f"{key}: {held.get(key)!r} there, {value!r} asked"
                               for key, value in settings.identity().items() if held.get(key) != value)
            raise SettingsMismatchError(f"{folder} holds runs of other settings ({differ}); write these runs to "
                                        "another --out folder")
        previous = record.get("seeds", [])
    existing = set(read_seed_files(folder, settings.identity()))
    todo = [seed for seed in seeds if seed not in existing]
    if len(todo) < len(seeds):
        skipped = sorted(set(seeds) - set(todo))
        logger.warning("%s: seeds %s are already there (same settings): skipped", folder, skipped)
    folder.mkdir(parents=True, exist_ok=True)
    record = {**asdict(settings), "identity": settings.identity(), "seeds": sorted(set(previous) | set(seeds))}
    write_atomically(record_path, json.dumps(record, indent=2) + "\n")
    return todo


def run_tasks(tasks: list[tuple[RunSettings, int, Path]], workers: int, backend: str, description: str) -> None:
    """Run ``(settings, seed, out)`` tasks in this process, local worker processes or Ray tasks."""
    if not tasks:
        return
    progress = tqdm(total=len(tasks), desc=description, unit="run", disable=progress_disabled())

    def report(name: str, seed: int, count: int, seconds: float) -> None:
        progress.update()
        progress.set_postfix_str(f"{name} seed {seed}: {count} evaluations, {seconds:.1f} s", refresh=True)

    if backend == "ray":
        for result in ray_imap_unordered(_seed_task, tasks, workers):
            report(*result)
    elif workers <= 1:
        for task in tasks:
            report(*_seed_task(*task))
    else:
        with worker_pool(workers) as pool:
            for future in as_completed([pool.submit(_seed_task, *task) for task in tasks]):
                report(*future.result())
    progress.close()


@dataclass
class RunGroup:
    """Runs of one setting: their identity, a label, and one trajectory per seed (each seed once)."""

    identity: dict
    label: str = ""
    seeds: dict[int, list[dict]] = field(default_factory=dict)

    @property
    def trajectories(self) -> list[list[dict]]:
        return [self.seeds[seed] for seed in sorted(self.seeds)]


def load_run_groups(folders: list[Path]) -> list[RunGroup]:
    """The runs below ``folders`` (``<agent>/run.json`` and ``<agent>/seed_<k>.jsonl``), grouped by settings.

    A (settings, seed) found twice (the same folder given twice, or a copy) counts once, with a warning; a seed file
    that cannot count as a finished run of its folder's settings is left out with a warning that names it (see
    :func:`read_trajectory`); a ``run.json`` that is not a run record is refused, naming it. Labels name the agent
    and, where groups of one agent differ, what differs (``rs (surrogate=xgb+gin)``).
    """
    groups: dict[str, RunGroup] = {}
    searched = []
    for folder in folders:
        folder = Path(folder)
        records = sorted(folder.glob("*/run.json")) or sorted(folder.glob("run.json"))
        searched.append(str(folder))
        for record_path in records:
            _, identity = read_run_record(record_path)
            group = groups.setdefault(json.dumps(identity, sort_keys=True), RunGroup(identity))
            for seed, rows in read_seed_files(record_path.parent, identity).items():
                if seed in group.seeds:
                    logger.warning("%s: seed %d of these settings was already read elsewhere; counted once",
                                   record_path.parent / f"seed_{seed}.jsonl", seed)
                    continue
                group.seeds[seed] = rows
    found = [g for g in groups.values() if g.seeds]
    if not found:
        raise FileNotFoundError(f"no runs found in {', '.join(searched)}: looked for <agent>/run.json with "
                                "<agent>/seed_<k>.jsonl beside it, as 'nas-envs run' writes them")
    return label_groups(found)


def read_run_record(path: Path) -> tuple[dict, dict]:
    """``(record, identity)`` of a ``run.json``; a file that is not a run record is refused, naming it."""
    try:
        record = json.loads(path.read_text())
        identity = RunSettings.from_record(record).identity()
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"{path} is not a run record written by 'nas-envs run' ({type(error).__name__}: "
                         f"{str(error)[:80]}); remove it or the folder") from None
    return record, identity


SEED_FILE = re.compile(r"seed_(\d+)\.jsonl")


def read_seed_files(folder: Path, identity: dict) -> dict[int, list[dict]]:
    """seed -> rows of the trajectories in ``folder`` that count as finished runs of ``identity``. Files named
    otherwise (``seed_0 (copy).jsonl``) and trajectories that :func:`read_trajectory` rejects are left out, each
    with a warning."""
    seeds = {}
    for path in sorted(folder.glob("seed_*.jsonl")):
        match = SEED_FILE.fullmatch(path.name)
        if match is None:
            logger.warning("%s: not a seed file of 'nas-envs run' (seed_<k>.jsonl); ignored", path)
            continue
        rows = read_trajectory(path, identity)
        if rows is not None:
            seeds[int(match.group(1))] = rows
    return seeds


@lru_cache(maxsize=32)
def _space_of(env_id: str) -> SearchSpace:
    """The search space of a registered id, from the catalogue (no environment is built)."""
    return get_space(release_of(env_id)[0].name)


def read_trajectory(path: Path, identity: dict) -> list[dict] | None:
    """The rows of one seed's trajectory, or ``None`` with a warning naming the file (and line) when it cannot
    count as a finished run of ``identity``: empty, not JSON lines, a row without a finite ``sim_time`` or an
    ``architecture``, clocks that run backwards, rows of another run's settings (their ``run`` digest), or, in files
    written before rows carried that digest, architectures of another environment's space."""
    def reject(why: str) -> None:
        logger.warning("%s: %s; this seed is not counted ('nas-envs run' runs it again)", path, why)

    rows = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            return reject(f"line {number} is not JSON (a truncated or edited file)")
        sim_time = row.get("sim_time") if isinstance(row, dict) else None
        if not isinstance(sim_time, (int, float)) or isinstance(sim_time, bool) or not np.isfinite(sim_time) \
                or not isinstance(row.get("architecture"), str):
            return reject(f"line {number} has no finite sim_time or no architecture")
        if rows and sim_time < rows[-1]["sim_time"]:
            return reject(f"line {number}: the simulated clock runs backwards")
        rows.append(row)
    if not rows:
        return reject("the file is empty")
    digests = {row.get("run") for row in rows}
    if digests - {None, settings_digest(identity)}:
        return reject("its rows come from a run of other settings than the folder's run.json")
    if None in digests:  # written before rows named their run: at least the space must be the environment's
        try:
            _space_of(identity["env_id"]).from_string(rows[0]["architecture"])
        except ValueError as error:
            return reject(f"its architectures are not of {identity['env_id']} ({str(error)[:60]})")
    return rows


def label_groups(groups: list[RunGroup]) -> list[RunGroup]:
    """Label each group by its agent and, where groups of one agent among ``groups`` differ, by what differs;
    returns them sorted by label."""
    for group in groups:
        same_agent = [g.identity for g in groups if g.identity["agent"] == group.identity["agent"]]
        group.label = group.identity["agent"] + _difference(group.identity, same_agent)
    return sorted(groups, key=lambda g: g.label)


def _flat(identity: dict) -> dict:
    """An identity with its environment and agent options lifted to the top level."""
    top = {k: v for k, v in identity.items() if k not in ("env_kwargs", "agent_kwargs")}
    return {**top, **identity["env_kwargs"], **identity["agent_kwargs"]}


def _difference(identity: dict, others: list[dict]) -> str:
    """`` (key=value, ...)`` for the settings in which ``identity`` differs from some of ``others``."""
    flats = [_flat(other) for other in others]
    differing = [f"{key}={value}" for key, value in _flat(identity).items()
                 if len({json.dumps(flat.get(key), sort_keys=True) for flat in flats}) > 1]
    return f" ({', '.join(differing)})" if differing else ""


def load_runs(folder: Path) -> dict[str, list[list[dict]]]:
    """Trajectories below ``folder``, label -> one row list per seed (see :func:`load_run_groups`)."""
    return {group.label: group.trajectories for group in load_run_groups([Path(folder)])}
