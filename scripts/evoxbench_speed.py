"""EvoXBench's CitySeg error predictor against nas-envs' CitySeg benchmark, side by side on one machine.

    python -m venv --system-site-packages /tmp/evox && /tmp/evox/bin/python -m pip install --no-deps \\
        evoxbench==1.0.5 django
    /tmp/evox/bin/python scripts/evoxbench_speed.py [--busy]

EvoXBench's data files are not needed: its rank-net class (``MosegNASRankNet``, an MLP of 73 inputs, three hidden
ReLU layers of 400 and one output, evaluated in pure Python) is given synthetic weights of that shape, which cost
the same as the trained ones. Its module file is loaded directly, because the package configures a database on
import. Prints the median milliseconds per 100 architectures of both, and their ratio; ``--busy`` keeps the other
cores busy meanwhile. Nothing of EvoXBench is shipped with nas-envs.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import statistics
import time
from pathlib import Path

import numpy as np

import nas_envs


def evoxbench_ranknet():
    try:
        import evoxbench.modules  # noqa: F401 - the base classes its module file imports
    except ImportError:
        raise SystemExit("needs EvoXBench: see this script's docstring for the two install commands") from None
    path = Path(importlib.util.find_spec("evoxbench").origin).parent / "benchmarks" / "mosegnas.py"
    spec = importlib.util.spec_from_file_location("evoxbench_mosegnas", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(0)
    shapes = [(400, 73), (400, 400), (400, 400), (1, 400)]  # W[out][in], as its linear() reads them
    pretrained = {}
    for layer, (outputs, inputs) in enumerate(shapes, 1):
        pretrained[f"W{layer}"] = (0.05 * rng.standard_normal((outputs, inputs))).tolist()
        pretrained[f"b{layer}"] = [0.0] * outputs
    return module.MosegNASRankNet(pretrained=pretrained)


def burn() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", action="store_true", help="a burner process on each of the other cores")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(os.cpu_count() - 1)] \
        if args.busy else []
    for burner in burners:
        burner.start()
    try:
        bench = nas_envs.make_benchmark("cityseg-mop15").load()
        archs = bench.space.sample(100, seed=0)
        theirs = evoxbench_ranknet()
        one_hot = bench.space.one_hot(archs).tolist()  # EvoXBench's 73-long encoding of the same 24 genes
        ours_ms, theirs_ms = [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            bench.evaluate(archs, seed=0)
            ours_ms.append(1e3 * (time.perf_counter() - started))
            started = time.perf_counter()
            for row in one_hot:
                theirs.forward(row)
            theirs_ms.append(1e3 * (time.perf_counter() - started))
    finally:
        for burner in burners:
            burner.terminate()
    ours, evox = statistics.median(ours_ms), statistics.median(theirs_ms)
    print(f"100 CitySeg architectures, median of {args.repeats}{' (other cores busy)' if burners else ''}:")
    print(f"  nas-envs, all seven objectives, 10-member rank-net: {ours:.2f} ms")
    print(f"  EvoXBench's rank-net alone (one member, error only):   {evox:.0f} ms")
    print(f"  ratio: {evox / ours:.0f}x")


if __name__ == "__main__":
    main()
