"""A masked PPO policy trained with RLlib on SurrNAS-DARTS-v1: every action it takes is legal.

    python examples/rllib_masked_ppo.py [--iterations 4]

RLlib masks actions with an RLModule that reads a ``Dict`` observation holding ``"observations"`` and
``"action_mask"``: :class:`nas_envs.interop.masks.MaskInObservation` gives exactly that, and RLlib's own
``ActionMaskingTorchRLModule`` (from its examples) does the masking. The reward is standardised (accuracy in
standard deviations of random architectures). Prints, per training iteration, the decisions sampled so far and the
mean return of the episodes completed; needs ``pip install "ray[rllib]"``.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import nas_envs  # noqa: F401 - registers the ids
from nas_envs.interop.masks import MaskInObservation

BATCH = 512  # decisions per iteration: 16 DARTS architectures of 32 decisions


def make_env(config: dict) -> gym.Env:
    return MaskInObservation(gym.make("SurrNAS-DARTS-v1", reward="standardised"))


def train(iterations: int, seed: int = 0) -> list[dict]:
    """Train for ``iterations`` (each on :data:`BATCH` decisions); per iteration the decisions sampled so far and
    the mean return of the episodes completed (NaN before the first)."""
    register_env("SurrNAS-DARTS-v1-masked", make_env)
    config = (
        PPOConfig()
        .environment("SurrNAS-DARTS-v1-masked")
        .env_runners(num_env_runners=0)  # sample in the driver: a small example, one process
        .training(train_batch_size=BATCH, minibatch_size=128, num_epochs=4, gamma=1.0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                               model_config={"head_fcnet_hiddens": [64]}))
        .debugging(seed=seed)
    )
    algorithm = config.build_algo()
    results = []
    for _ in range(iterations):
        result = algorithm.train()
        runners = result["env_runners"]
        results.append({"decisions": int(result["num_env_steps_sampled_lifetime"]),
                        "mean_return": float(runners.get("episode_return_mean", float("nan"))),
                        "mean_length": float(runners.get("episode_len_mean", float("nan")))})
    algorithm.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4, help="training iterations (default 4)")
    args = parser.parse_args()
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        for iteration, result in enumerate(train(args.iterations)):
            print(f"iteration {iteration}: {result['decisions']} decisions; episodes: mean return "
                  f"{result['mean_return']:+.3f}, mean length {result['mean_length']:.1f}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
