"""The fifteen CitySeg/MOP problems: which objectives each has, in the order of the paper's Table 1.

Objective names: ``err`` (1 - mIoU), ``h1_latency``, ``h2_latency``, ``h1_energy``, ``h2_energy`` (two hardware
profiles), ``flops`` and ``params``. All are minimised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CITYSEG_OBJECTIVES: tuple[str, ...] = ("err", "h1_latency", "h2_latency", "h1_energy", "h2_energy", "flops", "params")

_H1 = ("err", "h1_latency")
_H2 = ("err", "h2_latency")
_BOTH = ("err", "h1_latency", "h2_latency", "h1_energy", "h2_energy")

PROBLEM_OBJECTIVES: dict[int, tuple[str, ...]] = {
    1: _H1,
    2: _H1 + ("flops",),
    3: _H1 + ("params",),
    4: _H1 + ("h1_energy", "flops"),
    5: _H1 + ("h1_energy", "flops", "params"),
    6: _H2,
    7: _H2 + ("flops",),
    8: _H2 + ("params",),
    9: _H2 + ("h2_energy", "flops"),
    10: _H2 + ("h2_energy", "flops", "params"),
    11: ("err", "h1_latency", "h2_latency"),
    12: _BOTH,
    13: _BOTH + ("flops",),
    14: _BOTH + ("params",),
    15: _BOTH + ("flops", "params"),
}

# Table 4: population size and pymoo das-dennis partitions (outer, inner; inner scaled by 0.5) per objective count.
POPULATION: dict[int, tuple[int, tuple[int, int]]] = {
    2: (100, (99, 0)),
    3: (105, (13, 0)),
    4: (120, (7, 0)),
    5: (126, (5, 0)),
    6: (132, (4, 1)),
    7: (217, (3, 2)),
}


@dataclass(frozen=True)
class CitySegProblem:
    """One CitySeg/MOP problem: its number and its objectives in order."""

    number: int
    objectives: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"cityseg-mop{self.number}"

    @property
    def population_size(self) -> int:
        return POPULATION[len(self.objectives)][0]


def problem_number(problem: object) -> int:
    """A problem's number from an integer or a string of one (``3``, ``"3"``); anything else is refused, naming
    what was given and what is allowed."""
    allowed = f"an integer 1..{len(PROBLEM_OBJECTIVES)} (or a string of one, '3')"
    if isinstance(problem, str) and problem.strip().isdigit():
        problem = int(problem)
    if isinstance(problem, (bool, np.bool_)) or not isinstance(problem, (int, np.integer)):
        raise TypeError(f"problem must be {allowed}; got {type(problem).__name__} {problem!r}")
    if int(problem) not in PROBLEM_OBJECTIVES:
        raise ValueError(f"CitySeg/MOP{problem} does not exist; problem must be {allowed}")
    return int(problem)


def get_problem(number: object) -> CitySegProblem:
    """CitySeg/MOP``number`` (see :func:`problem_number` for what ``number`` may be)."""
    number = problem_number(number)
    return CitySegProblem(number, PROBLEM_OBJECTIVES[number])
