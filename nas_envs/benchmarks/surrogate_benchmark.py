"""A search space plus its fitted surrogates and exact cost tables: batched, reproducible evaluation."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Predictor, exact_costs, load_bundled
from nas_envs.spaces.base import SearchSpace
from surrogates.manifest import read_verified_manifest
from surrogates.noise import draw, ensemble_mean_std, noise_std

OBJECTIVES = ("val_accuracy", "test_accuracy", "train_time_s", "params", "flops")
SURROGATES = ("xgb", "gin")  # accuracy ensembles; the runtime ensemble is shared ("runtime")


class BudgetExhaustedError(RuntimeError):
    """Raised when work is requested from a simulated budget that is already spent."""


class SurrogateBenchmark:
    """Benchmark of a cell/layer search space with accuracy, runtime and cost models.

    Args:
        space: the search space.
        bundle_dir: folder with ``manifest.json``, ``costs.json`` and the model files.
        surrogate: ``"xgb"`` or ``"gin"``: which accuracy ensemble to use (the runtime model is shared).

    Assets load on the first evaluation and are verified against the manifest's sha256 sums.
    """

    objectives = OBJECTIVES
    #: +1 for objectives to maximise, -1 to minimise
    directions = {"val_accuracy": 1, "test_accuracy": 1, "train_time_s": -1, "params": -1, "flops": -1}

    def __init__(self, space: SearchSpace, bundle_dir: Path, surrogate: str = "xgb") -> None:
        if surrogate not in SURROGATES:
            raise ValueError(f"unknown surrogate {surrogate!r}; allowed: {SURROGATES}")
        self.space = space
        self.bundle_dir = Path(bundle_dir)
        self.surrogate = surrogate

    @property
    def name(self) -> str:
        return self.space.name

    @cached_property
    def manifest(self) -> dict:
        manifest = read_verified_manifest(
            self.bundle_dir,
            restore_hint=f"Restore the folder with 'git checkout -- {self.bundle_dir}' or refit it with "
            f"'nas-envs fit {self.space.name} --model {self.surrogate}'.",
        )
        for kind in (self.surrogate, "runtime"):
            if kind not in manifest.get("models", {}):
                raise FileNotFoundError(
                    f"{self.bundle_dir}: no {kind!r} model is bundled (have: {sorted(manifest.get('models', {}))}); "
                    f"fit one with 'nas-envs fit {self.space.name} --model {kind}'"
                )
        return manifest

    @cached_property
    def cost_table(self) -> dict:
        """The bundle's exact params/FLOPs table (``costs.json``), verified against the manifest."""
        self.manifest  # verify checksums first
        return json.loads((self.bundle_dir / "costs.json").read_text())

    @cached_property
    def _models(self) -> dict[str, Predictor]:
        """Per kind (the accuracy surrogate and ``runtime``): its predictor of all its targets."""
        return {kind: load_bundled(kind, self.manifest["models"][kind], self.bundle_dir, self.space.name)
                for kind in (self.surrogate, "runtime")}

    @cached_property
    def noise_scale(self) -> dict[str, float]:
        """Per target, the factor that calibrates the ensemble spread to the measured seed-to-seed noise."""
        return self._per_target("noise_scale")

    @cached_property
    def noise_cap(self) -> dict[str, float]:
        """Per target, the largest noise std drawn: the largest seed-to-seed std measured on the noise subset
        (no cap where the noise subset did not measure the target)."""
        return {target: np.inf if cap is None else cap for target, cap in self._per_target("noise_cap").items()}

    def _per_target(self, entry: str) -> dict:
        """A per-target manifest entry of the accuracy surrogate and the runtime model, merged."""
        models = self.manifest["models"]
        return {**models[self.surrogate][entry], **models["runtime"][entry]}

    def load(self) -> "SurrogateBenchmark":
        """Load and verify every asset now rather than on the first evaluation."""
        _ = self._models, self.cost_table, self.noise_scale, self.noise_cap
        return self

    def exact_costs(self, genes: np.ndarray, cost_features: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Params and FLOPs (exactly linear in the space's cost features; pass them if already computed)."""
        return exact_costs(self.cost_table, self.space.cost_features(genes) if cost_features is None else cost_features)

    def predict_members(self, genes: np.ndarray, inputs: dict[str, object] | None = None) -> dict[str, np.ndarray]:
        """Raw member predictions ``(N, members)`` per surrogate target, for canonical genes. ``inputs``: encodings
        of ``genes`` already computed, by input name (each encoding is computed once, whichever kinds read it)."""
        inputs = {} if inputs is None else inputs
        out = {}
        for kind, model in self._models.items():
            model_kind = MODEL_KINDS[kind]
            if model_kind.input_name not in inputs:
                inputs[model_kind.input_name] = model_kind.inputs(self.space, genes, self.cost_table)
            predictions = model.predict(inputs[model_kind.input_name])
            out.update({target: predictions[:, :, column] for column, target in enumerate(model_kind.targets)})
        return out

    def evaluate(
        self,
        archs: "np.ndarray | Iterable[Sequence[int] | str] | str",
        noise: bool = True,
        seed: int | np.random.Generator | None = None,
    ) -> dict[str, np.ndarray]:
        """Objectives of a batch of architectures (genes ``(N, D)``, a list of genes or strings).

        With ``noise=True`` accuracies and training time are drawn around the ensemble mean with the ensemble's
        calibrated spread, from ``numpy.random.default_rng(seed)``; the same seed gives the same draws. With
        ``noise=False`` the ensemble means are returned. Accuracies are fractions in [0, 1].
        """
        genes = self.space.as_batch(archs)
        return self.evaluate_genes(genes, noise, np.random.default_rng(seed))

    def evaluate_genes(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """:meth:`evaluate` for already validated canonical genes and a generator (the environments' hot path)."""
        inputs = {"cost_features": self.space.cost_features(genes)}  # read by the costs and the runtime model
        members = self.predict_members(genes, inputs)
        out: dict[str, np.ndarray] = {}
        val_mean, val_std = ensemble_mean_std(members["val_accuracy"])
        test_mean, test_std = ensemble_mean_std(members["test_accuracy"])
        log_time_mean, log_time_std = ensemble_mean_std(members["log_train_cpu_seconds"])
        if noise:
            scale, cap = self.noise_scale, self.noise_cap
            # One training outcome per architecture: validation and test accuracy share the draw.
            z = rng.standard_normal(len(genes))
            out["val_accuracy"] = val_mean + noise_std(val_std, scale["val_accuracy"], cap["val_accuracy"]) * z
            out["test_accuracy"] = test_mean + noise_std(test_std, scale["test_accuracy"], cap["test_accuracy"]) * z
            time_target = "log_train_cpu_seconds"
            out["train_time_s"] = np.exp(draw(log_time_mean, log_time_std, scale[time_target], rng, cap[time_target]))
        else:
            out["val_accuracy"], out["test_accuracy"] = val_mean, test_mean
            out["train_time_s"] = np.exp(log_time_mean)
        out["val_accuracy"] = np.clip(out["val_accuracy"], 0.0, 1.0)
        out["test_accuracy"] = np.clip(out["test_accuracy"], 0.0, 1.0)
        out.update(self.exact_costs(genes, inputs["cost_features"]))
        return out
