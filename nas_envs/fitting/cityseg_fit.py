"""Build the CitySeg bundle: the rank-net error predictor, exact cost tables, measured latency tables, bounds.

Data protocol as for DARTS and FBNet: the training subset is split by a hash of each record's job key into a
held-out share :data:`~nas_envs.fitting.surrogate_fit.HELD_OUT_FRACTION` and the rest for fitting (fixed as the
data grows); the noise subset (repeated scorings of the same sub-networks with different BatchNorm calibration
scenes) is never fitted on and calibrates the noise model.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from nas_envs.assets import checked_file, data_path, require_data, write_manifest
from nas_envs.benchmarks.cityseg import NOISE_FACTORS, LatencyTable, hardware_objectives
from nas_envs.benchmarks.cityseg_problems import CITYSEG_OBJECTIVES
from nas_envs.files import replace_folder
from nas_envs.fitting.surrogate_fit import bundled_cost_table, held_out_split, surrogate_against_table
from nas_envs.groundtruth.analysis import noise_groups, noise_summary
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
from nas_envs.groundtruth.records import snapshot
from nas_envs.spaces.cityseg import CHOICES, CitySegSpace
from nas_envs.surrogates.metrics import all_metrics
from nas_envs.surrogates.noise import SeedNoise, calibration_scale, ensemble_mean_std, measure_seed_noise

BOUNDS_SAMPLE = 100_000


def build_cost_tables(space: CitySegSpace) -> dict:
    """Exact params, FLOPs and convolution activation words of the CitySeg networks (64 x 64 scenes)."""
    from nas_envs.groundtruth.cityseg_hardware import activation_words
    from nas_envs.groundtruth.cost_tables import build_cost_table, solve_linear_table
    from nas_envs.groundtruth.protocols import PROTOCOLS

    protocol = PROTOCOLS[DEFAULT_PROTOCOL["cityseg"]]
    return {**build_cost_table(space, protocol), **solve_linear_table(space, activation_words, ("activation_words",))}


def cost_tables(space: CitySegSpace) -> dict:
    """The released bundle's cost tables where they count the networks :func:`build_cost_tables` counts (the same
    for every protocol a rank-net is fitted on), built from the networks otherwise (a couple of CPU-minutes)."""
    return bundled_cost_table("cityseg", DEFAULT_PROTOCOL["cityseg"]) or build_cost_tables(space)


def objective_bounds(space: CitySegSpace, costs: dict, latency: dict[str, LatencyTable]) -> dict[str, list[float]]:
    """Utopian and nadir points: ``err`` 0 and 1; every other objective the smallest and largest value over the
    smallest network, the largest one and ``BOUNDS_SAMPLE`` random ones, widened by its noise factor."""
    smallest = np.zeros(len(CHOICES), dtype=np.int64)
    smallest[0] = 1
    archs = np.vstack([smallest, CHOICES - 1, space.sample(BOUNDS_SAMPLE, seed=20261129)])
    values = hardware_objectives(space, costs, latency, space.canonicalize(archs))
    bounds = {"err": [0.0, 1.0]}
    for name in CITYSEG_OBJECTIVES[1:]:
        spread = NOISE_FACTORS.get(name, 0.0)
        bounds[name] = [float(values[name].min() * (1 - spread)), float(values[name].max() * (1 + spread))]
    return bounds


def fit_cityseg(seed: int = 0, protocol: str | None = None, members: int = 10, out_dir: Path | None = None,
                lines: int | None = None) -> dict:
    """Fit the rank-net on the collected sub-network scores (of the data file's first ``lines`` lines, if given) and
    write a whole CitySeg bundle to ``out_dir`` (default ``models/cityseg-refit`` beside the data; never a released
    bundle)."""
    from nas_envs.fitting.surrogate_fit import default_refit_dir
    from nas_envs.surrogates.ranknet import RankNetEnsemble

    space = CitySegSpace()
    protocol = protocol or DEFAULT_PROTOCOL["cityseg"]
    source_path = require_data(data_path(protocol))
    # Head depth 0 is scored at the nadir, not by the predictor; a degenerate network an optimiser trajectory
    # brought in before the collector skipped them stays in the data but is not fitted on.
    every, data_sha256, data_lines = snapshot(source_path, lines)
    records = [r for r in every if r["protocol"] == protocol and r["genes"][0] > 0]
    train = [r for r in records if r["subset"] == "train"]
    if len(train) < 20:
        raise ValueError(f"{source_path}: only {len(train)} scored sub-networks; collect more first "
                         "('nas-envs collect cityseg --n N')")
    genes = np.array([r["genes"] for r in train], dtype=np.int64)
    miou = np.array([r["val_miou"] for r in train])
    fit_rows, held_rows = held_out_split(np.array([r["source"] for r in train]), np.array([r["job"] for r in train]),
                                         seed)
    ensemble = RankNetEnsemble.fit(space.one_hot(genes[fit_rows]), miou[fit_rows], members=members, seed=seed)
    held = ensemble.predict(space.one_hot(genes[held_rows])).mean(axis=1)
    held_out = {**all_metrics(miou[held_rows], held), "pearson": float(np.corrcoef(miou[held_rows], held)[0, 1])}

    repeated = {arch: np.array([r["val_miou"] for r in group]) for arch, group in noise_groups(records).items()}
    scale, noise = 1.0, noise_summary(records, metric="val_miou")
    if len(repeated) >= 2:
        repeated_genes = np.stack([space.from_string(a) for a in repeated])
        mean, std = ensemble_mean_std(ensemble.predict(space.one_hot(repeated_genes)))
        # CitySeg draws are not clipped: the scale alone matches the mean seed variance of the repeats
        scale = calibration_scale(std, SeedNoise(measure_seed_noise(list(repeated.values())).variance, 0.0, np.inf))
        noise["surrogate_against_repeats"] = surrogate_against_table(list(repeated.values()), mean,
                                                                     constant=float(miou[fit_rows].mean()))

    bundle = Path(out_dir) if out_dir is not None else default_refit_dir("cityseg")
    bundle.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".fit-cityseg-", dir=bundle.parent))
    try:
        files = ensemble.save(scratch / "ranknet")
        costs = cost_tables(space)
        (scratch / "costs.json").write_text(json.dumps(costs) + "\n")
        latency = {}
        for profile in ("h1", "h2"):
            table = json.loads(checked_file(data_path(f"cityseg-latency-{profile}").with_suffix(".json")).read_text())
            (scratch / f"latency-{profile}.json").write_text(json.dumps(table, sort_keys=True) + "\n")
            latency[profile] = LatencyTable(table)
        files += [scratch / "costs.json", scratch / "latency-h1.json", scratch / "latency-h2.json"]
        bounds = objective_bounds(space, costs, latency)
        entry = {
            "protocol": protocol,
            "bounds": bounds,
            "noise_scale": scale,
            "noise": noise,
            "held_out_metrics": held_out,
            # the simulated clock of the environments: what scoring one sub-network really cost here
            "seconds_per_evaluation": float(np.median([r["eval_seconds"] for r in train])),
            "fit_records": int(len(fit_rows)),
            "held_out_records": int(len(held_rows)),
            "data_sha256": data_sha256,  # of exactly the lines read: the first data_lines of the file
            "data_lines": data_lines,
            "seed": seed,
        }
        write_manifest(scratch, files, **entry)
        replace_folder(scratch, bundle)  # whole folders: a crash leaves the old bundle or the new one
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return entry


def fit_command(space: str, model: str, protocol: str | None, seed: int, out_dir: Path | None,
                feature_version: int | None = None, lines: int | None = None) -> dict:
    """'nas-envs fit cityseg' (the catalogue's fit entry): fit the rank-net and return what the command prints."""
    if feature_version is not None:
        raise ValueError("the CitySeg rank-net reads the genes, not versioned features: drop --features-version")
    result = fit_cityseg(seed=seed, protocol=protocol, out_dir=out_dir, lines=lines)
    return {k: result[k] for k in ("held_out_metrics", "noise", "fit_records", "bounds")}
