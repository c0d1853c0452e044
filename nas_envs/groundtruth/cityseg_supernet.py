"""Ground truth of the CitySeg space: one weight-sharing supernet, trained once, scoring every sub-network.

Training follows the sandwich rule of once-for-all / BigNAS: every step sums the losses of the largest network,
the smallest and ``RANDOM_SUBNETS`` random ones on the same batch. A sub-network is scored by copying its weights
out of the supernet, re-estimating BatchNorm statistics on calibration scenes (which scenes depends on the seed:
this is the measurement noise that repeats expose), and measuring mIoU on the validation scenes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from nas_envs.assets import checked_file, record_file
from nas_envs.files import write_atomically
from nas_envs.groundtruth.cityseg_net import LARGEST_GENES, CitySegNet
from nas_envs.groundtruth.protocols import TrainingProtocol
from nas_envs.groundtruth.scenes import confusion_matrix, make_scenes, mean_iou
from nas_envs.groundtruth.train import count_flops
from nas_envs.spaces.cityseg import CHOICES, CitySegSpace

RANDOM_SUBNETS = 2
CALIBRATION_POOL = 2048
CALIBRATION_SCENES = 256
SMALLEST_GENES = np.zeros(len(CHOICES), dtype=np.int64)
SMALLEST_GENES[0] = 1  # head depth 0 is degenerate


def supernet_path(protocol: TrainingProtocol) -> Path:
    from nas_envs.assets import assets_dir

    return assets_dir() / "data" / f"{protocol.name}.pt"


def train_supernet(
    protocol: TrainingProtocol, path: Path, seed: int = 0, progress: Callable[[int, dict], None] | None = None
) -> dict:
    """Train (or resume) the supernet; after every epoch write a checkpoint atomically. Returns the log."""
    torch.manual_seed(seed)
    space = CitySegSpace()
    model = CitySegNet(LARGEST_GENES)
    steps_per_epoch = math.ceil(protocol.n_train / protocol.batch_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=protocol.lr, momentum=protocol.momentum,
                                weight_decay=protocol.weight_decay, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=protocol.epochs * steps_per_epoch)
    log: dict = {"protocol": protocol.name, "seed": seed, "epochs": []}
    if path.exists():
        state = torch.load(checked_file(path), weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        log = state["log"]
    scenes = make_scenes("train", protocol.n_train)
    images, labels = torch.from_numpy(scenes.images), torch.from_numpy(scenes.labels)
    val, calibration = make_scenes("val", protocol.n_val), make_scenes("calibration", CALIBRATION_SCENES)
    for epoch in range(len(log["epochs"]), protocol.epochs):
        generator = torch.Generator().manual_seed(seed * 1000 + epoch)
        rng = np.random.default_rng([seed, epoch])
        model.train()
        start, total = time.perf_counter(), 0.0
        order = torch.randperm(len(images), generator=generator)
        for step in range(steps_per_epoch):
            rows = order[step * protocol.batch_size : (step + 1) * protocol.batch_size]
            x, y = images[rows], labels[rows]
            if protocol.hflip and rng.random() < 0.5:
                x, y = x.flip(3), y.flip(2)
            optimizer.zero_grad(set_to_none=True)
            subnets = [LARGEST_GENES, SMALLEST_GENES] + [space.sample(seed=rng) for _ in range(RANDOM_SUBNETS)]
            for genes in subnets:
                loss = F.cross_entropy(model(x, genes), y)
                loss.backward()
                total += float(loss.detach())
            optimizer.step()
            scheduler.step()
        entry = {
            "epoch": epoch,
            "loss": total / (steps_per_epoch * len(subnets)),
            "seconds": time.perf_counter() - start,
            **{f"val_miou_{name}": miou(recalibrated(model.extract(genes), calibration), val)
               for name, genes in (("largest", LARGEST_GENES), ("smallest", SMALLEST_GENES))},
        }
        log["epochs"].append(entry)
        _save_atomically(path, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                "scheduler": scheduler.state_dict(), "log": log})
        if progress is not None:
            progress(epoch, entry)
    return log


def _save_atomically(path: Path, state: dict) -> None:
    write_atomically(path, lambda tmp: torch.save(state, tmp))
    record_file(path)


def recalibrated(model: CitySegNet, calibration, batch_size: int = 128) -> CitySegNet:
    """``model`` in eval mode with every BatchNorm's statistics re-estimated as the plain average over the
    calibration scenes (weights inherited from a supernet come with the supernet's statistics, not their own)."""
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.reset_running_stats()
            module.momentum = None
    model.train()
    with torch.no_grad():
        for start in range(0, len(calibration), batch_size):
            model(torch.from_numpy(calibration.images[start : start + batch_size]))
    return model.eval()


def miou(model: CitySegNet, scenes, batch_size: int = 250) -> float:
    """mIoU of ``model`` (in eval mode) on ``scenes``."""
    confusion = 0
    with torch.no_grad():
        for start in range(0, len(scenes), batch_size):
            logits = model(torch.from_numpy(scenes.images[start : start + batch_size]))
            labels = scenes.labels[start : start + batch_size]
            confusion = confusion + confusion_matrix(logits.argmax(1).numpy(), labels)
    return mean_iou(confusion)


@lru_cache(maxsize=2)
def _trained_supernet(path: str) -> CitySegNet:
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: no trained CitySeg supernet; train it with 'nas-envs train-supernet'")
    model = CitySegNet(LARGEST_GENES)
    model.load_state_dict(torch.load(checked_file(Path(path)), weights_only=True)["model"])
    return model


@lru_cache(maxsize=2)
def _evaluation_scenes(n_val: int):
    return make_scenes("calibration", CALIBRATION_POOL), make_scenes("val", n_val)


def evaluate_subnet(protocol: TrainingProtocol, genes: list[int], seed: int, device: str = "cpu") -> dict:
    """The measurement of one CitySeg architecture: validation mIoU with inherited weights (the objective ``err``
    is 1 - mIoU; like EvoXBench's, the suite has no test objective, and skipping it halves the cost). On the CPU
    only (``device`` is there for the collector's one signature of a measurement)."""
    if device != "cpu":
        raise ValueError(f"CitySeg scorings run on the CPU only; got device={device!r}")
    start = time.perf_counter()
    supernet = _trained_supernet(str(supernet_path(protocol)))
    pool, val = _evaluation_scenes(protocol.n_val)
    rows = np.sort(np.random.default_rng(seed).choice(len(pool), CALIBRATION_SCENES, replace=False))
    calibration = type(pool)(pool.images[rows], pool.labels[rows])
    model = recalibrated(supernet.extract(genes), calibration)
    val_miou = miou(model, val)
    return {
        "val_miou": val_miou,
        "err": 1.0 - val_miou,
        "eval_seconds": round(time.perf_counter() - start, 3),
        "params": int(sum(p.numel() for p in model.parameters())),
        "flops": count_flops(model, (1, 64, 64)),
    }
