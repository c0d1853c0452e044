"""The data card's numbers and the seed paper's analyses, recomputed from a collection file.

``nas-envs data-card darts`` prints the numbers (counts by source and subset, cost per training, noise ratio)
and draws validation error against the number of parameter-free ops in the normal cell, against the number of
skip connections in the normal cell, and against the normal cell's depth (NAS-Bench-301, Section 4).
"""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np

from nas_envs.spaces import get_space
from nas_envs.spaces.darts import PARAMETER_FREE_OPS


def noise_groups(records: list[dict], minimum: int = 2) -> dict[str, list[dict]]:
    """The noise subset's records per architecture, for architectures with at least ``minimum`` seeds."""
    groups: dict[str, list[dict]] = collections.defaultdict(list)
    for r in records:
        if r["subset"] == "noise":
            groups[r["arch"]].append(r)
    return {arch: group for arch, group in groups.items() if len(group) >= minimum}


def noise_summary(records: list[dict], metric: str = "val_accuracy") -> dict[str, float]:
    """Across-architecture std of the seed means of ``metric`` over the mean within-architecture seed std, on the
    architectures whose seeds all hold ``metric``.

    For validation accuracy, also the ratio after each epoch (from the learning curves). Where the records also
    hold test accuracy: the correlation of each training's deviation from its architecture's seed mean on
    validation and on test accuracy. Near 1, a seed changes how good the network is, not which images happen to
    be right, and a larger evaluation set would not lower the seed noise.

    What it would cost to raise the ratio by averaging seeds: ``architecture_std`` is the spread of the
    architectures' expected values net of seed noise (the variance of the seed means less their mean sampling
    variance), and ``seeds_to_average`` how many seeds a benchmark target must average for that spread to be 2
    and 3 times the target's own noise (``None`` where no spread is left to measure)."""
    # records from before a metric was recorded (validation loss since 2026-11-30) leave their architecture out
    groups = [group for group in noise_groups(records).values() if all(metric in r for r in group)]
    repeated = [np.array([r[metric] for r in group]) for group in groups]
    if len(repeated) < 2:
        return {"architectures": len(repeated)}
    seed_std = float(np.mean([v.std(ddof=1) for v in repeated]))
    across = float(np.std([v.mean() for v in repeated], ddof=1))
    out = {
        "architectures": len(repeated),
        "trainings": int(sum(len(v) for v in repeated)),
        "mean_seed_std": seed_std,
        "across_architecture_std": across,
        "ratio": across / seed_std,
    }
    seed_variance = float(np.mean([v.var(ddof=1) for v in repeated]))
    architecture_variance = across**2 - float(np.mean([v.var(ddof=1) / len(v) for v in repeated]))
    out["architecture_std"] = float(np.sqrt(max(architecture_variance, 0.0)))
    out["seeds_to_average"] = {
        str(ratio): int(np.ceil(ratio**2 * seed_variance / architecture_variance - 1e-9))
        if architecture_variance > 0 else None for ratio in (2, 3)
    }
    epochs = {len(r.get("val_accuracy_curve", ())) for group in groups for r in group}
    if metric == "val_accuracy" and len(epochs) == 1 and epochs != {0}:
        # the same ratio after every epoch: does longer training separate architectures or bring them together?
        curves = [np.array([r["val_accuracy_curve"] for r in group]) for group in groups]
        out["ratio_by_epoch"] = [float(np.std([c[:, e].mean() for c in curves], ddof=1)
                                       / np.mean([c[:, e].std(ddof=1) for c in curves])) for e in range(epochs.pop())]
    by_replicate = [{r["replicate"]: r[metric] for r in group if "replicate" in r} for group in groups]
    common = sorted(set.intersection(*(set(b) for b in by_replicate)))
    if len(common) >= 2:  # how well one seed's ranking of the architectures predicts another's
        from scipy import stats

        pairs = [(a, b) for i, a in enumerate(common) for b in common[i + 1 :]]
        out["seed_kendall_tau"] = float(np.mean([stats.kendalltau([b[x] for b in by_replicate],
                                                                  [b[y] for b in by_replicate]).statistic
                                                 for x, y in pairs]))
    sources = {r.get("source") for group in groups for r in group}
    if metric == "val_accuracy" and len(sources) > 1 and "random" in sources:
        random_only = [r for group in groups if group[0].get("source") == "random" for r in group]
        out["random_architectures_only"] = {k: v for k, v in noise_summary(random_only, metric).items()
                                            if k in ("architectures", "ratio", "mean_seed_std",
                                                     "across_architecture_std", "seed_kendall_tau")}
    if metric != "test_accuracy" and all("test_accuracy" in r for group in groups for r in group):
        test = [np.array([r["test_accuracy"] for r in group]) for group in groups]
        out["seed_deviation_correlation_with_test"] = float(np.corrcoef(
            np.concatenate([v - v.mean() for v in repeated]), np.concatenate([v - v.mean() for v in test]))[0, 1])
    return out


