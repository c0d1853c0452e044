"""Offline-RL datasets of any environment id in Minari's format (``nas-envs dataset``; the ``minari`` extra).

An agent of ``nas-envs run`` searches on the environment while :class:`EpisodeRecorder` records every step: the
black-box agents (``rs`` draws architectures uniformly, ``re`` is regularized evolution, ...) play each architecture
they propose as an episode of actions, the RL agents (``ppo``, ``reinforce``) act as they learn. The environment
keeps its default reward (validation accuracy; CitySeg's hypervolume gained). On SurrNAS ids an episode's return
is an architecture's validation accuracy, what :mod:`nas_envs.scores` normalizes: the dataset carries the id's
reference values as ``ref_min_score`` and ``ref_max_score``, and ``minari.get_normalized_score(dataset, returns)``
gives normalized scores. On CitySeg ids an episode's return is the hypervolume one architecture adds to the search's
archive; the sum over the dataset is the search's hypervolume, which the id's reference values normalize only after
as many evaluations as they were measured with, so a CitySeg dataset carries none. The dataset stores
the environment's spec, so ``dataset.recover_environment()`` makes the same environment (``import nas_envs`` first:
it registers the ids). Infos are not stored (they hold strings); an action mask follows from the observation, and
the recovered environment's ``action_masks()`` gives it. Episodes are handed to Minari's
``create_dataset_from_buffers``, which needs no ``jax`` (its ``DataCollector`` does).

The same ``(env_id, agent, episodes, seed)`` gives the same episodes: the environment's noise and the agent draw from
``seed`` only.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np

import nas_envs
from nas_envs.agents.runner import AGENT_NAMES, make_agent, play
from nas_envs.agents.trajectory import TrajectoryRecorder
from nas_envs.catalogue import release_of
from nas_envs.extras import require
from nas_envs.scores import reference_scores

CODE = "https://pypi.org/project/nas-envs/"


class EpisodeRecorder(gym.Wrapper):
    """Keeps every finished episode (observations, actions, rewards, terminations, truncations) as a Minari
    ``EpisodeBuffer``; an episode still running is not kept."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.episodes: list[Any] = []
        self._steps: dict[str, list] | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        self._steps = {"seed": seed, "observations": [observation], "actions": [], "rewards": [],
                       "terminations": [], "truncations": []}
        return observation, info

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        steps = self._steps
        for name, value in (("observations", observation), ("actions", action), ("rewards", reward),
                            ("terminations", terminated), ("truncations", truncated)):
            steps[name].append(value)
        if terminated or truncated:
            self._keep(steps)
        return observation, reward, terminated, truncated, info

    def _keep(self, steps: dict[str, list]) -> None:
        from minari.data_collector.episode_buffer import EpisodeBuffer

        self.episodes.append(EpisodeBuffer(
            id=len(self.episodes), seed=steps["seed"], observations=np.stack(steps["observations"]),
            actions=np.asarray(steps["actions"], dtype=np.int64), rewards=[float(r) for r in steps["rewards"]],
            terminations=[bool(t) for t in steps["terminations"]], truncations=[bool(t) for t in steps["truncations"]],
            infos={}))
        self._steps = None


def default_dataset_id(env_id: str, agent: str, version: int = 0) -> str:
    """``nas-envs/<env id, lower case>/<agent>-v<version>``: one namespace per id, one dataset per agent."""
    return f"nas-envs/{env_id.lower()}/{agent}-v{version}"


def write_dataset(env_id: str, agent: str = "rs", episodes: int = 100, seed: int = 0, dataset_id: str | None = None,
                  noise: bool = True):
    """Record ``episodes`` architectures that ``agent`` evaluates on ``env_id`` into a new local Minari dataset
    (under ``MINARI_DATASETS_PATH``, default ``~/.minari/datasets``) and return it. An existing dataset of the same
    id is refused by Minari."""
    minari = require("minari", "minari", "writing Minari datasets")
    release_of(env_id)  # a clear error for an unknown id
    if agent not in AGENT_NAMES:
        raise ValueError(f"agent must be one of {', '.join(AGENT_NAMES)} (the agents that run on every id), got "
                         f"{agent!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}")
    dataset_id = dataset_id or default_dataset_id(env_id, agent)
    recorder = EpisodeRecorder(gym.make(env_id, noise=noise))
    try:
        play(make_agent(agent), TrajectoryRecorder(recorder), seed, max_evaluations=episodes)
    finally:
        recorder.close()
    reference = reference_scores(env_id)
    per_episode = reference.metric == "val_accuracy"
    with warnings.catch_warnings():  # the project publishes no e-mail address; its page is the contact
        warnings.filterwarnings("ignore", message="`author_email` is set to None")
        return minari.create_dataset_from_buffers(
            dataset_id=dataset_id, buffer=recorder.episodes, env=env_id, eval_env=env_id, algorithm_name=agent,
            code_permalink=CODE, author="nas-envs", ref_min_score=reference.random if per_episode else None,
            ref_max_score=reference.best if per_episode else None,
            requirements=[f"nas-envs=={nas_envs.__version__}"],
            description=(f"{episodes} architectures of {env_id} evaluated by the '{agent}' agent of nas-envs (seed "
                         f"{seed}, noise={noise}); rewards are the environment's default ones; see nas_envs.scores "
                         "for the reference scores."),
        )
