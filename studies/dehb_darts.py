"""DEHB (Awad et al. 2021), a multi-fidelity HPO tool from PyPI, on the DARTS benchmark through its ConfigSpace view.

    python studies/dehb_darts.py [--budget 24h] [--seeds 3]

DEHB searches NAS-Bench-301's configuration space (``nas_envs.spaces.configspace``) with the number of epochs as
its fidelity (1 to the bundle's epochs, ``darts-mf-v0``); every configuration becomes genes, is evaluated with
``evaluate(archs, epochs=k)`` and charged its simulated seconds. One curve per architecture and seed: observing a
configuration at more epochs never redraws the earlier ones, though, unlike the environment's freeze-thaw, DEHB
charges every fidelity's training from scratch, as it assumes. Prints the final incumbent (best fully trained
validation accuracy) per seed and its noise-free mean, beside random search with full trainings on the same clock.

DEHB 0.1.2 declares ``numpy<2`` but runs on numpy 2 as far as this script goes; install it beside nas-envs without
replacing numpy: ``pip install --no-deps dehb && pip install loguru distributed pandas pyarrow``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import tempfile

import numpy as np

import nas_envs
from nas_envs.agents.hyperband import random_search
from nas_envs.agents.runner import parse_duration
from nas_envs.extras import available
from nas_envs.spaces.configspace import configuration_space, genes_from_configuration


def dehb_incumbent(bench, budget_seconds: float, seed: int) -> tuple[float, np.ndarray]:
    """DEHB until its simulated seconds reach the budget; the best observed full-fidelity accuracy and its genes."""
    from dehb import DEHB

    space = bench.space
    curve_seed = int(np.random.default_rng(seed).integers(2**63))
    spent, best = 0.0, (-np.inf, None)


    def evaluate(config, fidelity: float) -> tuple[float, float, np.ndarray]:
        genes = genes_from_configuration(space, config)
        arch_seed = int(hashlib.sha256(genes.tobytes()).hexdigest()[:16], 16)
        out = bench.evaluate(genes, seed=np.random.default_rng([curve_seed, arch_seed]), epochs=int(round(fidelity)))
        return float(out["val_accuracy"][0]), float(out["train_time_s"][0]), genes

    cs = configuration_space(space, seed=seed)
    with tempfile.TemporaryDirectory() as logs:  # DEHB writes its own logs and checkpoints
        optimiser = DEHB(cs=cs, min_fidelity=1, max_fidelity=bench.epochs, eta=2, n_workers=1, seed=seed,
                         output_path=logs, log_level="WARNING")
        while True:  # ask and tell: the simulated clock decides when to stop
            job = optimiser.ask()
            accuracy, seconds, genes = evaluate(job["config"], job["fidelity"])
            spent += seconds
            if spent > budget_seconds:
                break
            if round(job["fidelity"]) == bench.epochs and accuracy > best[0]:
                best = (accuracy, genes)
            optimiser.tell(job, {"fitness": 1.0 - accuracy, "cost": seconds})
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="24h")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if not available("dehb"):
        raise SystemExit("this script needs DEHB: pip install --no-deps dehb && pip install loguru distributed pandas "
                         "pyarrow")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    bench = nas_envs.make_benchmark("darts", bundle="darts-mf-v0")
    budget = parse_duration(args.budget)
    rows = {"dehb": [], "rs (full fidelity)": []}
    for seed in range(args.seeds):
        accuracy, genes = dehb_incumbent(bench, budget, seed)
        rows["dehb"].append((accuracy, bench.evaluate(genes, noise=False)["val_accuracy"][0]))
        trajectory = random_search(bench, budget, seed=seed)
        last = trajectory[-1]
        best = max((r for r in trajectory if r["epochs"] == bench.epochs), key=lambda r: r["val_accuracy"])
        assert best["val_accuracy"] == last["incumbent_val_accuracy"]
        rows["rs (full fidelity)"].append((best["val_accuracy"],
                                           bench.evaluate(best["architecture"], noise=False)["val_accuracy"][0]))
    print(f"DARTS (darts-mf-v0), {args.budget} simulated, {args.seeds} seeds: final incumbent, mean +- standard error")
    print(f"{'search':<20} {'observed val acc (%)':>22} {'noise-free mean (%)':>22}")
    for name, values in rows.items():
        observed, mean = 100 * np.array(values).T
        sem = np.sqrt(len(values))
        print(f"{name:<20} {observed.mean():>13.3f} +- {observed.std(ddof=1) / sem:.3f} "
              f"{mean.mean():>13.3f} +- {mean.std(ddof=1) / sem:.3f}")


if __name__ == "__main__":
    main()
