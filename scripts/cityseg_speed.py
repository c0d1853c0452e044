"""Speed of the CitySeg/MOP benchmarks and environments. Prints numbers; asserts nothing.

    python scripts/cityseg_speed.py [--problem 15]

Measures: batched evaluation of 100 architectures (all objectives, noisy; median of 50 calls, as EvoXBench's
1.8 s per 100 is measured), and complete masked random episodes per second of ``CitySeg-MOP<k>-v0``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import nas_envs


def batched_evaluation_ms(problem: int, batch: int = 100, repeats: int = 50) -> float:
    bench = nas_envs.make_benchmark(f"cityseg-mop{problem}").load()
    archs = bench.space.sample(batch, seed=0)
    rng = np.random.default_rng(0)
    bench.evaluate(archs, seed=rng)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        bench.evaluate(archs, seed=rng)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def episodes_per_second(problem: int, episodes: int) -> float:
    env = gym.make(f"CitySeg-MOP{problem}-v0")
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for episode in range(episodes):
        if episode:
            _, info = env.reset()
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    return episodes / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", type=int, default=15)
    parser.add_argument("--episodes", type=int, default=500)
    args = parser.parse_args()
    print(f"cityseg-mop{args.problem}: evaluate 100 architectures (all objectives, noisy): "
          f"{batched_evaluation_ms(args.problem):.2f} ms (median of 50 calls)")
    print(f"CitySeg-MOP{args.problem}-v0: {episodes_per_second(args.problem, args.episodes):,.0f} complete masked "
          "random episodes/s (hypervolume reward over a growing archive included)")


if __name__ == "__main__":
    main()
