"""Learning curves as a fidelity: one XGB ensemble per epoch against one ensemble with the epoch as an input.

    python studies/curve_models.py [--space darts] [--members 10] [--records N]

Both are fitted on the CPU-trained uniformly random and region records of the fitting side of the fixed held-out
split (GPU trainings are left out: their offset is measured on final accuracies only), on the XGB surrogate's
input (tabular features and log params/FLOPs; the second model also reads the epoch), with the bundled recipe
(cross-validated rounds, bootstrap members). Judged per epoch on the held-out records and on the noise subset's
seed means at that epoch (never fitted on): R2, sparse Kendall tau, MAE. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np

from nas_envs.assets import data_path
from nas_envs.benchmarks import make_benchmark
from nas_envs.benchmarks.model_kinds import Encodings
from nas_envs.fitting.surrogate_fit import held_out_split
from nas_envs.groundtruth.analysis import device, noise_groups
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
from nas_envs.groundtruth.records import read_protocol_records
from nas_envs.surrogates.metrics import all_metrics
from nas_envs.surrogates.xgb import cross_validated_rounds, train_members


def predict(boosters: list, x: np.ndarray) -> np.ndarray:
    """The ensemble mean."""
    import xgboost as xgb

    matrix = xgb.DMatrix(x.astype(np.float32))
    return np.mean([booster.predict(matrix) for booster in boosters], axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", default="darts", choices=["darts", "fbnet"])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--records", type=int, default=None, help="the first N training records only")
    args = parser.parse_args()
    protocol = DEFAULT_PROTOCOL[args.space]
    records = [r for r in read_protocol_records(data_path(protocol), protocol)
               if device(r) == "cpu" and r.get("val_accuracy_curve")]
    train = [r for r in records if r["subset"] == "train"][: args.records]
    bench = make_benchmark(args.space)
    encode = lambda rows: Encodings(bench.space, np.array([r["genes"] for r in rows]),  # noqa: E731
                                    bench.cost_table, bench.feature_version).features_and_log_costs
    x = encode(train)
    curves = np.array([r["val_accuracy_curve"] for r in train])
    epochs = curves.shape[1]
    fit, held = held_out_split(np.array([r["source"] for r in train]), np.array([r["job"] for r in train]))
    groups = [g for g in noise_groups(records).values() if all(len(r["val_accuracy_curve"]) == epochs for r in g)]
    noise_x = encode([g[0] for g in groups])
    noise_means = np.array([np.mean([r["val_accuracy_curve"] for r in g], axis=0) for g in groups])

    def with_epoch(features: np.ndarray, epoch: int) -> np.ndarray:
        return np.column_stack([features, np.full(len(features), epoch + 1)])

    per_epoch = []
    for epoch in range(epochs):
        rounds = cross_validated_rounds(x[fit], curves[fit, epoch])
        per_epoch.append(train_members(x[fit], curves[fit, epoch], args.members, rounds=rounds))
    stacked_x = np.concatenate([with_epoch(x[fit], e) for e in range(epochs)])
    stacked_y = np.concatenate([curves[fit, e] for e in range(epochs)])
    joint = train_members(stacked_x, stacked_y, args.members, rounds=cross_validated_rounds(stacked_x, stacked_y))

    print(f"{args.space} ({protocol}): {len(fit)} fitting and {len(held)} held-out CPU training records, "
          f"{len(groups)} noise-subset architectures, {epochs} epochs, {args.members} members")
    print(f"{'epoch':>5} {'model':<16} {'held-out R2':>11} {'sKT':>6} {'MAE (%)':>8}   {'noise R2':>8} {'sKT':>6} "
          f"{'MAE (%)':>8}")
    for epoch in range(epochs):
        for name, held_pred, noise_pred in (
            ("one per epoch", predict(per_epoch[epoch], x[held]), predict(per_epoch[epoch], noise_x)),
            ("epoch as input", predict(joint, with_epoch(x[held], epoch)), predict(joint, with_epoch(noise_x, epoch))),
        ):
            h = all_metrics(curves[held, epoch], held_pred)
            n = all_metrics(noise_means[:, epoch], noise_pred)
            print(f"{epoch + 1:>5} {name:<16} {h['r2']:>11.3f} {h['sparse_kendall_tau']:>6.3f} {100 * h['mae']:>8.3f}"
                  f"   {n['r2']:>8.3f} {n['sparse_kendall_tau']:>6.3f} {100 * n['mae']:>8.3f}")


if __name__ == "__main__":
    main()
