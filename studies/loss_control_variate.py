"""Does a training's final loss, as a control variate, give the XGB surrogate a less noisy target? Prints numbers.

    python studies/loss_control_variate.py [--space darts] [--protocol darts-fmnist14-c8l8-e4-v1]

On the noise subset a training's deviation from its architecture's seed mean correlates with its deviation in
final training loss. If a surrogate of the loss predicts the architecture's expected loss, the target
``val_accuracy - beta * (loss - predicted loss)`` keeps the architecture effect and sheds that share of the seed
noise. The loss surrogate is cross-fitted (each training's loss predicted by a model that never saw it), ``beta``
is the within-architecture slope measured on the noise subset (and half of it), and each target's XGB ensemble (a
fit's recipe: cross-validated leaf size and rounds, 10 members) is judged on the noise subset's seed means, never
fitted on. CPU trainings only (the loss curves of other devices are not comparable). Params and FLOPs are those of
the protocol's network.
"""

from __future__ import annotations

import argparse

import numpy as np

from nas_envs.assets import data_path
from nas_envs.benchmarks.model_kinds import Encodings
from nas_envs.catalogue import family
from nas_envs.fitting.surrogate_fit import exact_cost_table
from nas_envs.groundtruth.analysis import device, noise_groups
from nas_envs.groundtruth.records import read_protocol_records
from nas_envs.spaces import get_space
from nas_envs.surrogates.metrics import all_metrics
from nas_envs.surrogates.xgb import cross_validated_settings, train_members

FOLDS = 5


def ensemble_prediction(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, seed: int = 0) -> np.ndarray:
    import xgboost as xgb

    params, rounds = cross_validated_settings(x, y, seed=seed)
    boosters = train_members(x, y, 10, seed, params, rounds)
    return np.mean([b.predict(xgb.DMatrix(x_new.astype(np.float32))) for b in boosters], axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", default="darts")
    parser.add_argument("--protocol", default=None, help="default: the family's protocol")
    args = parser.parse_args()
    protocol = args.protocol or family(args.space).protocol
    space, cost_table = get_space(args.space), exact_cost_table(args.space, protocol)  # its network's costs
    records = [r for r in read_protocol_records(data_path(protocol), protocol)
               if device(r) == "cpu" and r.get("train_loss_curve")]
    train = [r for r in records if r["subset"] == "train"]
    groups = list(noise_groups(records).values())

    def encode(rows: list[dict]) -> np.ndarray:
        return Encodings(space, np.array([r["genes"] for r in rows]), cost_table).features_and_log_costs

    def final_loss(record: dict) -> float:
        return record["train_loss_curve"][-1]

    accuracy = np.array([r["val_accuracy"] for r in train])
    loss = np.array([final_loss(r) for r in train])
    x, x_noise = encode(train), encode([g[0] for g in groups])
    seed_means = np.array([np.mean([r["val_accuracy"] for r in g]) for g in groups])

    deviations = [(r["val_accuracy"] - np.mean([s["val_accuracy"] for s in g]),
                   final_loss(r) - np.mean([final_loss(s) for s in g])) for g in groups for r in g]
    acc_dev, loss_dev = np.array(deviations).T
    beta = float(acc_dev @ loss_dev / (loss_dev @ loss_dev))
    print(f"{protocol}: {len(train)} CPU training records, noise subset {len(groups)} architectures")
    print(f"seed deviations, accuracy against final loss: correlation {np.corrcoef(acc_dev, loss_dev)[0, 1]:.3f}, "
          f"slope beta {beta:.4f}")

    folds = np.random.default_rng(0).permutation(np.arange(len(train)) % FOLDS)
    predicted_loss = np.empty_like(loss)
    for fold in range(FOLDS):
        predicted_loss[folds == fold] = ensemble_prediction(x[folds != fold], loss[folds != fold], x[folds == fold])
    surprise = loss - predicted_loss
    print(f"loss surrogate, cross-fitted: R2 {1 - surprise.var() / loss.var():.3f}")
    print(f"{'target':<34} {'noise-subset R2':>15} {'sparse Kendall tau':>19}")
    for name, slope in (("val_accuracy", 0.0), ("minus beta x loss surprise", beta), ("minus beta/2 x loss surprise",
                                                                                       beta / 2)):
        metrics = all_metrics(seed_means, ensemble_prediction(x, accuracy - slope * surprise, x_noise))
        print(f"{name:<34} {metrics['r2']:>15.3f} {metrics['sparse_kendall_tau']:>19.3f}")


if __name__ == "__main__":
    main()
