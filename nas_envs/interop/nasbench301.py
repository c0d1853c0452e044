"""NAS-Bench-301's query API over the bundled DARTS surrogates: code written against the ``nasbench301`` package
runs offline, with one changed import.

NAS-Bench-301 code loads an ensemble from a downloaded folder and queries it::

    import nasbench301 as nb
    performance_model = nb.load_ensemble("nb_models_0.9/xgb_v0.9")
    runtime_model = nb.load_ensemble("nb_models_0.9/lgb_runtime_v0.9")
    accuracy = performance_model.predict(config=genotype, representation="genotype", with_noise=True)
    seconds = runtime_model.predict(config=genotype, representation="genotype")

Here the same lines run with ``from nas_envs.interop import nasbench301 as nb``. Nothing is downloaded: the folder's
name chooses the model (a name holding ``runtime`` the runtime model, ``gnn`` or ``gin`` the GIN ensemble, anything
else XGBoost), and the models are those of the DARTS bundle (``bundle=``, default the newest release).

What differs from NAS-Bench-301, beside the numbers (see ``docs/data-card.md``):

- The task is this project's proxy, a 4-epoch training on 14x14 Fashion-MNIST, not 100 epochs on CIFAR-10.
  ``predict`` keeps NAS-Bench-301's scale: validation accuracy in percent, runtime in seconds (of one CPU core, for
  the proxy training).
- Noisy predictions draw from a generator seeded at load (``seed=``, default 0), so a script gives the same
  numbers on every run; NAS-Bench-301 draws from numpy's global state.
- ``representation`` is ``"genotype"`` (a DARTS ``Genotype`` namedtuple, or its printed string),
  ``"configspace"`` (a ``ConfigSpace`` configuration or a plain dict with NAS-Bench-301's hyperparameter names;
  the fixed training hyperparameters it adds may be present and are ignored) or ``"BANANAS"`` (a pair of
  ``[(input, op index), ...]`` lists, normal cell then reduction cell).
"""

from __future__ import annotations

import os
from collections import namedtuple
from collections.abc import Mapping

import numpy as np

from nas_envs.spaces.darts import OPS

#: DARTS' genotype, as NAS-Bench-301 and the DARTS code define it
Genotype = namedtuple("Genotype", "normal normal_concat reduce reduce_concat")
REPRESENTATIONS = ("genotype", "configspace", "BANANAS")
#: the prefix of NAS-Bench-301's architecture hyperparameters; its others are fixed training settings
ARCHITECTURE_PREFIX = "NetworkSelectorDatasetInfo:darts:"
ARCHITECTURE_KEYS = ("edge_", "inputs_node_")


def model_of_folder(folder: str | os.PathLike) -> str:
    """Which model a NAS-Bench-301 ensemble folder stands for: ``"runtime"``, ``"gin"`` or ``"xgb"``."""
    name = os.path.basename(os.path.normpath(str(folder))).lower()
    if "runtime" in name:
        return "runtime"
    return "gin" if "gnn" in name or "gin" in name else "xgb"


class SurrogateAPI:
    """One NAS-Bench-301 "ensemble": ``predict`` answers for one architecture (see the module docstring)."""

    def __init__(self, model: str = "xgb", bundle: str | os.PathLike | None = None, seed: int | None = 0) -> None:
        import nas_envs

        if model not in ("xgb", "gin", "runtime"):
            raise ValueError(f"model must be 'xgb', 'gin' or 'runtime', got {model!r}")
        self.model = model
        self.benchmark = nas_envs.make_benchmark("darts", surrogate=None if model == "runtime" else model,
                                                 bundle=bundle)
        self.rng = np.random.default_rng(seed)

    def genes(self, config: object, representation: str) -> np.ndarray:
        """The canonical genes of ``config`` given in ``representation``."""
        space = self.benchmark.space
        if representation == "genotype":
            return space.from_string(config if isinstance(config, str) else repr(config))
        if representation == "configspace":
            values = dict(config) if isinstance(config, Mapping) else dict(config.get_dictionary())
            architecture = {key: value for key, value in values.items()
                            if key.removeprefix(ARCHITECTURE_PREFIX).startswith(ARCHITECTURE_KEYS)}
            return space.genes_from_values(architecture)
        if representation == "BANANAS":
            normal, reduce = config
            cells = {name: [(OPS[op], node) for node, op in edges] for name, edges in (("normal", normal),
                                                                                        ("reduce", reduce))}
            return space.from_string(repr(Genotype(cells["normal"], [2, 3, 4, 5], cells["reduce"], [2, 3, 4, 5])))
        raise NotImplementedError(f"{representation!r} representation is not supported; choose from "
                                  f"{', '.join(REPRESENTATIONS)}")

    def predict(self, config: object, representation: str, with_noise: bool = True) -> float:
        """Validation accuracy in percent (runtime model: training seconds) of one architecture; with
        ``with_noise`` a draw that models a training's seed noise, else the ensemble's mean."""
        values = self.benchmark.evaluate(self.genes(config, representation)[None], noise=with_noise, seed=self.rng)
        if self.model == "runtime":
            return float(values["train_time_s"][0])
        return 100.0 * float(values["val_accuracy"][0])


def load_ensemble(ensemble_parent_directory: str | os.PathLike, bundle: str | os.PathLike | None = None,
                  seed: int | None = 0) -> SurrogateAPI:
    """NAS-Bench-301's ``load_ensemble``: the bundled model the folder's name stands for (:func:`model_of_folder`);
    the folder need not exist."""
    return SurrogateAPI(model_of_folder(ensemble_parent_directory), bundle=bundle, seed=seed)


def download_models(version: str = "0.9", delete_zip: bool = True, download_dir: str | os.PathLike = ".") -> None:
    """NAS-Bench-301's ``download_models``: nothing to download, the models ship with nas-envs."""
