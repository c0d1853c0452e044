"""Ground-truth protocols: everything that determines a training besides the architecture and the seed.

Protocol names are stored with every record and never reused for other settings. This module needs numpy only,
so that the commands reading the data can name what they need before importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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


# DARTS's bundled protocol
_DARTS = TrainingProtocol(name="darts-fmnist14-c8l8-e4-v1", space="darts",
                          network={"channels": 8, "layers": 8, "stem_multiplier": 1})
# FBNet's bundled protocol; its pilots and successors change one or two settings of it
_FBNET_HALF = TrainingProtocol(name="fbnet-fmnist14-half-e4-v1", space="fbnet", network={"width_multiplier": 0.5},
                               weight_decay=5e-4, label_smoothing=0.1)


def _fbnet_variant(name: str, width: float = 0.5, **changes: object) -> TrainingProtocol:
    return replace(_FBNET_HALF, name=name, network={"width_multiplier": width}, **changes)


def _smoke(space: str, network: dict, **changes: object) -> TrainingProtocol:
    return TrainingProtocol(name=f"{space}-smoke", space=space, network=network, n_train=256, n_val=256, epochs=1,
                            batch_size=64, eval_batch_size=256, n_reserve=256, **changes)


PROTOCOLS: dict[str, TrainingProtocol] = {
    p.name: p
    for p in (
        _DARTS,
        # Seconds-long protocols for tests of the collection machinery; their numbers mean nothing.
        _smoke("darts", {"channels": 4, "layers": 3, "stem_multiplier": 1}),
        _smoke("fbnet", {"width_multiplier": 0.25}, label_smoothing=0.1),
        _FBNET_HALF,
        # FBNet's protocol from v1 on: the half-width one at full width and nothing else changed, which cuts the
        # seed noise by ~40 % at the same spread across architectures (the decision table in docs/data-card.md).
        _fbnet_variant("fbnet-fmnist14-full-e4-v1", width=1.0),
        # Noise pilot: the 4-epoch FBNet protocol measured a noise ratio below 1 (see docs/data-card.md).
        _fbnet_variant("fbnet-fmnist14-half-e8-v1", epochs=8),
        # A short CitySeg supernet training for tests; its numbers mean nothing (on fewer scenes it learns nothing
        # and every sub-network scores alike).
        TrainingProtocol(name="cityseg-smoke", space="cityseg", resolution=64, n_train=160, n_val=16, epochs=2,
                         batch_size=32, lr=0.1),
        # Noise pilot: the native 28 x 28 resolution, so that kernel sizes and strides matter more (about 4x the cost).
        _fbnet_variant("fbnet-fmnist28-half-e4-v1", resolution=28),
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
        _fbnet_variant("fbnet-fmnist14-quarter-e4-v1", width=0.25),
        # Harder-task pilots for FBNet (and one DARTS reading): 100 ordered pairs of classes, and an item among
        # fragments on a 24 x 24 canvas (nas_envs/groundtruth/tasks.py). Sized to about 150 CPU-seconds a training.
        _fbnet_variant("fbnet-pairs100-half-e4-v1", task="pairs100", n_train=16_000, hflip=False),
        _fbnet_variant("fbnet-clutter24-half-e4-v1", task="clutter24", n_train=9_000),
        # Proxy validity: the bundles' protocols trained 4x longer (same networks, same data), for the noise subset's
        # first architectures; 'nas-envs data-card SPACE --compare-protocol P' ranks them against the 4-epoch seeds.
        replace(_DARTS, name="darts-fmnist14-c8l8-e16-v1", epochs=16),
        _fbnet_variant("fbnet-fmnist14-full-e16-v1", width=1.0, epochs=16),
    )
}
#: the protocol of each family's newest bundle (read from the catalogue)
DEFAULT_PROTOCOL = FamilyField("protocol")
