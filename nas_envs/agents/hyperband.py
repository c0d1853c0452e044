"""Successive halving and Hyperband (Li et al., 2018) on a benchmark's learning curves, on a simulated clock.

Both need a benchmark that answers after fewer epochs (``Benchmark.epochs``: a bundle with a ``curve`` model,
``nas-envs fit darts --model curve``). A rung trains each of its architectures up to its number of epochs,
continuing from the epochs it already has (a promoted architecture is charged only the epochs it adds), and
promotes the best ``1 / eta`` by the validation accuracy observed there. The incumbent is the best architecture
trained for all epochs, as a full-fidelity search reports it. Every architecture's curve is one noisy draw
(``evaluate(..., epochs=k)`` with the same seed gives points of one curve), so observing more epochs of it never
redraws the earlier ones.

:func:`random_search` is the full-fidelity counterpart on the same clock, for comparisons. The same searches run
as agents on a multi-fidelity environment (:class:`SuccessiveHalving`, :class:`Hyperband`; ``nas-envs run --env
SurrNAS-DARTS-MF-v0 --agent sh``), where the environment keeps the clock and the curves.
"""

from __future__ import annotations

import hashlib
import math
from typing import Protocol

import numpy as np

from nas_envs.agents.blackbox import BlackBoxAgent
from nas_envs.agents.trajectory import Evaluator, SearchBudgetSpent
from nas_envs.benchmarks.base import Benchmark
from nas_envs.spaces.base import SearchSpace


class _Clock:
    """The simulated budget, the architectures' curves seen so far, and the trajectory of full trainings."""

    def __init__(self, bench: Benchmark, budget_seconds: float, seed: int) -> None:
        if bench.epochs is None:
            raise ValueError(f"{bench.name} has no learning-curve model: multi-fidelity searches need a bundle with "
                             "one (nas-envs fit darts --model curve --out DIR, then bundle=DIR)")
        self.bench, self.budget, self.spent = bench, float(budget_seconds), 0.0
        self.rng = np.random.default_rng(seed)
        self.curve_seed = int(self.rng.integers(2**63))  # one noisy curve per architecture, whatever is observed
        self.trained: dict[str, int] = {}  # architecture -> epochs trained
        self.rows: list[dict] = []
        self.best = -np.inf

    def train(self, architectures: list[str], epochs: int) -> np.ndarray | None:
        """Train each architecture up to ``epochs``; its validation accuracy there, or None once the budget is
        spent (what would exceed it is not trained)."""
        values = np.empty(len(architectures))
        for i, arch in enumerate(architectures):
            # the architecture's own seed: its curve is the same draw whichever epoch is asked first
            seed = [self.curve_seed, int(hashlib.sha256(arch.encode()).hexdigest()[:16], 16)]
            result = self.bench.evaluate(arch, seed=np.random.default_rng(seed), epochs=epochs)
            added = float(result["train_time_s"][0]) * (1 - self.trained.get(arch, 0) / epochs)
            if self.spent + added > self.budget:
                return None
            self.spent += added
            self.trained[arch] = max(epochs, self.trained.get(arch, 0))
            values[i] = result["val_accuracy"][0]
            if epochs == self.bench.epochs and values[i] > self.best:
                self.best = values[i]
            self.rows.append({"sim_time": self.spent, "architecture": arch, "epochs": epochs,
                              "val_accuracy": float(values[i]), "incumbent_val_accuracy": float(self.best)})
        return values

    @property
    def epochs(self) -> int:
        return self.bench.epochs

    def sample(self, n: int) -> list[str]:
        return [self.bench.space.to_string(g) for g in self.bench.space.as_batch(self.bench.space.sample(n, self.rng))]


class Trainer(Protocol):
    """What the searches below train on: a benchmark's clock, or a multi-fidelity environment."""

    epochs: int  # of a full training

    def sample(self, n: int) -> list:
        """``n`` new random architectures."""

    def train(self, architectures: list, epochs: int) -> np.ndarray | None:
        """Train each architecture up to ``epochs``; their validation accuracies there, or None once the budget is
        spent."""


