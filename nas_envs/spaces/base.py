"""What every search space offers: genes, sequential decisions with masks, validity, sampling, string I/O.

A search space is a leaf module (numpy only). Architectures are integer gene vectors of a fixed length; the
order of the genes is the order in which an agent decides them in the sequential environments, so a gene
vector *is* the list of actions that builds it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


class InvalidArchitectureError(ValueError):
    """An architecture (genes or string) that is not a member of the search space."""


@dataclass(frozen=True)
class Hyperparameter:
    """One named choice of a space's configuration view (:mod:`nas_envs.spaces.configspace`): its values and, for a
    choice that exists only under some values of another, that ``parent`` and those ``parent_values``."""

    name: str
    choices: tuple
    parent: str | None = None
    parent_values: tuple = ()


class SearchSpace(ABC):
    """Base class of the search spaces.

    Subclasses set ``name``, ``num_decisions`` (the gene count) and ``num_actions`` (the size of the shared
    ``Discrete`` action space, the largest number of choices any decision has), and implement the methods below.
    """

    name: str
    num_decisions: int
    num_actions: int

    # --- sequential decisions -------------------------------------------------------------------------------
    @abstractmethod
    def action_mask(self, prefix: np.ndarray) -> np.ndarray:
        """Legal choices (int8 array of length ``num_actions``) for decision ``len(prefix)`` after ``prefix``."""

    def action_masks(self, genes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """:meth:`action_mask` for a batch: row ``i`` after the prefix ``genes[i, :steps[i]]``; ``(N, A)`` int8."""
        return np.stack([self.action_mask(g[:s]) for g, s in zip(genes, steps)]) if len(genes) else np.zeros(
            (0, self.num_actions), dtype=np.int8
        )

    def gene_upper_bounds(self) -> np.ndarray:
        """The largest value each gene may take anywhere in the space (box bounds for integer optimisers; which
        values are legal may still depend on earlier genes, see :meth:`action_mask`)."""
        return np.full(self.num_decisions, self.num_actions - 1, dtype=np.int64)

    # --- validity and canonical form ------------------------------------------------------------------------
    @abstractmethod
    def validate(self, genes: np.ndarray) -> None:
        """Raise :class:`InvalidArchitectureError` naming what is wrong and what is allowed."""

    def invalid_rows(self, archs: np.ndarray) -> np.ndarray:
        """Boolean mask of the invalid rows of an integer ``(N, D)`` array (subclasses vectorise this)."""
        out = np.zeros(len(archs), dtype=bool)
        for i, genes in enumerate(archs):
            try:
                self.validate(genes)
            except InvalidArchitectureError:
                out[i] = True
        return out

    def canonicalize(self, genes: np.ndarray) -> np.ndarray:
        """The canonical genes of the same architecture(s), one vector or a batch (identity unless the space has
        symmetries)."""
        return np.array(genes, dtype=np.int64, copy=True)

    # --- the configuration view (named hyperparameters, as HPO tools read them) -------------------------------
    def hyperparameters(self) -> list[Hyperparameter]:
        """The named choices of the configuration view, parents before the choices they condition."""
        raise NotImplementedError(f"the {self.name} space has no configuration view")

    def values_from_genes(self, genes: np.ndarray) -> dict[str, object]:
        """The configuration of an architecture: the value of every active hyperparameter, by name."""
        raise NotImplementedError(f"the {self.name} space has no configuration view")

    def genes_from_values(self, values: Mapping[str, object]) -> np.ndarray:
        """The canonical genes of a configuration (every active hyperparameter set, nothing else); raise
        :class:`InvalidArchitectureError` naming what is missing, unknown or inconsistent."""
        raise NotImplementedError(f"the {self.name} space has no configuration view")

    def _check_names(self, values: Mapping[str, object], ignored: Iterable[str] = ()) -> dict[str, object]:
        """``values`` without the ``ignored`` names, after refusing a mapping or a name this view does not know."""
        if not isinstance(values, Mapping):
            raise InvalidArchitectureError(f"{self.name}: a configuration is a mapping of hyperparameter names to "
                                           f"values, got {type(values).__name__}")
        known = {h.name for h in self.hyperparameters()}
        skip = set(ignored)
        unknown = sorted(str(k) for k in values if k not in known and k not in skip)
        if unknown:
            raise InvalidArchitectureError(f"{self.name}: unknown hyperparameter(s) {unknown[:3]}; this space's are "
                                           f"{sorted(known)[:3]} ... ({len(known)} in all)")
        return {k: v for k, v in values.items() if k in known}

    # --- sampling and neighbourhoods ------------------------------------------------------------------------
    def sample(self, n: int | None = None, seed: int | np.random.Generator | None = None) -> np.ndarray:
        """Uniformly random canonical architectures: shape ``(num_decisions,)`` if ``n`` is None else ``(n, D)``."""
        if n is not None and (isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0):
            raise ValueError(f"n must be a non-negative integer (the number of architectures) or None, got {n!r}")
        rng = np.random.default_rng(seed)
        if n is None:
            return self._sample_one(rng)
        out = np.empty((n, self.num_decisions), dtype=np.int64)
        for i in range(n):
            out[i] = self._sample_one(rng)
        return out

    def _sample_one(self, rng: np.random.Generator) -> np.ndarray:
        # Default: follow the masks. Subclasses override where mask-following is not uniform over architectures.
        genes = np.empty(self.num_decisions, dtype=np.int64)
        for step in range(self.num_decisions):
            legal = np.flatnonzero(self.action_mask(genes[:step]))
            genes[step] = rng.choice(legal)
        return genes

    @abstractmethod
    def neighbours(self, genes: np.ndarray) -> list[np.ndarray]:
        """All canonical architectures that differ from ``genes`` in one elementary change."""

    def mutate(self, genes: np.ndarray, seed: int | np.random.Generator | None = None) -> np.ndarray:
        """One random elementary change (a uniformly chosen neighbour)."""
        rng = np.random.default_rng(seed)
        options = self.neighbours(self.as_genes(genes))
        return options[int(rng.integers(len(options)))]

    # --- strings --------------------------------------------------------------------------------------------
    @abstractmethod
    def to_string(self, genes: np.ndarray) -> str:
        """The canonical string of an architecture."""

    @abstractmethod
    def from_string(self, text: str) -> np.ndarray:
        """Parse a string into canonical genes; raise :class:`InvalidArchitectureError` on bad input."""

    # --- encodings ------------------------------------------------------------------------------------------
    @abstractmethod
    def one_hot(self, archs: np.ndarray) -> np.ndarray:
        """Float32 one-hot encoding ``(N, F)`` of the choices."""

    #: the versions of :meth:`features`, oldest first: a bundle's models record the one they were fitted on, so
    #: that a richer encoding never changes what a released bundle predicts; a fit reads the newest
    feature_versions: tuple[int, ...] = (1,)

    def feature_version(self, version: int | None = None) -> int:
        """``version`` of :meth:`features` checked against :attr:`feature_versions`; the newest when None."""
        if version is None:
            return self.feature_versions[-1]
        if version not in self.feature_versions:
            raise ValueError(f"{self.name}: no features version {version!r}; this version of nas-envs has "
                             f"{list(self.feature_versions)} (a bundle fitted by a newer one needs that one)")
        return version

    def features(self, archs: np.ndarray, cost_features: np.ndarray | None = None, version: int | None = None
                 ) -> np.ndarray:
        """Float32 feature matrix ``(N, F)`` for tabular surrogates (default: the one-hot encoding).
        ``cost_features``: those of ``archs`` where the caller has them, so that features built on them reuse
        them; ``version``: one of :attr:`feature_versions` (default the newest)."""
        self.feature_version(version)
        return self.one_hot(archs)

    @abstractmethod
    def cost_features(self, archs: np.ndarray) -> np.ndarray:
        """Counts ``(N, K)`` on which parameter count and FLOPs are exactly linear (see the cost tables)."""

    def parse_printed(self, text: str) -> list[int] | None:
        """Raw genes of a string exactly as :meth:`to_string` prints it, or None for any other form (which
        :meth:`from_string` then parses and checks in full). A fast path for batches of strings: one regular
        expression, no validation (the batch is validated at once)."""
        return None

    # --- conversions shared by all spaces -------------------------------------------------------------------
    def as_genes(self, arch: "np.ndarray | Sequence[int] | str") -> np.ndarray:
        """Validated canonical genes of one architecture given as genes or as a string."""
        _refuse_bytes(self.name, arch)
        if isinstance(arch, str):
            return self.from_string(arch)
        genes = np.asarray(arch)
        if genes.shape != (self.num_decisions,):
            raise InvalidArchitectureError(
                f"{self.name}: expected {self.num_decisions} genes, got an array of shape {genes.shape}"
            )
        genes = self.integer_genes(genes)
        self.validate(genes)
        return self.canonicalize(genes)

    def integer_genes(self, genes: np.ndarray) -> np.ndarray:
        """int64 genes (any shape) from integers or integral floats. Anything else (bools, strings, other objects,
        fractions, non-finite or huge values) is refused with :class:`InvalidArchitectureError`; ranges are
        ``validate``'s."""
        genes = np.asarray(genes)
        if genes.dtype.kind == "O" and all(
            isinstance(g, (int, float, np.integer, np.floating)) and not isinstance(g, (bool, np.bool_))
            for g in genes.flat
        ):
            genes = np.array([float(g) if abs(g) < 2**31 else np.inf for g in genes.flat]).reshape(genes.shape)
        if genes.dtype.kind not in "iuf":
            raise InvalidArchitectureError(f"{self.name}: genes must be integers, got {str(genes.tolist())[:120]}")
        values = genes.astype(np.float64)
        if not (np.all(np.isfinite(values)) and np.all(np.abs(values) < 2**31) and np.all(np.mod(values, 1) == 0)):
            shown = str(genes.tolist())[:90]
            raise InvalidArchitectureError(f"{self.name}: genes must be integers (small ones), got {shown}")
        return genes.astype(np.int64)

    def as_batch(self, archs: "np.ndarray | Iterable[np.ndarray | Sequence[int] | str] | str") -> np.ndarray:
        """Validated canonical genes ``(N, num_decisions)`` from a 2-D array, a list of genes or strings."""
        _refuse_bytes(self.name, archs)
        if isinstance(archs, str):
            archs = [archs]
        if isinstance(archs, np.ndarray) and archs.ndim == 1 and archs.dtype.kind in "USO" and \
                all(isinstance(a, str) for a in archs):
            archs = list(archs)  # an array of architecture strings
        if isinstance(archs, (list, tuple)) and archs and all(isinstance(a, str) for a in archs):
            printed = [self.parse_printed(a) for a in archs]
            if all(genes is not None for genes in printed):
                archs = np.array(printed, dtype=np.int64)  # validated and canonicalised below, all rows at once
        if isinstance(archs, np.ndarray):
            if archs.ndim == 1:
                archs = archs[None, :]
            if archs.ndim != 2 or archs.shape[1] != self.num_decisions:
                raise InvalidArchitectureError(
                    f"{self.name}: expected an array of shape (N, {self.num_decisions}), got {archs.shape}"
                )
            if not len(archs):
                return np.empty((0, self.num_decisions), dtype=np.int64)
            if np.issubdtype(archs.dtype, np.integer):  # fast path: one vectorised check for the whole batch
                genes = archs.astype(np.int64)
                invalid = np.flatnonzero(self.invalid_rows(genes))
                if len(invalid):
                    self.validate(genes[invalid[0]])  # raises the detailed message
                return self.canonicalize(genes)
        rows = [self.as_genes(a) for a in archs]
        if not rows:
            return np.empty((0, self.num_decisions), dtype=np.int64)
        return np.stack(rows)


def _refuse_bytes(space: str, arch: object) -> None:
    """Bytes are no architecture string: say so rather than read them as a row of small integers."""
    if isinstance(arch, (bytes, bytearray)):
        raise InvalidArchitectureError(f"{space}: an architecture string must be str, got {type(arch).__name__}; "
                                       "decode it first (text.decode())")
