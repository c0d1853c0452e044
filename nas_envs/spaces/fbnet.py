"""The FBNet search space (Wu et al. 2019) in its CIFAR macro-architecture, as used by SNB-FBNet.

22 searchable layers in stages of ``[1, 4, 4, 4, 4, 4, 1]`` layers; each layer is one of nine blocks. There are
no symmetries: the 22 genes (block indices, in layer order) are the canonical form.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import numpy as np

from nas_envs.spaces.base import Hyperparameter, InvalidArchitectureError, SearchSpace

BLOCKS: tuple[str, ...] = ("k3_e1", "k3_e1_g2", "k3_e3", "k3_e6", "k5_e1", "k5_e1_g2", "k5_e3", "k5_e6", "skip")
STAGE_LAYERS: tuple[int, ...] = (1, 4, 4, 4, 4, 4, 1)
STAGE_CHANNELS: tuple[int, ...] = (16, 24, 32, 64, 112, 184, 352)
STAGE_STRIDES: tuple[int, ...] = (1, 1, 2, 2, 1, 2, 1)
NUM_LAYERS = sum(STAGE_LAYERS)
SKIP = BLOCKS.index("skip")
_KERNEL_5 = [code for code, name in enumerate(BLOCKS) if name.startswith("k5")]


LAYER_STAGE = np.repeat(np.arange(len(STAGE_LAYERS)), STAGE_LAYERS)  # stage (0..6) of each searchable layer
_STAGE_MEMBERSHIP = np.eye(len(STAGE_LAYERS), dtype=np.float32)[LAYER_STAGE]  # (22, 7): layer i in stage s


def layer_stage(layer: int) -> int:
    """The stage (0..6) of searchable layer ``layer`` (0..21)."""
    return int(LAYER_STAGE[layer])


_BLOCK_CODES = {name: code for code, name in enumerate(BLOCKS)}

class FBNetSpace(SearchSpace):
    """22 decisions, 9 actions each (a block index); every action is always legal."""

    name = "fbnet"
    num_decisions = NUM_LAYERS
    num_actions = len(BLOCKS)
    blocks = BLOCKS
    feature_versions = (1, 2)  # 2: 5x5 kernels per stage

    def action_mask(self, prefix: np.ndarray) -> np.ndarray:
        if not 0 <= len(prefix) < self.num_decisions:
            raise ValueError(f"fbnet: decision index must be in [0, {self.num_decisions}), got {len(prefix)}")
        return np.ones(self.num_actions, dtype=np.int8)

    def action_masks(self, genes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return np.ones((len(steps), self.num_actions), dtype=np.int8)

    def validate(self, genes: np.ndarray) -> None:
        bad = np.flatnonzero((genes < 0) | (genes >= len(BLOCKS)))
        if len(bad):
            layer = int(bad[0])
            raise InvalidArchitectureError(
                f"fbnet: layer {layer} has block index {int(genes[layer])}; allowed 0..{len(BLOCKS) - 1} ({BLOCKS})"
            )

    def invalid_rows(self, archs: np.ndarray) -> np.ndarray:
        return ((archs < 0) | (archs >= len(BLOCKS))).any(axis=1)

    def _sample_one(self, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(len(BLOCKS), size=NUM_LAYERS).astype(np.int64)

    def neighbours(self, genes: np.ndarray) -> list[np.ndarray]:
        result = []
        for layer in range(NUM_LAYERS):
            for block in range(len(BLOCKS)):
                if block != genes[layer]:
                    changed = np.array(genes, dtype=np.int64, copy=True)
                    changed[layer] = block
                    result.append(changed)
        return result

    poor_regions = ("param-free", "one-block")

    def poor_region_variant(self, genes: np.ndarray, rng: np.random.Generator, region: str = "param-free"
                            ) -> np.ndarray:
        """A variant in an extreme region of the space, which random architectures almost never visit:
        ``"param-free"``, half to all of the layers turned into ``skip`` (a shallow, parameter-poor network);
        ``"one-block"``, three quarters to all of the layers turned into one convolutional block drawn uniformly
        (near all-``k3_e1`` at the cheap end, near all-``k5_e6`` at the expensive one)."""
        if region not in self.poor_regions:
            raise ValueError(f"fbnet: unknown region {region!r}; allowed: {self.poor_regions}")
        genes = np.array(genes, dtype=np.int64, copy=True)
        low, block = (NUM_LAYERS // 2, SKIP) if region == "param-free" else (3 * NUM_LAYERS // 4, None)
        if block is None:
            block = int(rng.choice([code for code in range(len(BLOCKS)) if code != SKIP]))
        count = int(rng.integers(low, NUM_LAYERS + 1))
        genes[rng.choice(NUM_LAYERS, size=count, replace=False)] = block
        return genes

    # --- the configuration view -----------------------------------------------------------------------------
    def hyperparameters(self) -> list[Hyperparameter]:
        """``layer_0`` ... ``layer_21``: each searchable layer's block, by name."""
        return [Hyperparameter(f"layer_{layer}", BLOCKS) for layer in range(NUM_LAYERS)]

    def values_from_genes(self, genes: np.ndarray) -> dict[str, object]:
        genes = self.as_genes(genes)  # shape, integers, validity and canonical form, named
        return {f"layer_{layer}": BLOCKS[int(code)] for layer, code in enumerate(genes)}

    def genes_from_values(self, values: Mapping[str, object]) -> np.ndarray:
        values = self._check_names(values)
        missing = [f"layer_{layer}" for layer in range(NUM_LAYERS) if values.get(f"layer_{layer}") not in BLOCKS]
        if missing:
            raise InvalidArchitectureError(f"fbnet: each of {missing[:3]} must be one of {BLOCKS}, got "
                                           f"{[values.get(name) for name in missing[:3]]}")
        return np.array([BLOCKS.index(values[f"layer_{layer}"]) for layer in range(NUM_LAYERS)], dtype=np.int64)

    def to_string(self, genes: np.ndarray) -> str:
        return "FBNet([" + ", ".join(repr(BLOCKS[int(g)]) for g in genes) + "])"

    def parse_printed(self, text: str) -> list[int] | None:
        if not (text.startswith("FBNet(['") and text.endswith("'])")):
            return None
        codes = [_BLOCK_CODES.get(name) for name in text[8:-3].split("', '")]
        return None if len(codes) != NUM_LAYERS or None in codes else codes

    def from_string(self, text: str) -> np.ndarray:
        """Parse ``FBNet(['k3_e1', ...])``, a bare list of 22 block names, or 22 comma-separated names."""
        if not isinstance(text, str):
            raise InvalidArchitectureError(f"fbnet: a string is required, got {type(text).__name__}")
        body = text.strip()
        if body.startswith("FBNet(") and body.endswith(")"):
            body = body[len("FBNet(") : -1]
        try:
            names = ast.literal_eval(body) if body.startswith("[") else [n.strip() for n in body.split(",")]
        except (ValueError, SyntaxError):
            raise InvalidArchitectureError(f"fbnet: not a list of block names: {text[:80]!r}") from None
        if not isinstance(names, (list, tuple)) or len(names) != NUM_LAYERS:
            count = len(names) if isinstance(names, (list, tuple)) else type(names).__name__
            raise InvalidArchitectureError(f"fbnet: expected {NUM_LAYERS} block names, got {count}")
        unknown = [n for n in names if n not in BLOCKS]
        if unknown:
            raise InvalidArchitectureError(f"fbnet: unknown block {unknown[0]!r}; allowed: {BLOCKS}")
        return np.array([BLOCKS.index(n) for n in names], dtype=np.int64)

    def one_hot(self, archs: np.ndarray) -> np.ndarray:
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, NUM_LAYERS)
        out = np.zeros((len(archs), NUM_LAYERS, len(BLOCKS)), dtype=np.float32)
        out[np.arange(len(archs))[:, None], np.arange(NUM_LAYERS)[None, :], archs] = 1.0
        return out.reshape(len(archs), -1)

    def features(self, archs: np.ndarray, cost_features: np.ndarray | None = None, version: int | None = None
                 ) -> np.ndarray:
        """One-hot layers plus the count of each block and, per stage, of skips: ``(N, 198 + 9 + 7)``; from
        version 2 also, per stage, of layers with a 5x5 kernel: ``(N, 198 + 9 + 7 + 7)``.

        Trees find a stage's kernel sizes in the one-hot bits only by splitting on four blocks of each of its
        layers; as one count per stage they cross-validate better on full-width trainings and predict the noise
        subset's seed means better (``python studies/xgb_features.py --space fbnet --protocol
        fbnet-fmnist14-full-e4-v1 --only version`` compares the versions).
        """
        version = self.feature_version(version)
        one_hot = self.one_hot(archs)
        per_layer = one_hot.reshape(len(one_hot), NUM_LAYERS, len(BLOCKS))
        columns = [one_hot, per_layer.sum(axis=1), self._per_stage(per_layer[:, :, SKIP])]
        if version >= 2:
            columns.append(self._per_stage(per_layer[:, :, _KERNEL_5].sum(axis=2)))
        return np.concatenate(columns, axis=1)

    @staticmethod
    def _per_stage(per_layer: np.ndarray) -> np.ndarray:
        """Sums over each stage's layers of a ``(N, 22)`` per-layer quantity: ``(N, 7)``."""
        return per_layer @ _STAGE_MEMBERSHIP

    def graphs(self, archs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The layer chain as typed graphs for the GIN: 24 nodes (input, the 22 layers, output) whose types are
        the blocks (0..8; 9 input, 10 output), 23 edges from each node to the next, typed by the stage of the
        layer they enter (0..6; 7 into the output). Returns node types ``(N, 24)``, edge index ``(N, 2, 23)``,
        edge types ``(N, 23)``."""
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, NUM_LAYERS)
        n = len(archs)
        node_type = np.column_stack([np.full(n, len(BLOCKS)), archs, np.full(n, len(BLOCKS) + 1)])
        chain = np.stack([np.arange(NUM_LAYERS + 1), np.arange(1, NUM_LAYERS + 2)])
        edge_type = np.append(LAYER_STAGE, len(STAGE_LAYERS))
        edges = np.broadcast_to(chain, (n, *chain.shape)).copy()
        return node_type, edges, np.broadcast_to(edge_type, (n, NUM_LAYERS + 1)).copy()

    def cost_features(self, archs: np.ndarray) -> np.ndarray:
        """Each layer's cost depends only on its block: the one-hot encoding is exact for params and FLOPs."""
        return self.one_hot(archs).astype(np.float64)