class EnvTrainer:
    """:class:`Trainer` on a multi-fidelity environment through its :class:`~nas_envs.agents.trajectory.Evaluator`:
    the environment's clock, freeze-thaw and trajectory do the bookkeeping."""

    def __init__(self, evaluate: Evaluator, space: SearchSpace, rng: np.random.Generator) -> None:
        if not getattr(evaluate, "epochs", None):
            raise ValueError("successive halving and Hyperband need a multi-fidelity environment, such as "
                             "SurrNAS-DARTS-MF-v0")
        self.evaluate, self.space, self.rng, self.epochs = evaluate, space, rng, evaluate.epochs

    def sample(self, n: int) -> list[np.ndarray]:
        return list(self.space.sample(n, self.rng))

    def train(self, architectures: list[np.ndarray], epochs: int) -> np.ndarray | None:
        try:
            return np.array([self.evaluate.train(genes, epochs) for genes in architectures])
        except SearchBudgetSpent:
            return None


def _halving(trainer: Trainer, n: int, min_epochs: int, eta: int) -> bool:
    """One successive-halving bracket from ``n`` new architectures at ``min_epochs``; False once the budget ends."""
    architectures, epochs = trainer.sample(n), min_epochs
    while True:
        values = trainer.train(architectures, epochs)
        if values is None:
            return False
        if epochs >= trainer.epochs or len(architectures) <= 1:
            return True
        keep = max(1, len(architectures) // eta)
        architectures = [architectures[i] for i in np.argsort(-values, kind="stable")[:keep]]
        epochs = min(trainer.epochs, epochs * eta)


def run_successive_halving(trainer: Trainer, n: int = 16, min_epochs: int = 1, eta: int = 2) -> None:
    """Brackets of ``n`` random architectures from ``min_epochs``, each rung keeping the best ``1 / eta`` and
    training them ``eta`` times longer, until the budget is spent."""
    while _halving(trainer, n, min_epochs, eta):
        pass


def run_hyperband(trainer: Trainer, eta: int = 2) -> None:
    """Hyperband's brackets in turn, from the most aggressive (many architectures from one epoch) to plain
    full-fidelity evaluation, until the budget is spent."""
    rungs = int(math.log(trainer.epochs, eta)) + 1
    while True:
        for bracket in reversed(range(rungs)):
            n = int(math.ceil(rungs / (bracket + 1) * eta**bracket))
            if not _halving(trainer, n, max(1, trainer.epochs // eta**bracket), eta):
                return


def successive_halving(bench: Benchmark, budget_seconds: float, seed: int = 0, n: int = 16, min_epochs: int = 1,
                       eta: int = 2) -> list[dict]:
    """:func:`run_successive_halving` on ``bench``'s clock; one row per rung evaluation."""
    clock = _Clock(bench, budget_seconds, seed)
    run_successive_halving(clock, n, min_epochs, eta)
    return clock.rows


def hyperband(bench: Benchmark, budget_seconds: float, seed: int = 0, eta: int = 2) -> list[dict]:
    """:func:`run_hyperband` on ``bench``'s clock; one row per rung evaluation."""
    clock = _Clock(bench, budget_seconds, seed)
    run_hyperband(clock, eta)
    return clock.rows


def random_search(bench: Benchmark, budget_seconds: float, seed: int = 0) -> list[dict]:
    """Random architectures trained for all epochs, on the same clock."""
    clock = _Clock(bench, budget_seconds, seed)
    while clock.train(clock.sample(1), bench.epochs) is not None:
        pass
    return clock.rows


class SuccessiveHalving(BlackBoxAgent):
    """Successive halving on a multi-fidelity environment (``nas-envs run --agent sh``): see
    :func:`run_successive_halving`."""

    name = "sh"

    def __init__(self, n: int = 16, min_epochs: int = 1, eta: int = 2) -> None:
        self.n, self.min_epochs, self.eta = n, min_epochs, eta

    def run(self, evaluate: Evaluator, space: SearchSpace, rng: np.random.Generator) -> None:
        run_successive_halving(EnvTrainer(evaluate, space, rng), self.n, self.min_epochs, self.eta)


class Hyperband(BlackBoxAgent):
    """Hyperband on a multi-fidelity environment (``nas-envs run --agent hyperband``): see :func:`run_hyperband`."""

    name = "hyperband"

    def __init__(self, eta: int = 2) -> None:
        self.eta = eta

    def run(self, evaluate: Evaluator, space: SearchSpace, rng: np.random.Generator) -> None:
        run_hyperband(EnvTrainer(evaluate, space, rng), self.eta)


#: the agents that need a multi-fidelity environment
MULTI_FIDELITY_AGENTS: dict[str, type[BlackBoxAgent]] = {agent.name: agent for agent in (SuccessiveHalving, Hyperband)}
