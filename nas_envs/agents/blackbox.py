"""Black-box NAS optimisers. Each maximises ``evaluate(genes)`` until it raises :class:`SearchBudgetSpent`.

They only use the search space's sampling, masks and neighbourhoods, so they run on every space.
"""

from __future__ import annotations

import collections
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from nas_envs.spaces.base import SearchSpace

Evaluate = Callable[[np.ndarray], float]


class BlackBoxAgent(ABC):
    name: str

    @abstractmethod
    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        """Search until ``evaluate`` raises ``SearchBudgetSpent``."""


class RandomSearch(BlackBoxAgent):
    """Uniformly random architectures (Li & Talwalkar 2019)."""

    name = "rs"

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        while True:
            evaluate(space.sample(seed=rng))


class RegularizedEvolution(BlackBoxAgent):
    """Aging evolution (Real et al. 2019): tournament selection, one mutation, the oldest member dies."""

    name = "re"

    def __init__(self, population_size: int = 100, sample_size: int = 25) -> None:
        if not 1 <= sample_size <= population_size:
            raise ValueError(f"need 1 <= sample_size <= population_size, got {sample_size}, {population_size}")
        self.population_size = population_size
        self.sample_size = sample_size

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        population: collections.deque[tuple[np.ndarray, float]] = collections.deque()
        while len(population) < self.population_size:
            genes = space.sample(seed=rng)
            population.append((genes, evaluate(genes)))
        while True:
            contestants = rng.choice(len(population), size=self.sample_size, replace=False)
            parent = max((population[i] for i in contestants), key=lambda member: member[1])[0]
            child = space.mutate(parent, seed=rng)
            population.append((child, evaluate(child)))
            population.popleft()


class LocalSearch(BlackBoxAgent):
    """First-improvement hill climbing over the one-change neighbourhood, restarting at local optima."""

    name = "ls"

    def __init__(self, initial_samples: int = 10) -> None:
        self.initial_samples = initial_samples

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        while True:
            start = [space.sample(seed=rng) for _ in range(self.initial_samples)]
            scores = [evaluate(g) for g in start]
            current, current_score = start[int(np.argmax(scores))], max(scores)
            improved = True
            while improved:
                improved = False
                neighbours = space.neighbours(current)
                for index in rng.permutation(len(neighbours)):
                    score = evaluate(neighbours[index])
                    if score > current_score:
                        current, current_score, improved = neighbours[index], score, True
                        break


def decode_unit_vector(space: SearchSpace, vector: np.ndarray) -> np.ndarray:
    """Map ``[0, 1]^D`` to a valid architecture: coordinate ``d`` picks among the legal choices of decision ``d``."""
    genes = np.empty(space.num_decisions, dtype=np.int64)
    for step in range(space.num_decisions):
        legal = np.flatnonzero(space.action_mask(genes[:step]))
        genes[step] = legal[min(int(vector[step] * len(legal)), len(legal) - 1)]
    return genes


class DifferentialEvolution(BlackBoxAgent):
    """DE/rand/1/bin on a ``[0, 1]^D`` embedding of the categorical decisions (as in BOHB's and DEHB's DE)."""

    name = "de"

    def __init__(self, population_size: int = 20, mutation_factor: float = 0.5, crossover_rate: float = 0.5) -> None:
        self.population_size = population_size
        self.mutation_factor = mutation_factor
        self.crossover_rate = crossover_rate

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        dims = space.num_decisions
        population = rng.random((self.population_size, dims))
        fitness = np.array([evaluate(decode_unit_vector(space, v)) for v in population])
        while True:
            for i in range(self.population_size):
                a, b, c = population[rng.choice(np.delete(np.arange(self.population_size), i), 3, replace=False)]
                mutant = np.clip(a + self.mutation_factor * (b - c), 0.0, 1.0)
                cross = rng.random(dims) < self.crossover_rate
                cross[rng.integers(dims)] = True
                trial = np.where(cross, mutant, population[i])
                score = evaluate(decode_unit_vector(space, trial))
                if score >= fitness[i]:
                    population[i], fitness[i] = trial, score


class Bananas(BlackBoxAgent):
    """BANANAS-style search (White et al. 2021): an ensemble predictor proposes mutations of the best architectures.

    Every round fits a bootstrap ensemble of XGBoost models on all evaluations so far, generates candidates by
    mutating the top architectures, and evaluates the ``batch_size`` candidates with the highest
    independent-Thompson-sampling score (mean + std x standard normal draw).
    """

    name = "bananas"

    def __init__(
        self, initial_samples: int = 10, batch_size: int = 10, candidates: int = 100, top_parents: int = 10,
        members: int = 5,
    ) -> None:
        self.initial_samples = initial_samples
        self.batch_size = batch_size
        self.candidates = candidates
        self.top_parents = top_parents
        self.members = members

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        import xgboost as xgb

        from nas_envs.surrogates.xgb import train_members

        archs = [space.sample(seed=rng) for _ in range(self.initial_samples)]
        scores = [evaluate(g) for g in archs]
        seen = {tuple(g) for g in archs}
        while True:
            boosters = train_members(
                space.features(np.stack(archs)), np.array(scores), members=self.members,
                seed=int(rng.integers(2**31)), rounds=100,
            )
            parents = [archs[i] for i in np.argsort(scores)[::-1][: self.top_parents]]
            pool: list[np.ndarray] = []
            pooled: set[tuple] = set()
            while len(pool) < self.candidates:
                child = parents[len(pool) % len(parents)]
                for _ in range(int(rng.integers(1, 3))):  # one or two mutations
                    child = space.mutate(child, seed=rng)
                if tuple(child) not in seen and tuple(child) not in pooled:
                    pool.append(child)
                    pooled.add(tuple(child))
            features = xgb.DMatrix(space.features(np.stack(pool)))
            predictions = np.stack([b.predict(features) for b in boosters], axis=1)
            its = predictions.mean(axis=1) + predictions.std(axis=1) * rng.standard_normal(len(pool))
            for index in np.argsort(its)[::-1][: self.batch_size]:
                seen.add(tuple(pool[index]))
                archs.append(pool[index])
                scores.append(evaluate(pool[index]))


class TPE(BlackBoxAgent):
    """Optuna's Tree-structured Parzen Estimator over the ``[0, 1]^D`` embedding used by DE (as NAS-Bench-301 ran
    TPE over a continuous-valued configuration space)."""

    name = "tpe"

    def __init__(self, startup_trials: int = 10) -> None:
        self.startup_trials = startup_trials

    def run(self, evaluate: Evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.ERROR)  # the budget-spent trial is an expected stop
        sampler = optuna.samplers.TPESampler(n_startup_trials=self.startup_trials, seed=int(rng.integers(2**31)))
        study = optuna.create_study(direction="maximize", sampler=sampler)

        def objective(trial) -> float:
            vector = np.array([trial.suggest_float(f"x{d}", 0.0, 1.0) for d in range(space.num_decisions)])
            return evaluate(decode_unit_vector(space, vector))

        study.optimize(objective, n_trials=None)  # SearchBudgetSpent ends the loop


AGENTS: dict[str, type[BlackBoxAgent]] = {
    agent.name: agent
    for agent in (RandomSearch, RegularizedEvolution, LocalSearch, DifferentialEvolution, Bananas, TPE)
}
