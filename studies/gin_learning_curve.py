"""Does a GIN ensemble learn the DARTS noise subset faster from random records than XGB does? The GIN column beside
the XGB learning curve of docs/darts-diagnosis.md ("What more data would buy").

Both kinds are fitted with the release recipe (10 bootstrap members each; the GIN reads the tabular features where
the release rule allows it) on the same random draws of the random training records of the fitting split that the
diagnosis draws, and are judged by R2 and sparse Kendall tau on the noise subset's 3-seed means. A GIN learns
faster if its gain per doubling of the records is larger than XGB's, paired over the same draws. About 10
CPU-minutes per repeat of a pair of sizes on one core (GIN members dominate).

Usage: python studies/gin_learning_curve.py [--shares 0.5 1.0] [--repeats 2] [--members 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from darts_diagnosis import fit_predict, noise_r2

from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs, held_out_split
from nas_envs.surrogates.gin import GINEnsemble
from nas_envs.surrogates.metrics import sparse_kendall_tau

GIN = MODEL_KINDS["gin"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.5, 1.0],
                        help="fractions of the random fitting records, in (0, 1]")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--members", type=int, default=10)
    args = parser.parse_args()
    if not all(0 < share <= 1 for share in args.shares):
        parser.error(f"--shares must lie in (0, 1], got {args.shares}")
    torch.set_num_threads(1)
    space, protocol, _, data, cost_table = fitting_inputs("darts", "gin", None)
    fit_rows, _ = held_out_split(data.sources, data.keys)
    random_rows = fit_rows[data.sources[fit_rows] == "random"]
    encodings = Encodings(space, data.genes, cost_table)
    features, graphs = encodings.features_and_log_costs, GIN.inputs(encodings)
    noise = Encodings(space, data.noise_genes, cost_table)
    noise_features, noise_graphs = noise.features_and_log_costs, GIN.inputs(noise)
    means = np.array([values.mean() for values in data.noise_targets["val_accuracy"]])
    y = np.stack([data.targets[target] for target in GIN.targets], axis=1)
    print(f"{protocol}: {len(random_rows)} random fitting records, judged on the seed means of {len(means)} "
          f"noise-subset architectures; {args.members} members per ensemble, {args.repeats} draws per size")
    print("| random records | kind | R2 | sparse Kendall tau | CPU s per fit |\n| --- | --- | --- | --- | --- |")
    r2 = {}
    for share in args.shares:
        size = int(round(share * len(random_rows)))
        scores = {"xgb": [], "gin": []}
        seconds = {"xgb": 0.0, "gin": 0.0}
        for seed in range(args.repeats):
            rows = np.random.default_rng([20261203, seed]).choice(random_rows, size, replace=False)
            started = time.process_time()
            predicted = fit_predict(features[rows], y[rows, 0], noise_features, seed)
            seconds["xgb"] += time.process_time() - started
            scores["xgb"].append((noise_r2(means, predicted), sparse_kendall_tau(means, predicted)))
            started = time.process_time()
            subset = graphs.subset(rows)
            ensemble = GINEnsemble.fit(subset, y[rows], GIN.config(subset), members=args.members, seed=seed)
            predicted = ensemble.predict(noise_graphs)[:, :, 0].mean(axis=1)
            seconds["gin"] += time.process_time() - started
            scores["gin"].append((noise_r2(means, predicted), sparse_kendall_tau(means, predicted)))
        for kind, values in scores.items():
            values = np.array(values)
            r2[kind, size] = values[:, 0]
            error = values.std(axis=0, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.zeros(2)
            print(f"| {size} | {kind} | {values[:, 0].mean():.3f} +- {error[0]:.3f} | "
                  f"{values[:, 1].mean():.3f} +- {error[1]:.3f} | {seconds[kind] / args.repeats:.0f} |", flush=True)
    sizes = sorted({size for _, size in r2})
    if len(sizes) > 1:
        doublings = np.log2(sizes[-1] / sizes[0])
        gain = {kind: (r2[kind, sizes[-1]] - r2[kind, sizes[0]]) / doublings for kind in ("xgb", "gin")}
        difference = gain["gin"] - gain["xgb"]
        error = difference.std(ddof=1) / np.sqrt(len(difference)) if len(difference) > 1 else 0.0
        print(f"\nR2 gained per doubling from {sizes[0]} to {sizes[-1]} records: xgb {gain['xgb'].mean():+.3f}, "
              f"gin {gain['gin'].mean():+.3f} (gin - xgb, paired over the draws: {difference.mean():+.3f} +- "
              f"{error:.3f})")


if __name__ == "__main__":
    main()
