"""Any environment id as a syne-tune blackbox, to replay with syne-tune's simulator backend on a simulated clock.

syne-tune simulates parallel workers over a blackbox whose every result carries the time it took: exactly this
suite's simulated budget. :func:`blackbox` gives an id's benchmark as one::

    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.optimizer.baselines import ASHA
    from nas_envs.interop.syne_tune import ELAPSED_TIME, EPOCH, blackbox

    bb = blackbox("SurrNAS-DARTS-MF-v0", seed=0)
    backend = UserBlackboxBackend(blackbox=bb, elapsed_time_attr=ELAPSED_TIME)
    scheduler = ASHA(bb.configuration_space, metric="val_accuracy", do_minimize=False, time_attr=EPOCH,
                     max_t=bb.fidelity_values[-1], random_seed=0)
    Tuner(backend, scheduler, StoppingCriterion(max_wallclock_time=24 * 3600), n_workers=4, sleep_time=0,
          callbacks=[SimulatorCallback()]).run()

- Configuration space: the space's configuration view (for DARTS NAS-Bench-301's names), each choice a syne-tune
  ``choice``; syne-tune's spaces have no conditions, so the values of choices that the others make inactive are
  dropped before the architecture is read.
- Fidelity ``epoch``: 1 to the trainings' epochs on ids with a learning-curve model (the ``-MF-`` ids); elsewhere a
  single fidelity, 1, the whole evaluation (single-fidelity schedulers and searchers run on every id).
- Results: the benchmark's objectives at each epoch (validation accuracy from the learning curve; the others are
  the final training's) and ``elapsed_time``, the simulated seconds of training up to that epoch, which the
  multi-fidelity environments spend (the runtime model's training time, epochs in proportion).
- Noise: each architecture's results are one draw, seeded by the backend's seed (``UserBlackboxBackend(seed=...)``;
  without one, the blackbox's ``seed``) and the architecture, so an architecture evaluated twice in a run answers
  the same (as a tabular benchmark's seed would). syne-tune's schedulers also draw from Python's and numpy's global
  generators: seed those too (``random.seed``, ``numpy.random.seed``) for a run that repeats.

Needs syne-tune (``pip install 'nas-envs[synetune]'``); ``python studies/syne_tune_darts.py`` compares its ASHA and
Hyperband with this suite's agents.
"""

from __future__ import annotations

import numpy as np

from nas_envs.catalogue import release_of
from nas_envs.extras import require
from nas_envs.spaces.configspace import active_values

EPOCH = "epoch"
ELAPSED_TIME = "elapsed_time"


def blackbox(env_id: str, seed: int = 0, noise: bool = True):
    """The benchmark of a registered id as a syne-tune ``Blackbox`` (see the module docstring)."""
    require("syne_tune", "synetune", "the syne-tune blackbox")
    from syne_tune.blackbox_repository.blackbox import Blackbox
    from syne_tune.config_space import choice, randint

    import nas_envs

    _, release = release_of(env_id)
    benchmark = nas_envs.make_benchmark(release.benchmark, bundle=release.bundle)
    epochs = benchmark.epochs
    space = benchmark.space

    class NASBlackbox(Blackbox):
        def __init__(self) -> None:
            super().__init__(
                configuration_space={hp.name: choice(list(hp.choices)) for hp in space.hyperparameters()},
                fidelity_space={EPOCH: randint(1, epochs) if epochs else randint(1, 1)},
                objectives_names=[*benchmark.objectives, ELAPSED_TIME],
            )
            self.benchmark = benchmark
            self.seed = seed

        @property
        def fidelity_values(self) -> np.ndarray:
            return np.arange(1, epochs + 1) if epochs else np.array([1])

        def _objective_function(self, configuration: dict, fidelity: dict | None = None, seed: int | None = None
                                ) -> dict | np.ndarray:
            genes = space.genes_from_values(active_values(space, configuration))
            rng = np.random.default_rng([self.seed if seed is None else seed, *genes.tolist()])
            table = self.table(genes, rng)
            if fidelity is None:
                return table
            return dict(zip(self.objectives_names, table[int(fidelity[EPOCH]) - 1]))

        def table(self, genes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
            """``(fidelities, objectives)``: every objective after each epoch."""
            if not epochs:
                values = benchmark.evaluate_genes(genes[None], noise, rng)
                row = [float(values[name][0]) for name in benchmark.objectives]
                return np.array([row + [float(benchmark.simulated_seconds(values)[0])]])
            values, curve = benchmark.evaluate_curves(genes[None], noise, rng)
            seconds = float(benchmark.simulated_seconds(values)[0])
            rows = []
            for epoch in range(1, epochs + 1):
                row = {name: float(values[name][0]) for name in benchmark.objectives}
                row["val_accuracy"] = float(curve[0, epoch - 1])
                rows.append([row[name] for name in benchmark.objectives] + [seconds * epoch / epochs])
            return np.array(rows)

    return NASBlackbox()