def noise_subset_agreement(records_a: list[dict], records_b: list[dict]) -> dict[str, float]:
    """Kendall tau, Spearman and Pearson r between the seed means of the noise-subset architectures two protocols
    share, and beside them the ceiling that seed noise sets: the same rank correlations between one training of
    the first protocol and the mean of its other seeds, on the shared architectures trained more than once."""
    from scipy import stats

    def seed_means(records: list[dict]) -> dict[str, float]:
        return {arch: float(np.mean([r["val_accuracy"] for r in group]))
                for arch, group in noise_groups(records, minimum=1).items()}

    a, b = seed_means(records_a), seed_means(records_b)
    shared = sorted(set(a) & set(b))
    if len(shared) < 3:
        return {"shared_architectures": len(shared)}
    x, y = [a[k] for k in shared], [b[k] for k in shared]
    out = {
        "shared_architectures": len(shared),
        "kendall_tau": float(stats.kendalltau(x, y).statistic),
        "spearman": float(stats.spearmanr(x, y).statistic),
        "pearson": float(stats.pearsonr(x, y).statistic),
    }
    # the ceiling seed noise sets: one training of the first protocol against the mean of its other seeds
    groups = noise_groups(records_a, minimum=2)
    repeated = [k for k in shared if k in groups]
    if len(repeated) >= 3:
        one = [groups[k][0]["val_accuracy"] for k in repeated]
        others = [np.mean([r["val_accuracy"] for r in groups[k][1:]]) for k in repeated]
        out["seed_ceiling_kendall_tau"] = float(stats.kendalltau(one, others).statistic)
        out["seed_ceiling_spearman"] = float(stats.spearmanr(one, others).statistic)
    return out


def device(record: dict) -> str:
    """Where a record's training ran: ``"cpu"`` (also for records older than the field) or ``"cuda"``."""
    return record.get("environment", {}).get("device", "cpu")


def random_train_mean(records: list[dict], metric: str) -> dict | None:
    """Mean ``metric`` of the uniformly random training records, with its standard error (None: fewer than 2)."""
    values = np.array([r[metric] for r in records if (r["subset"], r["source"]) == ("train", "random")])
    if len(values) < 2:
        return None
    return {"records": len(values), "mean": float(values.mean()),
            "standard_error": float(values.std(ddof=1) / np.sqrt(len(values)))}


MIN_OFFSET_RECORDS = 20


def device_offsets(records: list[dict], metrics: tuple[str, ...], reference: str = "cpu") -> dict[str, dict]:
    """Per device other than ``reference`` and per metric: what to add to that device's values to put them on the
    reference's scale, i.e. the gap between the mean of the reference's uniformly random training records and the
    device's (random architectures are drawn alike on every device, so the gap estimates the device's effect), with
    its standard error. A device or reference with fewer than ``MIN_OFFSET_RECORDS`` such records gets no offset:
    a gap from a few records is mostly sampling noise."""
    offsets: dict[str, dict] = {}
    on_reference = [r for r in records if device(r) == reference]
    for name in sorted({device(r) for r in records} - {reference}):
        on_device = [r for r in records if device(r) == name]
        for metric in metrics:
            ours, theirs = random_train_mean(on_device, metric), random_train_mean(on_reference, metric)
            if ours is None or theirs is None or min(ours["records"], theirs["records"]) < MIN_OFFSET_RECORDS:
                continue
            offsets.setdefault(name, {})[metric] = {
                "offset": theirs["mean"] - ours["mean"],
                "standard_error": float(np.hypot(theirs["standard_error"], ours["standard_error"])),
                "records": ours["records"], "reference_records": theirs["records"],
            }
    return offsets


