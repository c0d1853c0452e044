"""A GIN ensemble (graph isomorphism network with typed edges and a virtual node), as in NAS-Bench-301.

Input: batches of graphs of one fixed size (every architecture of a cell space has the same node and edge
count), see :class:`GraphBatch`. Output: ``(N, members, targets)``. One network predicts all targets (validation
and test accuracy) from a shared trunk: they are strongly correlated, and one pass costs half of two.

Training follows the seed paper: a regression loss (L1) plus a pairwise hinge ranking loss with margin 0.1, both
in percentage points, so that the ranking of architectures is learned explicitly.

Unlike the seed paper's GIN, a graph batch may carry a row of tabular features per graph (op counts, depth, log
params and FLOPs); a config with ``num_features > 0`` adds their standardised projection to the pooled graph
embedding before the readout. On a few hundred noisy trainings most of what can be learnt is additive in such
counts, which message passing finds slowly: on the DARTS noise subset GINs with them explain more of the
variance of the seed means than GINs without (``python studies/gin_settings.py '{}' '{"num_features": 0}'
--noise-subset`` measures it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from torch import nn

from nas_envs.progress import progress
from nas_envs.threads import one_thread


@dataclass(frozen=True)
class GraphBatch:
    """``N`` graphs with ``V`` nodes and ``E`` edges each: node types ``(N, V)``, edge index ``(N, 2, E)`` (local
    node ids), edge types ``(N, E)``; optionally ``F`` tabular features per graph ``(N, F)``, read by GINs whose
    config has ``num_features == F``."""

    node_type: np.ndarray
    edge_index: np.ndarray
    edge_type: np.ndarray
    features: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.node_type)

    def subset(self, rows: "np.ndarray | slice") -> "GraphBatch":
        features = None if self.features is None else self.features[rows]
        return GraphBatch(self.node_type[rows], self.edge_index[rows], self.edge_type[rows], features)


@dataclass(frozen=True)
class GINConfig:
    num_node_types: int
    num_edge_types: int
    outputs: int = 1
    num_features: int = 0  # tabular features per graph added before the readout; 0: graphs only, as in the paper
    hidden: int = 24
    layers: int = 8
    epochs: int = 128
    batch_size: int = 32
    learning_rate: float = 3e-3
    ranking_margin: float = 0.1  # percentage points
    ranking_weight: float = 1.0

    @classmethod
    def for_graphs(cls, graphs: GraphBatch, outputs: int, **settings) -> "GINConfig":
        """A config whose embeddings cover every node and edge type of ``graphs`` and that reads their tabular
        features, if they have any; ``settings`` override fields."""
        num_features = 0 if graphs.features is None else graphs.features.shape[1]
        return cls(**{"num_node_types": int(graphs.node_type.max()) + 1,
                      "num_edge_types": int(graphs.edge_type.max()) + 1,
                      "outputs": outputs, "num_features": num_features, **settings})


class GIN(nn.Module):
    def __init__(self, config: GINConfig) -> None:
        from torch_geometric.nn import GINEConv

        super().__init__()
        h = config.hidden
        self.node_embedding = nn.Embedding(config.num_node_types, h)
        self.edge_embedding = nn.Embedding(config.num_edge_types, h)
        self.convs = nn.ModuleList(
            GINEConv(nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, h)), edge_dim=h)
            for _ in range(config.layers)
        )
        self.norms = nn.ModuleList(nn.BatchNorm1d(h) for _ in range(config.layers))
        self.virtual = nn.ModuleList(
            nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, h)) for _ in range(config.layers - 1)
        )
        self.readout = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, config.outputs))
        if config.num_features:
            self.feature_projection = nn.Linear(config.num_features, h)
            # the fitting data's mean and standard deviation per feature, saved with the weights
            self.register_buffer("feature_center", torch.zeros(config.num_features))
            self.register_buffer("feature_scale", torch.ones(config.num_features))

    def standardise_like(self, features: np.ndarray) -> None:
        """Standardise inputs with the mean and standard deviation of ``features`` (constant columns: scale 1)."""
        features = torch.as_tensor(features, dtype=torch.float32)
        scale = features.std(dim=0, unbiased=False)
        self.feature_center.copy_(features.mean(dim=0))
        self.feature_scale.copy_(torch.where(scale > 0, scale, torch.ones_like(scale)))

    def forward(self, node_type: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor,
                features: torch.Tensor | None = None) -> torch.Tensor:
        """Batched fixed-size graphs (and their tabular features, if the config reads any) -> ``(N, outputs)``
        values in (0, 1)."""
        n, v = node_type.shape
        x = self.node_embedding(node_type.reshape(-1))
        offsets = (torch.arange(n) * v)[:, None, None]
        flat_index = (edge_index + offsets).permute(1, 0, 2).reshape(2, -1)
        edge_attr = self.edge_embedding(edge_type.reshape(-1))
        virtual = torch.zeros(n, x.shape[1])
        for layer, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            x = x + virtual.repeat_interleave(v, dim=0)  # the virtual node talks to every node of its graph
            x = torch.relu(norm(conv(x, flat_index, edge_attr))) + x
            if layer < len(self.virtual):
                virtual = virtual + self.virtual[layer](x.view(n, v, -1).mean(dim=1))
        pooled = x.view(n, v, -1).mean(dim=1)
        if hasattr(self, "feature_projection"):
            pooled = pooled + self.feature_projection((features - self.feature_center) / self.feature_scale)
        return torch.sigmoid(self.readout(pooled))


def _tensors(graphs: GraphBatch, config: GINConfig) -> tuple[torch.Tensor, ...]:
    """The forward pass's inputs; checks that the batch carries the tabular features ``config`` reads."""
    tensors = (torch.as_tensor(graphs.node_type), torch.as_tensor(graphs.edge_index), torch.as_tensor(graphs.edge_type))
    if not config.num_features:
        return tensors
    width = None if graphs.features is None else graphs.features.shape[1]
    if width != config.num_features:
        raise ValueError(f"this GIN reads {config.num_features} tabular features per graph, the batch has "
                         f"{'none' if width is None else width}")
    return (*tensors, torch.as_tensor(graphs.features, dtype=torch.float32))


