"""Each search space as a ``ConfigSpace.ConfigurationSpace``, for the HPO tools multi-fidelity users run (SMAC3,
DEHB, HpBandSter, Optuna through ConfigSpace), with exact round trips configuration <-> genes <-> string.

The names and values are the spaces' configuration views (:meth:`~nas_envs.spaces.base.SearchSpace.hyperparameters`):
DARTS uses NAS-Bench-301's (``NetworkSelectorDatasetInfo:darts:edge_normal_0`` ...,
``NetworkSelectorDatasetInfo:darts:inputs_node_reduce_5``), so that configurations written for NAS-Bench-301, or for
YAHPO Gym's ``nb301`` scenario (which writes ``:`` as ``_COLON_``), load here. Needs the ``configspace`` extra::

    from nas_envs.spaces import get_space
    from nas_envs.spaces.configspace import configuration_space, genes_from_configuration

    space = get_space("darts")
    cs = configuration_space(space, seed=0)
    genes = genes_from_configuration(space, cs.sample_configuration())
    print(space.to_string(genes))
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from nas_envs.extras import require
from nas_envs.spaces.base import SearchSpace


def configuration_space(space: SearchSpace, seed: int | None = None):
    """The space's ``ConfigurationSpace``: one categorical hyperparameter per named choice, with an ``InCondition``
    for each choice that is active only under some values of another."""
    cs_module = require("ConfigSpace", "configspace", "the ConfigSpace view of a search space")
    cs = cs_module.ConfigurationSpace(name=f"nas-envs-{space.name}", seed=seed)
    made = {}
    for hp in space.hyperparameters():
        made[hp.name] = cs_module.CategoricalHyperparameter(hp.name, list(hp.choices))
        cs.add(made[hp.name])
        if hp.parent is not None:
            cs.add(cs_module.InCondition(made[hp.name], made[hp.parent], list(hp.parent_values)))
    return cs


def configuration_from_genes(space: SearchSpace, genes: np.ndarray, cs=None):
    """The ``Configuration`` of an architecture, in ``cs`` (default: a new :func:`configuration_space`)."""
    cs_module = require("ConfigSpace", "configspace", "the ConfigSpace view of a search space")
    cs = configuration_space(space) if cs is None else cs
    return cs_module.Configuration(cs, values=space.values_from_genes(genes))


def genes_from_configuration(space: SearchSpace, configuration: Mapping[str, object]) -> np.ndarray:
    """The canonical genes of a ``Configuration`` or of a plain mapping of names to values (NAS-Bench-301's JSON
    configurations included)."""
    values = dict(configuration) if isinstance(configuration, Mapping) else configuration
    return space.genes_from_values(values)


def active_values(space: SearchSpace, values: Mapping[str, object]) -> dict[str, object]:
    """``values`` without the choices that the others make inactive (a flat assignment of every choice, as tools
    without conditional spaces sample, becomes a configuration :meth:`~SearchSpace.genes_from_values` reads)."""
    parents = {hp.name: hp for hp in space.hyperparameters()}
    return {name: value for name, value in values.items()
            if name not in parents or parents[name].parent is None
            or values.get(parents[name].parent) in parents[name].parent_values}