def summary(records: list[dict], metric: str = "val_accuracy", seconds: str = "train_seconds",
            n_val: int | None = None) -> dict:
    """Counts, cost and range of a collection (CitySeg: ``metric="val_miou"``, ``seconds="eval_seconds"``).
    Seconds are summarised per device: a GPU's seconds and a CPU core's are different clocks. Per device also the
    mean ``metric`` of its uniformly random training records (with its standard error): these architectures are
    drawn alike on every device, so a gap between the means is the device's effect plus sampling noise; the
    ``device_offsets`` that a fit adds to other devices' values follow from it (:func:`device_offsets`)."""
    counts = collections.Counter((r["subset"], r["source"]) for r in records)
    values = np.array([r[metric] for r in records])
    per_device = {}
    for name in sorted({device(r) for r in records}):
        spent = np.array([r[seconds] for r in records if device(r) == name])
        per_device[name] = {
            "records": len(spent),
            f"{seconds}_median": float(np.median(spent)),
            f"{seconds}_range": [float(spent.min()), float(spent.max())],
            f"{seconds}_total_hours": float(spent.sum() / 3600),
        }
        random = random_train_mean([r for r in records if device(r) == name], metric)
        if random is not None:
            per_device[name][f"random_train_{metric}"] = random
    return {
        "records": len(records),
        "distinct_architectures": len({r["arch"] for r in records}),
        "by_subset_and_source": {f"{subset}/{source}": n for (subset, source), n in sorted(counts.items())},
        "by_device": per_device,
        "device_offsets": device_offsets(records, (metric,)),
        f"{metric}_range": [float(values.min()), float(values.max())],
        **_cpu_seconds(records),
        "noise": noise_summary(records, metric),
        **({"noise_val_loss": loss_noise_summary(records)} if metric == "val_accuracy" else {}),
        **({"learning_curves": curves} if metric == "val_accuracy" and (curves := curve_summary(records)) else {}),
        **({"mutation_pairs": mutation_pair_summary(records, metric)}
           if any(r.get("source") == "mutation-pair" for r in records) else {}),
        **({"noise_measurement": measurement_share(records, n_val)}
           if n_val and any("reserve_accuracy" in r for r in records) else {}),
    }


def curve_summary(records: list[dict], minimum: int = 10) -> dict | None:
    """What the learning curves say about lower fidelities (None with fewer than ``minimum`` random trainings).

    From uniformly random training records: how the ranking after each epoch agrees with the final one (Kendall
    tau; what makes an early epoch useful to a multi-fidelity optimiser). From the noise subset, per epoch: the mean
    seed std, and how a training's deviation from its architecture's seed mean correlates with its deviation at
    the last epoch and with its deviation at the epoch before (the noise of one curve is one draw, not a draw per
    epoch)."""
    from scipy import stats

    random = [r for r in records if r["subset"] == "train" and r["source"] == "random" and r.get("val_accuracy_curve")]
    if len(random) < minimum or len({len(r["val_accuracy_curve"]) for r in random}) != 1:
        return None
    curves = np.array([r["val_accuracy_curve"] for r in random])
    epochs = curves.shape[1]
    out: dict = {"random_trainings": len(random), "epochs": epochs,
                 "kendall_tau_with_final_by_epoch": [float(stats.kendalltau(curves[:, e], curves[:, -1]).statistic)
                                                     for e in range(epochs)]}
    groups = [np.array([r["val_accuracy_curve"] for r in group]) for group in noise_groups(records).values()
              if all(len(r.get("val_accuracy_curve", ())) == epochs for r in group)]
    if len(groups) >= 2:
        deviations = np.concatenate([g - g.mean(axis=0) for g in groups])
        correlation = np.corrcoef(deviations.T)
        out["noise_architectures"] = len(groups)
        out["noise_seed_std_by_epoch"] = [float(np.mean([g[:, e].std(ddof=1) for g in groups])) for e in range(epochs)]
        out["seed_deviation_correlation_with_final_by_epoch"] = [float(c) for c in correlation[-1]]
        out["seed_deviation_correlation_with_previous_epoch"] = [float(correlation[e, e - 1])
                                                                  for e in range(1, epochs)]
        out["seed_deviation_correlation"] = correlation.round(6).tolist()
    return out


