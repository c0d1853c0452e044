"""The trainable network a DARTS genotype denotes, at the proxy scale of the ground-truth protocol.

Structure as in DARTS' evaluation network: a stem, ``layers`` cells with reduction cells at 1/3 and 2/3 of the
depth (channels doubled there), each cell preprocessing its two inputs with 1x1 ReLU-conv-BN (a factorized reduce
when the previous cell halved the resolution), global average pooling and a linear classifier. The proxy drops
the auxiliary head and drop-path, which the paper uses for its 100-epoch trainings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from nas_envs.spaces.darts import GENES_PER_CELL, GENES_PER_NODE, OPS

if TYPE_CHECKING:
    from nas_envs.groundtruth.protocols import TrainingProtocol


class ReLUConvBN(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, kernel, stride, padding, dilation=dilation, bias=False),
            nn.BatchNorm2d(c_out),
        )


class DilConv(nn.Sequential):
    """ReLU, depthwise (dilated) conv, pointwise conv, BN."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int, padding: int, dilation: int) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_in, kernel, stride, padding, dilation=dilation, groups=c_in, bias=False),
            nn.Conv2d(c_in, c_out, 1, bias=False),
            nn.BatchNorm2d(c_out),
        )


class SepConv(nn.Sequential):
    """Two stacked depthwise-separable convolutions, the first carrying the stride."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int, padding: int) -> None:
        super().__init__(
            DilConv(c_in, c_in, kernel, stride, padding, dilation=1),
            DilConv(c_in, c_out, kernel, 1, padding, dilation=1),
        )


class FactorizedReduce(nn.Module):
    """Halve the resolution with two offset stride-2 1x1 convolutions (the skip of a reduction cell)."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.relu = nn.ReLU(inplace=False)
        self.conv_a = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.conv_b = nn.Conv2d(c_in, c_out - c_out // 2, 1, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(x)
        shifted = nn.functional.pad(x[:, :, 1:, 1:], (0, 1, 0, 1))
        return self.bn(torch.cat([self.conv_a(x), self.conv_b(shifted)], dim=1))


def make_op(name: str, channels: int, stride: int) -> nn.Module:
    """One DARTS operation by name; ``stride`` is 2 on the edges from the inputs of a reduction cell."""
    if name == "max_pool_3x3":
        return nn.MaxPool2d(3, stride=stride, padding=1)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=stride, padding=1, count_include_pad=False)
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else FactorizedReduce(channels, channels)
    kernel = int(name[-1])
    if name.startswith("sep_conv"):
        return SepConv(channels, channels, kernel, stride, kernel // 2)
    if name.startswith("dil_conv"):
        return DilConv(channels, channels, kernel, stride, 2 * (kernel // 2), dilation=2)
    raise ValueError(f"unknown DARTS op {name!r}; allowed: {OPS}")


class Cell(nn.Module):
    def __init__(
        self, cell_genes: list[int], c_prev_prev: int, c_prev: int, channels: int, reduction: bool,
        reduction_prev: bool,
    ) -> None:
        super().__init__()
        self.reduction = reduction
        self.pre0 = (
            FactorizedReduce(c_prev_prev, channels) if reduction_prev else ReLUConvBN(c_prev_prev, channels, 1, 1, 0)
        )
        self.pre1 = ReLUConvBN(c_prev, channels, 1, 1, 0)
        self.inputs: list[int] = []
        ops = []
        for node in range(len(cell_genes) // GENES_PER_NODE):
            in_a, op_a, in_b, op_b = cell_genes[node * GENES_PER_NODE : (node + 1) * GENES_PER_NODE]
            for inp, op in ((in_a, op_a), (in_b, op_b)):
                stride = 2 if reduction and inp < 2 else 1
                ops.append(make_op(OPS[op], channels, stride))
                self.inputs.append(int(inp))
        self.ops = nn.ModuleList(ops)

    def forward(self, s0: torch.Tensor, s1: torch.Tensor) -> torch.Tensor:
        states = [self.pre0(s0), self.pre1(s1)]
        for i in range(0, len(self.ops), 2):
            states.append(
                self.ops[i](states[self.inputs[i]]) + self.ops[i + 1](states[self.inputs[i + 1]])
            )
        return torch.cat(states[2:], dim=1)


class DartsNetwork(nn.Module):
    """A DARTS network for ``in_channels`` x H x W images.

    Args:
        genes: the 32 canonical genes of the architecture.
        channels: initial cell channels ``C``.
        layers: number of cells; reduction cells sit at ``layers // 3`` and ``2 * layers // 3``.
        stem_multiplier: stem output channels = ``stem_multiplier * C`` (the proxy uses a thin stem, 1).
    """

    def __init__(
        self, genes: list[int], num_classes: int = 10, in_channels: int = 1, channels: int = 8, layers: int = 8,
        stem_multiplier: int = 1,
    ) -> None:
        super().__init__()
        normal, reduce = list(genes[:GENES_PER_CELL]), list(genes[GENES_PER_CELL:])
        c_stem = stem_multiplier * channels
        self.stem = nn.Sequential(nn.Conv2d(in_channels, c_stem, 3, padding=1, bias=False), nn.BatchNorm2d(c_stem))
        c_prev_prev, c_prev, c_cur = c_stem, c_stem, channels
        cells = []
        reduction_prev = False
        for i in range(layers):
            reduction = i in (layers // 3, 2 * layers // 3)
            if reduction:
                c_cur *= 2
            cell = Cell(reduce if reduction else normal, c_prev_prev, c_prev, c_cur, reduction, reduction_prev)
            cells.append(cell)
            reduction_prev = reduction
            c_prev_prev, c_prev = c_prev, 4 * c_cur
        self.cells = nn.ModuleList(cells)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c_prev, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.classifier(self.pool(s1).flatten(1))


def build(protocol: "TrainingProtocol", genes: list[int]) -> DartsNetwork:
    """The network of ``genes`` under ``protocol`` (the catalogue's network builder of this family)."""
    return DartsNetwork(genes, num_classes=protocol.num_classes, **protocol.network)
