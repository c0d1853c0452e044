"""The CitySeg network: an elastic bottleneck backbone (head + 4 stages) with a light segmentation decoder.

One class serves both roles: built for an architecture's genes it is that exact network (standard convolutions,
countable by hooks); built for the largest genes it is the *supernet*, whose ``forward(x, genes)`` runs any
architecture with the leading channels and blocks of its weights (once-for-all style weight sharing), and whose
:meth:`CitySegNet.extract` copies those weights into the exact network.

Layout for a 64 x 64 single-channel scene (widths at multiplier 1.0; the genes scale them by 0.65 / 0.8 / 1.0):

- head: 3x3 conv stride 2 to 16 channels, ``head depth`` 3x3 convs at 16, 3x3 conv to 24 (32 x 32);
- stages of ``1 + depth`` bottleneck blocks (1x1 to ``expand x width``, 3x3 with the stage's stride, 1x1 back;
  a 1x1 strided projection shortcut on each stage's first block, identity on the others): widths 32, 48, 64, 96,
  strides 1, 2, 2, 2 (32, 16, 8, 4 pixels);
- decoder: a 1x1 lateral conv of every stage to 32 channels, upsampled to 32 x 32 and summed, a 3x3 conv, a 1x1
  classifier to 11 classes (10 Fashion-MNIST classes and background), upsampled to the input size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from nas_envs.spaces.cityseg import (
    CHOICES,
    EXPAND_RATIOS,
    EXPAND_START,
    NUM_STAGES,
    SLOT_STAGE,
    WIDTH_MULTIPLIERS,
    WIDTH_START,
)

if TYPE_CHECKING:
    from nas_envs.groundtruth.protocols import TrainingProtocol

HEAD_CHANNELS = (16, 24)  # inner, output
STAGE_CHANNELS = (32, 48, 64, 96)
STAGE_STRIDES = (1, 2, 2, 2)
DECODER_CHANNELS = 32
NUM_CLASSES = 11
LARGEST_GENES = np.asarray(CHOICES) - 1


def scaled(base: int, width_gene: int) -> int:
    return int(round(base * WIDTH_MULTIPLIERS[int(width_gene)]))


def bottleneck_width(out_channels: int, expand_gene: int) -> int:
    return max(2, int(round(out_channels * EXPAND_RATIOS[int(expand_gene)])))


class ConvBN(nn.Module):
    """Conv + BatchNorm (+ ReLU) that can run with fewer input/output channels than it was built with."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1, relu: bool = True) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.relu = relu

    def forward(self, x: torch.Tensor, out_channels: int | None = None) -> torch.Tensor:
        out = out_channels or self.conv.out_channels
        if out == self.conv.out_channels and x.shape[1] == self.conv.in_channels:
            y = self.bn(self.conv(x))
        else:  # the leading channels of the shared weights
            conv, bn = self.conv, self.bn
            y = F.conv2d(x, conv.weight[:out, : x.shape[1]], None, conv.stride, conv.padding)
            y = F.batch_norm(y, bn.running_mean[:out], bn.running_var[:out], bn.weight[:out], bn.bias[:out],
                             bn.training, bn.momentum or 0.1, bn.eps)
        return F.relu(y) if self.relu else y


class Bottleneck(nn.Module):
    def __init__(self, c_in: int, c_out: int, mid: int, stride: int, project: bool) -> None:
        super().__init__()
        self.reduce = ConvBN(c_in, mid, 1)
        self.spatial = ConvBN(mid, mid, 3, stride)
        self.expand = ConvBN(mid, c_out, 1, relu=False)
        self.shortcut = ConvBN(c_in, c_out, 1, stride, relu=False) if project else None

    def forward(self, x: torch.Tensor, c_out: int, mid: int) -> torch.Tensor:
        out = self.expand(self.spatial(self.reduce(x, mid), mid), c_out)
        return F.relu(out + (self.shortcut(x, c_out) if self.shortcut is not None else x))


