"""The action mask inside the observation, for RL libraries that read it there (RLlib, TorchRL).

Every environment of nas-envs gives its legal actions as ``info["action_mask"]`` and ``env.action_masks()`` (what
sb3-contrib's MaskablePPO reads). RLlib's action-masking modules and TorchRL's ``ActionMask`` transform read the mask
from the observation instead::

    env = MaskInObservation(gym.make("SurrNAS-DARTS-v0"))
    observation, info = env.reset(seed=0)
    observation["observations"], observation["action_mask"]

The keys are RLlib's (``"observations"``, ``"action_mask"``); the mask is ``int8``, 1 for a legal action. After the
step that ends an episode the mask is that of the completed state, which no policy acts on.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

OBSERVATIONS = "observations"
ACTION_MASK = "action_mask"


class MaskInObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """``Dict(observations=<the environment's Box>, action_mask=Box(0, 1, (actions,), int8))``."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)  # so that env.spec can remake it, as Gymnasium's wrappers
        gym.ObservationWrapper.__init__(self, env)
        if not isinstance(env.action_space, spaces.Discrete) or not hasattr(env.unwrapped, "action_masks"):
            raise ValueError(f"MaskInObservation needs an environment with a Discrete action space and action_masks() "
                             f"(a nas-envs environment), got {env}")
        self.observation_space = spaces.Dict({
            OBSERVATIONS: env.observation_space,
            ACTION_MASK: spaces.Box(0, 1, shape=(int(env.action_space.n),), dtype=np.int8),
        })

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {OBSERVATIONS: observation, ACTION_MASK: self.env.unwrapped.action_masks()}
