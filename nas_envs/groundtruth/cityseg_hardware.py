"""Latency and energy of CitySeg networks on two hardware profiles.

Latency is *measured*: every configuration of the head (depth, inner width, output width), of each stage (input
width, width, depth, expand ratios of its blocks) and of the decoder (the four stage widths) is run alone on this
CPU and timed (median of repeated runs after warm-up); a network's latency is the sum of its parts' entries, as
in EvoXBench's look-up tables. Two profiles play the paper's two devices:

- ``h1``: 2 threads, batch 8 (a throughput-oriented device; the paper's h1 is an RTX 4090);
- ``h2``: 1 thread, batch 1 (an edge device; the paper's h2 is a Huawei Atlas 200 DK).

Energy is *modelled* (this machine has no energy counter, no RAPL under /sys/class/powercap) from exact counts:
see :func:`nas_envs.benchmarks.cityseg.energy_microjoules`. This module counts the activation words it needs
(:func:`activation_words`, exactly linear in the space's cost features, like FLOPs).
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from torch import nn

from nas_envs.groundtruth.cityseg_net import CitySegNet
from nas_envs.groundtruth.train import environment_description
from nas_envs.progress import progress
from nas_envs.spaces.cityseg import DEPTH_CHOICES, EXPAND_START, NETWORK_PARTS, NUM_STAGES, SLOT_STAGE, WIDTH_START

SCENE_SHAPE = (1, 64, 64)


@dataclass(frozen=True)
class HardwareProfile:
    name: str
    threads: int
    batch: int


PROFILES = (HardwareProfile("h1", threads=2, batch=8), HardwareProfile("h2", threads=1, batch=1))


def part_configurations() -> Iterator[tuple[str, tuple[int, ...]]]:
    """Every (part, key) a non-degenerate architecture can have."""
    for depth, inner, out in itertools.product(range(1, DEPTH_CHOICES[0]), range(3), range(3)):
        yield "head", (depth, inner, out)
    for stage in range(NUM_STAGES):
        for w_in, w_out, depth in itertools.product(range(3), range(3), range(DEPTH_CHOICES[1 + stage])):
            for expands in itertools.product(range(3), repeat=1 + depth):
                yield f"stage{stage + 1}", (w_in, w_out, depth, *expands)
    for widths in itertools.product(range(3), repeat=NUM_STAGES):
        yield "decoder", widths


def architecture_with(part: str, key: tuple[int, ...]) -> np.ndarray:
    """A canonical architecture whose ``part`` has configuration ``key`` (every other choice the smallest)."""
    genes = np.zeros(WIDTH_START + NUM_STAGES + 2, dtype=np.int64)
    genes[0] = 1
    if part == "head":
        genes[0], genes[WIDTH_START], genes[WIDTH_START + 1] = key
    elif part == "decoder":
        genes[WIDTH_START + 2 :] = key
    else:
        stage = int(part[len("stage") :]) - 1
        w_in, w_out, depth, *expands = key
        genes[WIDTH_START + 1 + stage] = w_in  # the head output (stage 1) or the previous stage's width
        genes[WIDTH_START + 2 + stage] = w_out
        genes[1 + stage] = depth
        slots = np.flatnonzero(SLOT_STAGE == stage)
        genes[EXPAND_START + slots[: len(expands)]] = expands
    return genes


def _median_seconds(run, repeats: int) -> float:
    for _ in range(3):
        run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_part(part: str, key: tuple[int, ...], batch: int, repeats: int = 15) -> float:
    """Median seconds of one forward pass of ``part`` alone, per batch of ``batch`` scenes."""
    genes = architecture_with(part, key)
    model = CitySegNet(genes).eval()
    x = torch.randn(batch, *SCENE_SHAPE)
    with torch.inference_mode():
        if part == "head":
            return _median_seconds(lambda: model.forward_head(x, genes), repeats)
        features = [model.forward_head(x, genes)]
        for stage in range(NUM_STAGES):
            if part == f"stage{stage + 1}":
                return _median_seconds(partial(model.forward_stage, stage, features[-1], genes), repeats)
            features.append(model.forward_stage(stage, features[-1], genes))
        return _median_seconds(lambda: model.forward_decoder(features[1:], x.shape[2:]), repeats)


def time_network(genes: np.ndarray, batch: int, repeats: int = 15) -> float:
    model = CitySegNet(genes).eval()
    x = torch.randn(batch, *SCENE_SHAPE)
    with torch.inference_mode():
        return _median_seconds(lambda: model(x), repeats)


def measure_latency_table(profile: HardwareProfile, passes: int = 3) -> dict:
    """Milliseconds per image of every part configuration under ``profile`` (threads and batch): the median of
    ``passes`` full passes over all configurations, so that a transient disturbance hits one pass, not a part."""
    previous = torch.get_num_threads()
    torch.set_num_threads(profile.threads)
    try:
        configurations = list(part_configurations())
        seconds = np.array([[time_part(part, key, profile.batch)
                             for part, key in progress(configurations, desc=f"{profile.name} parts", leave=False)]
                            for _ in range(passes)])
    finally:
        torch.set_num_threads(previous)
    table: dict[str, dict[str, float]] = {part: {} for part in NETWORK_PARTS}
    for (part, key), value in zip(configurations, np.median(seconds, axis=0)):
        table[part][",".join(map(str, key))] = 1000 * float(value) / profile.batch
    return {"profile": profile.name, "threads": profile.threads, "batch": profile.batch, "passes": passes,
            "unit": "milliseconds per image", "machine": environment_description(), "parts": table}


def activation_words(archs: np.ndarray) -> np.ndarray:
    """``(N, 1)`` words read and written by the convolutions of each network for one image (inputs + outputs)."""
    out = np.empty((len(archs), 1))
    for row, genes in enumerate(archs):
        model = CitySegNet(genes).eval()
        words = 0

        def hook(_module: nn.Conv2d, inputs: tuple, output: torch.Tensor) -> None:
            nonlocal words
            words += inputs[0].numel() + output.numel()

        hooks = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.Conv2d)]
        with torch.inference_mode():
            model(torch.zeros(1, *SCENE_SHAPE))
        for handle in hooks:
            handle.remove()
        out[row] = words
    return out
