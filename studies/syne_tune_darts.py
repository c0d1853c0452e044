"""syne-tune's ASHA and asynchronous Hyperband with 4 simulated workers on SurrNAS-DARTS-MF-v0, beside this suite's
successive halving and Hyperband agents (one worker) on the same simulated wall-clock budget, and syne-tune's ASHA
with one worker, which spends the same compute as ours.

    python studies/syne_tune_darts.py [--budget 24h] [--seeds 5] [--plot syne_tune_darts.png]

Prints, per method, the mean (and standard error over seeds) of the incumbent's validation accuracy (the best
fully trained architecture so far) at a few points of the budget, and the number of architectures fully trained;
with ``--plot``, the anytime curves. syne-tune's runs replay :func:`nas_envs.interop.syne_tune.blackbox` in its
simulator backend; ours are ``nas-envs run`` trajectories. Needs syne-tune and matplotlib.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import random
import tempfile
from pathlib import Path

import numpy as np

ENV_ID = "SurrNAS-DARTS-MF-v0"
WORKERS = 4
CHECKPOINTS = (0.25, 0.5, 1.0)  # fractions of the budget at which the table reads the incumbent


def syne_tune_incumbents(method: str, budget: float, seed: int, workers: int = WORKERS
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(simulated seconds, incumbent validation accuracy) at each fully trained architecture of one run."""
    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.optimizer.baselines import ASHA

    from nas_envs.interop.syne_tune import ELAPSED_TIME, EPOCH, blackbox

    random.seed(seed)  # syne-tune also draws from the global generators
    np.random.seed(seed)
    box = blackbox(ENV_ID, seed=seed)
    epochs = int(box.fidelity_values[-1])
    # Hyperband: one bracket per rung level; ASHA: the most aggressive bracket only
    brackets = {"asha": 1, "hyperband": 3}[method]
    scheduler = ASHA(box.configuration_space, metric="val_accuracy", do_minimize=False, time_attr=EPOCH,
                     max_t=epochs, grace_period=1, reduction_factor=2, brackets=brackets, random_seed=seed)
    tuner = Tuner(UserBlackboxBackend(blackbox=box, elapsed_time_attr=ELAPSED_TIME, seed=seed), scheduler,
                  StoppingCriterion(max_wallclock_time=budget), n_workers=workers, sleep_time=0,
                  callbacks=[SimulatorCallback()], save_tuner=False, print_update_interval=10**9,
                  tuner_name=f"nas-envs-{method}-{seed}")
    with contextlib.redirect_stdout(io.StringIO()):  # syne-tune prints its trial tables; the script prints its own
        tuner.run()
    results = _results(tuner)
    full = results[results[EPOCH] == epochs].sort_values("st_tuner_time")
    return full["st_tuner_time"].to_numpy(), np.maximum.accumulate(full["val_accuracy"].to_numpy())


def _results(tuner):
    from syne_tune.experiments import load_experiment

    return load_experiment(tuner.name).results


def our_incumbents(agent: str, budget: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(simulated seconds, incumbent validation accuracy) at each fully trained architecture of one run of ours."""
    from nas_envs.agents.runner import RunSettings, run_seed

    rows = run_seed(RunSettings(ENV_ID, agent, budget), seed)
    return np.array([r["sim_time"] for r in rows]), np.array([r["incumbent_score"] for r in rows])


def incumbent_at(times: np.ndarray, incumbents: np.ndarray, moment: float) -> float:
    before = np.flatnonzero(times <= moment)
    return float(incumbents[before[-1]]) if len(before) else float("nan")


def main() -> None:
    from nas_envs.agents.runner import parse_duration

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="24h", help="simulated wall-clock budget (default 24h)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--plot", default=None, help="PNG of the anytime curves")
    args = parser.parse_args()
    budget = parse_duration(args.budget)
    logging.getLogger("syne_tune").setLevel(logging.WARNING)
    methods = {f"syne-tune ASHA, {WORKERS} workers": lambda s: syne_tune_incumbents("asha", budget, s),
               f"syne-tune Hyperband, {WORKERS} workers": lambda s: syne_tune_incumbents("hyperband", budget, s),
               "syne-tune ASHA, 1 worker": lambda s: syne_tune_incumbents("asha", budget, s, workers=1),
               "nas-envs sh, 1 worker": lambda s: our_incumbents("sh", budget, s),
               "nas-envs hyperband, 1 worker": lambda s: our_incumbents("hyperband", budget, s)}
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["SYNETUNE_FOLDER"] = folder  # syne-tune's own run files are not kept
        for name, method in methods.items():
            runs[name] = [method(seed) for seed in range(args.seeds)]
    header = " | ".join(f"at {fraction:.0%}" for fraction in CHECKPOINTS)
    print(f"{ENV_ID}, budget {args.budget} of simulated wall-clock, {args.seeds} seeds: incumbent validation "
          f"accuracy (%), mean +- standard error\n{'method':<34} | {header} | fully trained")
    for name, seeds in runs.items():
        cells = []
        for fraction in CHECKPOINTS:
            values = np.array([incumbent_at(t, v, fraction * budget) for t, v in seeds])
            cells.append(f"{100 * values.mean():.2f} +- {100 * values.std(ddof=1) / np.sqrt(len(values)):.2f}")
        trained = np.mean([len(t) for t, _ in seeds])
        print(f"{name:<34} | {' | '.join(cells)} | {trained:.0f}")
    if args.plot:
        plot(runs, budget, Path(args.plot))


def plot(runs: dict, budget: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0, budget, 200)
    figure, ax = plt.subplots(figsize=(6, 4))
    for name, seeds in runs.items():
        curves = np.array([[incumbent_at(t, v, moment) for moment in grid] for t, v in seeds])
        ax.plot(grid / 3600, 100 * (1 - np.nanmean(curves, axis=0)), label=name)
    ax.set_xlabel("simulated wall-clock (hours)")
    ax.set_ylabel("incumbent validation error (%)")
    ax.set_title(ENV_ID, fontsize=10)
    ax.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
