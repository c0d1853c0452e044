"""Stable-Baselines3 callbacks for the NAS environments (need the ``[rl]`` extra)."""

from __future__ import annotations

from stable_baselines3.common.callbacks import BaseCallback


class StopOnBudgetExhausted(BaseCallback):
    """Stops training at the step that spends the simulated budget of any copy of the environment.

    Pass it to any SB3 algorithm's ``learn(callback=...)``; the environments report the budget in
    ``info["budget_exhausted"]`` and never raise from ``reset()``.
    """

    def _on_step(self) -> bool:
        return not any(info.get("budget_exhausted", False) for info in self.locals["infos"])


class RecordCompletions(BaseCallback):
    """Collects ``(timestep, score)`` of every architecture completed during training (a learning curve)."""

    def __init__(self, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.completions: list[tuple[int, float]] = []

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "score" in info:
                self.completions.append((self.num_timesteps, float(info["score"])))
        return True


class StopAfterEvaluations(BaseCallback):
    """Stops training once ``evaluations`` architectures have been completed (an evaluation cap beside the budget)."""

    def __init__(self, evaluations: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.evaluations = evaluations
        self.seen = 0

    def _on_step(self) -> bool:
        self.seen += sum("score" in info for info in self.locals["infos"])
        return self.seen < self.evaluations
