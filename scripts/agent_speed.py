"""Wall-clock cost of one search run on a simulated budget. Prints numbers; asserts nothing.

    python scripts/agent_speed.py [--agent re] [--budget 24h] [--env SurrNAS-DARTS-v1]
"""

from __future__ import annotations

import argparse
import time

from nas_envs.agents.runner import RunSettings, parse_duration, run_seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="SurrNAS-DARTS-v1")
    parser.add_argument("--agent", default="re")
    parser.add_argument("--budget", default="24h")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    settings = RunSettings(args.env, args.agent, parse_duration(args.budget))
    run_seed(settings, seed=0)  # warm-up: loads the assets once, as a long-lived process would
    for seed in range(1, args.repeats + 1):
        start = time.perf_counter()
        rows = run_seed(settings, seed=seed)
        seconds = time.perf_counter() - start
        print(f"{args.agent} on {args.env}, {args.budget} simulated, seed {seed}: {len(rows)} evaluations in "
              f"{seconds:.2f} s wall-clock")


if __name__ == "__main__":
    main()
