"""What more data would buy a space's XGB surrogate, judged on the noise subset's seed means: the records of each
targeted source against as many random ones, and the learning curve of random records with two extrapolations.

    python studies/data_value.py [--space darts|fbnet] [--protocol P] [--records N] [--noise-architectures N]
                                 [--target R2] [--repeats 6]

XGB ensembles of the released recipe (10 bootstrap members, cross-validated rounds) on the fitting side of the fixed
split that a release fit reads (``--records``: of the first N training records, so that a reading taken while a
collector appends can be taken again). Prints two markdown tables; ``studies/darts_diagnosis.py`` puts the DARTS
ones in docs/darts-diagnosis.md. A few CPU-minutes.
"""

from __future__ import annotations

import argparse

import numpy as np
import xgboost as xgb
from study_arguments import add_data_options, records_to_fit

from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs, held_out_split
from nas_envs.surrogates.xgb import cross_validated_rounds, train_members

#: the noise-subset R2 each space's next release aims at (its issue's target)
TARGET_R2 = {"darts": 0.75, "fbnet": 0.5}

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def fit_predict(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, seed: int) -> np.ndarray:
    """The noise-free prediction of an XGB ensemble of the released recipe (10 bootstrap members, cross-validated
    rounds) fitted on ``(x, y)``."""
    boosters = train_members(x, y, members=10, seed=seed, rounds=cross_validated_rounds(x, y, seed=seed))
    test = xgb.DMatrix(x_test)
    return np.mean([b.predict(test) for b in boosters], axis=0)


def noise_r2(means: np.ndarray, predicted: np.ndarray) -> float:
    """R2 of ``predicted`` on the noise subset's seed ``means``."""
    return float(1 - np.mean((means - predicted) ** 2) / np.var(means))


def fitting_split(inputs: tuple, records: int | None = None, noise_architectures: int | None = None) -> Split:
    """What a release fit reads from ``inputs`` (:func:`~nas_envs.fitting.surrogate_fit.fitting_inputs`): the
    inputs, validation accuracies (GPU records on the CPU's scale) and sources of the fitting side of the fixed split
    of the first ``records`` training records (all by default), and the inputs and seed means of the first
    ``noise_architectures`` noise-subset architectures (all by default) that judge it."""
    space, _, _, data, cost_table = inputs
    n = records or len(data.genes)
    fit, _ = held_out_split(data.sources[:n], data.keys[:n])
    judged = slice(noise_architectures)
    encode = MODEL_KINDS["xgb"].inputs
    x = encode(Encodings(space, data.genes[:n][fit], cost_table))
    x_noise = encode(Encodings(space, data.noise_genes[judged], cost_table))
    means = np.array([values.mean() for values in data.noise_targets["val_accuracy"][judged]])
    return x, data.targets["val_accuracy"][:n][fit], data.sources[:n][fit], x_noise, means


def record_value_by_source(split: Split, repeats: int = 6) -> list[str]:
    """What the records of each targeted source are worth to XGB: the noise-subset R2 a fit loses without them,
    against leaving out as many random records instead (paired: the same member seeds, other random draws per
    repeat)."""
    x, y, sources, x_noise, means = split
    full = [noise_r2(means, fit_predict(x, y, x_noise, seed)) for seed in range(repeats)]
    random_rows = np.flatnonzero(sources == "random")
    lines = ["| source | records | R2 lost without them | without as many random records | difference |",
             "| --- | --- | --- | --- | --- |"]
    for source in sorted(set(sources) - {"random"}):
        count = int(np.sum(sources == source))
        lost = np.empty((2, repeats))
        for seed in range(repeats):
            without_random = np.ones(len(y), dtype=bool)
            without_random[np.random.default_rng([20261202, seed]).choice(random_rows, count, replace=False)] = False
            for row, keep in enumerate((sources != source, without_random)):
                lost[row, seed] = full[seed] - noise_r2(means, fit_predict(x[keep], y[keep], x_noise, seed))
        cells = [f"{v.mean():+.3f} +- {v.std(ddof=1) / np.sqrt(repeats):.3f}" for v in (*lost, lost[0] - lost[1])]
        lines.append(f"| {source} | {count} | " + " | ".join(cells) + " |")
    return lines


def saturating_power_law(n: np.ndarray, asymptote: float, scale: float, exponent: float) -> np.ndarray:
    return asymptote - scale * n ** -exponent


