"""Which GIN settings should an accuracy surrogate use (DARTS by default, ``--space fbnet``)? Prints 5-fold
cross-validated R2, sparse Kendall tau, MAE and bias of validation accuracy for each setting given as JSON overrides
of ``GINConfig``; with ``--noise-subset``, those of an ensemble fitted on all training records against the noise
subset's seed means.

    python studies/gin_settings.py '{}' '{"epochs": 48}' '{"ranking_weight": 0.0}' [--members 2] [--records N]
    python studies/gin_settings.py '{}' '{"num_features": 0}' --noise-subset --members 10 [--noise-architectures N]
    python studies/gin_settings.py '{}' '{"multi_task": true}' --noise-subset --members 10

``"multi_task": true`` (a setting of this study, not of ``GINConfig``) adds fitting-time targets as further outputs
of the shared trunk: the validation accuracy after each earlier epoch and exp(-validation loss), judged as before
on validation accuracy alone; a query never reads them. A record that lacks one (a GPU training has no CPU curve,
an older record no validation loss) is fitted on the targets it has.

On the training-subset records of the space's default protocol or ``--protocol`` (the noise subset stays out, as in
a fit), GPU accuracies on the CPU's scale as in a fit, with the bundled GIN's inputs (graphs and tabular features;
``'{"num_features": 0}'`` is the graphs-only GIN of the seed paper). Each fold fits ``--members`` members
(bootstrap resamples, seeds 0..) and averages them; the same folds serve every setting. ``--records`` fixes the
first N records, so that settings run at different times see the same records while a collector appends (the GPU
offset is measured on the whole file, so their targets can still move by a few hundredths of a percent);
``--noise-architectures`` likewise fixes the first N noise-subset architectures. One
member takes about 20-30 s per 128 epochs on 500 records on one core of this machine.

Read differences with care: the members' training is chaotic, and on 528 records the same setting gave R2 0.430
and 0.403 after such a shift of the targets (2026-11-30). Readings that day (528 records, 2 members): default
0.442 / sKT 0.454; 48 epochs 0.430 / 0.459 (0.403 / 0.451 later); 4 layers 0.349 / 0.409; no ranking loss 0.430 /
0.463; ranking weight 3 0.404 / 0.433; hidden 48 or 12 layers (48 epochs) diverged (bias +6 %). These readings were
of the graphs-only GIN, before the tabular features were added.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from study_arguments import add_judging_options, records_to_fit

from nas_envs.benchmarks.model_kinds import CURVE_TARGETS, MODEL_KINDS, Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs
from nas_envs.groundtruth.records import snapshot
from nas_envs.surrogates.gin import GINConfig, GINEnsemble
from nas_envs.surrogates.metrics import all_metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="+", help="JSON objects of GINConfig fields, e.g. '{\"epochs\": 48}'")
    parser.add_argument("--members", type=int, default=2)
    add_judging_options(parser)
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = [json.loads(setting) for setting in args.settings]
    space, protocol, path, data, cost_table = fitting_inputs(args.space, "gin", args.protocol)
    n = records_to_fit(parser, args.records, len(data.genes))
    y = np.stack([data.targets["val_accuracy"][:n], data.targets["test_accuracy"][:n]], axis=1)
    auxiliary = multi_task_targets(path, data, n)
    graphs = MODEL_KINDS["gin"].inputs(Encodings(space, data.genes[:n], cost_table))
    judged = slice(args.noise_architectures)  # the first noise-subset architectures (all by default)
    noise_graphs = MODEL_KINDS["gin"].inputs(Encodings(space, data.noise_genes[judged], cost_table))
    seed_means = np.array([values.mean() for values in data.noise_targets["val_accuracy"][judged]])
    fold = np.random.default_rng(0).permutation(n) % 5
    judged_on = (f"the seed means of {len(seed_means)} noise-subset architectures" if args.noise_subset
                 else "5-fold cross-validation")
    print(f"{protocol}: {n} training records, validation accuracy, {judged_on}, {args.members} members")
    for setting in settings:
        targets = np.hstack([y, auxiliary]) if setting.get("multi_task") else y
        overrides = {field: value for field, value in setting.items() if field != "multi_task"}
        config = GINConfig.for_graphs(graphs, targets.shape[1], **overrides)  # a graphs-only GIN ignores features
        started = time.perf_counter()
        if args.noise_subset:
            ensemble = GINEnsemble.fit(graphs, targets, config, members=args.members)  # seeds 0, 1, ...
            truth, predicted = seed_means, ensemble.predict(noise_graphs)[:, :, 0].mean(axis=1)
        else:
            truth, predicted = y[:, 0], np.empty(n)
            for k in range(5):
                fit, held = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
                ensemble = GINEnsemble.fit(graphs.subset(fit), targets[fit], config, members=args.members)
                predicted[held] = ensemble.predict(graphs.subset(held))[:, :, 0].mean(axis=1)
        m = all_metrics(truth, predicted)
        print(f"{json.dumps(setting)}: R2 {m['r2']:.3f}, sparse Kendall tau {m['sparse_kendall_tau']:.3f}, "
              f"MAE {100 * m['mae']:.3f} %, bias {100 * m['bias']:+.3f} % ({time.perf_counter() - started:.0f} s)")


def multi_task_targets(path, data, n: int) -> np.ndarray:
    """``(n, epochs)`` fitting-time targets of the first ``n`` training records: the validation accuracy after
    each epoch but the last (the last is the validation accuracy itself) and exp(-validation loss), in (0, 1] as
    the GIN's outputs are; NaN where a record lacks one."""
    records, _, _ = snapshot(path)
    val_loss = {r["job"]: r.get("val_loss", np.nan) for r in records}
    losses = np.array([val_loss[key] for key in data.keys[:n]], dtype=np.float64)
    curves = [data.targets[target][:n] for target in CURVE_TARGETS[:-1]]
    return np.stack([*curves, np.exp(-losses)], axis=1)


if __name__ == "__main__":
    main()
