"""Do the search rounds teach a surrogate where searches go? Each DARTS round trained in full, predicted by XGB fitted
with and without the rounds' trainings.

    python studies/round_value.py [--lines N] [--repeats 4]

For each search round k (from 1) whose every listed architecture is trained, XGB ensembles of the released recipe
(10 bootstrap members, cross-validated rounds; :func:`data_value.fit_predict`) are fitted on the training records
that are no round's ("uniform": random, targeted and incumbent trainings), on those plus the rounds before k (the
data a round's bundle had), on the same number of records with as many random ones swapped for the earlier rounds'
(more data told apart from data where searches go; not formed once the earlier rounds outnumber the random
records), and on the uniform records plus every round but k. Each is
judged on round k's architectures (their measured mean, seeds averaged): R2, Kendall tau and bias (prediction minus
measured); and, over the rounds, each fit's RMS error and the part of it beyond what seed noise explains, beside
the spread of the rounds' expected values. The rounds' own bundles are judged in the data card's round table; this
fits one recipe on one machine, so that only the data differs. ``--lines``: the data file's first N lines (default:
all), so that a reading taken while a collector appends can be taken again. A few CPU-minutes.
"""

from __future__ import annotations

import argparse
import collections

import numpy as np
from data_value import fit_predict

from nas_envs.assets import assets_dir
from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs
from nas_envs.groundtruth.search_rounds import read_round_lists
from nas_envs.surrogates.metrics import bias, kendall_tau, r2

UNIFORM = -1  # the round of a training record that is no round's
CONDITIONS = ("uniform only", "+ earlier rounds", "same size", "+ every other round")


def record_rounds(space, genes: np.ndarray, lists: list[dict]) -> np.ndarray:
    """Per training record (its ``genes``), the search round that listed its architecture, or :data:`UNIFORM`."""
    listed = space.as_batch([row["architecture"] for row in lists])
    by_genes = {tuple(g): row["round"] for g, row in zip(listed.tolist(), lists)}
    return np.array([by_genes.get(tuple(g), UNIFORM) for g in genes.tolist()])


def round_trainings(rounds: np.ndarray, genes: np.ndarray) -> dict[tuple[int, tuple], list[int]]:
    """Per trained round architecture, as (round, genes), the indices of its training records."""
    trainings: dict[tuple[int, tuple], list[int]] = collections.defaultdict(list)
    for index in np.flatnonzero(rounds != UNIFORM):
        trainings[int(rounds[index]), tuple(genes[index])].append(int(index))
    return trainings


def complete_rounds(lists: list[dict], trainings: dict[tuple[int, tuple], list[int]]) -> list[int]:
    """The rounds from 1 on whose every listed architecture has a training record."""
    trained = collections.Counter(number for number, _ in trainings)
    listed = collections.Counter(row["round"] for row in lists)
    return [number for number in sorted(listed) if number >= 1 and trained[number] == listed[number]]


def round_seed_variance(trainings: dict[tuple[int, tuple], list[int]], y: np.ndarray) -> float:
    """The seed variance of the round architectures trained more than once (searched architectures train more
    steadily than uniformly random ones)."""
    return float(np.mean([np.var(y[indices], ddof=1) for indices in trainings.values() if len(indices) >= 2]))


