"""CitySeg/MOP benchmarks: the 15 multi-objective problems over the CitySeg space, evaluated in batches.

Objectives (all minimised), per architecture:

- ``err``: 1 - validation mIoU, predicted by the bundled rank-net ensemble (fitted on sub-networks scored with the
  supernet's weights, see ``docs/data-card.md``); noisy draws follow the ensemble spread calibrated to the
  measured repeat noise;
- ``h1_latency``, ``h2_latency``: milliseconds per image, the sum of the measured look-up entries of the network's
  head, stages and decoder (``nas_envs.groundtruth.cityseg_hardware``), times a uniform factor within
  :data:`NOISE_FACTORS` of 1 when noisy;
- ``h1_energy``, ``h2_energy``: microjoules per image from exact counts, :data:`PJ_PER_MAC` per
  multiply-accumulate and :data:`PJ_PER_DRAM_WORD` per 32-bit DRAM word (convolution activations per image,
  weights once per batch of the profile, :data:`PROFILE_BATCH`) - a model, as this machine has no energy counter -
  times a uniform factor within :data:`NOISE_FACTORS` of 1 when noisy;
- ``flops`` (multiply-accumulates for one 64 x 64 scene) and ``params``: exact.

Architectures with head depth 0 get the nadir point, as in EvoXBench. Noise comes from the caller's seed only:
the same seed gives the same objectives in every process, and every problem draws the same noise for the
objectives it shares with another.
"""

from __future__ import annotations

import os
from functools import cached_property

import numpy as np

from nas_envs.assets import UNREADABLE, AssetError, Bundle
from nas_envs.benchmarks.base import Benchmark
from nas_envs.benchmarks.cityseg_problems import CITYSEG_OBJECTIVES, CitySegProblem, get_problem
from nas_envs.spaces.cityseg import (
    DEPTH_CHOICES,
    EXPAND_START,
    NETWORK_PARTS,
    NUM_GENES,
    SLOT_STAGE,
    STAGE_MAX_BLOCKS,
    WIDTH_START,
    CitySegSpace,
)
from nas_envs.surrogates.noise import ensemble_mean_std
from nas_envs.threads import one_thread

PJ_PER_MAC = 3.7 + 0.9  # 32-bit float multiply + add (Horowitz, ISSCC 2014, 45 nm)
PJ_PER_DRAM_WORD = 640.0  # 32-bit DRAM access (ibid., as tabulated by Han et al., ICLR 2016)
PROFILE_BATCH = {"h1": 8, "h2": 1}
NOISE_FACTORS = {"h1_latency": 0.02, "h2_latency": 0.02, "h1_energy": 0.05, "h2_energy": 0.05}


def hypervolume(points: np.ndarray) -> float:
    """Exact hypervolume of normalised points ``(N, M)`` (each <= 1) against the reference point all ones (moocore's
    C implementation, which pymoo also uses)."""
    import moocore

    return float(moocore.hypervolume(points, ref=np.ones(points.shape[1]))) if len(points) else 0.0


def nondominated(points: np.ndarray) -> np.ndarray:
    """The points no other point dominates (moocore): what a hypervolume depends on."""
    import moocore

    return points[moocore.is_nondominated(points)] if len(points) > 1 else points


def energy_microjoules(flops: np.ndarray, activations: np.ndarray, params: np.ndarray, batch: int) -> np.ndarray:
    """Modelled energy per image from exact counts (see the module docstring)."""
    return 1e-6 * (PJ_PER_MAC * flops + PJ_PER_DRAM_WORD * (activations + params / batch))


