"""Exact cost tables: cost = intercept + cost_features(arch) @ weights.

The tables are solved from networks assembled and counted for real (``count_flops``, ``numel``, or another exact
meter), then checked on fresh architectures: a build fails unless the table reproduces every count exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from nas_envs.groundtruth.protocols import TrainingProtocol
from nas_envs.groundtruth.train import build_network, count_flops
from nas_envs.spaces.base import SearchSpace

COST_NAMES = ("params", "flops")

Meter = Callable[[np.ndarray], np.ndarray]  # architectures (N, D) -> exact counts (N, K)


def measure_costs(space: SearchSpace, protocol: TrainingProtocol, archs: np.ndarray) -> np.ndarray:
    """``(N, 2)`` params and FLOPs of the assembled networks."""
    shape = (1, protocol.resolution, protocol.resolution)
    out = np.empty((len(archs), 2), dtype=np.float64)
    with torch.no_grad():
        for i, genes in enumerate(archs):
            model = build_network(protocol, genes.tolist())
            out[i] = (sum(p.numel() for p in model.parameters()), count_flops(model, shape))
    return out


def solve_linear_table(space: SearchSpace, meter: Meter, names: tuple[str, ...], seed: int = 0,
                       checks: int = 20) -> dict:
    """Solve ``names``' tables from random architectures and verify them exactly on ``checks`` others."""
    width = space.cost_features(space.sample(1, seed=seed)).shape[1]
    fit_archs = space.sample(2 * width + 10, seed=seed)
    check_archs = space.sample(checks, seed=seed + 1)
    design = np.hstack([np.ones((len(fit_archs), 1)), space.cost_features(fit_archs)])
    solution, *_ = np.linalg.lstsq(design, meter(fit_archs), rcond=None)
    check_design = np.hstack([np.ones((len(check_archs), 1)), space.cost_features(check_archs)])
    predicted = np.rint(check_design @ solution)
    measured = meter(check_archs)
    if not np.array_equal(predicted, measured):
        worst = np.abs(predicted - measured).max()
        raise RuntimeError(f"{space.name}: {names} are not linear in cost_features (worst error {worst})")
    return {name: {"intercept": float(solution[0, k]), "weights": solution[1:, k].tolist()}
            for k, name in enumerate(names)}


def build_cost_table(space: SearchSpace, protocol: TrainingProtocol, seed: int = 0, checks: int = 20) -> dict:
    """Exact parameter and FLOP tables of the space's networks under ``protocol``."""
    return {
        "protocol": protocol.name,
        "flops_unit": "multiply-accumulates of convolutions and linear layers, one input image",
        **solve_linear_table(space, lambda archs: measure_costs(space, protocol, archs), COST_NAMES, seed, checks),
    }
