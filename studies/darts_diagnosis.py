"""Why the DARTS surrogates explain less than the noise allows: what their residuals on the noise subset follow.

For each released accuracy surrogate (xgb, gin, their average) the residual of every noise-subset architecture is
its 3-seed mean validation accuracy minus the surrogate's noise-free mean. Against each candidate factor of the
architecture (parameters, FLOPs, op counts per cell, cell depth) the page gives the Spearman correlation and the
share of the residual variance a straight line in that factor explains (leave-one-out, so a factor that explains
nothing scores about 0 or below); against each factor of a training (its collection day, machine and threads) the
same for the per-training residuals. A factor that a model has left out shows up as a correlation well away from 0
and a positive share. It also prices the data: what the records of each targeted source are worth to XGB against
random ones, and the learning curve of random records with two extrapolations. Writes the generated page
docs/darts-diagnosis.md (regenerate it, do not edit it; about a minute and a half).

Usage: python studies/darts_diagnosis.py [--out docs/darts-diagnosis.md]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import numpy as np
from data_value import TARGET_R2, fit_predict, fitting_split, noise_r2, random_learning_curve, record_value_by_source
from scipy import stats

from nas_envs import make_benchmark
from nas_envs.assets import data_path
from nas_envs.benchmarks.model_kinds import Encodings
from nas_envs.fitting.surrogate_fit import fitting_inputs
from nas_envs.groundtruth.analysis import device, mutation_pair_summary, noise_groups, noise_summary
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
from nas_envs.groundtruth.records import read_protocol_records
from nas_envs.spaces.darts import CELLS, GENES_PER_NODE, NUM_NODES, OPS, PARAMETER_FREE_OPS
from nas_envs.surrogates.metrics import all_metrics, kendall_tau

SURROGATES = ("xgb", "gin", "xgb+gin")
POOLS = frozenset({"max_pool_3x3", "avg_pool_3x3"})


def architecture_factors(bench, genes: np.ndarray) -> dict[str, np.ndarray]:
    """Candidate factors of each architecture, by name."""
    space = bench.space
    costs = bench.exact_costs(genes)
    factors = {"log params": np.log(costs["params"]), "log FLOPs": np.log(costs["flops"])}
    depths = space.cell_depths(genes)
    for index, cell in enumerate(CELLS):
        factors[f"{cell} depth"] = depths[:, index]
        for label, ops in (("parameter-free", PARAMETER_FREE_OPS), ("pools", POOLS)):
            factors[f"{cell} {label}"] = np.array([space.count_ops(g, cell, ops) for g in genes], dtype=float)
        for op in OPS:
            factors[f"{cell} {op}"] = np.array([space.count_ops(g, cell, {op}) for g in genes], dtype=float)
    return factors


def loo_share(factor: np.ndarray, residual: np.ndarray) -> float:
    """Share of the residual variance a straight line in ``factor`` explains, by leave-one-out prediction."""
    if np.ptp(factor) == 0:
        return float("nan")
    errors = []
    for i in range(len(residual)):
        keep = np.arange(len(residual)) != i
        slope, intercept = np.polyfit(factor[keep], residual[keep], 1)
        errors.append(residual[i] - (slope * factor[i] + intercept))
    return float(1 - np.mean(np.square(errors)) / np.var(residual))


def table(rows: list[tuple[str, dict[str, tuple[float, float, float]]]]) -> list[str]:
    head = "| factor | " + " | ".join(f"{s}: rho (p) | {s}: LOO share" for s in SURROGATES) + " |"
    lines = [head, "| --- |" + " --- | --- |" * len(SURROGATES)]
    for name, cells in rows:
        parts = []
        for s in SURROGATES:
            rho, p, share = cells[s]
            parts += ["n/a", "n/a"] if np.isnan(rho) else [f"{rho:+.2f} ({p:.2g})", f"{share:+.3f}"]
        lines.append(f"| {name} | " + " | ".join(parts) + " |")
    return lines


def random_cpu_trainings(records: list[dict], space) -> tuple[np.ndarray, np.ndarray]:
    """Genes and validation accuracies of the random training architectures trained on a CPU: GPU records carry a
    device offset the fit corrects, which would mix in a second effect."""
    train = [r for r in records if r["subset"] == "train" and r["source"] == "random"
             and (r["environment"].get("device") or "cpu") == "cpu"]
    return space.as_batch([r["arch"] for r in train]), np.array([r["val_accuracy"] for r in train])


def residual_concentration(means: np.ndarray, predicted: dict[str, np.ndarray], tail: float = 0.1) -> list[str]:
    """How much of each surrogate's squared error the worst architectures carry, and its R2 over the others."""
    lines = ["| surrogate | R2 | share of the squared error in the worst 5 | in the worst "
             f"{100 * tail:.0f} % | R2 without the worst {100 * tail:.0f} % |", "| --- | --- | --- | --- | --- |"]
    worst = int(round(tail * len(means)))
    for s, prediction in predicted.items():
        squared = (means - prediction) ** 2
        order = np.argsort(-squared)
        rest = order[worst:]
        r2_rest = 1 - squared[rest].sum() / np.sum((means[rest] - means[rest].mean()) ** 2)
        shares = [squared[order[:k]].sum() / squared.sum() for k in (5, worst)]
        lines.append(f"| {s} | {1 - squared.sum() / np.sum((means - means.mean()) ** 2):.2f} | {shares[0]:.2f} | "
                     f"{shares[1]:.2f} | {r2_rest:.2f} |")
    return lines


