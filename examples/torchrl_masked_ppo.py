"""A masked PPO policy trained with TorchRL on SurrNAS-DARTS-v1: every action it takes is legal.

    python examples/torchrl_masked_ppo.py [--frames 4096]

TorchRL reads the mask from the observation: :class:`nas_envs.interop.masks.MaskInObservation` puts it there,
``GymWrapper`` turns the observation's keys into tensordict entries, ``ActionMask`` keeps random actions legal and
``MaskedCategorical`` gives the policy's distribution over the legal actions only. The reward is standardised
(accuracy in standard deviations of random architectures), which PPO's default settings learn from. Prints the
mean reward of the architectures completed in each batch; needs ``pip install torchrl``.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import torch
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import GymWrapper, TransformedEnv
from torchrl.envs.transforms import ActionMask
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import nas_envs  # noqa: F401 - registers the ids
from nas_envs.interop.masks import MaskInObservation

FRAMES_PER_BATCH = 512  # 16 DARTS architectures of 32 decisions


def make_env(seed: int) -> TransformedEnv:
    env = GymWrapper(MaskInObservation(gym.make("SurrNAS-DARTS-v1", reward="standardised")),
                     categorical_action_encoding=True)
    env.set_seed(seed)
    return TransformedEnv(env, ActionMask())


def train(frames: int, seed: int = 0) -> tuple[list[float], int]:
    """Train for ``frames`` decisions; returns the mean reward of the architectures completed in each batch, and
    how many were completed (an illegal action would end an episode early, leaving fewer than frames / 32)."""
    torch.manual_seed(seed)
    env = make_env(seed)
    observations, actions = env.observation_spec["observations"].shape[-1], env.action_spec.space.n
    logits = TensorDictModule(nn.Sequential(nn.Linear(observations, 64), nn.Tanh(), nn.Linear(64, actions)),
                              in_keys=["observations"], out_keys=["logits"])
    as_bool = TensorDictModule(lambda mask: mask.bool(), in_keys=["action_mask"], out_keys=["mask"])
    policy = ProbabilisticActor(TensorDictSequential(logits, as_bool),
                                in_keys=["logits", "mask"], distribution_class=MaskedCategorical,
                                return_log_prob=True, spec=env.action_spec)
    value = ValueOperator(nn.Sequential(nn.Linear(observations, 64), nn.Tanh(), nn.Linear(64, 1)),
                          in_keys=["observations"])
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=value)
    loss = ClipPPOLoss(policy, value, entropy_coeff=0.01)
    optimiser = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, policy, frames_per_batch=FRAMES_PER_BATCH, total_frames=frames,
                          auto_register_policy_transforms=True)
    means, architectures = [], 0
    for batch in collector:
        completed = batch["next", "terminated"].squeeze(-1)
        means.append(float(batch["next", "reward"].squeeze(-1)[completed].mean()))
        architectures += int(completed.sum())
        for _ in range(4):  # epochs over the batch
            with torch.no_grad():
                advantage(batch)
            for minibatch in batch.reshape(-1).split(128):
                losses = loss(minibatch)
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimiser.zero_grad()
                total.backward()
                optimiser.step()
        collector.update_policy_weights_()
    collector.shutdown()
    return means, architectures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=4096, help="decisions to train on (default 4096)")
    args = parser.parse_args()
    means, architectures = train(args.frames)
    for batch, mean in enumerate(means):
        print(f"batch {batch}: mean standardised reward of completed architectures {mean:+.3f}")
    print(f"{architectures} architectures completed in {args.frames} decisions")


if __name__ == "__main__":
    main()
