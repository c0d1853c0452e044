"""sb3-contrib's MaskablePPO trained on the sequential environment, stopped when the simulated budget is spent."""

from __future__ import annotations

import gymnasium as gym


class MaskablePPOAgent:
    """MaskablePPO with an MLP policy, one step per decision, reading ``action_masks()`` from the environment.

    It learns on the environment's reward until the budget is spent (:class:`StopOnBudgetExhausted`) or
    ``total_timesteps`` decisions are taken, whichever is first. ``completed_rewards`` lists ``(timestep, score)``
    of every completed architecture (``nas-envs curve`` draws the learning curve from the trajectory files).
    """

    name = "ppo"
    needs_env = True

    def __init__(self, n_steps: int = 256, batch_size: int = 64, learning_rate: float = 3e-4, ent_coef: float = 0.01,
                 total_timesteps: int = 10_000_000) -> None:
        self.n_steps = n_steps
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.ent_coef = ent_coef
        self.total_timesteps = total_timesteps
        self.completed_rewards: list[tuple[int, float]] = []

    def run_env(self, env: gym.Env, seed: int, max_evaluations: int | None = None) -> None:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import CallbackList

        from nas_envs.agents.callbacks import RecordCompletions, StopAfterEvaluations, StopOnBudgetExhausted

        record = RecordCompletions()
        callbacks = [record, StopOnBudgetExhausted()]
        if max_evaluations is not None:
            callbacks.append(StopAfterEvaluations(max_evaluations))
        model = MaskablePPO(
            "MlpPolicy", env, n_steps=self.n_steps, batch_size=self.batch_size, learning_rate=self.learning_rate,
            ent_coef=self.ent_coef, seed=seed, verbose=0, device="cpu",
        )
        model.learn(total_timesteps=self.total_timesteps, callback=CallbackList(callbacks))
        self.completed_rewards = record.completions
