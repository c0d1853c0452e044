"""Does RL learn out of the box? MaskablePPO (the recipe of nas_envs.agents.ppo) or REINFORCE on a SurrNAS env.

    python studies/rl_recipe.py --agent ppo --steps 100000 --seed 0 [--plot docs/figures/ppo_learning_curve.png]
    python studies/rl_recipe.py --agent reinforce --steps 100000 --seed 0
    python studies/rl_recipe.py --agent ppo --sb3-defaults     # without the recipe, for comparison

Trains at a fixed seed on the environment with noise (what an agent sees), records every proposed architecture,
then scores them all without noise (the surrogate's mean) and prints the learning curve: the mean validation
accuracy of consecutive windows of proposed architectures, against environment steps. The bar: the mean of the
last 500 architectures above the upper quartile of random architectures (the benchmark's random reference,
10,000 architectures, noise-free).
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import nas_envs  # noqa: F401 - registers the ids
from nas_envs.agents.ppo import ENV_KWARGS, make_model


def train_ppo(env_id: str, steps: int, seed: int, defaults: bool = False) -> list[str]:
    from stable_baselines3.common.callbacks import BaseCallback

    proposed: list[str] = []

    class Record(BaseCallback):
        def _on_step(self) -> bool:
            proposed.extend(info["architecture"] for info in self.locals["infos"] if "architecture" in info)
            return True

    if defaults:  # what a user gets without the recipe: SB3's settings and the accuracy reward
        import torch
        from sb3_contrib import MaskablePPO

        torch.set_num_threads(1)
        model = MaskablePPO("MlpPolicy", gym.make(env_id), seed=seed, device="cpu")
    else:
        model = make_model(gym.make(env_id, **ENV_KWARGS), seed)
    model.learn(total_timesteps=steps, callback=Record())
    return proposed


def train_reinforce(env_id: str, steps: int, seed: int) -> list[str]:
    from nas_envs.agents.reinforce import Reinforce
    from nas_envs.agents.trajectory import Evaluator, SearchBudgetSpent, TrajectoryRecorder

    env = TrajectoryRecorder(gym.make(env_id))
    architectures = steps // env.unwrapped.space.num_decisions
    evaluator = Evaluator(env, seed=seed, max_evaluations=architectures)
    try:
        Reinforce().run(evaluator, env.unwrapped.space, np.random.default_rng(seed))
    except SearchBudgetSpent:
        pass
    return [row["architecture"] for row in env.rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", choices=["ppo", "reinforce"], default="ppo")
    parser.add_argument("--env", default="SurrNAS-DARTS-v0")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=int, default=250, help="architectures per point of the curve")
    parser.add_argument("--plot", default=None, help="PNG of the learning curve")
    parser.add_argument("--sb3-defaults", action="store_true", help="PPO with SB3's default settings and the "
                        "accuracy reward instead of the recipe (for comparison)")
    args = parser.parse_args()

    started, cpu_started = time.perf_counter(), time.process_time()
    if args.agent == "ppo":
        proposed = train_ppo(args.env, args.steps, args.seed, defaults=args.sb3_defaults)
    else:
        proposed = train_reinforce(args.env, args.steps, args.seed)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    unwrapped = gym.make(args.env).unwrapped
    benchmark, decisions = unwrapped.benchmark, unwrapped.space.num_decisions
    accuracy = benchmark.evaluate(proposed, noise=False)["val_accuracy"]
    reference = benchmark.random_reference()
    quartiles = np.quantile(reference, [0.25, 0.5, 0.75])

    print(f"{args.agent} on {args.env}, seed {args.seed}: {len(proposed)} architectures in {args.steps} steps, "
          f"{wall:.0f} s wall-clock, {cpu:.0f} CPU-s")
    print(f"random architectures (noise-free): quartiles {100 * quartiles[0]:.2f} / {100 * quartiles[1]:.2f} / "
          f"{100 * quartiles[2]:.2f} %, best {100 * reference[-1]:.2f} %")
    print(f"{'env steps':>10} {'mean val accuracy of the window (%)':>36}")
    curve = []
    for end in range(args.window, len(accuracy) + 1, args.window):
        mean = float(accuracy[end - args.window : end].mean())
        curve.append((end * decisions, mean))
        print(f"{end * decisions:>10} {100 * mean:>36.2f}")
    last = float(accuracy[-500:].mean())
    verdict = "above" if last > quartiles[2] else "NOT above"
    print(f"last 500 architectures: {100 * last:.2f} %, {verdict} the upper quartile of random ones "
          f"({100 * quartiles[2]:.2f} %); {100 * np.mean(reference < last):.1f} % of random architectures score lower")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, ax = plt.subplots(figsize=(6, 3.6))
        ax.plot([s for s, _ in curve], [100 * m for _, m in curve], marker="o", label=f"{args.agent}, seed {args.seed}")
        for q, name in zip(quartiles, ("random: lower quartile", "median", "upper quartile")):
            ax.axhline(100 * q, color="grey", linestyle=":", linewidth=1)
            ax.text(ax.get_xlim()[0], 100 * q, f" {name}", va="bottom", fontsize=7, color="grey")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(f"mean val accuracy of {args.window} proposed (%)")
        ax.set_title(f"{args.env}: what the controller proposes (surrogate mean)", fontsize=9)
        ax.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