def largest_residuals(space, genes: np.ndarray, means: np.ndarray, predicted: np.ndarray, count: int = 8
                      ) -> list[str]:
    """The architectures with the largest residuals of one surrogate, with the counts that describe them."""
    lines = ["| measured (%) | predicted (%) | normal: pools, skips | reduce: pools, skips | cell depths |",
             "| --- | --- | --- | --- | --- |"]
    for i in np.argsort(-np.abs(means - predicted))[:count]:
        cells = [f"{space.count_ops(genes[i], cell, POOLS)}, {space.count_ops(genes[i], cell, {'skip_connect'})}"
                 for cell in CELLS]
        depths = ", ".join(str(int(d)) for d in space.cell_depths(genes[i][None])[0])
        lines.append(f"| {100 * means[i]:.2f} | {100 * predicted[i]:.2f} | {cells[0]} | {cells[1]} | {depths} |")
    return lines


def edit_effects(records: list[dict], benches: dict, resamples: int = 2000) -> list[str]:
    """How far one edit moves accuracy, measured (the ``mutation-pair`` source: architecture ``2k`` random, ``2k + 1``
    the same with one op or one input changed) and as each surrogate predicts it: the root mean square error of
    each surrogate's predicted change net of the seed noise of the measured one, with a 90 % bootstrap interval
    over the pairs (seeded). None of these architectures was fitted on by the released surrogates."""
    values: dict[int, list[float]] = collections.defaultdict(list)
    arch: dict[int, str] = {}
    for r in records:
        if r["source"] == "mutation-pair" and r["subset"] == "train":
            values[r["index"]].append(r["val_accuracy"])
            arch[r["index"]] = r["arch"]
    firsts = [i for i in sorted(values) if i % 2 == 0 and len(values[i]) >= 2 and len(values.get(i + 1, ())) >= 2]
    if len(firsts) < 3:
        return [f"{len(firsts)} mutation pairs with two or more seeds on both sides: too few to read."]
    summary = mutation_pair_summary(records)
    seed_variance = float(np.mean([np.var(values[i + k], ddof=1) for i in firsts for k in (0, 1)]))
    measured = np.array([np.mean(values[i + 1]) - np.mean(values[i]) for i in firsts])
    sampling = np.array([seed_variance * (1 / len(values[i]) + 1 / len(values[i + 1])) for i in firsts])
    space = benches["xgb"].space
    before, after = (space.as_batch([arch[i + k] for i in firsts]) for k in (0, 1))
    # an edit that changes an input (slots 0 and 2 of a node) rather than only ops
    changed = (before != after).reshape(len(firsts), -1, GENES_PER_NODE)
    kinds = np.where(changed[:, :, 0::2].any(axis=(1, 2)), "input", "op")

    def net_std(rows: np.ndarray) -> float:
        return float(np.sqrt(max(np.mean(measured[rows] ** 2) - np.mean(sampling[rows]), 0.0)))

    lines = [
        f"{len(firsts)} pairs ({int(sum(len(values[i]) + len(values[i + 1]) for i in firsts))} trainings); the "
        f"change of the seed mean from the random architecture to its edit: root mean square "
        f"{100 * np.sqrt(np.mean(measured**2)):.2f} %, where the seed noise of the two means alone gives "
        f"{100 * np.sqrt(np.mean(sampling)):.2f} %; net of it, std "
        f"{100 * net_std(np.arange(len(firsts))):.2f} % over all pairs, "
        + ", ".join(f"{100 * net_std(np.flatnonzero(kinds == kind)):.2f} % over the {np.sum(kinds == kind)} "
                    f"{kind} edits" for kind in ("op", "input") if np.any(kinds == kind))
        + (f"; architectures one edit apart correlate by {summary['correlation_one_edit']:.2f} (90 % interval "
           f"{summary['correlation_one_edit_90'][0]:.2f} to {summary['correlation_one_edit_90'][1]:.2f}; the "
           "data card's `mutation pairs`)." if summary.get("correlation_one_edit_90") else "."),
        "",
        "| surrogate | std of its predicted change (%) | correlation with the measured change | root mean square "
        "error of its predicted change, net of seed noise (%, 90 % interval) |",
        "| --- | --- | --- | --- |",
    ]
    rng = np.random.default_rng(0)
    draws = [rng.integers(len(firsts), size=len(firsts)) for _ in range(resamples)]

    def error(predicted: np.ndarray, rows: np.ndarray) -> float:
        excess = np.mean((measured[rows] - predicted[rows]) ** 2) - np.mean(sampling[rows])
        return float(np.sqrt(max(excess, 0.0)))

    for name in SURROGATES:
        predicted = np.subtract(*(benches[name].evaluate(g, noise=False)["val_accuracy"] for g in (after, before)))
        low, high = np.quantile([error(predicted, rows) for rows in draws], [0.05, 0.95])
        lines.append(f"| {name} | {100 * np.std(predicted):.2f} | {np.corrcoef(predicted, measured)[0, 1]:.2f} | "
                     f"{100 * error(predicted, np.arange(len(firsts))):.2f} ({100 * low:.2f} to {100 * high:.2f}) |")
    return lines