class LatencyTable:
    """A measured latency look-up table as dense arrays: one vectorised gather per part."""

    def __init__(self, table: dict) -> None:
        parts = table.get("parts") if isinstance(table, dict) else None
        missing = [p for p in NETWORK_PARTS if not isinstance(parts, dict) or not isinstance(parts.get(p), dict)
                   or not parts[p]]
        if missing or not isinstance(table.get("profile"), str):
            raise ValueError(f"a latency table holds a 'profile' name and 'parts' with entries for each of "
                             f"{', '.join(NETWORK_PARTS)}; missing or empty: {', '.join(missing) or 'profile'}")
        bad = [p for p in NETWORK_PARTS if not all(type(v) in (int, float) and np.isfinite(v) and v >= 0
                                                   for v in parts[p].values())]
        if bad:
            raise ValueError(f"latencies must be finite milliseconds >= 0; not so in part(s) {', '.join(bad)}")
        self.profile = table["profile"]
        self._parts = {}
        for part in NETWORK_PARTS:
            entries = table["parts"][part]
            index = np.array([self._index(part, np.array([[int(v) for v in key.split(",")]]))[0] for key in entries])
            dense = np.full(int(index.max()) + 1, np.nan)
            dense[index] = list(entries.values())
            self._parts[part] = dense
        # Each part's index is linear in the genes (its keys select genes, its mixed radix weighs them), so all of
        # them are one integer product: column p holds part p's index of each unit gene vector.
        self._index_weights = np.stack([self._index(part, keys) for part, keys in
                                        self._keys(np.eye(NUM_GENES, dtype=np.int64)).items()], axis=1)

    @staticmethod
    def _index(part: str, keys: np.ndarray) -> np.ndarray:
        """Mixed-radix index of part keys ``(N, K)`` (for stages: w_in, w_out, depth, then the block expands)."""
        if part != "head" and part != "decoder":
            w_in, w_out, depth, expands = keys[:, 0], keys[:, 1], keys[:, 2], keys[:, 3:]
            digits = (expands * 3 ** np.arange(expands.shape[1])).sum(axis=1) if expands.shape[1] else 0
            return ((w_in * 3 + w_out) * max(DEPTH_CHOICES) + depth) * 3 ** max(STAGE_MAX_BLOCKS) + digits
        return (keys * 3 ** np.arange(keys.shape[1])[::-1]).sum(axis=1)

    @staticmethod
    def _keys(genes: np.ndarray) -> dict[str, np.ndarray]:
        """Each part's key ``(N, K)`` in the genes, in :data:`NETWORK_PARTS` order."""
        widths = genes[:, WIDTH_START:]
        keys = {"head": np.column_stack([genes[:, 0], widths[:, :2]])}
        for stage in range(len(STAGE_MAX_BLOCKS)):
            slots = EXPAND_START + np.flatnonzero(SLOT_STAGE == stage)
            # inactive slots are 0 in canonical genes: the same index as a key without them
            keys[f"stage{stage + 1}"] = np.column_stack([widths[:, 1 + stage], widths[:, 2 + stage],
                                                         genes[:, 1 + stage], genes[:, slots]])
        keys["decoder"] = widths[:, 2:]
        return keys

    def milliseconds(self, genes: np.ndarray) -> np.ndarray:
        """Per-image latency of canonical, non-degenerate architectures ``(N, 24)``: the parts' entries summed in
        :data:`NETWORK_PARTS` order."""
        index = np.asarray(genes, dtype=np.int64) @ self._index_weights
        total = self._parts[NETWORK_PARTS[0]][index[:, 0]]
        for column, part in enumerate(NETWORK_PARTS[1:], start=1):
            total = total + self._parts[part][index[:, column]]
        return total

def hardware_objectives(space: CitySegSpace, costs: dict, latency: dict[str, LatencyTable],
                        genes: np.ndarray) -> dict[str, np.ndarray]:
    """Noise-free FLOPs, params, latencies and energies (head depth 0 scored as a stand-in network)."""
    features = space.cost_features(genes)
    counts = {name: np.rint(costs[name]["intercept"] + features @ np.asarray(costs[name]["weights"]))
              for name in ("params", "flops", "activation_words")}
    stand_in = genes.copy()
    stand_in[:, 0] = np.maximum(stand_in[:, 0], 1)  # head depth 0 has no table entry; its row gets the nadir anyway
    out = {"flops": counts["flops"], "params": counts["params"]}
    for profile, batch in PROFILE_BATCH.items():
        out[f"{profile}_latency"] = latency[profile].milliseconds(stand_in)
        out[f"{profile}_energy"] = energy_microjoules(counts["flops"], counts["activation_words"], counts["params"],
                                                      batch)
    return out


