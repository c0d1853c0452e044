"""A one-shot model of the DARTS space: every edge of a cell mixes every allowed operation (plus ``none``).

Three ways of mixing, as the papers define them (written from their descriptions):

- ``"darts"`` (Liu et al. 2019, first order): each edge outputs the softmax-weighted sum of all its operations.
- ``"pcdarts"`` (Xu et al. 2020): only ``1 / PC_PARTIAL`` of the channels go through the mixed operations (the rest
  bypass them), channels are shuffled after each edge, and each node weighs its incoming edges by a softmax over
  edge parameters ``beta`` (edge normalisation).
- ``"gdas"`` (Dong and Yang 2019): each edge samples one operation per step from a Gumbel-softmax over its
  parameters and runs only that one; the hard one-hot sample passes gradients through the soft one
  (straight-through), with a temperature the search anneals; in evaluation mode each edge runs its strongest
  operation.

The cells follow the DARTS search network: two inputs (the previous two cells), four nodes, node ``i`` fed by every
earlier state (``2 + i`` edges), output the concatenation of the four nodes; reduction cells at 1/3 and 2/3 of the
depth. Operations come from :func:`nas_envs.groundtruth.darts_net.make_op`, so that a derived genotype trains with
the same operations it was searched with.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from nas_envs.groundtruth.darts_net import FactorizedReduce, ReLUConvBN, make_op
from nas_envs.spaces.darts import NUM_NODES

METHODS = ("darts", "pcdarts", "gdas")
PC_PARTIAL = 4  # PC-DARTS' K: one channel in K goes through the mixed operation
NONE = "none"
EDGES = sum(2 + node for node in range(NUM_NODES))  # 14 edges per cell


class Zero(nn.Module):
    """The ``none`` operation: zeros of the output's shape."""

    def __init__(self, stride: int) -> None:
        super().__init__()
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :, :: self.stride, :: self.stride].mul(0.0)


