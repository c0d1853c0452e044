"""A toy benchmark family, declared the way a new benchmark is: a space, a benchmark, two environments and one
catalogue record (used by tests/test_catalogue.py)."""

from __future__ import annotations

import numpy as np

from nas_envs.benchmarks.base import Benchmark
from nas_envs.catalogue import Family, Release
from nas_envs.envs.sequential import SequentialNASEnv
from nas_envs.envs.vector import SequentialNASVectorEnv
from nas_envs.spaces.base import InvalidArchitectureError, SearchSpace


class ToySpace(SearchSpace):
    """Three decisions of four choices each; the genes are the canonical form."""

    name = "toy"
    num_decisions = 3
    num_actions = 4

    def action_mask(self, prefix: np.ndarray) -> np.ndarray:
        return np.ones(self.num_actions, dtype=np.int8)

    def validate(self, genes: np.ndarray) -> None:
        if ((genes < 0) | (genes >= self.num_actions)).any():
            raise InvalidArchitectureError(f"toy: genes must lie in 0..{self.num_actions - 1}, got {genes.tolist()}")

    def invalid_rows(self, archs: np.ndarray) -> np.ndarray:
        return ((archs < 0) | (archs >= self.num_actions)).any(axis=1)

    def neighbours(self, genes: np.ndarray) -> list[np.ndarray]:
        out = []
        for position in range(self.num_decisions):
            for value in range(self.num_actions):
                if value != genes[position]:
                    changed = genes.copy()
                    changed[position] = value
                    out.append(changed)
        return out

    def to_string(self, genes: np.ndarray) -> str:
        return "Toy(" + ",".join(map(str, genes)) + ")"

    def from_string(self, text: str) -> np.ndarray:
        if not (isinstance(text, str) and text.startswith("Toy(") and text.endswith(")")):
            raise InvalidArchitectureError(f"toy: not a Toy(...) string: {text!r}")
        return self.as_genes(np.array([int(g) for g in text[4:-1].split(",")]))

    def one_hot(self, archs: np.ndarray) -> np.ndarray:
        return np.eye(self.num_actions)[archs].reshape(len(archs), -1)

    def cost_features(self, archs: np.ndarray) -> np.ndarray:
        return archs.astype(np.float64)


class ToyBenchmark(Benchmark):
    """Accuracy rises with the genes' sum; every evaluation costs 100 simulated seconds."""

    objectives = ("val_accuracy", "params")
    directions = {"val_accuracy": 1, "params": -1}

    def __init__(self, name: str) -> None:
        self.name, self.space = name, ToySpace()

    def evaluate_genes(self, genes: np.ndarray, noise: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
        accuracy = 0.5 + genes.sum(axis=1) / 20 + (rng.normal(0, 0.01, len(genes)) if noise else 0)
        return {"val_accuracy": accuracy, "params": genes.sum(axis=1).astype(float)}

    def simulated_seconds(self, values: dict[str, np.ndarray]) -> np.ndarray:
        return np.full(len(values["params"]), 100.0)

    def score(self, values: dict[str, np.ndarray]) -> np.ndarray:
        return values["val_accuracy"]

    def verify(self) -> None:
        pass


def make_toy_benchmark(name: str, bundle: str, surrogate: str | None) -> ToyBenchmark:
    return ToyBenchmark(name)


class ToyEnv(SequentialNASEnv):
    benchmark_name = "toy"


class ToyVectorEnv(SequentialNASVectorEnv):
    benchmark_name = "toy"


TOY = Family(
    name="toy", space="tests.toy_family:ToySpace", benchmarks=("toy",), factory="tests.toy_family:make_toy_benchmark",
    env="tests.toy_family:ToyEnv", vector_env="tests.toy_family:ToyVectorEnv",
    releases=(Release("Toy-NAS-v0", "toy-v0", "toy"),), reward="validation accuracy",
)
