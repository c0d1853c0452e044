"""The ConfigSpace view of every space: exact round trips, NAS-Bench-301's names for DARTS, clear refusals."""

import json

import numpy as np
import pytest

from nas_envs.spaces import get_space
from nas_envs.spaces.base import InvalidArchitectureError
from nas_envs.spaces.configspace import configuration_from_genes, configuration_space, genes_from_configuration
from nas_envs.spaces.darts import NB301_PREFIX

SPACES = ["darts", "fbnet", "cityseg"]


@pytest.mark.parametrize("name", SPACES)
def test_genes_configuration_and_string_round_trip_exactly(name):
    space = get_space(name)
    cs = configuration_space(space, seed=0)
    for genes in space.as_batch(space.sample(100, seed=3)):
        configuration = configuration_from_genes(space, genes, cs)
        configuration.check_valid_configuration()  # a legal configuration of the space: conditions hold
        back = genes_from_configuration(space, configuration)
        np.testing.assert_array_equal(back, space.canonicalize(genes))
        assert space.to_string(space.from_string(space.to_string(back))) == space.to_string(genes)
    for configuration in cs.sample_configuration(100):  # and every configuration an HPO tool draws is a network
        genes = genes_from_configuration(space, configuration)
        space.validate(genes)
        assert dict(configuration_from_genes(space, genes, cs)) == dict(configuration)


@pytest.mark.parametrize("name", SPACES)
def test_the_view_holds_one_hyperparameter_per_gene_choice_and_refuses_what_it_does_not_know(name):
    space = get_space(name)
    values = space.values_from_genes(space.sample(seed=0))
    with pytest.raises(InvalidArchitectureError, match="unknown hyperparameter"):
        space.genes_from_values({**values, "learning_rate": 0.1})
    missing = dict(values)
    missing.pop(next(iter(missing)))
    with pytest.raises(InvalidArchitectureError, match="must be"):
        space.genes_from_values(missing)
    with pytest.raises(InvalidArchitectureError, match="mapping"):
        space.genes_from_values(["not", "a", "mapping"])


def test_darts_reads_nas_bench_301_configurations_as_they_are_written():
    """NB301's semantics: node k of a cell (3..5) reads the inputs named ``a_b``; edge ``EDGE_OFFSET[k - 2] + i``
    carries the op from input ``i``; node 2 reads the cell inputs 0 and 1 on edges 0 and 1."""
    space = get_space("darts")
    ops = {0: "sep_conv_3x3", 1: "skip_connect", 3: "max_pool_3x3", 4: "dil_conv_5x5", 5: "avg_pool_3x3",
           8: "sep_conv_5x5", 11: "dil_conv_3x3", 13: "skip_connect"}
    inputs = {3: "1_2", 4: "0_3", 5: "2_4"}
    configuration = {}
    for cell in ("normal", "reduce"):
        configuration.update({f"{NB301_PREFIX}edge_{cell}_{edge}": op for edge, op in ops.items()})
        configuration.update({f"{NB301_PREFIX}inputs_node_{cell}_{node}": pair for node, pair in inputs.items()})
    cell = ("[('sep_conv_3x3', 0), ('skip_connect', 1), ('max_pool_3x3', 1), ('dil_conv_5x5', 2), ('avg_pool_3x3', 0), "
            "('sep_conv_5x5', 3), ('dil_conv_3x3', 2), ('skip_connect', 4)]")
    expected = f"Genotype(normal={cell}, normal_concat=[2, 3, 4, 5], reduce={cell}, reduce_concat=[2, 3, 4, 5])"
    assert space.to_string(space.genes_from_values(configuration)) == expected
    # YAHPO Gym's spelling and NB301's training settings, as its configuration files hold them
    yahpo = {name.replace(":", "_COLON_"): value for name, value in configuration.items()}
    settings = {"OptimizerSelector:sgd:learning_rate": 0.025, f"{NB301_PREFIX}layers": 8,
                "CreateImageDataLoader:batch_size": 96}
    assert space.to_string(space.genes_from_values(json.loads(json.dumps({**yahpo, **settings})))) == expected
    assert sum(name.startswith(f"{NB301_PREFIX}edge_") for name in configuration_space(space)) == 2 * 14
    # an edge set although its node reads other inputs is not silently dropped
    with pytest.raises(InvalidArchitectureError, match="inactive"):
        space.genes_from_values({**configuration, f"{NB301_PREFIX}edge_normal_2": "sep_conv_3x3"})


def test_cityseg_leaves_out_the_degenerate_head_and_the_blocks_a_stage_does_not_hold():
    space = get_space("cityseg")
    genes = space.sample(seed=0)
    genes[1] = 0  # stage 1 holds one block: its second and third expand ratios are inactive
    values = space.values_from_genes(genes)
    assert "expand_stage1_block1" in values and "expand_stage1_block2" not in values
    with pytest.raises(InvalidArchitectureError, match="holds no such block"):
        space.genes_from_values({**values, "expand_stage1_block2": 0.25})
    genes[0] = 0
    with pytest.raises(InvalidArchitectureError, match="degenerate"):
        space.values_from_genes(genes)