def fitting_rows(condition: str, rounds: np.ndarray, sources: np.ndarray, number: int, seed: int) -> np.ndarray | None:
    """The records a fit of ``condition`` reads when round ``number`` judges it; None for "same size" once the earlier
    rounds hold more records than there are random ones to swap for them."""
    uniform, earlier = rounds == UNIFORM, (rounds >= 0) & (rounds < number)
    if condition == "uniform only":
        return uniform
    if condition == "+ earlier rounds":
        return uniform | earlier
    if condition == "same size":
        random = np.flatnonzero(uniform & (sources == "random"))
        if earlier.sum() > len(random):
            return None
        swapped = np.random.default_rng([20261207, number, seed]).choice(random, int(earlier.sum()), replace=False)
        keep = uniform | earlier
        keep[swapped] = False
        return keep
    return uniform | ((rounds >= 0) & (rounds != number))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=None, help="read the data file's first N lines (default: all)")
    parser.add_argument("--repeats", type=int, default=4, help="member seeds (and random draws) per reading")
    args = parser.parse_args()
    if args.repeats < 2:
        parser.error(f"--repeats {args.repeats}: a standard error needs at least 2")
    space, protocol, _, data, cost_table = fitting_inputs("darts", "xgb", None, lines=args.lines)
    lists = read_round_lists(assets_dir() / "data" / "trajectories" / "search")
    x = MODEL_KINDS["xgb"].inputs(Encodings(space, data.genes, cost_table))
    y = data.targets["val_accuracy"]
    rounds = record_rounds(space, data.genes, lists)
    trainings = round_trainings(rounds, data.genes)
    numbers = complete_rounds(lists, trainings)
    if not numbers:
        raise SystemExit("no search round from 1 on is trained in full in the lines read")
    print(f"{protocol}: {data.data_lines} lines, {int((rounds == UNIFORM).sum())} uniform training records; "
          f"XGB judged on each round trained in full, mean of {args.repeats} member seeds\n")
    print("| round | architectures | " + " | ".join(f"{c}: records, R2 / tau / bias" for c in CONDITIONS) + " |")
    print("| --- | --- |" + " --- |" * len(CONDITIONS))
    scores = np.empty((len(numbers), len(CONDITIONS), args.repeats, 2))
    squared_errors = np.empty((len(numbers), len(CONDITIONS), args.repeats))
    noise, spread = np.empty(len(numbers)), np.empty(len(numbers))
    seed_variance = round_seed_variance(trainings, y)
    for row, number in enumerate(numbers):
        judged = [indices for (listed_in, _), indices in trainings.items() if listed_in == number]
        first = [indices[0] for indices in judged]
        truth = np.array([y[indices].mean() for indices in judged])
        noise[row] = np.mean([seed_variance / len(indices) for indices in judged])
        spread[row] = truth.var(ddof=1) - noise[row]
        cells = []
        for column, condition in enumerate(CONDITIONS):
            biases = []
            keeps = [fitting_rows(condition, rounds, data.sources, number, seed) for seed in range(args.repeats)]
            if keeps[0] is None:
                scores[row, column] = squared_errors[row, column] = np.nan
                cells.append("not formed")
                continue
            for seed, keep in enumerate(keeps):
                predicted = fit_predict(x[keep], y[keep], x[first], seed)
                scores[row, column, seed] = r2(truth, predicted), kendall_tau(truth, predicted)
                biases.append(bias(truth, predicted))
                squared_errors[row, column, seed] = np.mean((predicted - truth) ** 2)
            r2_mean, tau_mean = scores[row, column].mean(axis=0)
            cells.append(f"{int(keep.sum())}, {r2_mean:+.2f} / {tau_mean:+.2f} / {100 * np.mean(biases):+.2f} %")
        print(f"| {number} | {len(judged)} | " + " | ".join(cells) + " |")

    print("\nAgainst uniform only, mean over the rounds +- standard error across them (member seeds averaged first; "
          "'same size' over the rounds it is formed for: those whose earlier rounds hold no more records than there "
          "are random ones to swap):\n")
    print("| fitted on | rounds | R2 | Kendall tau |\n| --- | --- | --- | --- |")
    per_round = scores.mean(axis=2)  # rounds x conditions x (R2, tau)
    for column, condition in enumerate(CONDITIONS[1:], start=1):
        lift = per_round[:, column] - per_round[:, 0]
        lift = lift[~np.isnan(lift).any(axis=1)]
        mean = lift.mean(axis=0)
        error = lift.std(axis=0, ddof=1) / np.sqrt(len(lift)) if len(lift) > 1 else np.full(2, np.nan)
        print(f"| {condition} | {len(lift)} | {mean[0]:+.3f} +- {error[0]:.3f} | {mean[1]:+.3f} +- {error[1]:.3f} |")

    print(f"\nWhat bounds the error, over the rounds (seed std {100 * np.sqrt(seed_variance):.2f} % from the round "
          "architectures trained more than once; the spread of the rounds' expected values is the measured variance "
          f"less the seed noise's share: {100 * np.sqrt(spread.mean()):.2f} %):\n")
    print("| fitted on | RMS error | beyond seed noise |\n| --- | --- | --- |")
    for column, condition in enumerate(CONDITIONS):
        formed = ~np.isnan(squared_errors[:, column, 0])  # the seed noise over the same rounds as the errors
        mse = squared_errors[formed, column].mean()
        beyond = np.sqrt(max(mse - noise[formed].mean(), 0))
        print(f"| {condition} | {100 * np.sqrt(mse):.2f} % | {100 * beyond:.2f} % |")


if __name__ == "__main__":
    main()
