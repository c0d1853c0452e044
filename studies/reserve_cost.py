"""What the reserve reading costs a collection: the same job trained with and without it, in turn.

    python studies/reserve_cost.py [--protocol darts-fmnist14-c8l8-e4-v1] [--pairs 2] [--job random/noise/0]

Each pair trains the job once with the reserve reading and once without (``nas-envs collect --no-reserve``), in
this process with one torch thread, and prints the CPU seconds of each whole job (training, test and reserve
evaluations) and whether the two records agree on every measured field but the reserve's. CPU seconds, not wall
seconds: other work on the machine does not inflate them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from nas_envs.groundtruth.collect import run_job
from nas_envs.groundtruth.jobs import Job

SAME = ("val_accuracy_curve", "val_loss_curve", "train_loss_curve", "test_accuracy", "params", "flops")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", default="darts-fmnist14-c8l8-e4-v1")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--job", default="random/noise/0", help="SOURCE/SUBSET/INDEX of the job (replicate 0)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    source, subset, index = args.job.split("/")
    job = Job(args.protocol.split("-")[0], source, subset, int(index), 0)
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for pair in range(args.pairs):
        records = {}
        for reserve in (True, False):
            started = time.process_time()
            records[reserve] = run_job(args.protocol, job, reserve=reserve)
            seconds[reserve].append(time.process_time() - started)
        same = all(records[True][field] == records[False][field] for field in SAME)
        print(f"pair {pair}: with the reserve {seconds[True][-1]:.1f} CPU s, without {seconds[False][-1]:.1f} CPU s "
              f"(ratio {seconds[True][-1] / seconds[False][-1]:.3f}); val {records[True]['val_accuracy']:.4f} / "
              f"{records[False]['val_accuracy']:.4f}, test {records[True]['test_accuracy']:.4f} / "
              f"{records[False]['test_accuracy']:.4f}; every measured field alike: {same}")
    ratios = np.array(seconds[True]) / np.array(seconds[False])
    print(f"{job.key} under {args.protocol}: median CPU s a job {np.median(seconds[True]):.1f} with the reserve, "
          f"{np.median(seconds[False]):.1f} without; trainings per core-hour x{np.median(ratios):.3f} without it")


if __name__ == "__main__":
    main()
