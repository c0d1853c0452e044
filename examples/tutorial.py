"""nas-envs in five steps: build an architecture by hand, evaluate it, search, compare, plot.

    python examples/tutorial.py [--out tutorial_out]

Runs in well under two minutes on a laptop CPU; the test suite executes it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym

import nas_envs
from nas_envs.agents.plot import format_table, plot_runs
from nas_envs.agents.runner import RunSettings, run

# 1. An architecture by hand: the DARTS (V2) cells, as printed by the DARTS code.
DARTS_V2 = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
    "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)], normal_concat=[2, 3, 4, 5], "
    "reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), ('max_pool_3x3', 0), "
    "('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)], reduce_concat=[2, 3, 4, 5])"
)


def main(out: Path) -> dict:
    bench = nas_envs.make_benchmark("darts")
    space = bench.space

    # 2. Evaluate it: the surrogate's mean, then three noisy "trainings" with different seeds.
    mean = bench.evaluate([DARTS_V2], noise=False)
    print(f"DARTS V2 on the proxy: val accuracy {mean['val_accuracy'][0]:.4f}, "
          f"{mean['params'][0]:.0f} parameters, {mean['train_time_s'][0]:.0f} s to train")
    for seed in range(3):
        print(f"  a training with seed {seed}: {bench.evaluate([DARTS_V2], seed=seed)['val_accuracy'][0]:.4f}")

    # 3. The same architecture, decision by decision, in the Gymnasium environment.
    env = gym.make("SurrNAS-DARTS-v1", render_mode="ansi")
    env.reset(seed=0)
    for action in space.from_string(DARTS_V2):
        _, reward, terminated, _, info = env.step(int(action))
    print(env.render())

    # 4. Random search against regularized evolution, 3 seeds of 12 simulated hours each.
    for agent in ("rs", "re"):
        run(RunSettings("SurrNAS-DARTS-v1", agent, budget_seconds=12 * 3600), seeds=[0, 1, 2], out=out)

    # 5. The anytime plot and the final table.
    table = plot_runs([out], out / "anytime.png", title="tutorial: RS vs RE, 12 simulated hours")
    print(format_table(table))
    print(f"plot: {out / 'anytime.png'}")
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tutorial_out")
    main(Path(parser.parse_args().out))
