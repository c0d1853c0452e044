"""Indicator-based MOEAs that pymoo lacks, as pymoo ``Algorithm``s in numpy: IBEA and HypE.

Both are genetic algorithms whose environmental selection removes, one at a time, the individual an indicator
values least, and whose mating is a binary tournament on that value (larger is better), as in the CitySeg/MOP paper's
Table 7 runs:

- **IBEA** (Zitzler and Kuenzli, PPSN 2004) with the additive epsilon indicator ``I(a, b) = max_i (f_i(a) -
  f_i(b))`` on objectives scaled to [0, 1] over the current population: fitness ``F(x) = sum_{y != x}
  -exp(-I(y, x) / (c * kappa))``, ``c = max |I|``, ``kappa`` = :data:`IBEA_KAPPA`; removing ``x*`` adds
  ``exp(-I(x*, x) / (c * kappa))`` to the others.
- **HypE** (Bader and Zitzler, Evolutionary Computation 2011): the fitness of ``x`` is the share of the
  hypervolume that ``x`` dominates together with ``i - 1`` others, summed over ``i = 1..k`` with weight ``1 / i``
  times the probability that those others are among the ``k`` individuals removed; estimated by Monte Carlo with
  :data:`HYPE_SAMPLES` points in the box between the population's ideal point and a reference point
  :data:`HYPE_REFERENCE_OFFSET` beyond its nadir (on scaled objectives). Environmental selection keeps whole
  non-dominated fronts and cuts the first that does not fit one individual at a time (``k`` = the number still to
  remove, the estimate refreshed after each), as the paper's does.

Both are written from the papers' definitions; no code of other libraries is used.
"""

from __future__ import annotations

import numpy as np
from pymoo.algorithms.base.genetic import GeneticAlgorithm
from pymoo.core.survival import Survival
from pymoo.operators.selection.tournament import TournamentSelection

IBEA_KAPPA = 0.05
HYPE_SAMPLES = 10_000
HYPE_REFERENCE_OFFSET = 1.0  # beyond the scaled nadir (1, ..., 1): with 0.1, ZDT1 runs lost the front's far end


def scaled(F: np.ndarray) -> np.ndarray:
    """Objectives scaled to [0, 1] per column over the rows given (constant columns to 0)."""
    low, high = F.min(axis=0), F.max(axis=0)
    return (F - low) / np.where(high > low, high - low, 1.0)


def epsilon_indicator(F: np.ndarray) -> np.ndarray:
    """``I[a, b]``: the additive epsilon by which row ``a`` must improve to weakly dominate row ``b``."""
    return (F[:, None, :] - F[None, :, :]).max(axis=2)


def ibea_selection(F: np.ndarray, n_survive: int, kappa: float = IBEA_KAPPA) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``n_survive`` rows IBEA keeps, and their fitness after the last removal."""
    indicator = epsilon_indicator(scaled(F))
    c = max(float(np.abs(indicator).max()), 1e-12)
    contribution = np.exp(-indicator / (c * kappa))  # contribution[y, x]: how much y's presence lowers x's fitness
    np.fill_diagonal(contribution, 0.0)
    fitness = -contribution.sum(axis=0)
    alive = np.ones(len(F), dtype=bool)
    while alive.sum() > n_survive:
        worst = np.flatnonzero(alive)[np.argmin(fitness[alive])]
        alive[worst] = False
        fitness += contribution[worst]
    return np.flatnonzero(alive), fitness[alive]


class HypESampler:
    """HypE's Monte-Carlo estimate over one set of points (minimised objectives, scaled to [0, 1] on creation):
    :data:`HYPE_SAMPLES` uniform samples of the box up to the reference point, drawn once, which point dominates
    which sample, and how many of the points still alive dominate each; :meth:`fitness` and :meth:`remove` serve
    every removal of one environmental selection."""

    def __init__(self, F: np.ndarray, rng: np.random.Generator, samples: int = HYPE_SAMPLES) -> None:
        m = F.shape[1]
        self.upper = np.full(m, 1.0 + HYPE_REFERENCE_OFFSET)
        box = rng.uniform(0.0, 1.0, size=(samples, m)) * self.upper
        # dominated[s, x]: point x weakly dominates sample s (one objective at a time: no (S, N, M) array)
        points = scaled(F)
        self.dominated = np.ones((samples, len(F)), dtype=bool)
        for objective in range(m):
            self.dominated &= points[None, :, objective] <= box[:, objective, None]
        self.alive = np.ones(len(F), dtype=bool)
        self.counts = self.dominated.sum(axis=1)  # how many alive points dominate each sample
        self.volume = float(np.prod(self.upper)) / samples  # of the box, per sample

    def fitness(self, k: int) -> np.ndarray:
        """The HypE fitness of the points alive (in index order) when ``k`` of them are to be removed."""
        n = int(self.alive.sum())
        # alpha[i]: the weight of a sample that i of the points dominate, the one being valued among them; a sample
        # that none or more than k dominate weighs nothing, so only the others are read
        # alpha[i] = prod_{j < i} (k - j) / (n - j) / i: the chance that the i - 1 others are all removed, shared
        top = min(k, n)
        alpha = np.zeros(n + 1)
        j = np.arange(1, top)
        alpha[1 : top + 1] = np.concatenate([[1.0], np.cumprod((k - j) / (n - j))]) / np.arange(1, top + 1)
        weighed = np.flatnonzero((self.counts >= 1) & (self.counts <= k))
        # every point's column, then the alive ones: cheaper than gathering a sub-matrix (uint8: a faster product)
        return self.volume * (alpha[self.counts[weighed]] @ self.dominated[weighed].view(np.uint8))[self.alive]

    def remove(self, point: int) -> None:
        """Point ``point`` (an index of the points given) leaves the set."""
        self.alive[point] = False
        self.counts -= self.dominated[:, point]


def hype_fitness(F: np.ndarray, k: int, rng: np.random.Generator, samples: int = HYPE_SAMPLES) -> np.ndarray:
    """HypE's Monte-Carlo fitness of each row of ``F`` (minimised objectives) when ``k`` rows are to be removed."""
    return HypESampler(F, rng, samples).fitness(k)


