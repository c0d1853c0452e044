"""Harder image tasks composed from Fashion-MNIST, for spaces that 10-class Fashion-MNIST does not separate.

Each task is one deterministic function of (split, size): example ``i`` of a split is the same in every process.
Source images come from disjoint pools, so no item is seen in two splits: ``train`` examples are built from the
training part of the protocol's fixed permutation of the official training images, ``val`` examples from its
validation part, ``test`` examples from the official test images (see :mod:`nas_envs.groundtruth.fashion_mnist`).

Tasks:

* ``pairs100``: two 14 x 14 items side by side (a 14 x 28 image); the label is the ordered pair of their classes,
  ``10 * left + right`` (100 classes, mirroring CIFAR-100's class count). No flips: a flip would swap the pair.
* ``clutter24``: one 14 x 14 item at a random position of a 24 x 24 canvas, over four 7 x 7 fragments of other
  items at random positions; the label is the item's class. Finding the item among distractors needs receptive
  field and depth, which is what the FBNet space varies.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from nas_envs.groundtruth.fashion_mnist import SPLIT_SEED, Splits, load_raw

TASK_SEED = 20261201
TASK_CLASSES = {"pairs100": 100, "clutter24": 10}
_SPLIT_IDS = {"train": 0, "val": 1, "test": 2}
CLUTTER_CANVAS = 24
CLUTTER_FRAGMENTS = 4
FRAGMENT_SIZE = 7
ITEM_SIZE = 14


def _items14(images: np.ndarray) -> np.ndarray:
    """uint8 28 x 28 images -> float32 14 x 14 in [0, 1] (2 x 2 means, as the 14-pixel protocols)."""
    x = images.astype(np.float32) / 255.0
    return x.reshape(len(x), ITEM_SIZE, 2, ITEM_SIZE, 2).mean(axis=(2, 4))


def _pool(split: str, n_train_pool: int, n_val_pool: int) -> tuple[np.ndarray, np.ndarray]:
    """The 14 x 14 items and labels a split draws from (disjoint across splits)."""
    raw = load_raw()
    if split == "test":
        return _items14(raw["test_images"]), raw["test_labels"].astype(np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(raw["train_images"]))
    part = order[:n_train_pool] if split == "train" else order[n_train_pool : n_train_pool + n_val_pool]
    return _items14(raw["train_images"][part]), raw["train_labels"][part].astype(np.int64)


def pairs100(split: str, n: int, n_train_pool: int, n_val_pool: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` examples: float32 ``(n, 14, 28)`` in [0, 1] and int64 labels in 0..99."""
    items, labels = _pool(split, n_train_pool, n_val_pool)
    rng = np.random.default_rng([TASK_SEED, 1, _SPLIT_IDS[split]])
    left, right = rng.integers(0, len(items), size=(2, n))
    return np.concatenate([items[left], items[right]], axis=2), 10 * labels[left] + labels[right]


def clutter24(split: str, n: int, n_train_pool: int, n_val_pool: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` examples: float32 ``(n, 24, 24)`` in [0, 1] and int64 labels in 0..9.

    Fragments are pasted first, then the item, each with ``max`` so that nothing is erased; a fragment is a random
    7 x 7 crop of another item of the same pool.
    """
    items, labels = _pool(split, n_train_pool, n_val_pool)
    rng = np.random.default_rng([TASK_SEED, 2, _SPLIT_IDS[split]])
    target = rng.integers(0, len(items), size=n)
    item_pos = rng.integers(0, CLUTTER_CANVAS - ITEM_SIZE + 1, size=(n, 2))
    fragment_src = rng.integers(0, len(items), size=(n, CLUTTER_FRAGMENTS))
    crop_pos = rng.integers(0, ITEM_SIZE - FRAGMENT_SIZE + 1, size=(n, CLUTTER_FRAGMENTS, 2))
    paste_pos = rng.integers(0, CLUTTER_CANVAS - FRAGMENT_SIZE + 1, size=(n, CLUTTER_FRAGMENTS, 2))
    canvas = np.zeros((n, CLUTTER_CANVAS, CLUTTER_CANVAS), dtype=np.float32)
    rows = np.arange(n)[:, None, None]
    offsets = np.arange(FRAGMENT_SIZE)
    for k in range(CLUTTER_FRAGMENTS):
        crop_r = crop_pos[:, k, 0, None, None] + offsets[None, :, None]
        crop_c = crop_pos[:, k, 1, None, None] + offsets[None, None, :]
        fragment = items[fragment_src[:, k, None, None], crop_r, crop_c]
        dest_r = paste_pos[:, k, 0, None, None] + offsets[None, :, None]
        dest_c = paste_pos[:, k, 1, None, None] + offsets[None, None, :]
        canvas[rows, dest_r, dest_c] = np.maximum(canvas[rows, dest_r, dest_c], fragment)
    item_offsets = np.arange(ITEM_SIZE)
    dest_r = item_pos[:, 0, None, None] + item_offsets[None, :, None]
    dest_c = item_pos[:, 1, None, None] + item_offsets[None, None, :]
    canvas[rows, dest_r, dest_c] = np.maximum(canvas[rows, dest_r, dest_c], items[target])
    return canvas, labels[target]


_BUILDERS = {"pairs100": pairs100, "clutter24": clutter24}


@lru_cache(maxsize=2)
def load_task_splits(task: str, n_train: int, n_val: int, n_test: int = 10_000) -> Splits:
    """Train/validation/test examples of ``task``, normalised with the training examples' statistics.

    The training examples draw items from the first 50,000 images of the fixed permutation, the validation examples
    from the other 10,000, so that a protocol may use more examples than there are images.
    """
    if task not in _BUILDERS:
        raise ValueError(f"unknown task {task!r}; allowed: {sorted(_BUILDERS)}")
    build = _BUILDERS[task]
    pools = (50_000, 10_000)
    train_x, train_y = build("train", n_train, *pools)
    val_x, val_y = build("val", n_val, *pools)
    test_x, test_y = build("test", n_test, *pools)
    mean, std = float(train_x.mean()), float(train_x.std())

    def norm(x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray((x[:, None] - mean) / std, dtype=np.float32)

    return Splits(norm(train_x), train_y, norm(val_x), val_y, norm(test_x), test_y)
