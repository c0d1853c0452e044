"""Rewards computed from a benchmark's single-objective score, one implementation for the single and vector envs.

- ``"accuracy"`` (the default of SurrNAS-DARTS and -FBNet): the score itself, validation accuracy in [0, 1].
- ``"standardised"``: ``(score - mean) / std`` of the scores of random architectures (the benchmark's
  :meth:`~nas_envs.benchmarks.base.Benchmark.random_reference`): 0 for a typical random architecture, +1 one
  standard deviation better. Architectures differ by well under 1 % of accuracy, which default RL settings barely
  see; standardised they differ by units.
- ``"percentile"``: the fraction of random architectures that score lower, in [0, 1].

"Random architectures" are the reference's: ``space.sample``, uniform over the space's canonical architectures, on
which both rewards average 0 and 0.5. A policy that picks uniformly among the legal actions at every step draws
from another distribution, and can average less (it does on DARTS, not on FBNet:
``python studies/reward_reference.py`` prints both).
"""

from __future__ import annotations

import numpy as np

from nas_envs.benchmarks.base import Benchmark

REWARDS = ("accuracy", "standardised", "percentile")


def check_reward(reward: str) -> str:
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
    return reward


def shaped_reward(benchmark: Benchmark, reward: str, values: dict[str, np.ndarray]) -> np.ndarray:
    """The rewards of just-evaluated architectures under reward mode ``reward``."""
    score = benchmark.score(values)
    if reward == "accuracy":
        return score
    reference = benchmark.random_reference()
    if reward == "standardised":
        return (score - reference.mean()) / reference.std()
    return np.searchsorted(reference, score, side="left") / len(reference)


class Scoring:
    """How a sequential NAS environment, single or vector, scores the architectures its copies complete: hooks that
    both share, so that an environment overrides each once for both (CitySeg's archive reward does)."""

    benchmark: Benchmark
    noise: bool
    reward_mode: str
    np_random: np.random.Generator

    def _reward_shape(self) -> tuple[int, ...]:
        """The shape of one copy's reward: a scalar unless overridden."""
        return ()

    def _reward(self, rows: np.ndarray, values: dict[str, np.ndarray]) -> np.ndarray:
        """The rewards of the architectures just completed in copies ``rows``, from their objective ``values``."""
        return shaped_reward(self.benchmark, self.reward_mode, values)

    def _start_budget(self, rows: np.ndarray) -> None:
        """Called when copies ``rows`` start a fresh simulated budget."""

    def _score(self, rows: np.ndarray, genes: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Rewards, objective values and simulated seconds of the architectures completed by copies ``rows``."""
        values = self.benchmark.evaluate_genes(genes, self.noise, self.np_random)
        return self._reward(rows, values), values, self.benchmark.simulated_seconds(values)

    def _score_curves(self, rows: np.ndarray, genes: np.ndarray
                      ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """:meth:`_score` of the whole trainings of the architectures completed by copies ``rows``, and their
        learning curves (multi-fidelity environments)."""
        values, curves = self.benchmark.evaluate_curves(genes, self.noise, self.np_random)
        return self._reward(rows, values), values, self.benchmark.simulated_seconds(values), curves
