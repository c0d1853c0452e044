"""Multi-fidelity searches against their full-fidelity counterpart on a simulated clock, and how early epochs rank.

    python studies/multi_fidelity.py --bundle DIR [--budget-hours 24] [--seeds 10]

``DIR``: a DARTS bundle with a learning-curve model (``nas-envs fit darts --model curve --out DIR``). Prints, per
search (random search with full trainings, successive halving, Hyperband; ``nas_envs.agents.hyperband``), the
final incumbent's observed validation accuracy and, what matters, its noise-free mean, mean +- standard error over
seeds; then the Kendall tau between the surrogate's noise-free accuracy after each epoch and after the last, on
random architectures (the data card gives the same from real curves). Asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import nas_envs
from nas_envs.agents.hyperband import hyperband, random_search, successive_halving

SEARCHES = {"rs (full fidelity)": random_search, "successive halving": successive_halving, "hyperband": hyperband}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--budget-hours", type=float, default=24.0)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    bench = nas_envs.make_benchmark("darts", bundle=args.bundle)
    print(f"{args.seeds} seeds, {args.budget_hours:g} simulated hours, {bench.epochs} epochs")
    print(f"{'search':<20} {'full trainings':>14} {'observed (%)':>16} {'noise-free mean (%)':>20}")
    for name, search in SEARCHES.items():
        observed, means, full = [], [], []
        for seed in range(args.seeds):
            rows = search(bench, args.budget_hours * 3600, seed=seed)
            finished = [r for r in rows if r["epochs"] == bench.epochs]
            best = max(finished, key=lambda r: r["val_accuracy"])
            observed.append(best["val_accuracy"])
            means.append(bench.evaluate(best["architecture"], noise=False)["val_accuracy"][0])
            full.append(len(finished))
        se = lambda values: np.std(values, ddof=1) / np.sqrt(len(values))  # noqa: E731
        print(f"{name:<20} {np.mean(full):>14.0f} {100 * np.mean(observed):>9.3f} +- {100 * se(observed):.3f} "
              f"{100 * np.mean(means):>13.3f} +- {100 * se(means):.3f}")
    archs = bench.space.sample(2000, seed=0)
    final = bench.evaluate(archs, noise=False)["val_accuracy"]
    taus = [stats.kendalltau(bench.evaluate(archs, noise=False, epochs=k)["val_accuracy"], final).statistic
            for k in range(1, bench.epochs)]
    print("Kendall tau of the surrogate's mean after each epoch with the final one (2000 random architectures): "
          + ", ".join(f"{t:.3f}" for t in taus) + ", 1")


if __name__ == "__main__":
    main()
