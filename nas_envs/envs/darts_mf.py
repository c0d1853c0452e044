"""SurrNAS-DARTS-MF: build a DARTS architecture, then decide epoch by epoch how long to train it."""

from __future__ import annotations

from nas_envs.envs.darts import SurrNASDartsEnv, SurrNASDartsVectorEnv


class SurrNASDartsMFEnv(SurrNASDartsEnv):
    """
    ## Description

    The multi-fidelity variant of ``SurrNAS-DARTS``: the same search space and surrogates, and after the
    architecture is complete the agent decides how long to train it, one epoch at a time, on the learning curves of
    this project's trainings (the DARTS protocol trains ``epochs`` = 4 epochs; the bundle's ``curve`` model predicts
    the validation accuracy after each). Stopping a poor architecture early saves simulated time for others, which
    is what successive halving, Hyperband and freeze-thaw searches exploit.

    ## Action Space

    ``Discrete(9)``: the 7 actions of ``SurrNAS-DARTS`` for the 32 build decisions, then ``TRAIN`` (index 7,
    ``env.unwrapped.train_action``) and ``STOP`` (index 8, ``env.unwrapped.stop_action``), which are legal only
    once the architecture is complete (and then nothing else is). ``info["action_mask"]`` and ``action_masks()``
    say which actions are legal; an action outside the mask ends the episode at once with reward 0, as in
    ``SurrNAS-DARTS``.

    ## Observation Space

    ``Box(0, 1, (260,), float32)``: the observation of ``SurrNAS-DARTS`` with two entries before the remaining
    budget fraction: the fraction of the epochs trained so far and the validation accuracy after the last of them
    (0 before the first).

    ## Rewards

    0 on every step but the one that trains the last epoch; that step pays the reward of ``SurrNAS-DARTS`` for the
    fully trained architecture (``reward="accuracy"``, ``"standardised"`` or ``"percentile"``). Partial trainings
    pay nothing: what they buy is information, ``info["epoch_val_accuracy"]``, at a fraction of the time.

    ## Starting State

    No decision taken; the simulated clock starts at 0 on ``reset(seed=...)`` and on
    ``reset(options={"reset_budget": True})`` (a fresh budget also forgets the trainings of the last one).

    ## Episode End

    Completing the architecture trains nothing and spends no time; from then on only ``TRAIN`` and ``STOP`` are
    legal. ``TRAIN`` trains one more epoch: it spends that epoch's simulated seconds (the runtime model's training
    time divided by the epochs, which are alike: the same steps and one validation each) and reveals
    ``info["epoch_val_accuracy"]`` and ``info["epochs_trained"]``. The episode terminates after ``STOP``, after
    the last epoch (whose ``info`` holds ``architecture``, ``objectives`` and ``score`` of the fully trained
    architecture, as ``SurrNAS-DARTS`` reports them), or after an illegal action. An architecture's learning curve
    is one noisy draw, made when it is first completed in a budget, so more epochs never redraw earlier ones, and
    its last point is the final accuracy. **Freeze-thaw**: building an architecture again in the same budget
    resumes its training where it stopped, charging only the epochs added; one already trained for every epoch
    ends the episode at once with ``info["already_trained"]`` (reward 0, no time). The budget rules are those of
    ``SurrNAS-DARTS``: the step that spends the budget completes, and the next one is truncated.

    ## Arguments

    ```python
    import gymnasium as gym
    import nas_envs
    env = gym.make("SurrNAS-DARTS-MF-v1", budget_seconds=None, noise=True, surrogate="xgb", render_mode=None,
                   strict_budget=False, reward="accuracy")
    ```

    As for ``SurrNAS-DARTS``; ``bundle`` must hold a ``curve`` model (``nas-envs fit darts --model curve --out
    DIR`` adds one to a bundle folder). A native vector environment: ``gym.make_vec("SurrNAS-DARTS-MF-v1",
    num_envs=8, vectorization_mode="vector_entry_point")``; its ``info`` holds ``epochs_trained`` and
    ``epoch_val_accuracy`` for the copies that trained an epoch in the step (flagged by
    ``info["_epoch_val_accuracy"]``) and ``already_trained`` (flagged by ``info["_already_trained"]``).

    ## Version History

    * v0: bundle ``darts-mf-v0``: the accuracy, runtime and cost models of ``darts-v0`` unchanged (a fully trained
      architecture's objectives are those of ``SurrNAS-DARTS-v0``) and a ``curve`` model fitted on the learning
      curves of protocol ``darts-fmnist14-c8l8-e4-v1``.
    * v1: bundle ``darts-mf-v1``: the models of ``darts-v1`` unchanged and a ``curve`` model fitted on the learning
      curves of the same 2,211 lines that ``darts-v1`` read. Its version follows the bundle it extends.
    """

    multi_fidelity = True


class SurrNASDartsMFVectorEnv(SurrNASDartsVectorEnv):
    """``num_envs`` copies of :class:`SurrNASDartsMFEnv` that score their finished architectures in one batch."""

    multi_fidelity = True
