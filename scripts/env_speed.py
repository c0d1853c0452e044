"""Speed of the environments and the batched benchmark API. Prints numbers; asserts nothing.

    python scripts/env_speed.py [--env SurrNAS-DARTS-v1]

Measures: import nas_envs + gym.make (fresh process, median of 5), single-env steps/s and complete masked
random episodes/s (with the host's plain-Python speed after each block: a shared host's speed swings), vector-env
episodes/s, and batched evaluation of 100 architectures by each accuracy surrogate of the environment's bundle.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import torch

import nas_envs
from nas_envs.benchmarks.model_kinds import load_bundled_kind, model_kind
from nas_envs.benchmarks.surrogate_benchmark import held_surrogates


def import_and_make_seconds(env_id: str, repeats: int = 5) -> float:
    code = (
        "import time; t = time.perf_counter(); import gymnasium as gym, nas_envs; "
        f"env = gym.make('{env_id}'); print(time.perf_counter() - t)"
    )
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeats)]
    return statistics.median(runs)


def masked_random_actions(masks: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """One legal action per row, chosen by a uniform number in [0, 1) (vectorised)."""
    counts = masks.sum(axis=1)
    picks = np.minimum((uniform * counts).astype(np.int64), counts - 1)
    cumulative = np.cumsum(masks, axis=1)
    return np.argmax(cumulative > picks[:, None], axis=1)


def first_evaluation_seconds(env_id: str) -> float:
    """The first evaluation of a new environment, which loads and verifies the bundle's models."""
    env = gym.make(env_id)
    env.reset(seed=0)
    start = time.perf_counter()
    env.unwrapped.benchmark.evaluate(env.unwrapped.space.sample(1, seed=0))
    return time.perf_counter() - start


def python_loop_rate(iterations: int = 500_000) -> float:
    """Millions of iterations per second of a plain Python loop: how fast the host runs Python right now. A shared
    machine's host swings between speeds for minutes at a time, so a rate means something only next to this
    reading."""
    start = time.perf_counter()
    total = 0
    for i in range(iterations):
        total += i
    return iterations / (time.perf_counter() - start) / 1e6


def single_env_rates(env_id: str, episodes: int, blocks: int = 3) -> tuple[float, float, list[float]]:
    """Steps and episodes per second once the models are loaded (the first evaluation is timed on its own): the
    median over ``blocks`` blocks of ``episodes`` episodes each, as this machine's speed swings from second to
    second; and :func:`python_loop_rate` after each block."""
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    env.unwrapped.benchmark.load()
    decisions = env.unwrapped.space.num_decisions
    uniform = np.random.default_rng(0).random((blocks, episodes, decisions))
    seconds, loop_rates = [], []
    for block in range(blocks):
        start = time.perf_counter()
        for episode in range(episodes):
            _, info = env.reset()
            for decision in range(decisions):
                legal = np.flatnonzero(info["action_mask"])
                action = legal[int(uniform[block, episode, decision] * len(legal))]
                _, _, terminated, _, info = env.step(action)
        seconds.append(time.perf_counter() - start)
        loop_rates.append(python_loop_rate())
    elapsed = statistics.median(seconds)
    return episodes * decisions / elapsed, episodes / elapsed, loop_rates


def vector_env_rate(env_id: str, num_envs: int, episodes_per_env: int) -> float:
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    _, info = venv.reset(seed=0)
    venv.unwrapped.benchmark.load()
    rng = np.random.default_rng(0)
    completed = 0
    start = time.perf_counter()
    while completed < num_envs * episodes_per_env:
        masks = info["action_mask"]
        masks = np.where(masks.any(axis=1, keepdims=True), masks, 1)  # rows awaiting autoreset take any action
        _, _, terminated, _, info = venv.step(masked_random_actions(masks, rng.random(num_envs)))
        completed += int(terminated.sum())
    return completed / (time.perf_counter() - start)


def median_ms(call, repeats: int = 50) -> float:
    """Median over ``repeats`` calls: this 2-core machine's timings swing by 2-3x from run to run."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def batched_timings_ms(name: str, bundle: str, surrogate: str, batch: int = 100) -> tuple[float, float]:
    """Milliseconds for ``batch`` architectures: the accuracy ensemble's prediction alone (encoding included),
    and the whole noisy ``evaluate`` (accuracy, runtime model, exact costs, noise)."""
    bench = nas_envs.make_benchmark(name, surrogate=surrogate, bundle=bundle).load()
    genes = bench.space.as_batch(bench.space.sample(batch, seed=0))
    kind = model_kind(surrogate)
    accuracy = load_bundled_kind(surrogate, bench.manifest["models"], bench.bundle_dir, bench.space.name)
    rng = np.random.default_rng(0)
    return (median_ms(lambda: accuracy.predict(kind.inputs(bench.encodings(genes)))),
            median_ms(lambda: bench.evaluate_genes(genes, True, rng)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="SurrNAS-DARTS-v1")
    parser.add_argument("--episodes", type=int, default=2000)
    args = parser.parse_args()
    print(f"import nas_envs + gym.make('{args.env}'): {import_and_make_seconds(args.env):.3f} s (median of 5)")
    print(f"first evaluation (loads the models): {1000 * first_evaluation_seconds(args.env):.0f} ms")
    steps, episodes, loop_rates = single_env_rates(args.env, args.episodes)
    print(f"single env: {steps:,.0f} steps/s, {episodes:,.0f} complete masked random episodes/s (median of 3 blocks "
          f"of {args.episodes}); the host's plain Python loop meanwhile: "
          f"{', '.join(f'{rate:.1f}' for rate in loop_rates)} M iterations/s")
    for num_envs in (16, 256):
        rate = vector_env_rate(args.env, num_envs, max(1, args.episodes // num_envs))
        print(f"vector env ({num_envs} copies): {rate:,.0f} complete episodes/s")
    # The environment's own benchmark and bundle (an id is pinned to its bundle), with each surrogate it holds.
    env_benchmark = gym.make(args.env).unwrapped.benchmark
    name, bundle = env_benchmark.name, env_benchmark.bundle_dir.name
    bundled = env_benchmark.manifest["models"]
    for threads in sorted({torch.get_num_threads(), 1}, reverse=True):
        torch.set_num_threads(threads)  # the GIN's threads; the XGBoost models run one thread
        for surrogate in held_surrogates(bundled):
            predict, evaluate = batched_timings_ms(name, bundle, surrogate)
            print(f"benchmark '{name}' of {bundle} ({surrogate}, {threads} torch thread(s)), 100 architectures, median "
                  f"of 50 calls: accuracy ensemble predict {predict:.2f} ms; evaluate (noisy, runtime model and "
                  f"exact costs included) {evaluate:.2f} ms")


if __name__ == "__main__":
    main()