def measurement_share(records: list[dict], n_val: int) -> dict:
    """What share of the seed variance of validation accuracy is measurement, from the noise-subset trainings that
    also hold ``reserve_accuracy``: the same networks scored on two fixed image sets of different sizes.

    A training's score on a fixed set of ``n`` images is its expected accuracy plus a measurement error of variance
    ``c / n`` (which images this network happens to get right), so the seed variances on the validation set and on
    the reserve differ by ``c (1 / n_val - 1 / n_reserve)``; that gives ``c``, the measurement std of one validation
    score, ``sqrt(c / n_val)``, and its share of the validation seed variance. The mutation pairs' architectures,
    trained with several seeds too, count as well: measurement noise is a property of the image sets, not of how an
    architecture was drawn."""
    repeated: dict[str, list[dict]] = collections.defaultdict(list)
    for r in records:
        if r.get("source") == "mutation-pair":
            repeated[r["arch"]].append(r)
    repeated.update(noise_groups(records))
    groups = [group for group in repeated.values() if len(group) >= 2 and all("reserve_accuracy" in r for r in group)]
    if len(groups) < 2:
        return {"architectures": len(groups)}
    n_reserve = int(np.median([r["reserve_images"] for group in groups for r in group]))
    val_variance = float(np.mean([np.var([r["val_accuracy"] for r in group], ddof=1) for group in groups]))
    reserve_variance = float(np.mean([np.var([r["reserve_accuracy"] for r in group], ddof=1) for group in groups]))
    per_image = (val_variance - reserve_variance) / (1 / n_val - 1 / n_reserve)
    return {
        "architectures": len(groups),
        "reserve_images": n_reserve,
        "val_seed_std": float(np.sqrt(val_variance)),
        "reserve_seed_std": float(np.sqrt(reserve_variance)),
        "val_measurement_std": float(np.sqrt(max(per_image, 0.0) / n_val)),
        "measurement_share_of_val_seed_variance": max(per_image, 0.0) / n_val / val_variance,
    }


def mutation_pair_summary(records: list[dict], metric: str = "val_accuracy", resamples: int = 2000) -> dict:
    """How far one edit moves ``metric``: the landscape's roughness, from the ``mutation-pair`` source (job ``2k`` a
    uniformly random architecture, ``2k + 1`` the same with one op or one input changed), on the pairs whose two
    architectures both hold at least two seeds.

    ``edit_std`` is the root mean square of a pair's difference of seed means net of their sampling noise (the
    pooled seed variance); ``architecture_std`` the spread of the pairs' architectures net of the same noise (the
    mean over the two members' positions of the variance across pairs, each over independent draws). With
    architectures one edit apart correlated by ``rho``, the squared difference has expectation ``2 (1 - rho)`` times
    the architecture variance: ``correlation_one_edit`` is that ``rho`` (1: an edit keeps the accuracy, 0: it
    draws a new one), with a 90 % interval from ``resamples`` bootstrap draws over the pairs (seeded: the same
    numbers on every run)."""
    values: dict[tuple[str, int], list[float]] = collections.defaultdict(list)  # per (subset, job index)
    for r in records:
        if r.get("source") == "mutation-pair" and metric in r:
            values[(r["subset"], r["index"])].append(r[metric])
    pairs = [(np.array(values[(subset, index)]), np.array(values[(subset, index + 1)]))
             for subset, index in sorted(values) if index % 2 == 0
             and len(values[(subset, index)]) >= 2 and len(values.get((subset, index + 1), ())) >= 2]
    if len(pairs) < 3:
        return {"pairs": len(pairs)}
    seed_variance = float(np.mean([v.var(ddof=1) for pair in pairs for v in pair]))
    first, second = (np.array([pair[member].mean() for pair in pairs]) for member in (0, 1))
    # sampling variance of each seed mean, from the pooled seed variance
    sampling = np.array([[seed_variance / len(v) for v in pair] for pair in pairs])

    def components(rows: np.ndarray) -> tuple[float, float]:
        edit = float(np.mean((second[rows] - first[rows]) ** 2) - sampling[rows].sum(axis=1).mean())
        architecture = float(np.mean([np.var(m[rows], ddof=1) for m in (first, second)]) - sampling[rows].mean())
        return edit, architecture

    edit_variance, architecture_variance = components(np.arange(len(pairs)))
    rng = np.random.default_rng(0)
    draws = [components(rng.integers(len(pairs), size=len(pairs))) for _ in range(resamples)]
    correlations = [1 - e / (2 * a) for e, a in draws if a > 0]
    return {
        "pairs": len(pairs),
        "trainings": int(sum(len(v) for pair in pairs for v in pair)),
        "seed_std": float(np.sqrt(seed_variance)),
        "edit_std": float(np.sqrt(max(edit_variance, 0.0))),
        "architecture_std": float(np.sqrt(max(architecture_variance, 0.0))),
        "correlation_one_edit": 1 - edit_variance / (2 * architecture_variance) if architecture_variance > 0 else None,
        "correlation_one_edit_90": ([float(q) for q in np.quantile(correlations, [0.05, 0.95])]
                                    if correlations else None),
    }


