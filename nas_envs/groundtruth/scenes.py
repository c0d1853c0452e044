"""A segmentation set composed from Fashion-MNIST items: 64 x 64 scenes with per-pixel class labels.

Each scene holds 2 to 4 items, each resized to 20, 28 or 36 pixels and pasted at a random position; later items
occlude earlier ones. An item's pixels brighter than ``ITEM_THRESHOLD`` carry its class (0..9), every other pixel
is background (10). Scene ``i`` of a split is a pure function of (split, i): the same in every process.

Items come from disjoint pools: ``train`` scenes from the first 50,000 images of the fixed permutation of the
official training set (the permutation of :mod:`nas_envs.groundtruth.fashion_mnist`), ``calibration`` and ``val``
scenes from the other 10,000, ``test`` scenes from the official test set (kept for later use; the suite's
objective is validation mIoU, as in EvoXBench).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from nas_envs.groundtruth.fashion_mnist import SPLIT_SEED, load_raw

SIZE = 64
BACKGROUND = 10
ITEM_SIZES = (20, 28, 36)
ITEM_THRESHOLD = 0.2
SCENE_SEED = 20261130
SPLITS = {"train": 0, "calibration": 1, "val": 2, "test": 3}


@dataclass(frozen=True)
class Scenes:
    """``images`` float32 ``(N, 1, 64, 64)`` in [0, 1]; ``labels`` int64 ``(N, 64, 64)``."""

    images: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.images)


def _item_pool(split: str) -> tuple[np.ndarray, np.ndarray]:
    raw = load_raw()
    if split == "test":
        return raw["test_images"], raw["test_labels"]
    order = np.random.default_rng(SPLIT_SEED).permutation(len(raw["train_images"]))
    rows = order[:50_000] if split == "train" else order[50_000:]
    return raw["train_images"][rows], raw["train_labels"][rows]


def make_scenes(split: str, count: int, start: int = 0) -> Scenes:
    """Scenes ``start .. start + count - 1`` of ``split`` (``train``, ``calibration``, ``val`` or ``test``)."""
    if split not in SPLITS:
        raise ValueError(f"unknown scene split {split!r}; allowed: {tuple(SPLITS)}")
    pool_images, pool_labels = _item_pool(split)
    images = np.zeros((count, 1, SIZE, SIZE), dtype=np.float32)
    labels = np.full((count, SIZE, SIZE), BACKGROUND, dtype=np.int64)
    resized = {size: {} for size in ITEM_SIZES}
    for row in range(count):
        rng = np.random.default_rng([SCENE_SEED, SPLITS[split], start + row])
        for _ in range(int(rng.integers(2, 5))):
            item = int(rng.integers(len(pool_images)))
            size = int(rng.choice(ITEM_SIZES))
            if item not in resized[size]:
                picture = torch.from_numpy(pool_images[item].astype(np.float32) / 255.0)[None, None]
                resized[size][item] = F.interpolate(picture, size=(size, size), mode="bilinear",
                                                    align_corners=False)[0, 0].numpy()
            picture = resized[size][item]
            top, left = (int(v) for v in rng.integers(0, SIZE - size + 1, size=2))
            mask = picture > ITEM_THRESHOLD
            images[row, 0, top : top + size, left : left + size][mask] = picture[mask]
            labels[row, top : top + size, left : left + size][mask] = int(pool_labels[item])
    return Scenes(images, labels)


def confusion_matrix(predicted: np.ndarray, labels: np.ndarray, classes: int = BACKGROUND + 1) -> np.ndarray:
    """``(classes, classes)`` pixel counts, rows = true class."""
    return np.bincount(labels.reshape(-1) * classes + predicted.reshape(-1), minlength=classes * classes).reshape(
        classes, classes
    )


def mean_iou(confusion: np.ndarray) -> float:
    """Mean intersection over union of the classes that occur (in the labels or the predictions)."""
    intersection = np.diag(confusion).astype(np.float64)
    union = confusion.sum(axis=0) + confusion.sum(axis=1) - intersection
    present = union > 0
    return float((intersection[present] / union[present]).mean())