class _IndicatorSurvival(Survival):
    """Removes one individual at a time by an indicator-based fitness; stores the survivors' ``fitness``."""

    def __init__(self, fitness_of) -> None:
        super().__init__(filter_infeasible=True)
        self._fitness_of = fitness_of

    def _do(self, problem, pop, *args, n_survive=None, random_state=None, **kwargs):
        survivors, fitness = self._fitness_of(pop.get("F"), n_survive, random_state)
        pop = pop[survivors]
        pop.set("fitness", fitness)
        return pop


def _ibea_survivors(F: np.ndarray, n_survive: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return ibea_selection(F, n_survive)


def _hype_survivors(F: np.ndarray, n_survive: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Whole non-dominated fronts while they fit; the front that does not is cut one individual at a time by the
    HypE fitness with ``k`` = the number still to remove. The survivors' mating fitness uses ``k`` = their number."""
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    kept: list[int] = []
    for front in NonDominatedSorting().do(F):
        front = np.asarray(front)
        if len(kept) + len(front) > n_survive:
            sampler = HypESampler(F[front], rng)
            while len(kept) + sampler.alive.sum() > n_survive:
                fitness = sampler.fitness(int(len(kept) + sampler.alive.sum() - n_survive))
                sampler.remove(int(np.flatnonzero(sampler.alive)[np.argmin(fitness)]))
            front = front[sampler.alive]
        kept += front.tolist()
        if len(kept) >= n_survive:
            break
    alive = np.array(kept)
    return alive, hype_fitness(F[alive], len(alive), rng)


def _larger_fitness_wins(pop, P, algorithm=None, **kwargs) -> np.ndarray:
    """Binary tournament on the indicator fitness (ties: the first)."""
    fitness = pop.get("fitness").astype(float)
    fitness = np.where(np.isnan(fitness), -np.inf, fitness)
    return np.where(fitness[P[:, 0]] >= fitness[P[:, 1]], P[:, 0], P[:, 1])


class _IndicatorGA(GeneticAlgorithm):
    """Real-coded by default with NSGA-II's operators (SBX 0.9/15, polynomial mutation 20), as the papers compare
    them; pass ``sampling``, ``crossover``, ``mutation`` to change them."""

    def __init__(self, survivors, pop_size: int = 100, **kwargs) -> None:
        from pymoo.operators.crossover.sbx import SBX
        from pymoo.operators.mutation.pm import PM
        from pymoo.operators.sampling.rnd import FloatRandomSampling

        defaults = {"sampling": FloatRandomSampling(), "crossover": SBX(eta=15, prob=0.9), "mutation": PM(eta=20),
                    "eliminate_duplicates": True}
        super().__init__(pop_size=pop_size, selection=TournamentSelection(func_comp=_larger_fitness_wins),
                         survival=_IndicatorSurvival(survivors), advance_after_initial_infill=True,
                         **{**defaults, **kwargs})

    def _set_optimum(self, **kwargs) -> None:
        from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

        front = NonDominatedSorting().do(self.pop.get("F"), only_non_dominated_front=True)
        self.opt = self.pop[front]


class IBEA(_IndicatorGA):
    """IBEA with the additive epsilon indicator (``kappa`` = :data:`IBEA_KAPPA`); other arguments as pymoo's
    ``GeneticAlgorithm`` (``sampling``, ``crossover``, ``mutation``, ``eliminate_duplicates``, ...)."""

    def __init__(self, pop_size: int = 100, **kwargs) -> None:
        super().__init__(_ibea_survivors, pop_size=pop_size, **kwargs)


class HypE(_IndicatorGA):
    """HypE with :data:`HYPE_SAMPLES` Monte-Carlo samples per estimate; other arguments as pymoo's
    ``GeneticAlgorithm``."""

    def __init__(self, pop_size: int = 100, **kwargs) -> None:
        super().__init__(_hype_survivors, pop_size=pop_size, **kwargs)
