"""sb3-contrib's MaskablePPO on the sequential environments: one recipe, used by ``nas-envs run --agent ppo``,
``studies/rl_recipe.py`` and the docs.

The recipe (:data:`RECIPE`) suits episodes that end with one reward for the whole architecture: no discounting
and Monte-Carlo returns (``gamma = gae_lambda = 1``), large rollouts, and on SurrNAS-DARTS/FBNet the
``reward="standardised"`` option (accuracies differ by well under 1 %, standardised by units). Torch runs on one
thread: the networks are small, and a thread pool waits on busy cores (``python studies/rl_recipe.py`` prints
the learning curve this recipe gives, and whether it passes its bar).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

#: MaskablePPO's settings for NAS episodes (everything not named keeps SB3's default)
RECIPE: dict[str, Any] = {
    "learning_rate": 1e-3,
    "n_steps": 2048,
    "batch_size": 256,
    "n_epochs": 10,
    "gamma": 1.0,
    "gae_lambda": 1.0,
    "ent_coef": 0.0,
    "policy_kwargs": {"net_arch": [64, 64]},
}
#: the environment option the recipe trains with, where the environment has it
ENV_KWARGS = {"reward": "standardised"}


def make_model(env: gym.Env, seed: int, **overrides: Any):
    """A MaskablePPO with :data:`RECIPE` (and ``overrides``) on ``env``, on the CPU with one torch thread."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    return MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **{**RECIPE, **overrides})


class MaskablePPOAgent:
    """MaskablePPO (:data:`RECIPE`), one step per decision, reading ``action_masks()`` from the environment.

    It learns on the environment's reward until the budget is spent (:class:`StopOnBudgetExhausted`), the
    evaluation cap is reached, or ``total_timesteps`` decisions are taken. ``completed_rewards`` lists
    ``(timestep, score)`` of every completed architecture (``nas-envs curve`` draws the learning curve from the
    trajectory files).
    """

    name = "ppo"
    needs_env = True
    env_kwargs = ENV_KWARGS

    def __init__(self, total_timesteps: int = 10_000_000, **overrides: Any) -> None:
        self.total_timesteps = total_timesteps
        self.overrides = overrides
        self.completed_rewards: list[tuple[int, float]] = []

    def run_env(self, env: gym.Env, seed: int, max_evaluations: int | None = None) -> None:
        from stable_baselines3.common.callbacks import CallbackList

        from nas_envs.agents.callbacks import RecordCompletions, StopAfterEvaluations, StopOnBudgetExhausted

        record = RecordCompletions()
        callbacks = [record, StopOnBudgetExhausted()]
        if max_evaluations is not None:
            callbacks.append(StopAfterEvaluations(max_evaluations))
        model = make_model(env, seed, **self.overrides)
        model.learn(total_timesteps=self.total_timesteps, callback=CallbackList(callbacks))
        self.completed_rewards = record.completions
