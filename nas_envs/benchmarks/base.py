"""The one interface every benchmark implements, and the array views built on it.

A benchmark is a search space with models that map architectures to objectives. The environments, the agents and
the pymoo adapter only use what is declared here, so every benchmark works with all of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property

import numpy as np

from nas_envs.checks import check_flag
from nas_envs.spaces.base import SearchSpace

Architectures = "np.ndarray | Iterable[Sequence[int] | str] | str"
REFERENCE_SEED = 20261201
REFERENCE_SIZE = 10_000


class Benchmark(ABC):
    """Batched, reproducible evaluation of the architectures of one search space.

    Attributes:
        name: the benchmark's name (``"darts"``, ``"cityseg-mop3"``, ...).
        space: the search space of the architectures.
        objectives: the names of the objectives :meth:`evaluate` returns, in order.
        directions: per objective, +1 to maximise, -1 to minimise.
    """

    name: str
    space: SearchSpace
    objectives: tuple[str, ...]
    directions: dict[str, int]
    #: the epochs of the trainings, when the benchmark also answers after fewer of them (``evaluate(epochs=k)``)
    epochs: int | None = None

    def evaluate(self, archs: Architectures, noise: bool = True, seed: int | np.random.Generator | None = None,
                 epochs: int | None = None) -> dict[str, np.ndarray]:
        """Objectives of a batch of architectures: genes ``(N, D)``, a list of genes, strings, or one string.

        Noisy draws come from ``numpy.random.default_rng(seed)`` only: the same seed gives the same values in
        every process. ``noise=False`` gives the models' means. ``epochs``: the objectives after that many epochs
        of training, 1 to :attr:`epochs` (default: all of them), for a benchmark with a learning-curve model
        (:meth:`evaluate_genes_at`).
        """
        genes = self.space.as_batch(archs)
        epochs = self._check_epochs(epochs)
        if not len(genes):
            return {name: np.empty(0) for name in self.objectives}
        noise, rng = check_flag("noise", noise), np.random.default_rng(seed)
        return self.evaluate_genes(genes, noise, rng) if epochs is None else self.evaluate_genes_at(genes, noise,
                                                                                                   rng, epochs)

    def _check_epochs(self, epochs: object) -> int | None:
        """``None`` for the final training state (``epochs`` left out or all of them), else the fewer epochs asked."""
        if epochs is None:
            return None
        if isinstance(epochs, (bool, np.bool_)) or not isinstance(epochs, (int, np.integer)):
            raise TypeError(f"epochs must be an integer number of epochs or None, got {type(epochs).__name__} "
                            f"{epochs!r}")
        if self.epochs is None:
            raise ValueError(f"{self.name} answers for the final training state only (its bundle has no "
                             "learning-curve model); leave epochs out")
        if not 1 <= epochs <= self.epochs:
            raise ValueError(f"epochs must be in 1..{self.epochs} for {self.name}, got {epochs}")
        return None if epochs == self.epochs else int(epochs)

    def evaluate_genes_at(self, genes: np.ndarray, noise: bool, rng: np.random.Generator, epochs: int
                          ) -> dict[str, np.ndarray]:
        """:meth:`evaluate_genes` after ``epochs`` (fewer than :attr:`epochs`), for benchmarks with a learning-curve
        model."""
        raise NotImplementedError(f"{self.name} has no learning-curve model")

    def evaluate_curves(self, genes: np.ndarray, noise: bool, rng: np.random.Generator
                        ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """:meth:`evaluate_genes` and each architecture's validation accuracy after every epoch ``(N, epochs)``
        (the last column the final one), for benchmarks with a learning-curve model: what the multi-fidelity
        environments draw once per architecture."""
        raise NotImplementedError(f"{self.name} has no learning-curve model")

    @abstractmethod
    def evaluate_genes(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """:meth:`evaluate` for validated canonical genes ``(N, D)`` and a generator (the environments' hot path).
        Returns one ``(N,)`` array per name of :attr:`objectives`."""

    @abstractmethod
    def simulated_seconds(self, values: dict[str, np.ndarray]) -> np.ndarray:
        """Simulated seconds each evaluation of :meth:`evaluate_genes`'s output costs (the runtime model)."""

    @abstractmethod
    def score(self, values: dict[str, np.ndarray]) -> np.ndarray:
        """The scalar a single-objective search maximises, per architecture (documented by each benchmark)."""

    @abstractmethod
    def verify(self) -> None:
        """Check the bundle's files against their manifest (and its pin) without loading any model: cheap enough
        for every environment's constructor, so that a broken bundle is named at ``gym.make``."""

    def load(self) -> "Benchmark":
        """Load and verify every asset now rather than on the first evaluation."""
        return self

    def random_reference(self) -> np.ndarray:
        """Sorted noise-free :meth:`score` of :data:`REFERENCE_SIZE` uniformly random architectures (a fixed sample,
        computed once per benchmark): what "better than random" means, for rewards and for judging searches."""
        return self._random_reference

    @cached_property
    def _random_reference(self) -> np.ndarray:
        archs = self.space.sample(REFERENCE_SIZE, seed=REFERENCE_SEED)
        return np.sort(self.score(self.evaluate_genes(archs, False, np.random.default_rng(0))))


def objective_matrix(benchmark: Benchmark, values: dict[str, np.ndarray], minimise: bool = False) -> np.ndarray:
    """``(N, M)`` array of ``values`` in the benchmark's objective order; with ``minimise`` the maximised
    objectives are negated (the convention of pymoo and of most multi-objective code)."""
    columns = [np.asarray(values[name], dtype=np.float64) for name in benchmark.objectives]
    if minimise:
        columns = [-c if benchmark.directions[name] > 0 else c for name, c in zip(benchmark.objectives, columns)]
    return np.column_stack(columns)
