"""Ground-truth protocols: everything that determines a training besides the architecture and the seed.

Protocol names are stored with every record and never reused for other settings. This module needs numpy only,
so that the commands reading the data can name what they need before importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nas_envs.catalogue import FamilyField
from nas_envs.groundtruth.fashion_mnist import Splits, load_splits


@dataclass(frozen=True)
class TrainingProtocol:
    """Everything that determines a training besides the architecture and the seed.

    ``name`` is stored with every record; changing any other field requires a new name, because records
    of different protocols are not comparable.
    """

    name: str
    space: str
    network: dict = field(default_factory=dict)
    resolution: int = 14
    n_train: int = 10_000
    n_val: int = 10_000
    epochs: int = 4
    batch_size: int = 128
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 3e-4
    label_smoothing: float = 0.0
    hflip: bool = True
    eval_batch_size: int = 1000
    # Images of the reserve (the training images neither split uses) each training is also evaluated on; ``None``:
    # all of them. It never changes a training, only what is recorded after it.
    n_reserve: int | None = None
    # "" is 10-class Fashion-MNIST at ``resolution``; otherwise a harder task of nas_envs.groundtruth.tasks, whose
    # images have their own size (``resolution`` is then unused).
    task: str = ""

    @property
    def num_classes(self) -> int:
        from nas_envs.groundtruth.tasks import TASK_CLASSES

        return TASK_CLASSES[self.task] if self.task else 10

    def splits(self) -> Splits:
        if self.task:
            from nas_envs.groundtruth.tasks import load_task_splits

            return load_task_splits(self.task, self.n_train, self.n_val)
        return load_splits(self.n_train, self.n_val, self.resolution, self.n_reserve)


PROTOCOLS: dict[str, TrainingProtocol] = {
    p.name: p
    for p in (
        TrainingProtocol(
            name="darts-fmnist14-c8l8-e4-v1",
            space="darts",
            network={"channels": 8, "layers": 8, "stem_multiplier": 1},
        ),
        # A seconds-long protocol for tests of the collection machinery; its numbers mean nothing.
        TrainingProtocol(
            name="darts-smoke",
            space="darts",
            network={"channels": 4, "layers": 3, "stem_multiplier": 1},
            n_train=256,
            n_val=256,
            epochs=1,
            batch_size=64,
            eval_batch_size=256,
            n_reserve=256,
        ),
        TrainingProtocol(
            name="fbnet-smoke",
            space="fbnet",
            network={"width_multiplier": 0.25},
            n_train=256,
            n_val=256,
            epochs=1,
            batch_size=64,
            eval_batch_size=256,
            n_reserve=256,
            label_smoothing=0.1,
        ),
        TrainingProtocol(
            name="fbnet-fmnist14-half-e4-v1",
            space="fbnet",
            network={"width_multiplier": 0.5},
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
        # FBNet's protocol from v1 on: the half-width one at full width and nothing else changed, which cuts the
        # seed noise by ~40 % at the same spread across architectures (the decision table in docs/data-card.md).
        TrainingProtocol(
            name="fbnet-fmnist14-full-e4-v1",
            space="fbnet",
            network={"width_multiplier": 1.0},
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
        # Noise pilot: the 4-epoch FBNet protocol measured a noise ratio below 1 (see docs/data-card.md).
        TrainingProtocol(
            name="fbnet-fmnist14-half-e8-v1",
            space="fbnet",
            network={"width_multiplier": 0.5},
            epochs=8,
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
        # Seconds-long CitySeg supernet training for tests; its numbers mean nothing.
        TrainingProtocol(name="cityseg-smoke", space="cityseg", resolution=64, n_train=320, n_val=16, epochs=2,
                         batch_size=32, lr=0.1),
        # Noise pilot: the native 28 x 28 resolution, so that kernel sizes and strides matter more (about 4x the cost).
        TrainingProtocol(
            name="fbnet-fmnist28-half-e4-v1",
            space="fbnet",
            network={"width_multiplier": 0.5},
            resolution=28,
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
        # The CitySeg supernet: 64 x 64 scenes of Fashion-MNIST items (nas_envs/groundtruth/scenes.py).
        TrainingProtocol(
            name="cityseg-scenes64-supernet-v1",
            space="cityseg",
            resolution=64,
            n_train=16_000,  # training scenes
            n_val=500,  # validation scenes
            epochs=5,
            batch_size=32,
        ),
        # Noise pilot: a quarter of the FBNet-CIFAR channels, so that capacity (expansion, kernel) binds harder.
        TrainingProtocol(
            name="fbnet-fmnist14-quarter-e4-v1",
            space="fbnet",
            network={"width_multiplier": 0.25},
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
        # Harder-task pilots for FBNet (and one DARTS reading): 100 ordered pairs of classes, and an item among
        # fragments on a 24 x 24 canvas (nas_envs/groundtruth/tasks.py). Sized to about 150 CPU-seconds a training.
        TrainingProtocol(
            name="fbnet-pairs100-half-e4-v1",
            space="fbnet",
            network={"width_multiplier": 0.5},
            task="pairs100",
            n_train=16_000,
            epochs=4,
            weight_decay=5e-4,
            label_smoothing=0.1,
            hflip=False,
        ),
        TrainingProtocol(
            name="fbnet-clutter24-half-e4-v1",
            space="fbnet",
            network={"width_multiplier": 0.5},
            task="clutter24",
            n_train=9_000,
            epochs=4,
            weight_decay=5e-4,
            label_smoothing=0.1,
        ),
    )
}
#: the protocol of each family's newest bundle (read from the catalogue)
DEFAULT_PROTOCOL = FamilyField("protocol")
