"""The DARTS cell search space (Liu et al. 2019) as used by NAS-Bench-301.

An architecture is a normal cell and a reduction cell. Each cell has two inputs (``c_{k-2}`` = 0, ``c_{k-1}`` = 1)
and four intermediate nodes (2..5); node ``k`` takes two *distinct* inputs from ``{0, .., k-1}`` and applies one of
seven operations to each; the cell output concatenates nodes 2..5.

Genes (32 integers, in decision order): for cell in (normal, reduce), for node in 2..5:
``[input_a, op_a, input_b, op_b]``. The two inputs of a node are unordered, so the canonical form has
``input_a < input_b``; with that rule every architecture has exactly one gene vector (isomorphic cells that differ
by a permutation of nodes are *not* merged, as in NAS-Bench-301).
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Mapping

import numpy as np

from nas_envs.spaces.base import Hyperparameter, InvalidArchitectureError, SearchSpace

# NAS-Bench-301's order of the operations.
OPS: tuple[str, ...] = (
    "max_pool_3x3",
    "avg_pool_3x3",
    "skip_connect",
    "sep_conv_3x3",
    "sep_conv_5x5",
    "dil_conv_3x3",
    "dil_conv_5x5",
)
PARAMETER_FREE_OPS: frozenset[str] = frozenset({"max_pool_3x3", "avg_pool_3x3", "skip_connect"})
CELLS: tuple[str, ...] = ("normal", "reduce")
NUM_NODES = 4  # intermediate nodes per cell
GENES_PER_NODE = 4  # input_a, op_a, input_b, op_b
GENES_PER_CELL = NUM_NODES * GENES_PER_NODE
NUM_EDGES = 14  # possible edges per cell: node k has k + 2 candidate inputs
# Edge id of (node k, input i) is EDGE_OFFSET[k] + i, as in NAS-Bench-301's configuration space.
EDGE_OFFSET: tuple[int, ...] = (0, 2, 5, 9)
CONCAT: list[int] = [2, 3, 4, 5]

_IN_A, _OP_A, _IN_B, _OP_B = range(GENES_PER_NODE)
# a node's inputs and ops as strided views of its genes (basic slices: no copies on the encodings' hot path)
_INPUTS, _OPS = slice(_IN_A, None, _IN_B - _IN_A), slice(_OP_A, None, _OP_B - _OP_A)

#: the prefix of NAS-Bench-301's architecture hyperparameters (``...edge_normal_0``, ``...inputs_node_reduce_5``)
NB301_PREFIX = "NetworkSelectorDatasetInfo:darts:"
# NAS-Bench-301's configurations also fix its training pipeline under these components (optimizer, data loader,
# augmentation, network size); they describe its protocol, not the architecture
_NB301_SETTINGS = ("CreateImageDataLoader:", "ImageAugmentation:", "LossModuleSelectorIndices:", "NetworkSelector:",
                   "NetworkSelectorDatasetInfo:network", "OptimizerSelector:", "SimpleLearningrateSchedulerSelector:",
                   "SimpleTrainNode:", "TrainNode:", *(f"{NB301_PREFIX}{name}" for name in
                                                       ("auxiliary", "drop_path_prob", "init_channels", "layers")))


def _position(step: int) -> tuple[int, int, int]:
    """(cell, node, slot) of decision ``step``."""
    cell, rest = divmod(step, GENES_PER_CELL)
    node, slot = divmod(rest, GENES_PER_NODE)
    return cell, node, slot


class DartsSpace(SearchSpace):
    """The DARTS space: 32 decisions, 7 actions (an input index or an op index, depending on the step)."""

    name = "darts"
    feature_versions = (1, 2)  # 2: with graph_features
    num_decisions = 2 * GENES_PER_CELL
    num_actions = len(OPS)
    ops = OPS

    # --- sequential decisions -------------------------------------------------------------------------------
    def action_mask(self, prefix: np.ndarray) -> np.ndarray:
        """A read-only row of a table built once: a mask depends only on the decision and, for a node's second
        input, on its first (so that stepping an environment allocates no mask)."""
        step = len(prefix)
        if not 0 <= step < self.num_decisions:
            raise ValueError(f"darts: decision index must be in [0, {self.num_decisions}), got {step}")
        first_input = int(prefix[step - 2]) if step % GENES_PER_NODE == _IN_B else 0
        if not 0 <= first_input <= NUM_NODES:  # a prefix no environment builds: no table row for it
            return _mask(step, first_input)
        return _ACTION_MASKS[step][first_input]

    def action_masks(self, genes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        steps = np.asarray(steps, dtype=np.int64)
        if ((steps < 0) | (steps >= self.num_decisions)).any():
            raise ValueError(f"darts: decision indices must be in [0, {self.num_decisions})")
        node = (steps % GENES_PER_CELL) // GENES_PER_NODE
        slot = steps % GENES_PER_NODE
        choice = np.arange(self.num_actions)[None, :]
        first_input = genes[np.arange(len(steps)), np.maximum(steps - 2, 0)]
        mask = np.ones((len(steps), self.num_actions), dtype=bool)
        is_a, is_b = slot == _IN_A, slot == _IN_B
        mask[is_a] = choice <= node[is_a, None]
        mask[is_b] = (choice > first_input[is_b, None]) & (choice <= node[is_b, None] + 1)
        return mask.astype(np.int8)

    # --- validity and canonical form ------------------------------------------------------------------------
    def validate(self, genes: np.ndarray) -> None:
        for cell_index, cell in enumerate(CELLS):
            for node in range(NUM_NODES):
                base = cell_index * GENES_PER_CELL + node * GENES_PER_NODE
                in_a, op_a, in_b, op_b = (int(g) for g in genes[base : base + GENES_PER_NODE])
                where = f"darts: {cell} cell, node {node + 2}"
                for op in (op_a, op_b):
                    if not 0 <= op < len(OPS):
                        raise InvalidArchitectureError(f"{where}: op index {op} is not in [0, {len(OPS) - 1}]")
                for inp in (in_a, in_b):
                    if not 0 <= inp <= node + 1:
                        raise InvalidArchitectureError(
                            f"{where}: input {inp} is not allowed; node {node + 2} takes inputs 0..{node + 1}"
                        )
                if in_a == in_b:
                    raise InvalidArchitectureError(f"{where}: both edges come from input {in_a}; inputs must differ")

    def invalid_rows(self, archs: np.ndarray) -> np.ndarray:
        """Vectorised validity check of ``(N, 32)`` integer genes: a boolean mask of the invalid rows."""
        nodes = archs.reshape(len(archs), 2, NUM_NODES, GENES_PER_NODE)
        limit = np.arange(NUM_NODES) + 1  # node k+2 reads inputs 0..k+1
        ops = nodes[..., [_OP_A, _OP_B]]
        inputs = nodes[..., [_IN_A, _IN_B]]
        bad = (ops < 0) | (ops >= len(OPS)) | (inputs < 0) | (inputs > limit[None, None, :, None])
        bad = bad.any(axis=-1) | (nodes[..., _IN_A] == nodes[..., _IN_B])
        return bad.reshape(len(archs), -1).any(axis=1)

    def canonicalize(self, genes: np.ndarray) -> np.ndarray:
        """Smaller input first in every node; works on one gene vector or a batch ``(N, 32)``."""
        genes = np.array(genes, dtype=np.int64, copy=True)
        nodes = genes.reshape(-1, GENES_PER_NODE)
        swap = nodes[:, _IN_A] > nodes[:, _IN_B]
        if swap.any():  # environments build canonical genes: skip the indexing then
            nodes[swap] = nodes[swap][:, [_IN_B, _OP_B, _IN_A, _OP_A]]
        return nodes.reshape(genes.shape)

    # --- sampling and neighbourhoods ------------------------------------------------------------------------
    def _sample_one(self, rng: np.random.Generator) -> np.ndarray:
        # Uniform over input *pairs* (mask-following would favour small first inputs).
        nodes = np.empty((2 * NUM_NODES, GENES_PER_NODE), dtype=np.int64)
        for row in range(2 * NUM_NODES):
            pairs = _INPUT_PAIRS[row % NUM_NODES]
            in_a, in_b = pairs[int(rng.integers(len(pairs)))]
            op_a, op_b = rng.integers(len(OPS), size=2)
            nodes[row] = (in_a, op_a, in_b, op_b)
        return nodes.reshape(-1)

    def neighbours(self, genes: np.ndarray) -> list[np.ndarray]:
        genes = self.canonicalize(genes)
        result: list[np.ndarray] = []
        for row in range(2 * NUM_NODES):
            node = row % NUM_NODES
            base = row * GENES_PER_NODE
            for slot in (_OP_A, _OP_B):
                for op in range(len(OPS)):
                    if op != genes[base + slot]:
                        changed = genes.copy()
                        changed[base + slot] = op
                        result.append(changed)
            for slot, other in ((_IN_A, _IN_B), (_IN_B, _IN_A)):
                for inp in range(node + 2):
                    if inp not in (genes[base + slot], genes[base + other]):
                        changed = genes.copy()
                        changed[base + slot] = inp
                        result.append(self.canonicalize(changed))
        return result

    def isomorphs(self, genes: np.ndarray) -> np.ndarray:
        """The architectures that build the same network as ``genes`` up to the order of channels: each cell's
        intermediate nodes renumbered in every order in which a node still reads only earlier nodes (the cell
        output concatenates them all, so only the order of its channels changes, and with it nothing a training
        depends on but which random weights go where). Canonical, distinct and sorted ``(K, 32)``, ``genes``
        among them. The space keeps them apart, as NAS-Bench-301 does."""
        cells = [self._cell_isomorphs(cell) for cell in self.canonicalize(genes).reshape(2, GENES_PER_CELL)]
        return np.array([np.concatenate(pair) for pair in itertools.product(*cells)])

    def _cell_isomorphs(self, cell: np.ndarray) -> list[np.ndarray]:
        nodes = cell.reshape(NUM_NODES, GENES_PER_NODE)
        found = set()
        for order in itertools.permutations(range(2, NUM_NODES + 2)):  # order[k]: the new number of node k + 2
            renumber = np.array([0, 1, *order])
            inputs = renumber[nodes[:, _INPUTS]]
            if (inputs < np.array(order)[:, None]).all():  # every node still reads earlier ones only
                renumbered = np.empty_like(nodes)
                renumbered[np.array(order) - 2] = np.stack(
                    [inputs[:, 0], nodes[:, _OP_A], inputs[:, 1], nodes[:, _OP_B]], axis=1)
                found.add(tuple(self.canonicalize(renumbered.reshape(-1))))
        return [np.array(genes) for genes in sorted(found)]

    # --- strings --------------------------------------------------------------------------------------------
    def to_string(self, genes: np.ndarray) -> str:
        genes = self.canonicalize(genes).tolist()
        parts = []
        for cell_index, cell in enumerate(CELLS):
            cell_genes = genes[cell_index * GENES_PER_CELL : (cell_index + 1) * GENES_PER_CELL]
            # the repr of a list of (op, input) tuples, as DARTS' Genotype prints it
            edges = ", ".join(f"('{OPS[cell_genes[i + 1]]}', {cell_genes[i]})" for i in range(0, GENES_PER_CELL, 2))
            parts.append(f"{cell}=[{edges}], {cell}_concat={CONCAT!r}")
        return f"Genotype({', '.join(parts)})"

    def parse_printed(self, text: str) -> list[int] | None:
        if _PRINTED.fullmatch(text) is None:
            return None
        genes = [0] * self.num_decisions
        for base, (op, inp) in zip(_EDGE_BASES, _PRINTED_EDGE.findall(text)):
            code = _OP_CODES.get(op)
            if code is None:
                return None
            genes[base], genes[base + 1] = int(inp), code
        return genes

    def from_string(self, text: str) -> np.ndarray:
        fields = _parse_genotype_call(text)
        genes = np.empty(self.num_decisions, dtype=np.int64)
        for cell_index, cell in enumerate(CELLS):
            edges = fields[cell]
            if not isinstance(edges, list) or len(edges) != 2 * NUM_NODES:
                count = len(edges) if isinstance(edges, list) else type(edges).__name__
                raise InvalidArchitectureError(
                    f"darts: {cell} must be a list of {2 * NUM_NODES} (op, input) pairs, got {count}"
                )
            concat = fields.get(f"{cell}_concat", CONCAT)
            if concat != CONCAT and concat != range(CONCAT[0], CONCAT[-1] + 1):
                raise InvalidArchitectureError(f"darts: {cell}_concat must be {CONCAT}, got {str(concat)[:80]}")
            for i, edge in enumerate(edges):
                if not (isinstance(edge, tuple) and len(edge) == 2 and type(edge[1]) is int
                        and 0 <= edge[1] < 2 + NUM_NODES):
                    raise InvalidArchitectureError(f"darts: {cell} edge {i} must be ('op', input) with input "
                                                   f"0..{1 + NUM_NODES}, got {str(edge)[:80]}")
                op, inp = edge
                if op not in OPS:
                    raise InvalidArchitectureError(f"darts: unknown op {op!r} in {cell} edge {i}; allowed: {OPS}")
                node, side = divmod(i, 2)
                base = cell_index * GENES_PER_CELL + node * GENES_PER_NODE + 2 * side
                genes[base], genes[base + 1] = inp, OPS.index(op)
        self.validate(genes)
        return self.canonicalize(genes)

    # --- the configuration view: NAS-Bench-301's names ------------------------------------------------------
    def hyperparameters(self) -> list[Hyperparameter]:
        """NAS-Bench-301's: per cell, ``inputs_node_<cell>_<3..5>`` (the two inputs of intermediate nodes 3 to 5 as
        ``"a_b"``, ``a < b``; node 2 reads the cell inputs) and ``edge_<cell>_<0..13>`` (the op on each possible
        edge, active when its node reads that input), each under :data:`NB301_PREFIX`."""
        out = []
        for cell in CELLS:
            for node in range(NUM_NODES):
                inputs = f"{NB301_PREFIX}inputs_node_{cell}_{node + 2}"
                pairs = tuple(f"{a}_{b}" for a, b in _INPUT_PAIRS[node])
                if node:
                    out.append(Hyperparameter(inputs, pairs))
                for source in range(node + 2):
                    edge = f"{NB301_PREFIX}edge_{cell}_{EDGE_OFFSET[node] + source}"
                    reading = tuple(pair for pair in pairs if str(source) in pair.split("_"))
                    out.append(Hyperparameter(edge, OPS, inputs, reading) if node else Hyperparameter(edge, OPS))
        return out

    def values_from_genes(self, genes: np.ndarray) -> dict[str, object]:
        genes = self.as_genes(genes)  # shape, integers, validity and canonical form, named
        values: dict[str, object] = {}
        for cell_index, cell in enumerate(CELLS):
            for node in range(NUM_NODES):
                base = cell_index * GENES_PER_CELL + node * GENES_PER_NODE
                in_a, op_a, in_b, op_b = (int(g) for g in genes[base : base + GENES_PER_NODE])
                if node:
                    values[f"{NB301_PREFIX}inputs_node_{cell}_{node + 2}"] = f"{in_a}_{in_b}"
                values[f"{NB301_PREFIX}edge_{cell}_{EDGE_OFFSET[node] + in_a}"] = OPS[op_a]
                values[f"{NB301_PREFIX}edge_{cell}_{EDGE_OFFSET[node] + in_b}"] = OPS[op_b]
        return values

    def genes_from_values(self, values: Mapping[str, object]) -> np.ndarray:
        """Also reads YAHPO Gym's spelling of the same names (``:`` as ``_COLON_``) and ignores the training
        settings that NAS-Bench-301's configurations also hold (optimizer, data loader, augmentation, network
        size)."""
        if isinstance(values, Mapping):
            values = {str(k).replace("_COLON_", ":"): v for k, v in values.items()}
        values = self._check_names(values, ignored=[k for k in values if str(k).startswith(_NB301_SETTINGS)])
        genes = np.zeros(self.num_decisions, dtype=np.int64)
        used = set()
        for cell_index, cell in enumerate(CELLS):
            for node in range(NUM_NODES):
                pair = "0_1"
                if node:
                    name = f"{NB301_PREFIX}inputs_node_{cell}_{node + 2}"
                    pair = values.get(name)
                    allowed = [f"{a}_{b}" for a, b in _INPUT_PAIRS[node]]
                    if pair not in allowed:
                        raise InvalidArchitectureError(f"darts: {name} must be one of {allowed}, got {pair!r}")
                    used.add(name)
                base = cell_index * GENES_PER_CELL + node * GENES_PER_NODE
                for slot, source in zip((_IN_A, _IN_B), map(int, pair.split("_"))):
                    edge = f"{NB301_PREFIX}edge_{cell}_{EDGE_OFFSET[node] + source}"
                    if values.get(edge) not in OPS:
                        raise InvalidArchitectureError(f"darts: {edge} (active: node {node + 2} of the {cell} cell "
                                                       f"reads input {source}) must be one of {OPS}, got "
                                                       f"{values.get(edge)!r}")
                    genes[base + slot], genes[base + slot + 1] = source, OPS.index(values[edge])
                    used.add(edge)
        inactive = sorted(set(values) - used)
        if inactive:
            raise InvalidArchitectureError(f"darts: {inactive[:3]} set although inactive: their nodes read other "
                                           "inputs (an inactive edge has no value in a configuration)")
        self.validate(genes)
        return genes

    # --- encodings ------------------------------------------------------------------------------------------
    def one_hot(self, archs: np.ndarray) -> np.ndarray:
        """Per cell, a (14 edges x 7 ops) indicator of which edge is active with which op: ``(N, 196)``."""
        nodes = np.asarray(archs, dtype=np.int64).reshape(-1, 2, NUM_NODES, GENES_PER_NODE)
        n = len(nodes)
        out = np.zeros((n, 2, NUM_EDGES, len(OPS)), dtype=np.float32)
        edge = _EDGE_OFFSETS + nodes[..., _INPUTS]
        rows = np.arange(n)[:, None, None, None]
        out[rows, _CELL_INDEX, edge, nodes[..., _OPS]] = 1.0
        return out.reshape(n, -1)

    def features(self, archs: np.ndarray, cost_features: np.ndarray | None = None, version: int | None = None
                 ) -> np.ndarray:
        """Per cell: op counts by input position (:meth:`cost_features`), how many ops each of the 14 edges carries,
        and the cell depth: ``(N, 28 + 28 + 2)``.

        Counts rather than the (2 x 14 x 7) one-hot bits: on a few hundred noisy trainings, trees on these 58
        columns plus the log params/FLOPs that the XGB surrogate appends cross-validate better than on the bits with
        op counts (``python studies/xgb_features.py`` compares them).
        """
        version = self.feature_version(version)
        archs = np.asarray(archs, dtype=np.int64).reshape(-1, self.num_decisions)
        cost_features = self.cost_features(archs) if cost_features is None else cost_features
        columns = [cost_features, self._edges_used(archs), self.cell_depths(archs)]
        if version >= 2:
            columns.append(self.graph_features(archs))
        return np.concatenate(columns, axis=1).astype(np.float32)

    def graph_features(self, archs: np.ndarray) -> np.ndarray:
        """Neural graph features of both cells (after Kadlecova et al., ICML 2024): per cell and per cell input,
        the nodes it reaches, the edges reading it, the fewest and most convolutions on a path from it to the cell
        output (the fewest is 0 where a parameter-free shortcut joins the input to the output), and the count of
        each op on such paths; -1 for the fewest and most where the input reaches nothing. Float32
        ``(N, 2 x 2 x 11)``. Every intermediate node feeds the cell output, so a path from an input to the output is
        a path to any intermediate node."""
        cells = np.asarray(archs, dtype=np.int64).reshape(-1, GENES_PER_CELL)
        return np.array([_cell_graph_features(tuple(cell.tolist())) for cell in cells],
                        dtype=np.float32).reshape(-1, 2 * 2 * _GRAPH_FEATURES)

    def _edges_used(self, archs: np.ndarray) -> np.ndarray:
        """Per cell, whether each of the 14 edges is active: float32 ``(N, 28)``, :meth:`one_hot` summed over the ops
        (a node's two inputs differ, so an edge carries at most one op)."""
        nodes = archs.reshape(-1, 2, NUM_NODES, GENES_PER_NODE)
        out = np.zeros((len(nodes), 2, NUM_EDGES), dtype=np.float32)
        out[np.arange(len(nodes))[:, None, None, None], _CELL_INDEX, _EDGE_OFFSETS + nodes[..., _INPUTS]] = 1.0
        return out.reshape(len(nodes), -1)

    def cost_features(self, archs: np.ndarray) -> np.ndarray:
        """Per cell, per op, the number of edges from a cell input (0, 1) and from an intermediate node: (N, 28).

        Parameters and FLOPs of the network are linear in these counts: an edge's cost depends only on its cell
        type, op, and (in a reduction cell) whether it reads a cell input at stride 2.
        """
        nodes = np.asarray(archs, dtype=np.int64).reshape(-1, 2, NUM_NODES, GENES_PER_NODE)
        n = len(nodes)
        from_input = nodes[..., _INPUTS] < 2
        # one flat bin per (architecture, cell, op, from a cell input): counting is one bincount
        rows = np.arange(n)[:, None, None, None]
        bins = ((rows * 2 + _CELL_INDEX) * len(OPS) + nodes[..., _OPS]) * 2 + from_input
        return np.bincount(bins.reshape(-1), minlength=n * 2 * len(OPS) * 2).astype(np.float64).reshape(n, -1)

    def graphs(self, archs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`graph` for a batch: node types ``(N, 14)``, edge index ``(N, 2, 26)``, edge types ``(N, 26)``."""
        nodes = np.asarray(archs, dtype=np.int64).reshape(-1, 2, NUM_NODES, GENES_PER_NODE)
        n = len(nodes)
        offset = 7 * np.arange(2)[None, :, None, None]  # the reduction cell's nodes follow the normal cell's
        # Per cell: the two op edges into each intermediate node, then the identity edges into the cell output.
        op_src = (nodes[..., [_IN_A, _IN_B]] + offset).reshape(n, 2, -1)
        op_dst = np.broadcast_to(np.arange(2, 6)[None, None, :, None] + offset, (n, 2, NUM_NODES, 2)).reshape(n, 2, -1)
        op_type = nodes[..., [_OP_A, _OP_B]].reshape(n, 2, -1)
        out_src = np.broadcast_to(np.arange(2, 6) + 7 * np.arange(2)[:, None], (n, 2, NUM_NODES))
        out_dst = np.broadcast_to(6 + 7 * np.arange(2)[:, None], (n, 2, NUM_NODES))
        identity = np.full((n, 2, NUM_NODES), len(OPS))
        # the normal-cell output feeds both inputs of the reduction cell
        bridge_src, bridge_dst = np.full((n, 2), 6), np.broadcast_to([7, 8], (n, 2))
        src = np.concatenate([np.concatenate([op_src, out_src], axis=2).reshape(n, -1), bridge_src], axis=1)
        dst = np.concatenate([np.concatenate([op_dst, out_dst], axis=2).reshape(n, -1), bridge_dst], axis=1)
        etype = np.concatenate([np.concatenate([op_type, identity], axis=2).reshape(n, -1), np.full((n, 2), len(OPS))],
                               axis=1)
        node_type = np.broadcast_to(np.array([0, 1, 2, 2, 2, 2, 3, 4, 5, 6, 6, 6, 6, 7], dtype=np.int64), (n, 14))
        return node_type.copy(), np.stack([src, dst], axis=1).astype(np.int64), etype.astype(np.int64)

    def graph(self, genes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Both cells as one typed graph (14 nodes: per cell 2 inputs, 4 intermediate nodes, 1 output).

        Returns ``(node_type, edge_index, edge_type)``: node types 0..3 = input 0, input 1, intermediate, output,
        plus 4 for the reduction cell's nodes; edge types 0..6 = the ops, 7 = identity into the cell output.
        The reduction cell's inputs are fed by the normal cell's output, which joins the two cells into one graph.
        """
        node_type, edge_index, edge_type = self.graphs(np.asarray(genes, dtype=np.int64)[None])
        return node_type[0], edge_index[0], edge_type[0]

    poor_regions = ("param-free", "pool-heavy")

    def poor_region_variant(self, genes: np.ndarray, rng: np.random.Generator, region: str = "param-free"
                            ) -> np.ndarray:
        """A variant in a known poor region of the space: ``"param-free"``, 5 to 8 parameter-free ops (pools and
        skips) in the normal cell; ``"pool-heavy"``, 6 to 8 pooling ops in the normal cell (rare among random
        architectures, where the surrogates over-predict them)."""
        low, choices = {"param-free": (5, sorted(PARAMETER_FREE_OPS)),
                        "pool-heavy": (6, ["avg_pool_3x3", "max_pool_3x3"])}[region]
        genes = np.array(genes, dtype=np.int64, copy=True)
        op_positions = [node * GENES_PER_NODE + slot for node in range(NUM_NODES) for slot in (_OP_A, _OP_B)]
        count = int(rng.integers(low, 2 * NUM_NODES + 1))
        codes = [OPS.index(name) for name in choices]
        for position in rng.choice(op_positions, size=count, replace=False):
            genes[position] = codes[int(rng.integers(len(codes)))]
        return genes

    # --- descriptive statistics used by analyses ------------------------------------------------------------
    def count_ops(self, genes: np.ndarray, cell: str, ops: frozenset[str] | set[str]) -> int:
        """How many of the 8 edges of ``cell`` use one of ``ops``."""
        cell_genes = np.asarray(genes).reshape(2, NUM_NODES, GENES_PER_NODE)[CELLS.index(cell)]
        chosen = np.concatenate([cell_genes[:, _OP_A], cell_genes[:, _OP_B]])
        return int(sum(OPS[o] in ops for o in chosen))

    def cell_depth(self, genes: np.ndarray, cell: str) -> int:
        """Longest path, in edges, from a cell input to an intermediate node."""
        return int(self.cell_depths(np.asarray(genes)[None])[0, CELLS.index(cell)])

    def cell_depths(self, archs: np.ndarray) -> np.ndarray:
        """:meth:`cell_depth` of both cells for a batch: float32 ``(N, 2)``, read from a table of every cell's
        depth by its nodes' inputs."""
        nodes = np.asarray(archs, dtype=np.int64).reshape(-1, 2, NUM_NODES, GENES_PER_NODE)
        codes = nodes[:, :, 1:, _IN_A] * _INPUT_CODES + nodes[:, :, 1:, _IN_B]  # node 2 reads the cell inputs only
        return _cell_depth_table()[codes[..., 0], codes[..., 1], codes[..., 2]]


_CELL_INDEX = np.arange(2)[None, :, None, None]  # (architecture, cell, node, slot) broadcasting of the cell
_EDGE_OFFSETS = np.asarray(EDGE_OFFSET)[None, None, :, None]
_INPUT_CODES = NUM_NODES + 2  # a node's two inputs (each < this) as one code: input_a * _INPUT_CODES + input_b


_CONV = tuple(op.startswith(("sep", "dil")) for op in OPS)
_GRAPH_FEATURES = 4 + len(OPS)  # per cell input: reached, read by, fewest and most convolutions, op counts


@functools.lru_cache(maxsize=1 << 16)
def _cell_graph_features(cell: tuple[int, ...]) -> tuple[float, ...]:
    """:meth:`DartsSpace.graph_features` of one cell's 16 genes, for cell input 0 then 1 (a plain loop over the
    cell's 8 edges: microseconds, and searches revisit cells, hence the cache)."""
    out: list[float] = []
    for source in (0, 1):
        fewest: dict[int, float] = {source: 0}
        most: dict[int, float] = {source: 0}
        op_counts = [0] * len(OPS)
        for node in range(NUM_NODES):
            for slot_in, slot_op in ((_IN_A, _OP_A), (_IN_B, _OP_B)):
                src, op = cell[node * GENES_PER_NODE + slot_in], cell[node * GENES_PER_NODE + slot_op]
                if src in fewest:
                    fewest[node + 2] = min(fewest.get(node + 2, np.inf), fewest[src] + _CONV[op])
                    most[node + 2] = max(most.get(node + 2, -np.inf), most[src] + _CONV[op])
                    op_counts[op] += 1
        reached = [node for node in fewest if node >= 2]
        read_by = sum(cell[node * GENES_PER_NODE + slot] == source for node in range(NUM_NODES)
                      for slot in (_IN_A, _IN_B))
        out += [len(reached), read_by, min((fewest[n] for n in reached), default=-1),
                max((most[n] for n in reached), default=-1), *op_counts]
    return tuple(float(value) for value in out)


@functools.cache
def _cell_depth_table() -> np.ndarray:
    """The longest path from a cell input to an intermediate node, for every pair of inputs of nodes 3, 4 and 5
    (indexed by their codes; pairs a node cannot read give values never looked up): float32."""
    codes = np.stack(np.meshgrid(*[np.arange(_INPUT_CODES**2)] * (NUM_NODES - 1), indexing="ij"), axis=-1)
    inputs = np.stack(np.divmod(codes.reshape(-1, NUM_NODES - 1), _INPUT_CODES), axis=-1)  # (cells, node, a/b)
    depth = np.zeros((len(inputs), NUM_NODES + 2), dtype=np.int64)
    depth[:, 2] = 1
    for node in range(1, NUM_NODES):
        readable = np.minimum(inputs[:, node - 1], node + 1)  # a node reads inputs 0 .. node + 1 only
        depth[:, node + 2] = 1 + np.take_along_axis(depth, readable, axis=1).max(axis=1)
    return depth.max(axis=1).astype(np.float32).reshape([_INPUT_CODES**2] * (NUM_NODES - 1))


def _mask(step: int, first_input: int) -> np.ndarray:
    _, node, slot = _position(step)
    mask = np.zeros(len(OPS), dtype=np.int8)
    if slot == _IN_A:  # leave room for a larger second input
        mask[: node + 1] = 1
    elif slot == _IN_B:
        mask[first_input + 1 : node + 2] = 1
    else:
        mask[:] = 1
    mask.flags.writeable = False
    return mask


# per decision, per possible first input of the node (0 .. NUM_NODES): the legal next actions
_ACTION_MASKS = tuple(tuple(_mask(step, first) for first in range(NUM_NODES + 1)) for step in range(2 * GENES_PER_CELL))

_INPUT_PAIRS: tuple[list[tuple[int, int]], ...] = tuple(
    list(itertools.combinations(range(node + 2), 2)) for node in range(NUM_NODES)
)

_PRINTED_CELL = r"\[((?:\('\w+', \d\)(?:, )?){8})\]"
_PRINTED_CONCAT = r"(?:\[2, 3, 4, 5\]|range\(2, 6\))"
_PRINTED = re.compile(rf"Genotype\(normal={_PRINTED_CELL}, normal_concat={_PRINTED_CONCAT}, "
                      rf"reduce={_PRINTED_CELL}, reduce_concat={_PRINTED_CONCAT}\)")
_PRINTED_EDGE = re.compile(r"\('(\w+)', (\d)\)")
_OP_CODES = {op: code for code, op in enumerate(OPS)}
# gene positions of the 16 printed (op, input) pairs: node i // 2 of the cell, input a or b (i % 2)
_EDGE_BASES = [cell * GENES_PER_CELL + (i // 2) * GENES_PER_NODE + 2 * (i % 2)
               for cell in range(2) for i in range(2 * NUM_NODES)]
MAX_GENOTYPE_CHARS = 4096  # a printed DARTS genotype has about 400; nothing longer is parsed


def _parse_genotype_call(text: str) -> dict[str, object]:
    """The keyword fields of a ``Genotype(normal=..., normal_concat=..., reduce=..., reduce_concat=...)`` string."""
    if not isinstance(text, str):
        raise InvalidArchitectureError(f"darts: a genotype string is required, got {type(text).__name__}")
    if len(text) > MAX_GENOTYPE_CHARS:
        raise InvalidArchitectureError(f"darts: a Genotype string has at most {MAX_GENOTYPE_CHARS} characters, got "
                                       f"{len(text)}")
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as error:
        raise InvalidArchitectureError(f"darts: not a Genotype(...) string ({error.msg}): {text[:80]!r}") from None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Genotype"):
        raise InvalidArchitectureError(f"darts: expected 'Genotype(normal=..., reduce=...)', got {text[:80]!r}")
    allowed = {"normal", "normal_concat", "reduce", "reduce_concat"}
    fields: dict[str, object] = {}
    if call.args:
        raise InvalidArchitectureError("darts: Genotype fields must be given by keyword (normal=..., reduce=...)")
    for keyword in call.keywords:
        if keyword.arg not in allowed:
            raise InvalidArchitectureError(f"darts: unknown Genotype field {keyword.arg!r}; allowed: {sorted(allowed)}")
        try:
            fields[keyword.arg] = _literal_or_range(keyword.value)
        except ValueError:
            raise InvalidArchitectureError(f"darts: field {keyword.arg!r} is not a literal list") from None
    for required in ("normal", "reduce"):
        if required not in fields:
            raise InvalidArchitectureError(f"darts: Genotype string lacks the field {required!r}")
    return fields


def _literal_or_range(node: ast.expr) -> object:
    """A literal, or ``range(a, b)`` with literal integer bounds as a lazy ``range`` (never expanded: the DARTS code
    prints ``normal_concat=range(2, 6)``, and a string must not make the parser allocate)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords:
        bounds = [ast.literal_eval(arg) for arg in node.args]
        if len(bounds) == 2 and all(type(b) is int for b in bounds):
            return range(*bounds)
        raise ValueError("range() takes two literal integers")
    return ast.literal_eval(node)