def loss_noise_summary(records: list[dict]) -> dict:
    """:func:`noise_summary` of validation loss, next to the validation-accuracy ratio of the same trainings: does
    the loss separate architectures better than the accuracy does?"""
    out = noise_summary(records, "val_loss")
    if out["architectures"] >= 2:
        holding = [r for r in records if "val_loss" in r]
        out["val_accuracy_ratio_of_the_same_trainings"] = noise_summary(holding, "val_accuracy")["ratio"]
    return out


def device_agreement(reference: list[dict], check: list[dict], metric: str = "val_accuracy") -> dict[str, float]:
    """The same jobs (architecture and seed) measured twice, e.g. on the CPU (``reference``) and again on a GPU
    (``check``): the paired differences of ``metric`` against the reference's seed-to-seed std. A device that only
    changes floating-point rounding shows differences about as large as a new seed, centred on zero."""
    by_job = {r["job"]: r[metric] for r in reference}
    differences = np.array([r[metric] - by_job[r["job"]] for r in check if r["job"] in by_job])
    if len(differences) < 2:
        return {"paired_jobs": len(differences)}
    return {
        "paired_jobs": len(differences),
        "mean_difference": float(differences.mean()),
        "standard_error_of_mean_difference": float(differences.std(ddof=1) / np.sqrt(len(differences))),
        "mean_absolute_difference": float(np.abs(differences).mean()),
        "reference_mean_seed_std": noise_summary(reference, metric).get("mean_seed_std", float("nan")),
    }


def incumbent_check(records: list[dict], incumbents: list[dict], metric: str = "val_accuracy") -> dict:
    """Searches' final incumbents (rows of ``nas-envs incumbents``) against their trainings in ``records``: per
    agent and over all, the mean of what the agents observed (noisy: what their anytime plots report), of the
    surrogate's noise-free mean, and of the measured ``metric`` (seed mean per architecture), and over the distinct
    architectures (three or more) the Kendall tau between the surrogate's mean and the measurement (with its
    p-value): on an incumbent trajectory (``nas-envs incumbents --trajectory``), the seed papers' validity test. With
    three agents or more, the Kendall tau between the agents' mean surrogate value and mean measurement: whether the
    benchmark ranks the agents as real trainings do. For reference, the mean and best of the uniformly random
    training architectures. Incumbents not trained yet are left out."""
    from scipy import stats

    measured: dict[str, list[float]] = collections.defaultdict(list)
    for r in records:
        measured[r["arch"]].append(r[metric])
    trained = [row for row in incumbents if row["architecture"] in measured]

    def compare(rows: list[dict]) -> dict[str, float]:
        truth = np.array([np.mean(measured[row["architecture"]]) for row in rows])
        mean = np.array([row["surrogate_mean_val_accuracy"] for row in rows])
        out = {
            "incumbents": len(rows),
            "observed": float(np.mean([row["observed_val_accuracy"] for row in rows])),
            "surrogate_mean": float(mean.mean()),
            "measured": float(truth.mean()),
            "measured_standard_error": float(truth.std(ddof=1) / np.sqrt(len(truth))) if len(truth) > 1 else 0.0,
            "surrogate_mean_minus_measured": float((mean - truth).mean()),
        }
        distinct = {row["architecture"]: row["surrogate_mean_val_accuracy"] for row in rows}
        if len(distinct) >= 3:
            tau = stats.kendalltau([np.mean(measured[a]) for a in distinct], list(distinct.values()))
            out.update(architectures=len(distinct), kendall_tau=float(tau.statistic), kendall_tau_p=float(tau.pvalue))
        return out

    if not trained:
        return {"incumbents": 0}
    per_agent = {agent: compare([row for row in trained if row["agent"] == agent])
                 for agent in sorted({row["agent"] for row in trained})}
    out = {**compare(trained), "by_agent": per_agent}
    if len(per_agent) >= 3:  # do the agents rank as the benchmark says? (the agents' means, surrogate and measured)
        tau = stats.kendalltau([a["measured"] for a in per_agent.values()],
                               [a["surrogate_mean"] for a in per_agent.values()])
        out.update(agents_kendall_tau=float(tau.statistic), agents_kendall_tau_p=float(tau.pvalue))
    random = np.array([r[metric] for r in records if (r.get("source"), r.get("subset")) == ("random", "train")])
    if len(random):
        out.update(random_trainings=len(random), random_mean=float(random.mean()), random_best=float(random.max()))
    return out


