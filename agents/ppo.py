"""sb3-contrib's MaskablePPO trained on the sequential environment, stopped when the simulated budget is spent."""

from __future__ import annotations

import gymnasium as gym

from nas_envs.benchmarks import BudgetExhaustedError


class MaskablePPOAgent:
    """MaskablePPO with an MLP policy, one step per decision, reading ``action_masks()`` from the environment.

    It learns until the budget is spent or ``total_timesteps`` (decisions) are taken, whichever is first.
    ``completed_rewards`` lists ``(timestep, reward)`` of every completed architecture (``nas-envs curve`` draws
    the learning curve from the trajectory files).
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

    def run_env(self, env: gym.Env, seed: int) -> None:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback

        curve = self.completed_rewards

        class RecordCompletions(BaseCallback):
            def _on_step(self) -> bool:
                for info, done in zip(self.locals["infos"], self.locals["dones"]):
                    if done and "objectives" in info:
                        curve.append((self.num_timesteps, float(info["objectives"]["val_accuracy"])))
                return True

        model = MaskablePPO(
            "MlpPolicy", env, n_steps=self.n_steps, batch_size=self.batch_size, learning_rate=self.learning_rate,
            ent_coef=self.ent_coef, seed=seed, verbose=0, device="cpu",
        )
        try:
            model.learn(total_timesteps=self.total_timesteps, callback=RecordCompletions())
        except BudgetExhaustedError:
            # SB3's vectorised wrapper resets the env right after the step that spent the budget; that reset
            # ends learning (before the callback sees that last architecture, which the recorder has).
            pass
