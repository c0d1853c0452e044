"""Successive halving and Hyperband (Li et al., 2018) on a benchmark's learning curves, on a simulated clock.

Both need a benchmark that answers after fewer epochs (``Benchmark.epochs``: a bundle with a ``curve`` model,
``nas-envs fit darts --model curve``). A rung trains each of its architectures up to its number of epochs,
continuing from the epochs it already has (a promoted architecture is charged only the epochs it adds), and
promotes the best ``1 / eta`` by the validation accuracy observed there. The incumbent is the best architecture
trained for all epochs, as a full-fidelity search reports it. Every architecture's curve is one noisy draw
(``evaluate(..., epochs=k)`` with the same seed gives points of one curve), so observing more epochs of it never
redraws the earlier ones.

:func:`random_search` is the full-fidelity counterpart on the same clock, for comparisons.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from nas_envs.benchmarks.base import Benchmark


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

    def sample(self, n: int) -> list[str]:
        return [self.bench.space.to_string(g) for g in self.bench.space.as_batch(self.bench.space.sample(n, self.rng))]


def _halving(clock: _Clock, n: int, min_epochs: int, eta: int) -> bool:
    """One successive-halving bracket from ``n`` new architectures at ``min_epochs``; False once the budget ends."""
    architectures, epochs = clock.sample(n), min_epochs
    while True:
        values = clock.train(architectures, epochs)
        if values is None:
            return False
        if epochs >= clock.bench.epochs or len(architectures) <= 1:
            return True
        keep = max(1, len(architectures) // eta)
        architectures = [architectures[i] for i in np.argsort(-values, kind="stable")[:keep]]
        epochs = min(clock.bench.epochs, epochs * eta)


def successive_halving(bench: Benchmark, budget_seconds: float, seed: int = 0, n: int = 16, min_epochs: int = 1,
                       eta: int = 2) -> list[dict]:
    """Brackets of ``n`` random architectures from ``min_epochs``, each rung keeping the best ``1 / eta`` and
    training them ``eta`` times longer, until the budget is spent. Returns one row per rung evaluation."""
    clock = _Clock(bench, budget_seconds, seed)
    while _halving(clock, n, min_epochs, eta):
        pass
    return clock.rows


def hyperband(bench: Benchmark, budget_seconds: float, seed: int = 0, eta: int = 2) -> list[dict]:
    """Hyperband's brackets in turn, from the most aggressive (many architectures from one epoch) to plain
    full-fidelity evaluation, until the budget is spent."""
    clock = _Clock(bench, budget_seconds, seed)
    rungs = int(math.log(bench.epochs, eta)) + 1
    while True:
        for bracket in reversed(range(rungs)):
            n = int(math.ceil(rungs / (bracket + 1) * eta**bracket))
            if not _halving(clock, n, max(1, bench.epochs // eta**bracket), eta):
                return clock.rows


def random_search(bench: Benchmark, budget_seconds: float, seed: int = 0) -> list[dict]:
    """Random architectures trained for all epochs, on the same clock."""
    clock = _Clock(bench, budget_seconds, seed)
    while clock.train(clock.sample(1), bench.epochs) is not None:
        pass
    return clock.rows
