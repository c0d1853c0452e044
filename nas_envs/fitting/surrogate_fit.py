"""Fit a benchmark's surrogates on the collected ground truth and write the bundle with its manifest.

Data protocol: the training subset (``subset == "train"``) is split by a hash of each record's job key into a
held-out share :data:`HELD_OUT_FRACTION` and the rest for fitting (fixed as the data grows; every source holds some
out); the noise subset (several seeds per architecture) is never fitted on. The bundled models are the ones fitted
on the fitting share, so the metrics in the manifest describe exactly what ships.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nas_envs.assets import (
    DEFAULT_BUNDLES,
    MANIFEST,
    assets_dir,
    data_path,
    read_verified_manifest,
    require_data,
    resolve_bundle,
    write_manifest,
)
from nas_envs.benchmarks.model_kinds import (
    CURVE_EPOCHS,
    CURVE_TARGETS,
    MODEL_KINDS,
    Encodings,
    PooledKinds,
    bundle_feature_version,
    feature_readers,
    load_bundled_kind,
    model_kind,
)
from nas_envs.files import replace_folder
from nas_envs.groundtruth.analysis import curve_summary, device, device_offsets, noise_groups, noise_summary
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from nas_envs.groundtruth.records import snapshot
from nas_envs.progress import progress
from nas_envs.spaces import get_space
from nas_envs.surrogates.metrics import all_metrics, mae
from nas_envs.surrogates.noise import calibration_scale, ensemble_mean_std, measure_seed_noise, noise_std

HELD_OUT_FRACTION = 0.1

logger = logging.getLogger(__name__)


@dataclass
class Dataset:
    """Training-subset records as arrays, plus the noise subset grouped by architecture."""

    genes: np.ndarray
    targets: dict[str, np.ndarray]
    sources: np.ndarray
    keys: np.ndarray  # job keys: they fix the held-out split
    noise_genes: np.ndarray
    noise_targets: dict[str, list[np.ndarray]]  # per target, per architecture: the value of each seed
    noise: dict  # seed noise against architecture spread, see noise_summary
    learning_curves: dict | None  # ranking and seed noise by epoch, see curve_summary
    device_offsets: dict  # added to other devices' accuracies to put them on the CPU's scale, see device_offsets
    data_sha256: str  # of exactly the lines read
    data_lines: int


ACCURACY_TARGETS = ("val_accuracy", "test_accuracy")
TARGETS = (*ACCURACY_TARGETS, "log_train_cpu_seconds", *CURVE_TARGETS)


def targets_of(records: list[dict], offsets: dict[str, dict]) -> dict[str, np.ndarray]:
    """Targets per record. Accuracies measured on another device than the CPU get that device's ``offsets`` (see
    :func:`~nas_envs.groundtruth.analysis.device_offsets`): the noise subset, the collection's bulk and the
    benchmark's scale are the CPU's. The simulated clock is one CPU core's: the runtime target is the training's CPU
    seconds, which other work on the machine does not inflate (wall-clock seconds it does). Records without them
    (GPU trainings; CPU trainings from before the field existed) have NaN there. The learning-curve targets are the
    CPU's curves only (the device offsets are measured on final accuracies), NaN elsewhere."""
    def accuracy(metric: str) -> np.ndarray:
        return np.array([r[metric] + offsets.get(device(r), {}).get(metric, {}).get("offset", 0.0) for r in records])

    def curve(record: dict) -> list[float]:
        values = record.get("val_accuracy_curve") or ()
        return list(values) if device(record) == "cpu" and len(values) == CURVE_EPOCHS else [np.nan] * CURVE_EPOCHS

    curves = np.array([curve(r) for r in records], dtype=np.float64).reshape(len(records), CURVE_EPOCHS)
    return {
        **{metric: accuracy(metric) for metric in ACCURACY_TARGETS},
        "log_train_cpu_seconds": np.log([r.get("train_cpu_seconds", np.nan) for r in records]),
        **{target: curves[:, column] for column, target in enumerate(CURVE_TARGETS)},
    }


