"""A search space plus its fitted surrogates and exact cost tables: batched, reproducible evaluation."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property

import numpy as np

from nas_envs.assets import AssetError, Bundle
from nas_envs.benchmarks.base import Benchmark
from nas_envs.benchmarks.model_kinds import (
    COSTS,
    CURVE_EPOCHS,
    MODEL_KINDS,
    Encodings,
    Predictor,
    bundle_feature_version,
    load_bundled,
)
from nas_envs.catalogue import SURROGATES
from nas_envs.extras import require_installed
from nas_envs.spaces import get_space
from nas_envs.spaces.base import SearchSpace
from nas_envs.surrogates.noise import clip, ensemble_mean_std, noise_std
from nas_envs.threads import one_thread


def held_surrogates(models: Mapping) -> list[str]:
    """The accuracy surrogates (of :data:`SURROGATES`, in order) whose every part is among a bundle manifest's
    ``models``."""
    return [surrogate for surrogate in SURROGATES if all(part in models for part in surrogate.split("+"))]


class SurrogateBenchmark(Benchmark):
    """Benchmark of a cell/layer search space with accuracy, runtime and cost models.

    Args:
        space: the search space.
        bundle: a released bundle's name (``"darts-v0"``, pinned to its manifest's sha256) or the folder of a
            bundle of one's own (``manifest.json``, ``costs.json`` and the model files, as ``nas-envs fit`` writes).
        surrogate: ``"xgb"``, ``"gin"`` or ``"xgb+gin"``: which accuracy ensemble to use, or the average of both
            (their means and their calibrated noise stds; the runtime model is shared); ``"stack"`` for a bundle
            fitted with one (``nas-envs fit SPACE --model stack``).

    Assets load on the first evaluation and are verified against the manifest's sha256 sums. The single-objective
    :meth:`score` is the validation accuracy; :meth:`simulated_seconds` the predicted training time.
    """

    objectives = ("val_accuracy", "test_accuracy", "train_time_s", "params", "flops")
    directions = {"val_accuracy": 1, "test_accuracy": 1, "train_time_s": -1, "params": -1, "flops": -1}

    def __init__(self, space: SearchSpace, bundle: "str | os.PathLike", surrogate: str = "xgb") -> None:
        if surrogate not in SURROGATES:
            raise ValueError(f"unknown surrogate {surrogate!r}; allowed: {SURROGATES}")
        self.space = space
        self.bundle = Bundle(bundle, space.name)
        self.bundle_dir = self.bundle.folder
        self.surrogate = surrogate
        self.kinds = (*surrogate.split("+"), "runtime")
        if "gin" in self.kinds:  # refused here, not at the first evaluation
            require_installed("torch_geometric", "gin", f"surrogate={surrogate!r}")

    @property
    def name(self) -> str:
        return self.space.name

    @cached_property
    def manifest(self) -> dict:
        manifest = self.bundle.manifest
        for kind in self.kinds:
            if kind not in manifest.get("models", {}):
                raise FileNotFoundError(
                    f"{self.bundle_dir}: no {kind!r} model is bundled (have: {sorted(manifest.get('models', {}))}); "
                    f"fit one with 'nas-envs fit {self.space.name} --model {kind}'"
                )
            self.bundle.require(manifest["models"][kind].get("files", []))
        self.bundle.require(["costs.json"])
        return manifest

    def verify(self) -> None:
        _ = self.manifest

    @cached_property
    def cost_table(self) -> dict:
        """The bundle's exact params/FLOPs table (``costs.json``), verified against the manifest; its weights as
        arrays, converted once rather than at every evaluation."""
        _ = self.manifest  # verify checksums first
        table = self.bundle.read_json("costs.json")
        features = self.space.cost_features(self.space.sample(1, seed=0)).shape[1]
        for name in COSTS:
            entry = table.get(name) if isinstance(table, dict) else None
            weights = np.asarray(entry.get("weights", []), dtype=object) if isinstance(entry, dict) else None
            if (weights is None or weights.shape != (features,) or not _finite_numbers([entry.get("intercept"),
                                                                                        *weights.tolist()])):
                raise AssetError(f"{self.bundle_dir / 'costs.json'}: '{name}' must hold a finite 'intercept' and "
                                 f"{features} finite 'weights' (one per cost feature of the {self.space.name} space). "
                                 f"{self.bundle.hint}")
        return {name: {**entry, "weights": np.asarray(entry["weights"], dtype=np.float64)}
                if isinstance(entry, dict) and "weights" in entry else entry for name, entry in table.items()}

    @cached_property
    def feature_version(self) -> int | None:
        """The version of the space's features that the bundle's models read (see ``SearchSpace.feature_versions``)."""
        return bundle_feature_version(self.manifest["models"], self.space, self.bundle_dir)

    def encodings(self, genes: np.ndarray) -> Encodings:
        """The encodings of canonical ``genes`` that this bundle's models read."""
        return Encodings(self.space, genes, self.cost_table, self.feature_version)

    @cached_property
    def _models(self) -> dict[str, Predictor]:
        """Per kind (the accuracy surrogates and ``runtime``): its predictor of all its targets."""
        return {kind: load_bundled(kind, self.manifest["models"][kind], self.bundle_dir, self.space.name)
                for kind in self.kinds}

    def load(self) -> "SurrogateBenchmark":
        _ = self._models, self.cost_table
        return self

    def simulated_seconds(self, values: dict[str, np.ndarray]) -> np.ndarray:
        return values["train_time_s"]

    def score(self, values: dict[str, np.ndarray]) -> np.ndarray:
        return values["val_accuracy"]

    def exact_costs(self, genes: np.ndarray) -> dict[str, np.ndarray]:
        """Params and FLOPs (exactly linear in the space's cost features)."""
        return self.encodings(genes).costs

    @property
    def epochs(self) -> int | None:
        """The epochs of the trainings when the bundle holds a learning-curve model (``curve``), else None."""
        return CURVE_EPOCHS if "curve" in self.manifest.get("models", {}) else None

    @cached_property
    def _curve_model(self) -> Predictor:
        return load_bundled("curve", self.manifest["models"]["curve"], self.bundle_dir, self.space.name)

    def _calibration(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Over ``kind``'s targets: the spread scale and the range ``[low, high]`` of one training's noise std."""
        entry, targets = self.manifest["models"][kind], MODEL_KINDS[kind].targets
        ranges = [entry["noise_range"][target] or (0.0, np.inf) for target in targets]
        return (np.array([entry["noise_scale"][target] for target in targets]),
                np.array([low for low, _ in ranges]), np.array([high for _, high in ranges]))

    @cached_property
    def _noise_calibration(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        return {kind: self._calibration(kind) for kind in (*self.kinds, "curve") if kind in self.manifest["models"]}

    def _kind_mean_and_noise(self, kind: str, model: Predictor, encodings: Encodings
                             ) -> tuple[np.ndarray, np.ndarray]:
        """``kind``'s ensemble mean and calibrated noise std, each ``(N, targets)``."""
        mean, std = ensemble_mean_std(model.predict(MODEL_KINDS[kind].inputs(encodings)))
        return mean, noise_std(std, *self._noise_calibration[kind])

    def mean_and_noise_std(self, genes: np.ndarray, encodings: Encodings | None = None
                           ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per target, for canonical genes: the ensemble mean and the noise std of one training, the ensemble's
        spread times the scale calibrated on the noise subset, clipped to the range of seed noise measured there
        (see :mod:`nas_envs.surrogates.noise`); averaged over both ensembles for ``"xgb+gin"``. ``encodings``: those
        of ``genes``, if the caller already has some of them."""
        encodings = self.encodings(genes) if encodings is None else encodings
        per_target: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for kind, model in self._models.items():
            mean, noise = self._kind_mean_and_noise(kind, model, encodings)
            for column, target in enumerate(MODEL_KINDS[kind].targets):
                per_target.setdefault(target, []).append((mean[:, column], noise[:, column]))
        return {target: pairs[0] if len(pairs) == 1 else
                (np.mean([mean for mean, _ in pairs], axis=0), np.mean([noise for _, noise in pairs], axis=0))
                for target, pairs in per_target.items()}

    def evaluate_genes(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Accuracies (fractions in [0, 1]) and training time drawn around the ensemble means with the ensembles'
        calibrated spread (``noise=True``), or the means; params and FLOPs exact."""
        return self._evaluate(genes, noise, rng, self.encodings(genes))[0]

    def _evaluate(self, genes: np.ndarray, noise: bool, rng: np.random.Generator, encodings: Encodings
                  ) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """:meth:`evaluate_genes`, and the standard normal draw of each architecture's final accuracy (None without
        noise)."""
        with one_thread():
            predicted = self.mean_and_noise_std(genes, encodings)
        (val_mean, val_noise), (test_mean, test_noise) = predicted["val_accuracy"], predicted["test_accuracy"]
        log_time_mean, log_time_noise = predicted["log_train_cpu_seconds"]
        out: dict[str, np.ndarray] = {}
        z = None
        if noise:
            # One training outcome per architecture: validation and test accuracy share the draw.
            z = rng.standard_normal(len(genes))
            out["val_accuracy"] = val_mean + val_noise * z
            out["test_accuracy"] = test_mean + test_noise * z
            out["train_time_s"] = np.exp(log_time_mean + log_time_noise * rng.standard_normal(len(genes)))
        else:
            out["val_accuracy"], out["test_accuracy"] = val_mean, test_mean
            out["train_time_s"] = np.exp(log_time_mean)
        out["val_accuracy"] = clip(out["val_accuracy"], 0.0, 1.0)
        out["test_accuracy"] = clip(out["test_accuracy"], 0.0, 1.0)
        out.update(encodings.costs)
        return out, z

    def evaluate_genes_at(self, genes: np.ndarray, noise: bool, rng: np.random.Generator, epochs: int
                          ) -> dict[str, np.ndarray]:
        """The objectives after ``epochs`` of the trainings' epochs (fewer than all): validation accuracy from the
        learning-curve model, the simulated seconds of that share of the training (the protocols' epochs are alike:
        the same steps and one validation each), params and FLOPs; test accuracy is NaN (trainings measure it after
        the last epoch only). The point of epoch ``epochs`` on :meth:`evaluate_curves`'s curve, from the same draws:
        the same seed gives the points of one curve, and its last point is what :meth:`evaluate_genes` returns."""
        out, curves = self.evaluate_curves(genes, noise, rng)
        out["val_accuracy"] = curves[:, epochs - 1]
        out["test_accuracy"] = np.full(len(genes), np.nan)
        out["train_time_s"] = out["train_time_s"] * epochs / CURVE_EPOCHS
        return out

    def evaluate_curves(self, genes: np.ndarray, noise: bool, rng: np.random.Generator
                        ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """:meth:`evaluate_genes` and each architecture's learning curve, validation accuracy after every epoch
        ``(N, epochs)``, whose last column is the final validation accuracy. With noise, a curve is one draw: its
        deviation at each epoch is correlated with the others and with the final accuracy's as measured on the noise
        subset (``learning_curves`` in the manifest's ``data``), drawn after the final accuracy's."""
        if self.epochs is None:
            raise ValueError(f"{self.name}'s bundle {self.bundle_dir.name} has no learning-curve model")
        encodings = self.encodings(genes)
        out, z = self._evaluate(genes, noise, rng, encodings)
        with one_thread():
            mean, noise_of_epoch = self._kind_mean_and_noise("curve", self._curve_model, encodings)
        curves = mean[:, :-1]
        if z is not None:
            curves = curves + noise_of_epoch[:, :-1] * self._curve_deviations(z, rng)[:, :-1]
        return out, np.column_stack([np.clip(curves, 0.0, 1.0), out["val_accuracy"]])

    def _curve_deviations(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Standard normal deviations ``(N, epochs)`` of each architecture's curve whose last column is ``z`` and
        whose correlation across epochs is the measured one (Gaussian, conditional on the last epoch)."""
        correlation = np.asarray(self.manifest["data"]["learning_curves"]["seed_deviation_correlation"])
        with_final = correlation[:-1, -1]
        covariance = correlation[:-1, :-1] - np.outer(with_final, with_final)
        values, vectors = np.linalg.eigh(covariance)  # a measured matrix: clip what rounding leaves below zero
        root = vectors * np.sqrt(np.clip(values, 0.0, None))
        earlier = z[:, None] * with_final[None, :] + rng.standard_normal((len(z), len(with_final))) @ root.T
        return np.column_stack([earlier, z])


def make_surrogate_benchmark(name: str, bundle: "str | os.PathLike", surrogate: str | None) -> SurrogateBenchmark:
    """The catalogue's factory for the DARTS and FBNet families: the benchmark of space ``name``."""
    return SurrogateBenchmark(get_space(name), bundle, surrogate=surrogate or "xgb")


def _finite_numbers(values: list) -> bool:
    return all(type(v) in (int, float) and np.isfinite(v) for v in values)
