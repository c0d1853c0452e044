"""Speed of the common paths with the other cores idle and with them kept busy. Prints medians; asserts nothing.

    python scripts/speed_under_load.py                     # both conditions
    python scripts/speed_under_load.py --load busy         # only with a burner on every other core
    python scripts/speed_under_load.py --episodes 10000    # long CitySeg runs (the default)

Each scenario runs in a fresh process with default settings (no environment variables), as a user's script would,
so thread pools are what nas-envs sets up itself. "busy" starts one CPU-bound burner process per other core for
the duration of the scenario. Scenarios: cold ``import nas_envs; gym.make`` with bytecode and without it; batched
``evaluate`` of 100 DARTS (XGB) and CitySeg architectures; one GIN evaluation; ``CitySeg-MOP15-v0`` random
episodes per second over ``--episodes`` episodes, and the CitySeg vector env (64 copies) against the single env.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

BATCH = """
    import time, nas_envs
    bench = nas_envs.make_benchmark("NAME").load(); archs = bench.space.sample(100, seed=0)
    times = []
    for _ in range(60):
        t = time.perf_counter(); bench.evaluate(archs, seed=0); times.append(time.perf_counter() - t)
    result = 1e3 * sorted(times)[len(times) // 2]
"""
SCENARIOS = {
    "evaluate 100 DARTS architectures, XGB (ms)": BATCH.replace("NAME", "darts"),
    "evaluate 100 CitySeg architectures, MOP15 (ms)": BATCH.replace("NAME", "cityseg-mop15"),
    "one GIN evaluation, DARTS (ms)": """
        import time, nas_envs
        bench = nas_envs.make_benchmark("darts", surrogate="gin").load(); archs = bench.space.sample(60, seed=0)
        times = []
        for arch in archs:
            t = time.perf_counter(); bench.evaluate(arch[None, :], seed=0); times.append(time.perf_counter() - t)
        result = 1e3 * sorted(times)[len(times) // 2]
    """,
    "CitySeg-MOP15-v0 episodes/s over EPISODES episodes": """
        import time, numpy as np, gymnasium as gym, nas_envs
        env = gym.make("CitySeg-MOP15-v0"); _, info = env.reset(seed=0); rng = np.random.default_rng(0)
        t = time.perf_counter()
        for _ in range(EPISODES):
            done = False
            while not done:
                _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
                done = terminated or truncated
            _, info = env.reset()
        result = EPISODES / (time.perf_counter() - t)
    """,
    "CitySeg-MOP15 vector env, 64 copies, episodes/s": """
        import time, numpy as np, gymnasium as gym, nas_envs
        envs = gym.make_vec("CitySeg-MOP15-v0", num_envs=64, vectorization_mode="vector_entry_point")
        envs.reset(seed=0); rng = np.random.default_rng(0); finished = 0
        t = time.perf_counter()
        while finished < 5000:
            masks = envs.unwrapped.action_masks()
            counts = masks.sum(axis=1)
            picks = np.minimum((rng.random(64) * counts).astype(np.int64), np.maximum(counts - 1, 0))
            actions = np.argmax(np.cumsum(masks, axis=1) > picks[:, None], axis=1)
            _, _, terminated, truncated, _ = envs.step(actions)
            finished += int((terminated | truncated).sum())
        result = finished / (time.perf_counter() - t)
    """,
}

COLD = "import time; t = time.perf_counter(); import gymnasium as gym, nas_envs; gym.make('SurrNAS-DARTS-v1'); " \
       "print(time.perf_counter() - t)"


def burn() -> None:
    while True:
        pass


def run_scenario(code: str, episodes: int) -> float:
    program = textwrap.dedent(code).replace("EPISODES", str(episodes)) + "\nprint(result)\n"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def cold_import(bytecode: bool, repeats: int = 5) -> float:
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as empty_cache:
            env = dict(os.environ)
            if not bytecode:  # compile every module from source, as in a container with PYTHONDONTWRITEBYTECODE
                env.update(PYTHONPYCACHEPREFIX=empty_cache, PYTHONDONTWRITEBYTECODE="1")
            done = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, env=env, check=True)
            runs.append(float(done.stdout))
    return statistics.median(runs)


def measure(load: str, episodes: int, repeats: int) -> dict[str, float]:
    burners = []
    if load == "busy":
        burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(max(1, os.cpu_count() - 1))]
        for burner in burners:
            burner.start()
    try:
        results = {"cold import + make, with bytecode (s)": cold_import(True),
                   "cold import + make, without bytecode (s)": cold_import(False)}
        for name, code in SCENARIOS.items():
            label = name.replace("EPISODES", f"{episodes:,}")
            results[label] = statistics.median(run_scenario(code, episodes) for _ in range(repeats))
        return results
    finally:
        for burner in burners:
            burner.terminate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", choices=["both", "idle", "busy"], default="both")
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each scenario (the median is printed)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    loads = ["idle", "busy"] if args.load == "both" else [args.load]
    table = {load: measure(load, args.episodes, args.repeats) for load in loads}
    if args.json:
        print(json.dumps(table, indent=2))
        return
    print(f"{'scenario':<58}" + "".join(f"{load:>12}" for load in loads))
    for name in table[loads[0]]:
        print(f"{name:<58}" + "".join(f"{table[load][name]:>12.3g}" for load in loads))
    print(f"({os.cpu_count()} cores; busy = one burner process on each of the other cores)")


if __name__ == "__main__":
    main()