def load_dataset(path: Path, protocol: str, correct_devices: bool = True, lines: int | None = None) -> Dataset:
    """The records of ``protocol`` in ``path`` (in its first ``lines`` lines, if given); with ``correct_devices``,
    other devices' accuracies on the CPU's scale (:func:`targets_of`)."""
    every, digest, lines = snapshot(path, lines)
    records = [r for r in every if r["protocol"] == protocol]
    train = [r for r in records if r["subset"] == "train"]
    if len(train) < 10:
        raise ValueError(f"{path}: only {len(train)} training records for {protocol}; collect more first")
    repeated = list(noise_groups(records).values())
    offsets = device_offsets(records, ACCURACY_TARGETS) if correct_devices else {}
    per_group = [targets_of(g, offsets) for g in repeated]
    return Dataset(
        genes=np.array([r["genes"] for r in train], dtype=np.int64),
        targets=targets_of(train, offsets),
        sources=np.array([r["source"] for r in train]),
        keys=np.array([r["job"] for r in train]),
        noise_genes=np.array([g[0]["genes"] for g in repeated], dtype=np.int64).reshape(len(repeated), -1),
        noise_targets={t: [g[t] for g in per_group] for t in TARGETS},
        noise=noise_summary(records),
        learning_curves=curve_summary(records),
        device_offsets=offsets,
        data_sha256=digest,
        data_lines=lines,
    )


