"""SurrNAS-FBNet-MF: choose FBNet's 22 blocks, then decide epoch by epoch how long to train the network."""

from __future__ import annotations

from nas_envs.envs.fbnet import SurrNASFBNetEnv, SurrNASFBNetVectorEnv


class SurrNASFBNetMFEnv(SurrNASFBNetEnv):
    """
    ## Description

    The multi-fidelity variant of ``SurrNAS-FBNet``: the same search space and surrogates, and after the 22 blocks
    are chosen the agent decides how long to train the network, one epoch at a time, on the learning curves of this
    project's trainings (the FBNet protocol trains ``epochs`` = 4 epochs; the bundle's ``curve`` model predicts the
    validation accuracy after each). Stopping a poor network early saves simulated time for others, which is what
    successive halving, Hyperband and freeze-thaw searches exploit.

    ## Action Space

    ``Discrete(11)``: the 9 blocks of ``SurrNAS-FBNet`` for the 22 layer decisions, then ``TRAIN`` (index 9,
    ``env.unwrapped.train_action``) and ``STOP`` (index 10, ``env.unwrapped.stop_action``), which are legal only
    once the network is complete (and then nothing else is). ``info["action_mask"]`` and ``action_masks()`` say
    which actions are legal; an action outside the mask ends the episode at once with reward 0.

    ## Observation Space

    ``Box(0, 1, (224,), float32)``: the observation of ``SurrNAS-FBNet`` with two entries before the remaining
    budget fraction: the fraction of the epochs trained so far and the validation accuracy after the last of them
    (0 before the first).

    ## Rewards

    0 on every step but the one that trains the last epoch; that step pays the reward of ``SurrNAS-FBNet`` for the
    fully trained network (``reward="accuracy"``, ``"standardised"`` or ``"percentile"``). Partial trainings pay
    nothing: what they buy is information, ``info["epoch_val_accuracy"]``, at a fraction of the time.

    ## Starting State

    No layer chosen; the simulated clock starts at 0 on ``reset(seed=...)`` and on
    ``reset(options={"reset_budget": True})`` (a fresh budget also forgets the trainings of the last one).

    ## Episode End

    As in ``SurrNAS-DARTS-MF``: completing the network trains nothing and spends no time; ``TRAIN`` trains one more
    epoch, spends that epoch's simulated seconds (the runtime model's training time divided by the epochs) and
    reveals ``info["epoch_val_accuracy"]`` and ``info["epochs_trained"]``; the episode terminates after ``STOP``,
    after the last epoch (whose ``info`` holds ``architecture``, ``objectives`` and ``score`` of the fully trained
    network, as ``SurrNAS-FBNet`` reports them), or after an illegal action. A learning curve is one noisy draw,
    made when the network is first completed in a budget; building it again in the same budget resumes its
    training (freeze-thaw), and one already trained for every epoch ends the episode at once with
    ``info["already_trained"]``.

    ## Arguments

    ```python
    import gymnasium as gym
    import nas_envs
    env = gym.make("SurrNAS-FBNet-MF-v1", budget_seconds=None, noise=True, surrogate="xgb", render_mode=None,
                   strict_budget=False, reward="accuracy")
    ```

    As for ``SurrNAS-FBNet``; ``bundle`` must hold a ``curve`` model (``nas-envs fit fbnet --model curve --out
    DIR``). A native vector environment: ``gym.make_vec("SurrNAS-FBNet-MF-v1", num_envs=8,
    vectorization_mode="vector_entry_point")``, with the ``info`` entries of ``SurrNAS-DARTS-MF``'s.

    ## Version History

    * v1: bundle ``fbnet-mf-v1``: the accuracy, runtime and cost models of ``fbnet-v1`` unchanged (a fully trained
      network's objectives are those of ``SurrNAS-FBNet-v1``) and a ``curve`` model fitted on the learning curves
      of protocol ``fbnet-fmnist14-full-e4-v1``. Its version follows the bundle it extends.
    """

    multi_fidelity = True


class SurrNASFBNetMFVectorEnv(SurrNASFBNetVectorEnv):
    """``num_envs`` copies of :class:`SurrNASFBNetMFEnv` that score their finished networks in one batch."""

    multi_fidelity = True
