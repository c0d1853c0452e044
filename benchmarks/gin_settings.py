"""Which GIN settings should the DARTS accuracy surrogate use? Prints 5-fold cross-validated R2, sparse Kendall
tau, MAE and bias of validation accuracy for each setting given as JSON overrides of ``GINConfig``.

    python benchmarks/gin_settings.py '{}' '{"epochs": 48}' '{"ranking_weight": 0.0}' [--members 2] [--records N]

On the training-subset records of the default protocol (the noise subset stays out, as in a fit), GPU accuracies
on the CPU's scale as in a fit. Each fold fits ``--members`` members (bootstrap resamples, seeds 0..) and averages
them; the same folds serve every setting. ``--records`` fixes the first N records, so that settings run at
different times see the same records while a collector appends (the GPU offset is measured on the whole file, so
their targets can still move by a few hundredths of a percent). One member takes about 20-30 s per 128 epochs on
500 records on one core of this machine.

Read differences with care: the members' training is chaotic, and on 528 records the same setting gave R2 0.430
and 0.403 after such a shift of the targets (2026-11-30). Readings that day (528 records, 2 members): default
0.442 / sKT 0.454; 48 epochs 0.430 / 0.459 (0.403 / 0.451 later); 4 layers 0.349 / 0.409; no ranking loss 0.430 /
0.463; ranking weight 3 0.404 / 0.433; hidden 48 or 12 layers (48 epochs) diverged (bias +6 %).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from nas_envs.assets import data_path
from nas_envs.benchmarks.fit import load_dataset
from nas_envs.groundtruth.train import DEFAULT_PROTOCOL
from nas_envs.spaces import get_space
from surrogates.gin import GINConfig, GINEnsemble, GraphBatch
from surrogates.metrics import all_metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="+", help="JSON objects of GINConfig fields, e.g. '{\"epochs\": 48}'")
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--records", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    protocol = DEFAULT_PROTOCOL["darts"]
    data = load_dataset(data_path(protocol), protocol)
    n = args.records or len(data.genes)
    graphs = GraphBatch(*get_space("darts").graphs(data.genes[:n]))
    y = np.stack([data.targets["val_accuracy"][:n], data.targets["test_accuracy"][:n]], axis=1)
    fold = np.random.default_rng(0).permutation(n) % 5
    print(f"{protocol}: {n} training records, validation accuracy, 5-fold cross-validation, {args.members} members")
    for setting in args.settings:
        config = GINConfig.for_graphs(graphs, y.shape[1], **json.loads(setting))
        predicted = np.empty(n)
        started = time.perf_counter()
        for k in range(5):
            fit, held = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            ensemble = GINEnsemble.fit(graphs.subset(fit), y[fit], config, members=args.members)  # seeds 0, 1, ...
            predicted[held] = ensemble.predict(graphs.subset(held))[:, :, 0].mean(axis=1)
        m = all_metrics(y[:, 0], predicted)
        print(f"{setting}: R2 {m['r2']:.3f}, sparse Kendall tau {m['sparse_kendall_tau']:.3f}, "
              f"MAE {100 * m['mae']:.3f} %, bias {100 * m['bias']:+.3f} % ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
