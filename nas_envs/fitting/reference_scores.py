"""The reference values behind :mod:`nas_envs.scores`, computed from the committed data, bundles and MOEA runs."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np

from nas_envs.assets import data_path, read_verified_manifest, require_data, resolve_bundle
from nas_envs.benchmarks.base import REFERENCE_SEED, REFERENCE_SIZE, objective_matrix
from nas_envs.catalogue import FAMILIES, Family, Release
from nas_envs.files import read_json_lines
from nas_envs.groundtruth.analysis import device, random_train_mean
from nas_envs.groundtruth.records import snapshot_prefix

METRIC = "val_accuracy"


def accuracy_references(family: Family, release: Release) -> dict:
    """``random`` and ``best`` of a DARTS or FBNet id from the lines its bundle's default surrogate was fitted on."""
    folder, _ = resolve_bundle(release.bundle)
    manifest = read_verified_manifest(folder, f"restore the released bundle {release.bundle}")
    fitted = manifest["models"][family.default_surrogate]
    path = require_data(data_path(manifest["protocol"]))
    records = [r for r in snapshot_prefix(path, fitted["data_lines"], fitted["data_sha256"])
               if r["protocol"] == manifest["protocol"] and device(r) == "cpu"]
    random = random_train_mean(records, METRIC)
    trainings: dict[str, list[float]] = collections.defaultdict(list)
    for record in records:
        trainings[record["arch"]].append(record[METRIC])
    best_arch = max(trainings, key=lambda arch: np.mean(trainings[arch]))
    return {
        "bundle": release.bundle, "metric": METRIC,
        "random": random["mean"], "best": float(np.mean(trainings[best_arch])),
        "source": {"file": path.name, "lines": fitted["data_lines"], "sha256": fitted["data_sha256"],
                   "random_trainings": random["records"], "architectures": len(trainings),
                   "best_architecture": best_arch, "best_trainings": len(trainings[best_arch])},
    }


def cityseg_references(release: Release, runs_path: Path) -> dict:
    """``random`` and ``best`` hypervolume of a CitySeg/MOP id (its bundle's MOEA runs in ``runs_path``)."""
    import nas_envs

    benchmark = nas_envs.make_benchmark(release.benchmark, bundle=release.bundle)
    sample = benchmark.space.sample(REFERENCE_SIZE, seed=REFERENCE_SEED)
    random = benchmark.hypervolume(objective_matrix(benchmark, benchmark.evaluate(sample, noise=False)))
    runs = [r for r in read_json_lines(runs_path) if r["problem"] == release.kwargs["problem"]
            and r["bundle"] == benchmark.bundle.manifest_sha256]
    if not runs:
        raise ValueError(f"{runs_path} holds no runs of {release.benchmark} on {release.bundle}")
    best = max(runs, key=lambda run: run["hv"])
    return {
        "bundle": release.bundle, "metric": "hypervolume", "random": random, "best": best["hv"],
        "source": {"random_architectures": REFERENCE_SIZE, "random_seed": REFERENCE_SEED, "runs_file": runs_path.name,
                   "runs": len(runs), "best_run": {k: best[k] for k in ("algorithm", "seed", "evaluations")}},
    }


def reference_table(runs_path: Path) -> dict[str, dict]:
    """Every registered id's reference values, keyed by id, in catalogue order."""
    table = {}
    for family in FAMILIES.values():
        for release in family.releases:
            table[release.env_id] = (cityseg_references(release, runs_path) if family.name == "cityseg"
                                     else accuracy_references(family, release))
    return table
