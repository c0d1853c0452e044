"""Which encoding and tree settings should the XGBoost accuracy surrogate use? Prints 5-fold cross-validated R2,
sparse Kendall tau and Spearman of validation accuracy; with ``--noise-subset``, those of models fitted on all
training records against the noise subset's seed means.

    python studies/xgb_features.py [--space darts|fbnet] [--protocol P] [--repeats 2] [--noise-subset]
                                      [--records N] [--noise-architectures N] [--only TEXT ...]

Compares, on the training-subset records of the space's default protocol or ``--protocol`` (the noise subset stays
out, as in a fit; params and FLOPs exact for that protocol's network): the one-hot bits with per-cell op counts and
depths that the DARTS surrogate read before 2026-11-30, the space's tabular features (``space.features``), and the
bundled input, those features (the newest version; earlier versions too where the space has them) plus the log of
the exact params and FLOPs, fitted as a release fit does (leaf size and rounds cross-validated), with the fixed 8
examples per leaf used before, and with the deeper, thinner trees used before that (depth 4, 2 examples per leaf); a
bootstrap ridge ensemble on the bundled input, which says how much of what the trees learn is additive in the
features; boosted trees fitted to that ridge's residuals (a linear base plus trees for what is not additive); and
XGBoost's random-forest mode (50 bagged trees of depth 8 per member instead of boosting); the bundled setting
with an absolute-error loss, with shallower trees and a smaller learning rate, and without its L2 penalty; and the
bundled input with the counts of Weisfeiler-Lehman labels of the space's graph (``space.graphs``) appended, at 1 to
3 refinements: a graph kernel's features, given to the trees; the plain mean of the bundled trees and the ridge, and
a stack of the bundled trees, the ridge and the random-forest mode, weighted by non-negative least squares on their
out-of-fold predictions inside the fitting part (a third, differently biased member). Each fold fits 10-member
ensembles with rounds (ridge: penalty) chosen by cross-validation on its own training part, as a fit does. The
same folds serve every setting; ``--repeats`` draws new folds (with ``--noise-subset``: new member seeds) and
averages (mean +- standard error over repeats). ``--records`` fixes the first N records and
``--noise-architectures`` the first N noise-subset architectures, so that readings taken while a collector appends
see the same records; ``--only`` compares only the settings whose name contains a text, e.g. ``--only version``
the versions of the space's features. Each setting is also printed minus the bundled one, paired over folds.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xgboost as xgb
from study_arguments import add_judging_options, records_to_fit

from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs
from nas_envs.surrogates.linear import RidgeEnsemble, cross_validated_alpha
from nas_envs.surrogates.metrics import all_metrics
from nas_envs.surrogates.stack import RANDOM_FOREST, StackEnsemble, fit_stack
from nas_envs.surrogates.xgb import cross_validated_rounds, cross_validated_settings, train_members


def one_hot_with_counts(space, genes: np.ndarray) -> np.ndarray:
    """The DARTS encoding before 2026-11-30: the (2 cells x 14 edges x 7 ops) one-hot bits, each cell's count of
    each op, and the cell depths."""
    bits = space.one_hot(genes)
    counts = bits.reshape(len(genes), 2, -1, 7).sum(axis=2).reshape(len(genes), -1)
    return np.concatenate([bits, counts, space.cell_depths(genes)], axis=1)


PREVIOUS_TREES = {"max_depth": 4, "min_child_weight": 2.0}


def weisfeiler_lehman_counts(space, genes: np.ndarray, refinements: int, min_architectures: int = 5
                             ) -> list[np.ndarray]:
    """Per architecture, how many nodes of its graph carry each Weisfeiler-Lehman label, after each of 1 to
    ``refinements`` rounds (one matrix per round, its labels those of every round so far): a node starts as its
    type, and each round relabels it by its label and the multiset of (edge type, label) of the edges into it (a
    cell computes forwards, so a node is what its inputs and their ops are). Labels held by fewer than
    ``min_architectures`` architectures are dropped. Labels are numbered in order of first appearance, so the
    columns are the same in every process."""
    node_type, edge_index, edge_type = space.graphs(genes)
    numbering: dict[tuple, int] = {}
    labels = [[numbering.setdefault(("type", int(t)), len(numbering)) for t in row] for row in node_type]
    counts = [collections.Counter(row) for row in labels]
    out = []
    for _ in range(refinements):
        for g, row in enumerate(labels):
            incoming: list[list[tuple[int, int]]] = [[] for _ in row]
            for source, target, kind in zip(*edge_index[g], edge_type[g]):
                incoming[target].append((int(kind), row[source]))
            labels[g] = [numbering.setdefault((label, tuple(sorted(edges))), len(numbering))
                         for label, edges in zip(row, incoming)]
            counts[g].update(labels[g])
        held = collections.Counter(label for c in counts for label in c)
        kept = sorted(label for label, k in held.items() if k >= min_architectures)
        out.append(np.array([[c[label] for label in kept] for c in counts], dtype=np.float32))
    return out


def forest(params: dict | None = None, rounds: int | None = None
           ) -> Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]:
    """Fit-and-predict with an XGBoost ensemble of ``rounds`` rounds, by default chosen by cross-validation as a
    fit does."""
    def fit_predict(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
        chosen = rounds or cross_validated_rounds(x_fit, y_fit, seed=seed, params=params)
        return mean_prediction(train_members(x_fit, y_fit, seed=seed, params=params, rounds=chosen), x_held)

    return fit_predict


def as_a_fit(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
    """Fit-and-predict as a release fit does: leaf size and rounds cross-validated on the fitting part."""
    params, rounds = cross_validated_settings(x_fit, y_fit, seed=seed)
    return mean_prediction(train_members(x_fit, y_fit, seed=seed, params=params, rounds=rounds), x_held)


def mean_prediction(members: list, x_held: np.ndarray) -> np.ndarray:
    data = xgb.DMatrix(np.asarray(x_held, dtype=np.float32))
    return np.mean([booster.predict(data) for booster in members], axis=0)


def fitted_ridge(x_fit: np.ndarray, y_fit: np.ndarray, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """The mean prediction of a bootstrap ridge ensemble whose penalty is chosen by cross-validation."""
    alpha = cross_validated_alpha(x_fit, y_fit[:, None], seed=seed)
    ensemble = RidgeEnsemble.fit(x_fit, y_fit[:, None], alpha, seed=seed)
    return lambda x: ensemble.predict(x).mean(axis=1)[:, 0]


def ridge(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
    """Fit-and-predict with a bootstrap ridge ensemble."""
    return fitted_ridge(x_fit, y_fit, seed)(x_held)


def trees_on_ridge_residuals(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
    """The ridge ensemble's prediction plus boosted trees fitted to what it leaves unexplained on ``x_fit``."""
    linear = fitted_ridge(x_fit, y_fit, seed)
    return linear(x_held) + forest()(x_fit, y_fit - linear(x_fit), x_held, seed)