def held_out_split(sources: np.ndarray, keys: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Indices (fit, held out). A record is held out when a hash of its job key and ``seed`` falls in the lowest
    10 %, so the split stays fixed as the collection grows (a record never changes sides); every source with at
    least 5 records holds out at least one (its lowest hash)."""
    unit = np.array([int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:12], 16) / 16**12 for key in keys])
    held = unit < HELD_OUT_FRACTION
    for source in set(sources):
        members = np.flatnonzero(sources == source)
        if len(members) >= 5 and not held[members].any():
            held[members[np.argmin(unit[members])]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def surrogate_against_table(values: list[np.ndarray], predicted: np.ndarray, constant: float) -> dict:
    """MAE to the seed mean of: the surrogate, one training (leave-one-seed-out), a constant predictor."""
    seed_means = np.array([v.mean() for v in values])
    single = [abs(v[i] - np.delete(v, i).mean()) for v in values for i in range(len(v))]
    return {
        "surrogate_mae": mae(seed_means, predicted),
        "single_training_mae": float(np.mean(single)),
        "constant_mae": mae(seed_means, np.full(len(seed_means), constant)),
        **{f"surrogate_{k}": v for k, v in all_metrics(seed_means, predicted).items()},
    }


@dataclass
class FitReport:
    """What one fit produced: the model files, and per target the metrics and the noise calibration."""

    files: list[Path]
    held_out: dict[str, dict]
    noise_subset: dict[str, dict]
    scale: dict[str, float]
    noise_range: dict[str, list[float] | None]  # None: not measured, no clipping
    calibration: dict[str, dict]
    fit_records: int
    held_out_records: int


def fit_and_assess(
    kind: str, space, data: Dataset, cost_table: dict, fit_rows: np.ndarray, eval_rows: np.ndarray, folder: Path,
    seed: int, feature_version: int | None = None,
) -> FitReport:
    """Fit ``kind``'s ensembles on ``fit_rows`` into ``folder``; score them on ``eval_rows`` and the noise subset.
    Rows and noise-subset architectures without all of the kind's targets (see :func:`targets_of`) are left out."""
    if kind not in MODEL_KINDS:
        raise ValueError(f"{kind!r} pools kinds that are fitted one by one: fit each of {kind.split('+')}")
    fitted_kind = MODEL_KINDS[kind]
    targets = np.stack([data.targets[t] for t in fitted_kind.targets], axis=1)
    measured = np.isfinite(targets).all(axis=1)
    fit_rows = fit_rows[measured[fit_rows]]
    inputs = fitted_kind.inputs(Encodings(space, data.genes, cost_table, feature_version))
    paths = fitted_kind.fit_and_save(_rows(inputs, fit_rows), targets[fit_rows], folder / kind, seed)
    return assess(kind, fitted_kind.load(paths), space, data, cost_table, fit_rows, eval_rows, paths, feature_version)


def assess(kind: str, model, space, data: Dataset, cost_table: dict, fit_rows: np.ndarray, eval_rows: np.ndarray,
          files: list[Path] | None = None, feature_version: int | None = None) -> FitReport:
    """``kind``'s fitted ``model`` on ``eval_rows`` and on the noise subset, with the noise calibration: the
    range of per-architecture seed noise that the noise subset supports, and the spread scale that gives draws
    clipped to it the measured mean seed variance (:mod:`nas_envs.surrogates.noise`). The constant predictor of the
    comparison is the mean of ``fit_rows``. ``feature_version``: that of the space's features the model was fitted
    on (default: the newest, what a fit reads)."""
    kind_of = model_kind(kind)
    targets = np.stack([data.targets[t] for t in kind_of.targets], axis=1)
    measured = np.isfinite(targets).all(axis=1)
    fit_rows, eval_rows = fit_rows[measured[fit_rows]], eval_rows[measured[eval_rows]]
    encode = lambda genes: kind_of.inputs(Encodings(space, genes, cost_table, feature_version))  # noqa: E731
    held_out = model.predict(_rows(encode(data.genes), eval_rows)) if len(eval_rows) >= 2 else None
    noise_predictions = (model.predict(encode(data.noise_genes))
                         if len(data.noise_genes) >= 2 else None)
    report = FitReport(files or [], {}, {}, {}, {}, {}, len(fit_rows), len(eval_rows))
    for column, target in enumerate(kind_of.targets):
        y = targets[:, column]
        if held_out is not None:
            report.held_out[target] = all_metrics(y[eval_rows], held_out[:, :, column].mean(axis=1))
        report.scale[target] = 1.0
        report.noise_range[target] = None
        report.calibration[target] = {"calibrated": False}
        measured_noise = [np.isfinite(v).all() for v in data.noise_targets[target]]
        if noise_predictions is not None and sum(measured_noise) >= 2:
            mean, std = ensemble_mean_std(noise_predictions[measured_noise, :, column])
            values = [v for v, keep in zip(data.noise_targets[target], measured_noise) if keep]
            seed_noise = measure_seed_noise(values)
            report.scale[target] = calibration_scale(std, seed_noise)
            report.noise_range[target] = [seed_noise.low, seed_noise.high]
            drawn_std = noise_std(std, report.scale[target], seed_noise.low, seed_noise.high)
            report.calibration[target] = {
                "calibrated": True,
                "ensemble_std_before": float(std.mean()),
                "measured_seed_rms_std": float(np.sqrt(seed_noise.variance)),
                "largest_measured_seed_std": float(max(v.std(ddof=1) for v in values)),
                "scale": report.scale[target],
                "noise_range": report.noise_range[target],
                "share_clipped_low": float(np.mean(drawn_std <= seed_noise.low)),
                "share_clipped_high": float(np.mean(drawn_std >= seed_noise.high)),
                **spread_against_seed_noise(std, values),
            }
            report.noise_subset[target] = surrogate_against_table(values, mean, constant=float(y[fit_rows].mean()))
    return report


def spread_against_seed_noise(ensemble_std: np.ndarray, values: list[np.ndarray]) -> dict[str, float]:
    """Does the ensemble's spread model training noise? The Spearman correlation between each noise-subset
    architecture's ensemble std and its measured seed std, and Bartlett's test of equal seed variances across the
    architectures (a large p-value: no evidence that some architectures train noisier than others; with 3 seeds
    per architecture Levene's test has too little power to tell)."""
    from scipy import stats

    return {
        "spread_seed_std_spearman": float(stats.spearmanr(ensemble_std, [v.std(ddof=1) for v in values]).statistic),
        "equal_seed_variance_bartlett_p": float(stats.bartlett(*values).pvalue),
    }


def r2_ceilings(data: Dataset, target: str) -> dict[str, float]:
    """The R2 that a perfect model of the architecture's expected value would get, given the measured seed noise
    (mean seed variance of the noise subset): against single-seed targets (over all training records), and against
    the noise subset's seed means (each the mean of its seeds)."""
    values = [v for v in data.noise_targets[target] if np.isfinite(v).all()]
    single = data.targets[target][np.isfinite(data.targets[target])]
    if len(values) < 2 or len(single) < 2:
        return {}
    seed_variance = float(np.mean([v.var(ddof=1) for v in values]))
    return {
        "held_out_single_seed": 1 - seed_variance / float(single.var(ddof=1)),
        "noise_subset_seed_means": 1 - float(np.mean([v.var(ddof=1) / len(v) for v in values]))
        / float(np.var([v.mean() for v in values], ddof=1)),
    }


def default_refit_dir(space_name: str) -> Path:
    """Where ``nas-envs fit`` writes when no folder is named: ``models/<space>-refit`` beside the data (never a
    released bundle, which never changes)."""
    return assets_dir() / "models" / f"{space_name}-refit"


def assess_bundle(space_name: str, kind: str, protocol_name: str | None = None, seed: int = 0,
                 bundle: "str | Path | None" = None) -> dict:
    """A bundle's ``kind`` model (or pool of accuracy kinds, ``"xgb+gin"``) judged on the collection as it is now,
    without refitting: the noise subset keeps growing after a fit, and a model never fitted on it can be judged on
    all of it. Held-out metrics use the fixed split: a record on its held-out side was never fitted on, whether it
    existed at fit time or not. ``bundle_data_lines``: the lines the (oldest) fitted part read. ``bundle``: a
    released name or a folder; default: the space's newest release. ``protocol_name``: default, the bundle's own
    (the data it was fitted on grows in its protocol's file)."""
    bundle, _ = resolve_bundle(DEFAULT_BUNDLES[space_name] if bundle is None else bundle)
    manifest = read_verified_manifest(bundle, f"refit it with 'nas-envs fit {space_name} --model {kind}'")
    models = manifest["models"]
    space, _, _, data, cost_table = fitting_inputs(space_name, kind, protocol_name or manifest.get("protocol"), bundle)
    kind_of = model_kind(kind)
    pooled = isinstance(kind_of, PooledKinds)
    parts = [part.name for part in kind_of.parts] if pooled else [kind]
    fit_rows, held_rows = held_out_split(data.sources, data.keys, seed)
    report = assess(kind, load_bundled_kind(kind, models, bundle, space_name), space, data, cost_table, fit_rows,
                   held_rows, feature_version=bundle_feature_version(models, space, bundle))
    out = {"data_lines": data.data_lines, "bundle_data_lines": min(models[part]["data_lines"] for part in parts),
           "noise_architectures": len(data.noise_genes), "held_out_metrics": report.held_out,
           "noise_subset": report.noise_subset, "noise_calibration": report.calibration,
           "r2_ceiling": {target: r2_ceilings(data, target) for target in kind_of.targets}}
    if pooled:  # the benchmark averages each part's own calibrated noise; the pooled spread is not what it draws
        del out["noise_calibration"]
    return out


def fitting_inputs(space_name: str, kind: str, protocol_name: str | None, bundle: Path | None = None,
                   lines: int | None = None) -> tuple[object, str, Path, Dataset, dict]:
    """The space, protocol, data file, dataset (of the file's first ``lines`` lines, if given) and exact cost table
    (:func:`exact_cost_table`)."""
    model_kind(kind)  # a clear error for an unknown kind
    protocol_name = protocol_name or DEFAULT_PROTOCOL[space_name]
    source_path = require_data(data_path(protocol_name))
    cost_table = exact_cost_table(space_name, protocol_name, bundle)
    dataset = load_dataset(source_path, protocol_name, lines=lines)
    return get_space(space_name), protocol_name, source_path, dataset, cost_table


def bundled_cost_table(space_name: str, protocol_name: str, bundle: Path | None = None) -> dict | None:
    """``bundle``'s cost tables (default: the space's released bundle's) when they were made for ``protocol_name``'s
    network, else None."""
    costs_path = (bundle or resolve_bundle(DEFAULT_BUNDLES[space_name])[0]) / "costs.json"
    cost_table = json.loads(costs_path.read_text()) if costs_path.exists() else None
    return cost_table if cost_table is not None and cost_table.get("protocol") == protocol_name else None


def exact_cost_table(space_name: str, protocol_name: str, bundle: Path | None = None) -> dict:
    """The cost table (exact params and FLOPs) of ``protocol_name``'s network: :func:`bundled_cost_table`, built
    from the networks where there is none."""
    cost_table = bundled_cost_table(space_name, protocol_name, bundle)
    if cost_table is None:
        from nas_envs.groundtruth.cost_tables import build_cost_table  # assembles networks: torch

        cost_table = build_cost_table(get_space(space_name), PROTOCOLS[protocol_name])
    return cost_table


def fit_surrogate(
    space_name: str, kind: str = "xgb", protocol_name: str | None = None, seed: int = 0, out_dir: Path | None = None,
    feature_version: int | None = None, lines: int | None = None,
) -> dict:
    """Fit the ensembles of ``kind`` (``xgb``/``gin``: accuracies, ``runtime``: training time), one per target,
    and (re)write that part of the bundle in ``out_dir`` (default :func:`default_refit_dir`) and its manifest.
    ``feature_version``: of the space's features (default: the newest), e.g. that of a bundle's other models.
    ``lines``: fit on the data file's first that many lines (default: all), e.g. those another fit read.
    A new folder starts as a copy of the space's released bundle when that was fitted on the same protocol, so
    that refitting one kind gives a complete bundle. Returns the manifest entry written."""
    bundle = Path(out_dir) if out_dir is not None else default_refit_dir(space_name)
    released, _ = resolve_bundle(DEFAULT_BUNDLES[space_name])
    protocol_name = protocol_name or DEFAULT_PROTOCOL[space_name]
    if not bundle.exists() and json.loads((released / MANIFEST).read_text()).get("protocol") == protocol_name:
        shutil.copytree(released, bundle)
    space, protocol_name, source_path, data, cost_table = fitting_inputs(space_name, kind, protocol_name,
                                                                         bundle if bundle.exists() else None, lines)
    fit_rows, held_rows = held_out_split(data.sources, data.keys, seed)

    # Fit into a scratch folder and move into place at the end: a crash never leaves a half-written bundle.
    bundle.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".fit-", dir=bundle))
    try:
        report = fit_and_assess(kind, space, data, cost_table, fit_rows, held_rows, scratch, seed, feature_version)
        costs_path = bundle / "costs.json"
        costs = json.loads(costs_path.read_text()) if costs_path.exists() else None
        if costs != cost_table:
            (scratch / "costs.json").write_text(json.dumps(cost_table) + "\n")
        # Move into place: the new files replace the old ones of this model only.
        replace_folder(scratch / kind, bundle / kind)
        if (scratch / "costs.json").exists():
            (scratch / "costs.json").replace(costs_path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    previous = json.loads((bundle / MANIFEST).read_text()) if (bundle / MANIFEST).exists() else {}
    models = previous.get("models", {}) if previous.get("protocol") == protocol_name else {}
    models = {k: m for k, m in models.items() if "targets" in m}  # entries of older formats are refitted, not kept
    # A fit reads the newest features; a bundle's models read one version of them (bundle_feature_version).
    version = space.feature_version(feature_version) if MODEL_KINDS[kind].reads_features else None
    other = sorted(k for k, read in feature_readers(models).items()
                   if version is not None and k != kind and read != version)
    if other:
        logger.warning("%s: dropped the %s model(s), fitted on another version of the %s features; refit them with "
                       "'nas-envs fit %s --model KIND --out %s'", bundle, ", ".join(other), space_name, space_name,
                       bundle)
        models = {k: m for k, m in models.items() if k not in other}
    models[kind] = {
        "targets": list(MODEL_KINDS[kind].targets),
        "inputs": MODEL_KINDS[kind].input_name,
        **({"feature_version": version} if version is not None else {}),
        "files": [path.relative_to(scratch).as_posix() for path in report.files],
        "noise_scale": report.scale,
        "noise_range": report.noise_range,
        "seed": seed,
        "held_out_metrics": report.held_out,
        "noise_calibration": report.calibration,
        "noise_subset": report.noise_subset,
        "fit_records": report.fit_records,
        "held_out_records": report.held_out_records,
        "data_sha256": data.data_sha256,
        "data_lines": data.data_lines,
    }
    every_file = [costs_path] + [bundle / f for m in models.values() for f in m["files"]]
    write_manifest(
        bundle,
        every_file,
        space=space_name,
        protocol=protocol_name,
        data={"file": source_path.name, "noise": data.noise, "device_offsets": data.device_offsets,
              "learning_curves": data.learning_curves},
        models=models,
    )
    return models[kind]


def leave_one_source_out(space_name: str, kind: str = "xgb", protocol_name: str | None = None, seed: int = 0) -> dict:
    """For every source with at least two records: fit on all other sources, score on that one."""
    space, _, _, data, cost_table = fitting_inputs(space_name, kind, protocol_name)
    out = {}
    for source in progress(sorted(set(data.sources)), desc="leave one source out"):
        held = np.flatnonzero(data.sources == source)
        rest = np.flatnonzero(data.sources != source)
        if len(held) < 2 or len(rest) < 10:
            continue
        with tempfile.TemporaryDirectory() as folder:
            out[source] = fit_and_assess(kind, space, data, cost_table, rest, held, Path(folder), seed).held_out
    return out


def quality_against_data_size(
    space_name: str, kind: str = "xgb", protocol_name: str | None = None, seed: int = 0,
    fractions: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
) -> list[dict]:
    """Refit on growing random subsets of the fitting split; score on the fixed held-out split and noise subset."""
    space, _, _, data, cost_table = fitting_inputs(space_name, kind, protocol_name)
    fit_rows, held_rows = held_out_split(data.sources, data.keys, seed)
    order = np.random.default_rng(seed).permutation(fit_rows)
    rows = []
    for fraction in progress(fractions, desc="learning curve"):
        subset = np.sort(order[: max(10, int(round(fraction * len(order))))])
        with tempfile.TemporaryDirectory() as folder:
            report = fit_and_assess(kind, space, data, cost_table, subset, held_rows, Path(folder), seed)
        rows.append({"fraction": fraction, "records": int(len(subset)), "held_out": report.held_out,
                     "noise_subset": report.noise_subset})
    return rows


def _rows(inputs, rows: np.ndarray):
    """Rows of a feature matrix, a graph batch, or a tuple of them (a pool of kinds)."""
    if isinstance(inputs, tuple):
        return tuple(_rows(part, rows) for part in inputs)
    return inputs[rows] if isinstance(inputs, np.ndarray) else inputs.subset(rows)


def fit_command(space: str, model: str, protocol: str | None, seed: int, out_dir: Path | None,
                feature_version: int | None = None, lines: int | None = None) -> dict:
    """'nas-envs fit' for the DARTS and FBNet families (the catalogue's fit entry): fit ``model`` and return what
    the command prints."""
    result = fit_surrogate(space, kind=model, protocol_name=protocol, seed=seed, out_dir=out_dir,
                           feature_version=feature_version, lines=lines)
    return {k: result[k] for k in ("held_out_metrics", "noise_calibration", "noise_subset", "fit_records")}