class CitySegBenchmark(Benchmark):
    """One CitySeg/MOP problem over a CitySeg bundle (``"cityseg-v0"`` or a folder written by ``nas-envs fit``).

    ``evaluate(X)`` takes an ``(N, 24)`` integer array (or genes / strings) and returns the problem's raw
    objectives (all minimised), one ``(N,)`` array each, in the order of the paper's Table 1;
    :func:`nas_envs.benchmarks.base.objective_matrix` stacks them into the ``(N, M)`` array of EvoXBench.
    The single-objective :meth:`score` is the hypervolume of the architecture alone (the product of one minus its
    normalised objectives, each clipped to [0, 1]): 0 at or beyond the nadir in any objective, 1 at the utopia.
    """

    def __init__(self, problem: CitySegProblem, bundle: "str | os.PathLike") -> None:
        self.problem = problem
        self.space = CitySegSpace()
        self.bundle = Bundle(bundle, "cityseg")
        self.bundle_dir = self.bundle.folder

    @property
    def name(self) -> str:
        return self.problem.name

    @property
    def objectives(self) -> tuple[str, ...]:
        return self.problem.objectives

    @property
    def directions(self) -> dict[str, int]:
        return {name: -1 for name in self.objectives}

    @cached_property
    def manifest(self) -> dict:
        self.bundle.require(["ranknet/config.json", "ranknet/weights.npz", "costs.json", "latency-h1.json",
                             "latency-h2.json"])
        return self.bundle.manifest

    def verify(self) -> None:
        _ = self.manifest

    @cached_property
    def _ranknet(self):
        from nas_envs.surrogates.ranknet import RankNetEnsemble

        _ = self.manifest  # verify checksums first
        try:
            return RankNetEnsemble.load(self.bundle_dir / "ranknet")
        except UNREADABLE as error:  # a file whose checksum matches its manifest but whose content is broken
            raise AssetError(f"{self.bundle_dir / 'ranknet'}: the rank-net could not be read ({type(error).__name__}: "
                             f"{error}). {self.bundle.hint}") from error

    @cached_property
    def _costs(self) -> dict:
        _ = self.manifest
        return self.bundle.read_json("costs.json")

    @cached_property
    def _latency(self) -> dict[str, LatencyTable]:
        _ = self.manifest
        tables = {}
        for profile in ("h1", "h2"):
            try:
                tables[profile] = LatencyTable(self.bundle.read_json(f"latency-{profile}.json"))
            except ValueError as error:
                path = self.bundle_dir / f"latency-{profile}.json"
                raise AssetError(f"{path}: {error}. {self.bundle.hint}") from None
        return tables

    @cached_property
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Utopian and nadir value of every objective (this suite's own tables, noise factors included)."""
        return {k: tuple(v) for k, v in self.manifest["bounds"].items()}

    @property
    def seconds_per_evaluation(self) -> float:
        """Simulated seconds one evaluation costs: the median measured time of scoring a sub-network."""
        return float(self.manifest["seconds_per_evaluation"])

    def load(self) -> "CitySegBenchmark":
        _ = self._ranknet, self._costs, self._latency, self.bounds
        return self

    def evaluate_genes(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        values = self.evaluate_all(genes, noise, rng)
        return {name: values[name] for name in self.objectives}

    def simulated_seconds(self, values: dict[str, np.ndarray]) -> np.ndarray:
        return np.full(len(values[self.objectives[0]]), self.seconds_per_evaluation)

    def score(self, values: dict[str, np.ndarray]) -> np.ndarray:
        points = self.normalise(np.column_stack([values[name] for name in self.objectives]))
        return np.prod(1.0 - np.clip(points, 0.0, 1.0), axis=1)

    def evaluate_all(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """All seven objectives of validated canonical genes, whichever the problem has (same draws for all)."""
        with one_thread():
            mean, std = ensemble_mean_std(self._ranknet.predict(self.space.one_hot(genes)))
        err = 1.0 - mean
        if noise:
            err = err + self.manifest["noise_scale"] * std * rng.standard_normal(len(genes))
        out = {"err": np.clip(err, 0.0, 1.0), **hardware_objectives(self.space, self._costs, self._latency, genes)}
        if noise:
            for name, spread in NOISE_FACTORS.items():
                out[name] = out[name] * rng.uniform(1 - spread, 1 + spread, len(genes))
        degenerate = self.space.degenerate_rows(genes)
        for name in CITYSEG_OBJECTIVES:
            out[name] = np.where(degenerate, self.bounds[name][1], out[name])
        return out

    def normalise(self, objectives: np.ndarray) -> np.ndarray:
        """Objectives scaled by this suite's utopian (0) and nadir (1) points."""
        low = np.array([self.bounds[o][0] for o in self.objectives])
        high = np.array([self.bounds[o][1] for o in self.objectives])
        return (np.asarray(objectives, dtype=np.float64) - low) / (high - low)

    def hypervolume(self, objectives: np.ndarray) -> float:
        """Normalised hypervolume of a set of raw objective vectors ``(N, M)``, reference point all ones."""
        points = self.normalise(objectives)
        return hypervolume(points[(points <= 1.0).all(axis=1)])


def make_cityseg_benchmark(name: str, bundle: "str | os.PathLike", surrogate: str | None) -> CitySegBenchmark:
    """The catalogue's factory for the CitySeg family: problem ``name`` (``"cityseg-mop3"``); it has one error
    predictor, so ``surrogate`` is always None."""
    return CitySegBenchmark(get_problem(int(name[len("cityseg-mop") :])), bundle)