def averaged(*members: Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
             ) -> Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]:
    """Fit-and-predict with the plain mean of several members' predictions."""
    def fit_predict(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
        return np.mean([member(x_fit, y_fit, x_held, seed) for member in members], axis=0)

    return fit_predict


def stacked(x_fit: np.ndarray, y_fit: np.ndarray, x_held: np.ndarray, seed: int) -> np.ndarray:
    """Fit-and-predict with the model kind ``stack`` (nas_envs.surrogates.stack), as a fit writes and reads it."""
    with tempfile.TemporaryDirectory() as folder:
        return StackEnsemble.load(fit_stack(x_fit, y_fit, Path(folder), seed)).predict(x_held).mean(axis=1)


def cross_validated_predictions(x: np.ndarray, y: np.ndarray, fold: np.ndarray, seed: int,
                                fit_predict: Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
                                ) -> np.ndarray:
    predicted = np.empty_like(y)
    for k in range(fold.max() + 1):
        fit, held = fold != k, fold == k
        predicted[held] = fit_predict(x[fit], y[fit], x[held], seed)
    return predicted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="compare only the settings whose name contains TEXT (repeatable)")
    add_judging_options(parser)
    args = parser.parse_args()
    space, protocol, _, data, cost_table = fitting_inputs(args.space, "xgb", args.protocol)
    n = records_to_fit(parser, args.records, len(data.genes))
    judged = slice(args.noise_architectures)  # the first noise-subset architectures (all by default)
    genes = np.concatenate([data.genes[:n], data.noise_genes[judged]])  # noise-subset rows follow the n fitted ones
    bundled = MODEL_KINDS["xgb"].inputs(Encodings(space, genes, cost_table))
    bundled_name = (f"space.features version {space.feature_version()} + log params/FLOPs, leaf size "
                    "cross-validated (bundled)")
    settings = {  # name: (inputs, model)
        "space.features": (space.features(genes), forest()),
        "space.features + log params/FLOPs, depth 4, 2 per leaf (before)": (bundled, forest(PREVIOUS_TREES)),
        "space.features + log params/FLOPs, 8 per leaf (before)": (bundled, forest()),
        bundled_name: (bundled, as_a_fit),
        "ridge on the bundled input": (bundled.astype(np.float64), ridge),
        "trees on the ridge's residuals": (bundled.astype(np.float64), trees_on_ridge_residuals),
        "random-forest mode": (bundled, forest(RANDOM_FOREST, rounds=1)),
        "bundled, absolute error": (bundled, forest({"objective": "reg:absoluteerror", "eval_metric": "rmse"})),
        "bundled, depth 2, learning rate 0.05": (bundled, forest({"max_depth": 2, "eta": 0.05})),
        "bundled, no L2 penalty": (bundled, forest({"lambda": 0.0})),
        "mean of the bundled trees and the ridge": (bundled.astype(np.float64), averaged(as_a_fit, ridge)),
        "stack of the bundled trees, the ridge and random-forest mode (out-of-fold, non-negative weights)":
            (bundled.astype(np.float64), stacked),
    }
    if args.space == "darts":
        settings = {"one-hot bits + op counts + depth, depth 4, 2 per leaf (before)":
                    (one_hot_with_counts(space, genes), forest(PREVIOUS_TREES)), **settings}
    for version in space.feature_versions[:-1]:  # the bundled input with each earlier version of the features
        settings[f"space.features version {version} + log params/FLOPs, leaf size cross-validated"] = (
            MODEL_KINDS["xgb"].inputs(Encodings(space, genes, cost_table, version)), as_a_fit)
    for refinements, counts in enumerate(weisfeiler_lehman_counts(space, genes, 3), start=1):
        settings[f"bundled + Weisfeiler-Lehman label counts, {refinements} refinements"] = (
            np.concatenate([bundled, counts], axis=1), as_a_fit)
    if args.only:
        settings = {name: setting for name, setting in settings.items() if any(text in name for text in args.only)}
        if not settings:
            parser.error(f"--only {args.only}: no setting's name contains that")
    y = data.targets["val_accuracy"][:n]
    seed_means = np.array([values.mean() for values in data.noise_targets["val_accuracy"][judged]])
    judged_on = (f"the seed means of {len(seed_means)} noise-subset architectures" if args.noise_subset
                 else "5-fold cross-validation")
    print(f"{protocol}: {n} training records ({data.data_lines} lines), validation accuracy, {judged_on} x "
          f"{args.repeats}")
    folds = [np.random.default_rng(repeat).permutation(n) % 5 for repeat in range(args.repeats)]
    readings = {}
    for name, (x, fit_predict) in settings.items():
        if args.noise_subset:
            scores = [all_metrics(seed_means, fit_predict(x[:n], y, x[n:], seed)) for seed in range(args.repeats)]
        else:
            scores = [all_metrics(y, cross_validated_predictions(x[:n], y, fold, seed, fit_predict))
                      for seed, fold in enumerate(folds)]
        values = {label: np.array([s[key] for s in scores]) for key, label in
                  (("r2", "R2"), ("sparse_kendall_tau", "sparse Kendall tau"), ("spearman", "Spearman"))}
        print(f"{name} ({x.shape[1]} columns): {summary(values)}")
        readings[name] = values
    # Folds (member seeds) move every setting alike: the paired difference is what tells settings apart.
    if bundled_name in readings and len(readings) > 1:
        print("Each minus the bundled setting, paired over the same folds and seeds:")
        for name, values in readings.items():
            if name != bundled_name:
                print(f"{name}: {summary({k: v - readings[bundled_name][k] for k, v in values.items()}, '+.3f')}")


def summary(values: dict[str, np.ndarray], number: str = ".3f") -> str:
    """Mean +- standard error over repeats of each metric."""
    return ", ".join(f"{label} {v.mean():{number}} +- {v.std() / np.sqrt(len(v)):.3f}" for label, v in values.items())

if __name__ == "__main__":
    main()
