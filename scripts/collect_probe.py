"""Choose how many trainings to run at once, and with how many threads each, on the machine at hand.

Runs real training steps of a protocol's network (random architectures of its space, its batch size, its data) in
``workers`` processes at once for each candidate setting, counts the steps all of them finish in a fixed window
after a warm-up, and prints the setting with the most steps per second as ``WORKERS THREADS`` (the summary of
every candidate goes to stderr). The whole probe takes about ``--seconds``. Used by scripts/collect_gpu.sh; on a
CPU it also works (one thread per core usually wins there).

Usage: python scripts/collect_probe.py --protocol fbnet-fmnist14-full-e4-v1 --device cuda --seconds 30
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time


def candidates(cores: int) -> list[tuple[int, int]]:
    """(workers, threads) pairs that use at most ``cores`` threads: a quarter, half and all of the cores as
    one-thread workers, and half of them with two threads each."""
    settings = {(max(1, cores // 4), 1), (max(1, cores // 2), 1), (cores, 1), (max(1, cores // 4), 2)}
    return sorted(s for s in settings if s[0] * s[1] <= max(cores, 2))


def _count_steps(protocol_name: str, device: str, threads: int, seed: int, warmup: float, window: float,
                 results: multiprocessing.Queue) -> None:
    import numpy as np
    import torch
    from torch import nn

    from nas_envs.groundtruth.protocols import PROTOCOLS
    from nas_envs.groundtruth.train import build_network
    from nas_envs.spaces import get_space

    torch.set_num_threads(threads)
    protocol = PROTOCOLS[protocol_name]
    splits = protocol.splits()
    genes = get_space(protocol.space).sample(seed=np.random.default_rng(seed))
    torch.manual_seed(seed)
    model = build_network(protocol, genes.tolist()).to(device=device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=protocol.lr, momentum=protocol.momentum)
    x = torch.from_numpy(splits.train_x[: protocol.batch_size]).to(device).contiguous(memory_format=torch.channels_last)
    y = torch.from_numpy(splits.train_y[: protocol.batch_size]).to(device)
    criterion = nn.CrossEntropyLoss()
    steps, started = 0, time.perf_counter()
    counting_from = started + warmup
    while (now := time.perf_counter()) < counting_from + window:
        loss = criterion(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if device != "cpu":
            torch.cuda.synchronize()
        if now >= counting_from:
            steps += 1
    results.put(steps)


def steps_per_second(protocol: str, device: str, workers: int, threads: int, seconds: float) -> float:
    """Training steps per second of ``workers`` processes at once, each with ``threads`` torch threads."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    # Processes start (imports, CUDA context) within the warm-up, so the counted windows overlap.
    warmup, window = seconds / 2, seconds / 2
    processes = [context.Process(target=_count_steps, args=(protocol, device, threads, seed, warmup, window, results))
                 for seed in range(workers)]
    for process in processes:
        process.start()
    steps = [results.get(timeout=seconds * 10) for _ in processes]
    for process in processes:
        process.join()
    return sum(steps) / window


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=30.0, help="the whole probe")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    args = parser.parse_args()
    settings = candidates(args.cores)
    rates = {}
    for workers, threads in settings:
        rates[(workers, threads)] = steps_per_second(args.protocol, args.device, workers, threads,
                                                     args.seconds / len(settings))
        print(json.dumps({"workers": workers, "threads": threads, "steps_per_second": round(rates[(workers, threads)],
                                                                                            1)}), file=sys.stderr)
    best = max(rates, key=rates.get)
    print(*best)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