def edit_distances(genes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Edits (an op or an input changed) between every architecture of ``genes`` and every one of ``others``: per
    node the changed genes, in whichever order of its two incoming edges changes fewer (the order of a node's two
    edges does not change the network)."""
    first = genes.reshape(len(genes), 1, -1, GENES_PER_NODE)
    second = others.reshape(1, len(others), -1, GENES_PER_NODE)
    swapped = second[..., [2, 3, 0, 1]]
    return np.minimum((first != second).sum(-1), (first != swapped).sum(-1)).sum(-1)


def correlation_by_distance(records: list[dict], space, groups: dict[str, list[dict]],
                            bands: tuple[tuple[int, int], ...] = ((1, 1), (2, 10), (11, 13), (14, 16), (17, 19),
                                                                  (20, 22), (23, 32))) -> list[str]:
    """How alike architectures some edits apart train: half the mean squared difference of two single trainings,
    less the seed variance, is the semivariance of their architecture effects; one minus it over the architecture
    variance is their correlation. Pairs of the random training architectures (CPU trainings) by edit distance, the
    mutation pairs' seed means for one edit; and how far each noise-subset architecture is from its nearest
    training architecture of any source, which is as near as a surrogate's data comes to a new architecture."""
    noise = noise_summary(records)
    seed_variance = float(np.mean([np.var([r["val_accuracy"] for r in g], ddof=1) for g in groups.values()]))
    architecture_variance = noise["architecture_std"] ** 2
    genes, accuracy = random_cpu_trainings(records, space)
    upper = np.triu_indices(len(genes), 1)
    distance = edit_distances(genes, genes)[upper]
    squared = np.subtract.outer(accuracy, accuracy)[upper] ** 2
    lines = [f"From the noise subset: architecture std {100 * noise['architecture_std']:.2f} % (net of seed noise), "
             f"seed std {100 * np.sqrt(seed_variance):.2f} %.", "",
             "| edits apart | pairs | correlation of the architecture effects |", "| --- | --- | --- |"]
    summary = mutation_pair_summary(records)
    if summary.get("correlation_one_edit") is not None:
        lines.append(f"| 1 (mutation pairs, seed means) | {summary['pairs']} | "
                     f"{summary['correlation_one_edit']:.2f} |")
    for low, high in bands:
        chosen = (distance >= low) & (distance <= high)
        if chosen.sum() >= 20:
            semivariance = squared[chosen].mean() / 2 - seed_variance
            lines.append(f"| {low}-{high} | {chosen.sum()} | {1 - semivariance / architecture_variance:.2f} |")
    noise_genes = space.as_batch(sorted(groups))
    train_genes = space.as_batch(sorted({r["arch"] for r in records if r["subset"] == "train"}))
    nearest = edit_distances(noise_genes, train_genes).min(axis=1)
    quantiles = np.percentile(nearest, [0, 50, 100])
    lines += ["", f"The nearest training architecture of a noise-subset architecture is {quantiles[1]:.0f} edits "
              f"away (median; {quantiles[0]:.0f} to {quantiles[2]:.0f}) among {len(train_genes)} distinct training "
              f"architectures; an architecture has {genes.shape[1]} genes."]
    return lines


def isomorph_fitting(records: list[dict], bench, groups: dict[str, list[dict]], repeats: int = 4) -> list[str]:
    """Do the surrogates lose what isomorphic cells share? The space keeps architectures that differ only by the
    numbering of a cell's intermediate nodes apart (``DartsSpace.isomorphs``), and the XGB encoding's per-edge
    columns differ between them, so trees must learn from data that they train alike. XGB ensembles of the released
    recipe fitted on the random CPU training records, judged on the noise subset's 3-seed means: with the genes as
    collected, with every architecture (fitted and judged) replaced by the first of its isomorphs, and with each
    judged architecture's prediction averaged over its isomorphs."""
    space = bench.space
    archs = sorted(groups)
    genes = space.as_batch(archs)
    means = np.array([np.mean([r["val_accuracy"] for r in groups[a]]) for a in archs])
    train_genes, y_train = random_cpu_trainings(records, space)
    encode = lambda g: Encodings(space, g, bench.cost_table, bench.feature_version).features_and_log_costs  # noqa: E731
    train_isomorphs = [space.isomorphs(g) for g in train_genes]  # each computed once, read three ways
    isomorphs = [space.isomorphs(g) for g in genes]
    counts = np.array([len(i) for i in train_isomorphs])
    x_train, x_judged = encode(train_genes), encode(genes)
    x_train_first = encode(np.array([i[0] for i in train_isomorphs]))
    x_judged_first = encode(np.array([i[0] for i in isomorphs]))
    x_judged_all = encode(np.concatenate(isomorphs))
    owner = np.repeat(np.arange(len(genes)), [len(i) for i in isomorphs])

    settings = {
        "genes as collected": lambda seed: fit_predict(x_train, y_train, x_judged, seed),
        "every architecture as the first of its isomorphs":
            lambda seed: fit_predict(x_train_first, y_train, x_judged_first, seed),
        "prediction averaged over the judged architecture's isomorphs":
            lambda seed: np.bincount(owner, fit_predict(x_train, y_train, x_judged_all, seed)) / np.bincount(owner),
    }
    lines = [f"The {len(train_genes)} random CPU training architectures have a median of {np.median(counts):.0f} "
             f"isomorphs each (mean {counts.mean():.1f}, largest {counts.max()}); "
             f"{len({tuple(i[0]) for i in train_isomorphs})} distinct classes among them. XGB ensembles "
             f"fitted on them, judged on the {len(archs)} noise-subset architectures' 3-seed means, {repeats} "
             "member seeds:", "",
             "| encoding | R2 | Kendall tau |", "| --- | --- | --- |"]
    for name, predict in settings.items():
        r2s, taus = np.array([(1 - np.mean((means - p) ** 2) / np.var(means), kendall_tau(means, p))
                              for p in (predict(seed) for seed in range(repeats))]).T
        lines.append(f"| {name} | {r2s.mean():.3f} +- {r2s.std(ddof=1) / np.sqrt(repeats):.3f} | "
                     f"{taus.mean():.3f} +- {taus.std(ddof=1) / np.sqrt(repeats):.3f} |")
    return lines


def seed_mean_fitting(records: list[dict], bench, groups: dict[str, list[dict]], repeats: int = 2,
                      folds: int = 5) -> list[str]:
    """Does fitting on seed means help? XGB ensembles (the released recipe) fitted on (a) the 3-seed means of the
    other noise-subset architectures, (b) as many trainings as (a) spent, one seed each of distinct random training
    architectures, (c) one seed of the same architectures as (a), (d) as many random training architectures as (c),
    all scored against the held-out folds' 3-seed means (cross-validation over the noise subset)."""
    space = bench.space
    archs = sorted(groups)
    genes = space.as_batch(archs)
    x_noise = Encodings(space, genes, bench.cost_table, bench.feature_version).features_and_log_costs
    means = np.array([np.mean([r["val_accuracy"] for r in groups[a]]) for a in archs])
    first = np.array([min(groups[a], key=lambda r: r["replicate"])["val_accuracy"] for a in archs])
    train_genes, y_train = random_cpu_trainings(records, space)
    x_train = Encodings(space, train_genes, bench.cost_table, bench.feature_version).features_and_log_costs

    settings = {"(a) 3-seed means of the other noise architectures": [], "(b) one seed each, as many trainings as (a)":
                [], "(c) one seed of (a)'s architectures": [], "(d) one seed each, as many trainings as (c)": []}
    for repeat in range(repeats):
        rng = np.random.default_rng([20261201, repeat])
        fold_of = rng.permutation(len(archs)) % folds
        predicted = {name: np.empty(len(archs)) for name in settings}
        for fold in range(folds):
            test, fit = fold_of == fold, fold_of != fold
            n_fit = int(fit.sum())
            draws = rng.choice(len(y_train), size=3 * n_fit, replace=False)
            seed = 100 * repeat + fold
            inputs = ((x_noise[fit], means[fit]), (x_train[draws], y_train[draws]), (x_noise[fit], first[fit]),
                      (x_train[draws[:n_fit]], y_train[draws[:n_fit]]))
            for name, (x, y) in zip(settings, inputs):
                predicted[name][test] = fit_predict(x, y, x_noise[test], seed)
        for name in settings:
            r2 = noise_r2(means, predicted[name])
            settings[name].append((r2, kendall_tau(means, predicted[name])))
    lines = ["| fitted on | trainings per fit | R2 on held-out 3-seed means | Kendall tau |",
             "| --- | --- | --- | --- |"]
    n_fit = int(round(len(archs) * (folds - 1) / folds))
    for (name, results), trainings in zip(settings.items(), (3 * n_fit, 3 * n_fit, n_fit, n_fit)):
        r2s, taus = np.array(results).T
        lines.append(f"| {name} | {trainings} | {r2s.mean():.2f} (runs {', '.join(f'{v:.2f}' for v in r2s)}) | "
                     f"{taus.mean():.2f} |")
    return lines


def held_out_by_device(records: list[dict], benches: dict) -> list[str]:
    """The released surrogates on the held-out training records (the fixed split no fit reads), per device."""
    from nas_envs.fitting.surrogate_fit import held_out_split

    train = [r for r in records if r["subset"] == "train"]
    _, held = held_out_split(np.array([r["source"] for r in train]), np.array([r["job"] for r in train]))
    rows = [train[i] for i in held]
    genes = benches["xgb"].space.as_batch([r["arch"] for r in rows])
    measured = np.array([r["val_accuracy"] for r in rows])
    devices = np.array([device(r) for r in rows])
    lines = ["| device | records | " + " | ".join(f"{s}: R2, MAE (%), bias (%)" for s in SURROGATES) + " |",
             "| --- | --- |" + " --- |" * len(SURROGATES)]
    predicted = {s: b.evaluate(genes, noise=False)["val_accuracy"] for s, b in benches.items()}
    for name in ("all", *sorted(set(devices))):
        keep = np.ones(len(rows), dtype=bool) if name == "all" else devices == name
        cells = []
        for s in SURROGATES:
            metrics = all_metrics(measured[keep], predicted[s][keep])
            cells.append(f"{metrics['r2']:.2f}, {100 * metrics['mae']:.2f}, {100 * metrics['bias']:+.2f}")
        lines.append(f"| {name} | {int(keep.sum())} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/darts-diagnosis.md"))
    args = parser.parse_args()
    protocol = DEFAULT_PROTOCOL["darts"]
    records = read_protocol_records(data_path(protocol), protocol)
    groups = noise_groups(records, minimum=3)
    archs = sorted(groups)
    means = np.array([np.mean([r["val_accuracy"] for r in groups[a]]) for a in archs])
    benches = {s: make_benchmark("darts", surrogate=s) for s in SURROGATES}
    genes = benches["xgb"].space.as_batch(archs)
    predicted = {s: b.evaluate(genes, noise=False)["val_accuracy"] for s, b in benches.items()}
    residuals = {s: means - predicted[s] for s in SURROGATES}
    split = fitting_split(fitting_inputs("darts", "xgb", protocol))

    factor_rows = []
    for name, values in architecture_factors(benches["xgb"], genes).items():
        cells = {}
        for s in SURROGATES:
            if np.ptp(values) == 0:
                cells[s] = (float("nan"),) * 3
                continue
            rho, p = stats.spearmanr(values, residuals[s])
            cells[s] = (float(rho), float(p), loo_share(values, residuals[s]))
        factor_rows.append((name, cells))

    # per training: its deviation from the surrogate mean against facts of the training
    trainings = [(a, r) for a in archs for r in groups[a]]
    index = {a: i for i, a in enumerate(archs)}
    facts = {
        "collection day": [r["finished_at"][:10] for _, r in trainings],
        "processor": [r["environment"].get("processor", "?") for _, r in trainings],
        "threads": [str(r["environment"].get("threads", "?")) for _, r in trainings],
        "device": [r["environment"].get("device") or "cpu (before the field)" for _, r in trainings],
    }
    fact_lines = ["| fact of the training | values (trainings) | xgb: mean residual per value, +- standard error over "
                  "its architectures (%) |", "| --- | --- | --- |"]
    for name, values in facts.items():
        counts = collections.Counter(values)
        per_value = []
        for value in sorted(counts):
            by_arch: dict[str, list[float]] = collections.defaultdict(list)
            for (a, r), v in zip(trainings, values):
                if v == value:
                    by_arch[a].append(r["val_accuracy"] - predicted["xgb"][index[a]])
            arch_means = np.array([np.mean(v) for v in by_arch.values()])
            error = arch_means.std(ddof=1) / np.sqrt(len(arch_means)) if len(arch_means) > 1 else float("nan")
            per_value.append(f"{value}: {100 * arch_means.mean():+.2f} +- {100 * error:.2f} ({len(arch_means)} "
                             "architectures)")
        fact_lines.append(f"| {name} | {', '.join(f'{v} ({n})' for v, n in sorted(counts.items()))} | "
                          f"{'; '.join(per_value)} |")

    quality = ["| surrogate | R2 on the 3-seed means | Spearman rho | residual std (%) |", "| --- | --- | --- | --- |"]
    for s in SURROGATES:
        r2 = 1 - np.var(residuals[s]) / np.var(means) - np.mean(residuals[s]) ** 2 / np.var(means)
        quality.append(f"| {s} | {r2:.2f} | {stats.spearmanr(predicted[s], means)[0]:.2f} | "
                       f"{100 * np.std(residuals[s]):.2f} |")
    strongest = max(((name, s, cells[s][2]) for name, cells in factor_rows for s in SURROGATES
                     if not np.isnan(cells[s][2])), key=lambda item: item[2])
    lines = [
        "# DARTS surrogates: what their residuals follow",
        "",
        "Generated by `python studies/darts_diagnosis.py` from the committed noise subset of "
        f"`{protocol}` ({len(archs)} architectures with 3 seeds each, {len(trainings)} trainings) and the released "
        "`darts-v0` surrogates; regenerate it rather than editing it.",
        "",
        "Residual = 3-seed mean validation accuracy - the surrogate's noise-free mean.",
        "",
        *quality,
        "",
        "## Where the residual sits",
        "",
        "A few architectures carry much of the squared error:",
        "",
        *residual_concentration(means, predicted),
        "",
        "The largest residuals of `xgb+gin` (pools: max and average pooling; with ops drawn uniformly a cell has "
        f"{2 * NUM_NODES * len(POOLS) / len(OPS):.1f} pools and {2 * NUM_NODES / len(OPS):.1f} skips on average):",
        "",
        *largest_residuals(benches["xgb"].space, genes, means, predicted["xgb+gin"]),
        "",
        "## Factors of the architecture",
        "",
        "Spearman correlation of the residual with each factor (p-value; with "
        f"{len(factor_rows)} factors and 3 surrogates, p below about {0.05 / len(factor_rows) / 3:.1g} survives a "
        "Bonferroni correction), and the leave-one-out share of the residual variance that a straight line in the "
        "factor explains (0: none; negative: worse than the mean).",
        "",
        *table(factor_rows),
        "",
        f"Largest leave-one-out share: {strongest[2]:+.3f} ({strongest[0]}, {strongest[1]}).",
        "",
        "## Facts of the trainings",
        "",
        *fact_lines,
        "",
        "## Held-out training records by device",
        "",
        "The released surrogates on the held-out side of the fixed split of the training records (never fitted on; "
        "single trainings, so the seed noise caps R2 here), per device of the training (bias: measured - "
        "predicted). GPU accuracies are measured as they are, without the offset a fit adds to them:",
        "",
        *held_out_by_device(records, benches),
        "",
        "## Does fitting on seed means help?",
        "",
        "XGB ensembles of the released recipe (10 bootstrap members, cross-validated rounds), fitted on the noise "
        "subset's 3-seed means against single seeds of random training architectures (CPU trainings), "
        "5-fold cross-validation over the noise subset, 2 repeats with other folds and draws:",
        "",
        *seed_mean_fitting(records, benches["xgb"], groups),
        "",
        "## What more data would buy",
        "",
        "XGB ensembles of the released recipe (10 bootstrap members, cross-validated rounds) on the fitting side of "
        "the fixed split that a release fit reads, judged on the noise subset's 3-seed means. Records of the "
        "targeted sources against as many random records, each left out of a fit "
        "(mean +- standard error over 6 member seeds):",
        "",
        *record_value_by_source(split),
        "",
        "The same recipe on growing random draws of the random training records alone (6 draws and member seeds "
        "per size):",
        "",
        *random_learning_curve(split, TARGET_R2["darts"]),
        "",
        "Whether a GIN ensemble learns faster than XGB from the same random draws: `python "
        "studies/gin_learning_curve.py` (GIN members cost minutes each, so it is not part of this page).",
        "",
        "## How far apart architectures train alike",
        "",
        "If one edit moves accuracy by much of the spread across architectures, the landscape is rougher than a "
        "few thousand samples can teach. If it does not, what matters is how far a new architecture is from the "
        "data, and how fast likeness fades with distance.",
        "",
        *edit_effects(records, benches),
        "",
        *correlation_by_distance(records, benches["xgb"].space, groups),
        "",
        "## Isomorphic cells",
        "",
        "Renumbering a cell's intermediate nodes, in any order in which each still reads only earlier ones, builds the "
        "same network up to the order of its channels. The space keeps such architectures apart, as NAS-Bench-301 "
        "does; do the surrogates lose what they share?",
        "",
        *isomorph_fitting(records, benches["xgb"], groups),
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")
    print("\n".join(quality))
    print(f"largest LOO share: {strongest}")


if __name__ == "__main__":
    main()