def _cpu_seconds(records: list[dict]) -> dict:
    """CPU seconds (not inflated by other work on the machine), for the records that hold them."""
    pairs = np.array([(r["train_cpu_seconds"], r["train_seconds"]) for r in records if "train_cpu_seconds" in r])
    if not len(pairs):
        return {}
    return {"train_cpu_seconds": {
        "records": len(pairs),
        "median": float(np.median(pairs[:, 0])),
        "range": [float(pairs[:, 0].min()), float(pairs[:, 0].max())],
        "wall_clock_median_of_the_same_records": float(np.median(pairs[:, 1])),
    }}


def darts_statistics(records: list[dict]) -> dict[str, np.ndarray]:
    space = get_space("darts")
    genes = np.array([r["genes"] for r in records], dtype=np.int64)
    return {
        "val_error": 100 * (1 - np.array([r["val_accuracy"] for r in records])),
        "param_free_normal": np.array([space.count_ops(g, "normal", PARAMETER_FREE_OPS) for g in genes]),
        "skip_normal": np.array([space.count_ops(g, "normal", {"skip_connect"}) for g in genes]),
        "depth_normal": space.cell_depths(genes)[:, 0].astype(int),
    }


ANALYSES = (
    ("param_free_normal", "parameter-free ops in the normal cell"),
    ("skip_normal", "skip connections in the normal cell"),
    ("depth_normal", "normal cell depth"),
)


def darts_group_medians(records: list[dict]) -> dict[str, dict[int, dict[str, float]]]:
    """Per analysis and group value: the number of trainings and their median validation error (%)."""
    stats = darts_statistics(records)
    return {
        key: {
            int(v): {"n": int((stats[key] == v).sum()),
                     "median_val_error": float(np.median(stats["val_error"][stats[key] == v]))}
            for v in sorted(set(stats[key].tolist()))
        }
        for key, _ in ANALYSES
    }


def plot_darts_analyses(records: list[dict], out_dir: Path) -> list[Path]:
    """Three box plots of validation error; returns the written PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = darts_statistics(records)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for key, label in ANALYSES:
        values = sorted(set(stats[key].tolist()))
        groups = [stats["val_error"][stats[key] == v] for v in values]
        figure, ax = plt.subplots(figsize=(5.5, 3.8))
        ax.boxplot(groups, positions=range(len(values)), widths=0.6)
        ax.set_xticks(range(len(values)), [f"{v}\n(n={len(g)})" for v, g in zip(values, groups)], fontsize=7)
        ax.set_xlabel(label)
        ax.set_ylabel("validation error (%)")
        ax.set_title(f"DARTS proxy on Fashion-MNIST: {len(records)} trainings", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        figure.tight_layout()
        path = out_dir / f"val_error_vs_{key}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    return written