def pairwise_hinge(pred: torch.Tensor, target: torch.Tensor, margin: float) -> torch.Tensor:
    """Mean over pairs with target_i > target_j of max(0, margin - (pred_i - pred_j))."""
    diff_target = target[:, None] - target[None, :]
    diff_pred = pred[:, None] - pred[None, :]
    better = diff_target > 0
    if not better.any():
        return pred.sum() * 0.0
    return torch.relu(margin - diff_pred[better]).mean()


def fit_member(graphs: GraphBatch, y: np.ndarray, config: GINConfig, seed: int) -> GIN:
    """One member on a bootstrap resample of ``(graphs, y (N, outputs))``, deterministic given ``seed``
    (single-threaded CPU)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows = rng.integers(len(graphs), size=len(graphs))
    inputs = _tensors(graphs.subset(rows), config)
    target = torch.as_tensor(y[rows], dtype=torch.float32)
    model = GIN(config)
    if config.num_features:
        model.standardise_like(graphs.features)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.epochs)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(config.epochs):
        order = torch.randperm(len(rows), generator=generator)
        for start in range(0, len(rows), config.batch_size):
            batch = order[start : start + config.batch_size]
            if len(batch) < 2:
                continue
            # both terms in percentage points, so that neither swamps the other
            pred = 100 * model(*(tensor[batch] for tensor in inputs))
            truth = 100 * target[batch]
            known = torch.isfinite(truth)  # a target some records lack (NaN) is learnt from those that have it
            ranking = sum(pairwise_hinge(pred[known[:, t], t], truth[known[:, t], t], config.ranking_margin)
                          for t in range(truth.shape[1]))
            loss = (pred[known] - truth[known]).abs().mean() + config.ranking_weight * ranking / truth.shape[1]
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
    model.eval()
    return model


def _stack(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack([t.detach() for t in tensors])


class StackedGIN:
    """All members of an ensemble evaluated together, in eval mode, without per-member Python loops.

    The same computation as :meth:`GIN.forward` (tested equal), with every parameter stacked along a leading
    member axis: one batched matrix product per layer instead of one small torch-geometric call per member.
    """

    def __init__(self, members: list[GIN]) -> None:
        def linear(modules: list[nn.Linear]) -> tuple[torch.Tensor, torch.Tensor]:
            return _stack([m.weight.T for m in modules]), _stack([m.bias for m in modules])[:, None, :]

        def mlp(modules: list[nn.Sequential]) -> list[tuple[torch.Tensor, torch.Tensor]]:
            return [linear([m[0] for m in modules]), linear([m[2] for m in modules])]

        self.node_embedding = _stack([m.node_embedding.weight for m in members])
        edge_embedding = _stack([m.edge_embedding.weight for m in members])
        self.layers = []
        for layer in range(len(members[0].convs)):
            convs = [m.convs[layer] for m in members]
            norms = [m.norms[layer] for m in members]
            scale = _stack([n.weight / torch.sqrt(n.running_var + n.eps) for n in norms])[:, None, :]
            shift = _stack([n.bias - n.running_mean * n.weight / torch.sqrt(n.running_var + n.eps) for n in norms])
            edge_weight, edge_bias = linear([c.lin for c in convs])
            self.layers.append(
                {
                    # few edge types: their transformed embeddings form a small table per member
                    "edge_table": torch.baddbmm(edge_bias, edge_embedding, edge_weight),
                    "mlp": mlp([c.nn for c in convs]),
                    "eps": _stack([c.eps.reshape(()) for c in convs])[:, None, None],
                    "norm": (scale, shift[:, None, :]),
                    "virtual": mlp([m.virtual[layer] for m in members]) if layer < len(members[0].virtual) else None,
                }
            )
        self.readout = mlp([m.readout for m in members])
        self.feature_projection = None
        if hasattr(members[0], "feature_projection"):
            # the standardisation folded into the projection: W (x - c) / s + b = (W / s) x + (b - W (c / s))
            weights = [m.feature_projection.weight / m.feature_scale for m in members]
            biases = [m.feature_projection.bias - w @ m.feature_center for w, m in zip(weights, members)]
            self.feature_projection = (_stack([w.T for w in weights]), _stack(biases)[:, None, :])

    @staticmethod
    def _mlp(x: torch.Tensor, weights: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        (w1, b1), (w2, b2) = weights
        return torch.baddbmm(b2, torch.relu(torch.baddbmm(b1, x, w1)), w2)

    def __call__(self, node_type: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor,
                 features: torch.Tensor | None = None) -> torch.Tensor:
        """``(N, members, outputs)`` predictions."""
        members = self.node_embedding.shape[0]
        n, v = node_type.shape
        offsets = (torch.arange(n) * v)[:, None, None]
        src, dst = (edge_index + offsets).permute(1, 0, 2).reshape(2, -1)
        # index_select and fused addcmul: plain indexing along dim 1 was a third of the time
        x = self.node_embedding.index_select(1, node_type.reshape(-1))  # (M, n*v, h)
        edge_type = edge_type.reshape(-1)
        virtual = torch.zeros(members, n, 1, x.shape[2])
        for layer in self.layers:
            x = (x.view(members, n, v, -1) + virtual).view(members, n * v, -1)
            messages = torch.relu(x.index_select(1, src) + layer["edge_table"].index_select(1, edge_type))
            aggregated = torch.zeros_like(x).index_add_(1, dst, messages)
            h = self._mlp(torch.addcmul(aggregated, 1 + layer["eps"], x), layer["mlp"])
            scale, shift = layer["norm"]
            x = torch.relu(torch.addcmul(shift, h, scale)) + x
            if layer["virtual"] is not None:
                virtual = virtual + self._mlp(x.view(members, n, v, -1).mean(dim=2), layer["virtual"])[:, :, None]
        pooled = x.view(members, n, v, -1).mean(dim=2)
        if self.feature_projection is not None:
            weight, bias = self.feature_projection
            pooled = pooled + torch.baddbmm(bias, features.expand(members, -1, -1), weight)
        return torch.sigmoid(self._mlp(pooled, self.readout)).permute(1, 0, 2)


class GINEnsemble:
    """Members that predict metrics in (0, 1) from graphs; ``predict`` returns ``(N, members, targets)``."""

    def __init__(self, config: GINConfig, members: list[GIN]) -> None:
        self.config = config
        self.members = members
        self.num_members = len(members)

    @classmethod
    def fit(cls, graphs: GraphBatch, y: np.ndarray, config: GINConfig, members: int = 10, seed: int = 0):
        """``y``: ``(N, config.outputs)`` targets in [0, 1]; NaN where a record lacks a target."""
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (len(graphs), config.outputs):
            raise ValueError(f"expected targets of shape ({len(graphs)}, {config.outputs}), got {y.shape}")
        known = y[np.isfinite(y)]
        if np.isinf(y).any() or known.min(initial=0) < 0 or known.max(initial=0) > 1:
            raise ValueError("the GIN ensemble predicts values in [0, 1] (accuracies as fractions); NaN marks a "
                             "missing target")
        if not np.isfinite(y).any(axis=0).all():
            raise ValueError("every target needs a value for at least one graph")
        with one_thread():  # the same weights whatever the process's thread settings
            return cls(config, [fit_member(graphs, y, config, seed=seed * 1000 + k)
                                for k in progress(range(members), desc="GIN members", leave=False)])

    #: float32 values of one edge-message tensor (members x edges x hidden) per forward pass: the activations of
    #: larger batches fall out of the L2 cache and cost more per architecture
    activation_budget = 160_000

    def predict(self, graphs: GraphBatch) -> np.ndarray:
        per_graph = self.num_members * graphs.edge_type.shape[1] * self.config.hidden
        block = max(1, self.activation_budget // per_graph)
        with torch.no_grad():
            blocks = [self._stacked(*_tensors(graphs.subset(slice(start, start + block)), self.config)).double().numpy()
                      for start in range(0, len(graphs), block)]
        return np.concatenate(blocks) if blocks else np.zeros((0, self.num_members, self.config.outputs))

    def predict_per_member(self, graphs: GraphBatch) -> np.ndarray:
        """The reference path: each member's own forward pass (slower; used to test :class:`StackedGIN`)."""
        tensors = _tensors(graphs, self.config)
        with torch.no_grad():
            return np.stack([m(*tensors).double().numpy() for m in self.members], axis=1)

    @cached_property
    def _stacked(self) -> StackedGIN:
        return StackedGIN(self.members)

    def save(self, folder: Path) -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / "config.json"]
        paths[0].write_text(json.dumps(asdict(self.config), indent=1) + "\n")
        for k, member in enumerate(self.members):
            path = folder / f"member_{k}.pt"
            torch.save(member.state_dict(), path)
            paths.append(path)
        return paths

    @classmethod
    def load(cls, folder: Path, count: int) -> "GINEnsemble":
        config = GINConfig(**json.loads((folder / "config.json").read_text()))
        members = []
        for k in range(count):
            model = GIN(config)
            model.load_state_dict(torch.load(folder / f"member_{k}.pt", weights_only=True))
            model.eval()
            members.append(model)
        return cls(config, members)
