"""Fashion-MNIST from Debian's ``dataset-fashion-mnist`` package, with the fixed splits of the protocol.

Splits (documented in ``docs/data-card.md``): the 60,000 official training images are permuted once with
``numpy.random.default_rng(SPLIT_SEED)``; the first ``n_train`` of that permutation are the training set, the next
``n_val`` the validation set, and the rest (the images the protocol leaves unused) the *reserve*: a larger set
disjoint from both, on which each training's accuracy is also recorded as a less noisy reading of the same quantity.
The test set is the official 10,000 test images.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

DEFAULT_DIR = Path("/usr/share/datasets/fashion-mnist")
SPLIT_SEED = 20261129
FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}


class DatasetMissingError(FileNotFoundError):
    """The Fashion-MNIST files are not installed."""


def data_dir() -> Path:
    return Path(os.environ.get("NAS_ENVS_FASHION_MNIST", DEFAULT_DIR))


def _read_idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


@lru_cache(maxsize=2)
def load_raw() -> dict[str, np.ndarray]:
    """The four official arrays (uint8 images N x 28 x 28, uint8 labels)."""
    folder = data_dir()
    missing = [name for name in FILES.values() if not (folder / name).is_file()]
    if missing:
        raise DatasetMissingError(
            f"Fashion-MNIST files {missing} not found in {folder}. Install them with "
            "'sudo apt-get install dataset-fashion-mnist' (Debian/Ubuntu) or point NAS_ENVS_FASHION_MNIST at a "
            "folder holding the four official .gz files."
        )
    return {key: _read_idx(folder / name) for key, name in FILES.items()}


@dataclass(frozen=True)
class Splits:
    """Float32 images N x 1 x R x R, normalised with the training-split statistics; int64 labels. ``reserve_x`` and
    ``reserve_y`` are the training images neither split uses (``None`` for tasks that have no reserve)."""

    train_x: np.ndarray
    train_y: np.ndarray
    val_x: np.ndarray
    val_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    reserve_x: np.ndarray | None = None
    reserve_y: np.ndarray | None = None


def _downsample(images: np.ndarray, resolution: int) -> np.ndarray:
    factor = 28 // resolution
    if factor * resolution != 28:
        raise ValueError(f"resolution must divide 28 (28, 14, 7), got {resolution}")
    x = images.astype(np.float32) / 255.0
    if factor > 1:
        x = x.reshape(len(x), resolution, factor, resolution, factor).mean(axis=(2, 4))
    return x[:, None, :, :]


@lru_cache(maxsize=4)
def load_splits(n_train: int, n_val: int, resolution: int, n_reserve: int | None = None) -> Splits:
    """The protocol's splits; the reserve is the first ``n_reserve`` (default: all) of the images left over."""
    raw = load_raw()
    if n_train + n_val > len(raw["train_images"]):
        raise ValueError(f"n_train + n_val must be <= {len(raw['train_images'])}, got {n_train + n_val}")
    order = np.random.default_rng(SPLIT_SEED).permutation(len(raw["train_images"]))
    train_idx, val_idx = order[:n_train], order[n_train : n_train + n_val]
    reserve_idx = order[n_train + n_val :][:n_reserve]
    train_x = _downsample(raw["train_images"][train_idx], resolution)
    mean, std = float(train_x.mean()), float(train_x.std())

    def norm(x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray((x - mean) / std, dtype=np.float32)

    return Splits(
        train_x=norm(train_x),
        train_y=raw["train_labels"][train_idx].astype(np.int64),
        val_x=norm(_downsample(raw["train_images"][val_idx], resolution)),
        val_y=raw["train_labels"][val_idx].astype(np.int64),
        test_x=norm(_downsample(raw["test_images"], resolution)),
        test_y=raw["test_labels"].astype(np.int64),
        reserve_x=norm(_downsample(raw["train_images"][reserve_idx], resolution)),
        reserve_y=raw["train_labels"][reserve_idx].astype(np.int64),
    )