def random_learning_curve(split: Split, target: float, shares: tuple[float, ...] = (1 / 6, 1 / 3, 1 / 2, 2 / 3, 5 / 6,
                                                                                  1.0),
                          repeats: int = 6, resamples: int = 200) -> list[str]:
    """XGB fitted on growing random draws of the random training records alone (the collection's bulk), judged on
    the noise subset, and two readings of where the curve goes: the gain of its last doubling carried on to R2
    ``target`` (optimistic, since such curves bend down), and a saturating power law (its asymptote's interval from
    refitting the law to bootstrap resamples of the repeats; fragile, as extrapolations are)."""
    from scipy.optimize import curve_fit

    x, y, sources, x_noise, means = split
    random_rows = np.flatnonzero(sources == "random")
    sizes = np.array([int(round(share * len(random_rows))) for share in shares])
    r2 = np.empty((len(sizes), repeats))
    for i, size in enumerate(sizes):
        for seed in range(repeats):
            rows = np.random.default_rng([20261203, seed]).choice(random_rows, size, replace=False)
            r2[i, seed] = noise_r2(means, fit_predict(x[rows], y[rows], x_noise, seed))
    curve = r2.mean(axis=1)

    def fitted(values: np.ndarray) -> np.ndarray:
        return curve_fit(saturating_power_law, sizes.astype(float), values, p0=(0.7, 5.0, 0.5), maxfev=20000)[0]

    law = fitted(curve)
    rng = np.random.default_rng(20261204)
    asymptotes = []
    for _ in range(resamples):
        try:
            asymptotes.append(fitted(r2[:, rng.integers(0, repeats, repeats)].mean(axis=1))[0])
        except RuntimeError:  # a resample the law cannot fit is no reading, not a value
            continue
    low, high = np.percentile(asymptotes, [16, 84])
    lines = ["| random records | R2 on the seed means | power law |", "| --- | --- | --- |"]
    for size, values, model in zip(sizes, r2, saturating_power_law(sizes, *law)):
        lines.append(f"| {size} | {values.mean():.3f} +- {values.std(ddof=1) / np.sqrt(repeats):.3f} | "
                     f"{model:.3f} |")
    half = int(np.argmin(np.abs(sizes - sizes[-1] / 2)))
    per_doubling = (curve[-1] - curve[half]) / np.log2(sizes[-1] / sizes[half])
    if curve[-1] >= target:
        reach = f"R2 {target} is reached at {sizes[-1]} random records."
    elif per_doubling > 0:
        doublings = (target - curve[-1]) / per_doubling
        reach = (f"Carried on at that rate, R2 {target} would take {doublings:.1f} more doublings, about "
                 f"{sizes[-1] * 2 ** doublings:,.0f} random records.")
    else:
        reach = f"At that rate R2 {target} is not reached."
    lines += ["", f"The last doubling ({sizes[half]} to {sizes[-1]} records) gained {per_doubling:+.3f} R2. {reach} "
              f"The power law fitted to the curve, R2 = {law[0]:.2f} - {law[1]:.3g} n^-{law[2]:.2f}, levels off at "
              f"{law[0]:.2f} (16-84 % over {len(asymptotes)} bootstrap resamples of the repeats: "
              f"{low:.2f}-{high:.2f})."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--target", type=float, default=None,
                        help="the R2 the learning curve is carried on to (default: the space's next target)")
    parser.add_argument("--repeats", type=int, default=6, help="member seeds and draws per reading")
    args = parser.parse_args()
    if args.repeats < 2:
        parser.error(f"--repeats {args.repeats}: a standard error needs at least 2")
    inputs = fitting_inputs(args.space, "xgb", args.protocol)
    protocol, data = inputs[1], inputs[3]
    records = records_to_fit(parser, args.records, len(data.genes))
    split = fitting_split(inputs, records, args.noise_architectures)
    print(f"{protocol}: the fitting side of the first {records} training records ({len(split[1])} records), judged "
          f"on {len(split[4])} noise-subset architectures' seed means\n")
    print("\n".join(record_value_by_source(split, args.repeats)) + "\n")
    print("\n".join(random_learning_curve(split, args.target or TARGET_R2[args.space], repeats=args.repeats)))


if __name__ == "__main__":
    main()
