"""The trainable network an FBNet architecture denotes: the CIFAR macro-architecture with scaled channels."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from nas_envs.spaces.fbnet import BLOCKS, STAGE_CHANNELS, STAGE_LAYERS, STAGE_STRIDES

if TYPE_CHECKING:
    from nas_envs.groundtruth.protocols import TrainingProtocol

HEAD_CHANNELS = 1504


def _scaled(channels: int, width: float) -> int:
    return max(2, 2 * round(channels * width / 2))  # even, so that group-2 convolutions divide


def _conv_bn(c_in: int, c_out: int, kernel: int = 1, stride: int = 1, groups: int = 1, relu: bool = True) -> list:
    layers = [nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(c_out)]
    return layers + [nn.ReLU(inplace=True)] if relu else layers


class ChannelShuffle(nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        return x.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class FBNetBlock(nn.Module):
    """Inverted residual: 1x1 group conv expand, ReLU, shuffle (g=2), KxK depthwise, ReLU, 1x1 group conv project.

    ``skip`` is the identity, or a 1x1 conv + BN where the shape changes. A residual connection is added wherever
    input and output shapes match.
    """

    def __init__(self, block: str, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.residual = stride == 1 and c_in == c_out
        if block == "skip":
            self.body = nn.Identity() if self.residual else nn.Sequential(*_conv_bn(c_in, c_out, 1, stride, relu=False))
            self.residual = False  # the skip block *is* the shortcut
            return
        kernel = int(block[1])
        expansion = int(block.split("_")[1][1:])
        groups = 2 if block.endswith("_g2") else 1
        hidden = c_in * expansion
        layers = _conv_bn(c_in, hidden, 1, groups=groups)
        if groups > 1:
            layers.append(ChannelShuffle(groups))
        layers += _conv_bn(hidden, hidden, kernel, stride, groups=hidden)
        layers += _conv_bn(hidden, c_out, 1, groups=groups, relu=False)
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.body(x)
        return out + x if self.residual else out


class FBNetNetwork(nn.Module):
    """Stem conv3x3 -> 22 searchable layers -> 1x1 head conv -> global pool -> linear classifier.

    Args:
        genes: 22 block indices.
        width_multiplier: scales every channel count (the proxy uses 0.5).
    """

    def __init__(self, genes: list[int], num_classes: int = 10, in_channels: int = 1,
                 width_multiplier: float = 0.5) -> None:
        super().__init__()
        if len(genes) != sum(STAGE_LAYERS):
            raise ValueError(f"expected {sum(STAGE_LAYERS)} genes, got {len(genes)}")
        c_stem = _scaled(STAGE_CHANNELS[0], width_multiplier)
        self.stem = nn.Sequential(*_conv_bn(in_channels, c_stem, 3))
        layers = []
        c_in = c_stem
        index = 0
        for count, channels, stride in zip(STAGE_LAYERS, STAGE_CHANNELS, STAGE_STRIDES):
            c_out = _scaled(channels, width_multiplier)
            for position in range(count):
                layers.append(FBNetBlock(BLOCKS[genes[index]], c_in, c_out, stride if position == 0 else 1))
                c_in = c_out
                index += 1
        self.layers = nn.Sequential(*layers)
        c_head = _scaled(HEAD_CHANNELS, width_multiplier)
        self.head = nn.Sequential(*_conv_bn(c_in, c_head, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(c_head, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.head(self.layers(self.stem(x))))


def build(protocol: "TrainingProtocol", genes: list[int]) -> FBNetNetwork:
    """The network of ``genes`` under ``protocol`` (the catalogue's network builder of this family)."""
    return FBNetNetwork(genes, num_classes=protocol.num_classes, **protocol.network)
