"""CPU cost of one-shot search at the default settings: CPU seconds per search step (an architecture step and a
weight step on a batch), and CPU minutes per epoch and per run, for each method, one thread.

Usage: python scripts/oneshot_speed.py
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from nas_envs.oneshot.search import SEARCH_SPACES, SearchSettings
from nas_envs.oneshot.supernet import METHODS, Supernet


def main() -> None:
    torch.set_num_threads(1)
    defaults = SearchSettings()
    steps = 10_000 // 2 // defaults.batch_size  # the protocol's training images, half of them for the weights
    for method in METHODS:
        torch.manual_seed(0)
        model = Supernet(SEARCH_SPACES["full"], method, channels=defaults.channels, layers=defaults.layers)
        x, y = torch.randn(defaults.batch_size, 1, 14, 14), torch.randint(0, 10, (defaults.batch_size,))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for repeat in range(7):
            if repeat == 2:
                started = time.process_time()
            for _ in range(2):  # the architecture step and the weight step
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
        per_step = (time.process_time() - started) / 5
        print(f"{method}: {per_step:.2f} CPU-s per search step, {per_step * steps / 60:.1f} CPU-min per epoch, "
              f"{per_step * steps * defaults.epochs / 60:.0f} CPU-min per run of {defaults.epochs} epochs")


if __name__ == "__main__":
    main()
