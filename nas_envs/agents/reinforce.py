"""A REINFORCE controller in the style of Zoph & Le (2017): an LSTM emits one decision per step, with masks."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from nas_envs.spaces.base import SearchSpace


class Controller(nn.Module):
    """LSTM policy over the decision sequence; the input at each step embeds (decision index, previous action)."""

    def __init__(self, num_decisions: int, num_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.decision_embedding = nn.Embedding(num_decisions, hidden)
        self.action_embedding = nn.Embedding(num_actions + 1, hidden)  # + "no previous action"
        self.cell = nn.LSTMCell(hidden, hidden)
        self.head = nn.Linear(hidden, num_actions)
        self.num_actions = num_actions

    def sample(self, space: SearchSpace, generator: torch.Generator) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
        """An architecture, the sum of its log-probabilities and of the policy entropies."""
        genes = np.empty(space.num_decisions, dtype=np.int64)
        state = None
        previous = torch.tensor([self.num_actions])
        log_prob = torch.zeros(())
        entropy = torch.zeros(())
        for step in range(space.num_decisions):
            x = self.decision_embedding(torch.tensor([step])) + self.action_embedding(previous)
            state = self.cell(x, state)
            logits = self.head(state[0])[0]
            mask = torch.from_numpy(space.action_mask(genes[:step]).astype(bool))
            logits = logits.masked_fill(~mask, float("-inf"))
            probs = torch.softmax(logits, dim=0)
            action = int(torch.multinomial(probs, 1, generator=generator))
            log_probs = torch.log_softmax(logits, dim=0)
            log_prob = log_prob + log_probs[action]
            entropy = entropy - (probs[mask] * log_probs[mask]).sum()
            genes[step] = action
            previous = torch.tensor([action])
        return genes, log_prob, entropy


class Reinforce:
    """REINFORCE with a moving-average baseline; one policy-gradient step per evaluated architecture.

    The advantage ``reward - baseline`` is divided by a moving estimate of the rewards' spread, so that the step
    size does not depend on the score's units (architectures differ by fractions of a percent of accuracy, or of
    a hypervolume).

    Args:
        learning_rate: Adam step size.
        baseline_decay: the baseline (and the spread) follow ``decay * old + (1 - decay) * new``.
        entropy_weight: bonus that keeps early exploration up.
    """

    name = "reinforce"

    def __init__(self, learning_rate: float = 3e-3, baseline_decay: float = 0.95, entropy_weight: float = 1e-3,
                 hidden: int = 64) -> None:
        self.learning_rate = learning_rate
        self.baseline_decay = baseline_decay
        self.entropy_weight = entropy_weight
        self.hidden = hidden
        self.rewards: list[float] = []

    def run(self, evaluate, space: SearchSpace, rng: np.random.Generator) -> None:
        torch.set_num_threads(1)  # a small controller: a thread pool would wait on busy cores
        torch.manual_seed(int(rng.integers(2**31)))
        generator = torch.Generator().manual_seed(int(rng.integers(2**31)))
        controller = Controller(space.num_decisions, space.num_actions, self.hidden)
        optimizer = torch.optim.Adam(controller.parameters(), lr=self.learning_rate)
        baseline = spread = None
        decay = self.baseline_decay
        while True:
            genes, log_prob, entropy = controller.sample(space, generator)
            reward = evaluate(genes)
            self.rewards.append(reward)
            if baseline is None:
                baseline, spread = reward, 0.0
            advantage = reward - baseline
            spread = decay * spread + (1 - decay) * advantage**2
            baseline = decay * baseline + (1 - decay) * reward
            scaled = advantage / max(spread**0.5, 1e-8)
            loss = -scaled * log_prob - self.entropy_weight * entropy
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