class CitySegNet(nn.Module):
    """The network of ``genes`` (24 CitySeg genes); with the largest genes, the supernet of the space."""

    def __init__(self, genes: "np.ndarray | list[int]") -> None:
        super().__init__()
        self.genes = np.asarray(genes, dtype=np.int64).copy()
        head_depth, stage_depths, expands, widths = _split(self.genes)
        inner, head_out = scaled(HEAD_CHANNELS[0], widths[0]), scaled(HEAD_CHANNELS[1], widths[1])
        self.stem = ConvBN(1, inner, 3, stride=2)
        self.head = nn.ModuleList(ConvBN(inner, inner, 3) for _ in range(head_depth))
        self.head_out = ConvBN(inner, head_out, 3)
        self.stages = nn.ModuleList()
        self.laterals = nn.ModuleList()
        c_in = head_out
        for stage in range(NUM_STAGES):
            c_out = scaled(STAGE_CHANNELS[stage], widths[2 + stage])
            blocks = nn.ModuleList()
            for position in range(1 + stage_depths[stage]):
                mid = bottleneck_width(c_out, expands[stage][position])
                first = position == 0
                blocks.append(Bottleneck(c_in if first else c_out, c_out, mid, STAGE_STRIDES[stage] if first else 1,
                                         project=first))
            self.stages.append(blocks)
            self.laterals.append(ConvBN(c_out, DECODER_CHANNELS, 1))
            c_in = c_out
        self.fuse = ConvBN(DECODER_CHANNELS, DECODER_CHANNELS, 3)
        self.classifier = nn.Conv2d(DECODER_CHANNELS, NUM_CLASSES, 1)

    def forward(self, x: torch.Tensor, genes: "np.ndarray | None" = None) -> torch.Tensor:
        """Per-pixel class logits ``(N, 11, H, W)``; ``genes`` selects a sub-network of a supernet."""
        genes = self.genes if genes is None else np.asarray(genes)
        h = self.forward_head(x, genes)
        features = []
        for stage in range(NUM_STAGES):
            h = self.forward_stage(stage, h, genes)
            features.append(h)
        return self.forward_decoder(features, x.shape[2:])

    # The three parts below are also timed one by one for the latency tables.
    def forward_head(self, x: torch.Tensor, genes: np.ndarray) -> torch.Tensor:
        head_depth, _, _, widths = _split(genes)
        inner = scaled(HEAD_CHANNELS[0], widths[0])
        h = self.stem(x, inner)
        for layer in self.head[:head_depth]:
            h = layer(h, inner)
        return self.head_out(h, scaled(HEAD_CHANNELS[1], widths[1]))

    def forward_stage(self, stage: int, h: torch.Tensor, genes: np.ndarray) -> torch.Tensor:
        _, stage_depths, expands, widths = _split(genes)
        c_out = scaled(STAGE_CHANNELS[stage], widths[2 + stage])
        for position, block in enumerate(self.stages[stage][: 1 + stage_depths[stage]]):
            h = block(h, c_out, bottleneck_width(c_out, expands[stage][position]))
        return h

    def forward_decoder(self, features: list[torch.Tensor], size: tuple[int, int]) -> torch.Tensor:
        fused = self.laterals[0](features[0])
        for lateral, feature in zip(self.laterals[1:], features[1:]):
            fused = fused + F.interpolate(lateral(feature), size=fused.shape[2:], mode="bilinear", align_corners=False)
        logits = self.classifier(self.fuse(fused))
        return F.interpolate(logits, size=size, mode="bilinear", align_corners=False)

    def extract(self, genes: "np.ndarray | list[int]") -> "CitySegNet":
        """The exact network of ``genes`` holding this supernet's shared weights (leading channels and blocks)."""
        subnet = CitySegNet(genes)
        shared = self.state_dict()
        subnet.load_state_dict(
            {name: shared[name][tuple(slice(0, n) for n in tensor.shape)]
             for name, tensor in subnet.state_dict().items()}
        )
        return subnet


def _split(genes: np.ndarray) -> tuple[int, list[int], list[list[int]], list[int]]:
    """(head depth, stage depths, per-stage expand genes of the block slots, widths)."""
    expands = genes[EXPAND_START:WIDTH_START]
    per_stage = [expands[SLOT_STAGE == s].tolist() for s in range(NUM_STAGES)]
    return int(genes[0]), genes[1 : 1 + NUM_STAGES].tolist(), per_stage, genes[WIDTH_START:].tolist()


def build(protocol: "TrainingProtocol", genes: list[int]) -> CitySegNet:
    """The network of ``genes`` under ``protocol`` (the catalogue's network builder of this family)."""
    return CitySegNet(genes)