class MixedOp(nn.Module):
    def __init__(self, ops: tuple[str, ...], channels: int, stride: int, method: str) -> None:
        super().__init__()
        self.method = method
        self.stride = stride
        width = channels // PC_PARTIAL if method == "pcdarts" else channels
        self.ops = nn.ModuleList(Zero(stride) if op == NONE else make_op(op, width, stride) for op in ops)
        # pools have no BN of their own; DARTS' search adds an affine-free BN after them
        for index, op in enumerate(ops):
            if "pool" in op:
                self.ops[index] = nn.Sequential(self.ops[index], nn.BatchNorm2d(width, affine=False))

    def forward(self, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        if self.method == "gdas":  # one-hot weights: run the sampled operation only, keep its gradient
            index = int(weights.argmax())
            return weights[index] * self.ops[index](x)
        if self.method == "pcdarts":
            width = x.shape[1] // PC_PARTIAL
            through, bypass = x[:, :width], x[:, width:]
            mixed = sum(w * op(through) for w, op in zip(weights, self.ops))
            if self.stride == 2:
                bypass = F.max_pool2d(bypass, 3, stride=2, padding=1)  # the same size as the ops' stride 2
            out = torch.cat([mixed, bypass], dim=1)
            return _shuffle(out, PC_PARTIAL)
        return sum(w * op(x) for w, op in zip(weights, self.ops))


def _shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    batch, channels, height, width = x.shape
    return x.view(batch, groups, channels // groups, height, width).transpose(1, 2).reshape(batch, channels, height,
                                                                                           width)


class SearchCell(nn.Module):
    def __init__(self, ops: tuple[str, ...], c_prev_prev: int, c_prev: int, channels: int, reduction: bool,
                 reduction_prev: bool, method: str) -> None:
        super().__init__()
        self.reduction = reduction
        self.pre0 = FactorizedReduce(c_prev_prev, channels) if reduction_prev else \
            ReLUConvBN(c_prev_prev, channels, 1, 1, 0)
        self.pre1 = ReLUConvBN(c_prev, channels, 1, 1, 0)
        self.edges = nn.ModuleList(
            MixedOp(ops, channels, 2 if reduction and source < 2 else 1, method)
            for node in range(NUM_NODES) for source in range(2 + node)
        )

    def forward(self, s0: torch.Tensor, s1: torch.Tensor, weights: torch.Tensor, edge_weights: torch.Tensor | None
                ) -> torch.Tensor:
        states = [self.pre0(s0), self.pre1(s1)]
        edge = 0
        for node in range(NUM_NODES):
            incoming = []
            for source in range(2 + node):
                out = self.edges[edge](states[source], weights[edge])
                incoming.append(out if edge_weights is None else edge_weights[edge] * out)
                edge += 1
            states.append(sum(incoming))
        return torch.cat(states[2:], dim=1)


class Supernet(nn.Module):
    """The one-shot model. ``alphas`` (operation parameters per edge, normal and reduction cell) and, for
    PC-DARTS, ``betas`` (edge parameters) are the architecture; everything else are the weights."""

    def __init__(self, ops: tuple[str, ...], method: str = "darts", num_classes: int = 10, in_channels: int = 1,
                 channels: int = 8, layers: int = 5) -> None:
        super().__init__()
        if method not in METHODS:
            raise ValueError(f"unknown one-shot method {method!r}; allowed: {METHODS}")
        if NONE not in ops:
            raise ValueError(f"the mixed operations must include {NONE!r}, got {ops}")
        self.ops, self.method, self.tau = ops, method, 10.0
        self.stem = nn.Sequential(nn.Conv2d(in_channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels))
        c_prev_prev, c_prev, c_cur, reduction_prev = channels, channels, channels, False
        cells = []
        for i in range(layers):
            reduction = i in (layers // 3, 2 * layers // 3)
            c_cur = 2 * c_cur if reduction else c_cur
            cells.append(SearchCell(ops, c_prev_prev, c_prev, c_cur, reduction, reduction_prev, method))
            reduction_prev = reduction
            c_prev_prev, c_prev = c_prev, NUM_NODES * c_cur
        self.cells = nn.ModuleList(cells)
        self.classifier = nn.Linear(c_prev, num_classes)
        self.alphas = nn.Parameter(1e-3 * torch.randn(2, EDGES, len(ops)))
        self.betas = nn.Parameter(1e-3 * torch.randn(2, EDGES)) if method == "pcdarts" else None

    def architecture_parameters(self) -> list[nn.Parameter]:
        return [p for p in (self.alphas, self.betas) if p is not None]

    def weight_parameters(self) -> list[nn.Parameter]:
        architecture = {id(p) for p in self.architecture_parameters()}
        return [p for p in self.parameters() if id(p) not in architecture]

    def _weights(self, cell: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        alphas = self.alphas[cell]
        if self.method == "gdas" and self.training:
            weights = F.gumbel_softmax(alphas, tau=self.tau, hard=True, dim=-1)
        elif self.method == "gdas":  # evaluated as the architecture it would derive: each edge's strongest op
            weights = F.one_hot(alphas.argmax(dim=-1), alphas.shape[-1]).to(alphas.dtype)
        else:
            weights = F.softmax(alphas, dim=-1)
        edge_weights = None
        if self.betas is not None:  # a softmax over each node's incoming edges
            parts, start = [], 0
            for node in range(NUM_NODES):
                parts.append(F.softmax(self.betas[cell, start : start + 2 + node], dim=-1))
                start += 2 + node
            edge_weights = torch.cat(parts)
        return weights, edge_weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s0 = s1 = self.stem(x)
        normal, reduce = self._weights(0), self._weights(1)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1, *(reduce if cell.reduction else normal))
        return self.classifier(F.adaptive_avg_pool2d(s1, 1).flatten(1))

    def edge_strengths(self) -> torch.Tensor:
        """``(2, EDGES, ops)`` the weight of each operation on each edge as the derivation reads it: softmax of the
        alphas, times the edge's normalised beta for PC-DARTS."""
        with torch.no_grad():
            strengths = F.softmax(self.alphas, dim=-1)
            if self.betas is not None:
                scale = torch.stack([self._weights(cell)[1] for cell in (0, 1)])
                strengths = strengths * scale[..., None]
        return strengths
