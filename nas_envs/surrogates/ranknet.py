"""An ensemble of MLP rank-nets, as CitySeg/MOP's error predictor: regression plus a pairwise ranking loss.

Each member maps an encoding to a score in [-1, 1] (the target rescaled by the training set's minimum and
maximum) and is trained with the mean squared error plus a pairwise hinge loss with margin 0.05 (every pair whose
targets differ must be ordered by at least the margin). Members differ by bootstrap sample and initialisation.
Inference is plain numpy on the stacked weights of all members: one batched matrix product per layer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nas_envs.progress import progress


@dataclass(frozen=True)
class RankNetConfig:
    inputs: int
    hidden: int = 128
    layers: int = 3
    epochs: int = 300
    batch_size: int = 64
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    margin: float = 0.05
    target_min: float = 0.0
    target_max: float = 1.0


def _scale(y: np.ndarray, config: RankNetConfig) -> np.ndarray:
    return 2 * (y - config.target_min) / (config.target_max - config.target_min) - 1


def fit_member(x: np.ndarray, y: np.ndarray, config: RankNetConfig, seed: int) -> list[np.ndarray]:
    """One member on a bootstrap resample; returns its weights ``[W1, b1, ..., Wk, bk]`` (deterministic)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows = rng.integers(len(x), size=len(x))
    inputs = torch.as_tensor(x[rows], dtype=torch.float32)
    target = torch.as_tensor(_scale(y[rows], config), dtype=torch.float32)
    widths = [config.inputs] + [config.hidden] * config.layers
    modules: list[nn.Module] = []
    for a, b in zip(widths[:-1], widths[1:]):
        modules += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*modules, nn.Linear(config.hidden, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(config.epochs):
        order = torch.randperm(len(rows), generator=generator)
        for start in range(0, len(rows), config.batch_size):
            batch = order[start : start + config.batch_size]
            pred = model(inputs[batch]).squeeze(1)
            truth = target[batch]
            better = (truth[:, None] - truth[None, :]) > 0
            ranking = torch.relu(config.margin - (pred[:, None] - pred[None, :])[better]).mean() if better.any() else 0
            loss = ((pred - truth) ** 2).mean() + ranking
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    linears = [m for m in model if isinstance(m, nn.Linear)]
    return [t for m in linears for t in (m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())]


class RankNetEnsemble:
    """``predict(x)`` returns ``(N, members)`` predictions in the target's units."""

    def __init__(self, config: RankNetConfig, members: list[list[np.ndarray]]) -> None:
        self.config = config
        self.num_members = len(members)
        # stacked per layer: weights (M, in, out), biases (M, 1, out)
        self._weights = [np.stack([m[2 * k] for m in members]) for k in range(len(members[0]) // 2)]
        self._biases = [np.stack([m[2 * k + 1] for m in members])[:, None, :] for k in range(len(members[0]) // 2)]

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, members: int = 10, seed: int = 0, **options) -> "RankNetEnsemble":
        x = np.asarray(x, dtype=np.float32)
        y = np.asarray(y, dtype=np.float64)
        if x.ndim != 2 or y.shape != (len(x),):
            raise ValueError(f"expected x (N, F) and y (N,), got {x.shape} and {y.shape}")
        config = RankNetConfig(inputs=x.shape[1], target_min=float(y.min()), target_max=float(y.max()), **options)
        if config.target_max <= config.target_min:
            raise ValueError("the targets are constant; a ranking model cannot be fitted")
        return cls(config, [fit_member(x, y, config, seed * 1000 + k)
                            for k in progress(range(members), desc="rank-net members", leave=False)])

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.config.inputs:
            raise ValueError(f"expected an encoding of shape (N, {self.config.inputs}), got {x.shape}")
        h = np.broadcast_to(x, (self.num_members, *x.shape))
        for layer, (w, b) in enumerate(zip(self._weights, self._biases)):
            h = np.matmul(h, w) + b
            if layer < len(self._weights) - 1:
                np.maximum(h, 0, out=h)
        scores = h[:, :, 0].T.astype(np.float64)
        return (scores + 1) / 2 * (self.config.target_max - self.config.target_min) + self.config.target_min

    def save(self, folder: Path) -> list[Path]:
        """``config.json`` and ``weights.npz`` (portable: plain arrays, no pickles)."""
        folder.mkdir(parents=True, exist_ok=True)
        config_path, weights_path = folder / "config.json", folder / "weights.npz"
        config_path.write_text(json.dumps(asdict(self.config), indent=1) + "\n")
        arrays = {f"w{k}": w for k, w in enumerate(self._weights)} | {f"b{k}": b for k, b in enumerate(self._biases)}
        with open(weights_path, "wb") as handle:
            np.savez(handle, **arrays)
        return [config_path, weights_path]

    @classmethod
    def load(cls, folder: Path) -> "RankNetEnsemble":
        config = RankNetConfig(**json.loads((folder / "config.json").read_text()))
        with np.load(folder / "weights.npz", allow_pickle=False) as arrays:
            layers = len([k for k in arrays.files if k.startswith("w")])
            weights = [arrays[f"w{k}"] for k in range(layers)]
            biases = [arrays[f"b{k}"] for k in range(layers)]
        members = [[t for k in range(layers) for t in (weights[k][m], biases[k][m, 0])] for m in range(len(weights[0]))]
        return cls(config, members)
