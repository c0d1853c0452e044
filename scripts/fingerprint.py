"""A fingerprint of what the benchmarks and environments return: two checkouts that print the same one return the
same values bit for bit. Prints the number of values and their SHA-256.

    python scripts/fingerprint.py
    PYTHONPATH=OTHER_CHECKOUT python scripts/fingerprint.py   # the same script against other code

Covers every family's ``evaluate`` (DARTS and FBNet with each accuracy surrogate of the default bundle, noisy and
not, on batches of 1, 5, 10 and 100 architectures: the one-row, small-batch and merged tree walkers; all 15 CitySeg
problems and every CitySeg objective with the cost features), and seeded episodes of single environments (DARTS
with and without a budget, FBNet, DARTS-MF, CitySeg): observations, rewards, ends and simulated clocks, with a
masked action now and then. Meant for changes that should not change results (speed, refactoring); a change of
rounding anywhere shows.
"""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np

import nas_envs

EPISODE_STEPS = 640


def evaluations() -> list[np.ndarray]:
    out = []
    for name, surrogates in (("darts", ("xgb", "gin", "xgb+gin", "stack")), ("fbnet", ("xgb", "gin", "xgb+gin"))):
        for surrogate in surrogates:
            bench = nas_envs.make_benchmark(name, surrogate=surrogate)
            for n in (1, 5, 10, 100):
                genes = bench.space.sample(n, seed=n)
                for noise in (True, False):
                    values = bench.evaluate(genes, noise=noise, seed=3)
                    out += [np.asarray(values[key], dtype=float) for key in sorted(values)]
    for problem in range(1, 16):
        bench = nas_envs.make_benchmark(f"cityseg-mop{problem}")
        genes = bench.space.as_batch(bench.space.sample(50, seed=problem))
        out.append(bench.space.cost_features(genes))
        for noise in (True, False):
            values = bench.evaluate_all(genes, noise, np.random.default_rng(problem))
            out += [np.asarray(values[key], dtype=float) for key in sorted(values)]
    return out


def episodes() -> list[np.ndarray]:
    out = []
    for env_id, kwargs in (("SurrNAS-DARTS-v1", {}), ("SurrNAS-DARTS-v1", {"budget_seconds": 20_000}),
                           ("SurrNAS-FBNet-v1", {}), ("SurrNAS-DARTS-MF-v1", {"budget_seconds": 50_000}),
                           ("CitySeg-MOP3-v0", {})):
        env = gym.make(env_id, **kwargs)
        obs, info = env.reset(seed=1)
        rng = np.random.default_rng(0)
        for step in range(EPISODE_STEPS):
            legal, masked = np.flatnonzero(info["action_mask"]), np.flatnonzero(info["action_mask"] == 0)
            action = int(rng.choice(legal)) if len(legal) else 0
            if step % 97 == 5 and len(masked):
                action = int(masked[0])  # in the action space but masked: ends the episode
            obs, reward, terminated, truncated, info = env.step(action)
            out += [obs, np.atleast_1d(reward), np.array([terminated, truncated, info["sim_time"]], dtype=float)]
            if terminated or truncated:
                obs, info = env.reset()
                out.append(obs)
    return out


def main() -> None:
    values = np.concatenate([np.asarray(part, dtype=np.float64).reshape(-1) for part in evaluations() + episodes()])
    print(f"{len(values):,} values, sha256 {hashlib.sha256(values.tobytes()).hexdigest()}")


if __name__ == "__main__":
    main()
