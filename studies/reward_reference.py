"""What the ``percentile`` and ``standardised`` rewards are relative to: mean percentile reward of architectures drawn
by ``space.sample`` (the reference's own distribution: about 0.5) against a policy that picks uniformly among the
legal actions at every step (another distribution over architectures), noise-free, per benchmark.

Usage: python studies/reward_reference.py [--architectures 5000]
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import nas_envs  # noqa: F401 - registers the ids


def mean_percentile_of_uniform_actions(env_id: str, architectures: int, seed: int = 0) -> float:
    env = gym.make_vec(env_id, num_envs=256, vectorization_mode="vector_entry_point", reward="percentile", noise=False)
    _, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    rewards: list[float] = []
    while len(rewards) < architectures:
        _, reward, terminated, _, info = env.step(env.action_space.sample(info["action_mask"]))
        rewards += reward[terminated].tolist()
    return float(np.mean(rewards[:architectures]))


def mean_percentile_of_space_samples(name: str, architectures: int, seed: int = 1) -> float:
    benchmark = nas_envs.make_benchmark(name)
    reference = benchmark.random_reference()
    scores = benchmark.score(benchmark.evaluate(benchmark.space.sample(architectures, seed=seed), noise=False))
    return float(np.mean(np.searchsorted(reference, scores, side="left") / len(reference)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--architectures", type=int, default=5000)
    args = parser.parse_args()
    for env_id, name in (("SurrNAS-DARTS-v0", "darts"), ("SurrNAS-FBNet-v1", "fbnet")):
        sampled = mean_percentile_of_space_samples(name, args.architectures)
        uniform = mean_percentile_of_uniform_actions(env_id, args.architectures)
        print(f"{env_id}: mean percentile reward, space.sample {sampled:.3f}, uniform legal actions {uniform:.3f}")


if __name__ == "__main__":
    main()
