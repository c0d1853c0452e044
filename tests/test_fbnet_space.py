import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nas_envs.groundtruth.cost_tables import build_cost_table, measure_costs
from nas_envs.groundtruth.fbnet_net import FBNetNetwork
from nas_envs.groundtruth.protocols import PROTOCOLS
from nas_envs.spaces.base import InvalidArchitectureError
from nas_envs.spaces.fbnet import BLOCKS, NUM_LAYERS, FBNetSpace, layer_stage

SPACE = FBNetSpace()


@given(st.integers(min_value=0, max_value=2**32 - 1))
@settings(max_examples=100, deadline=None)
def test_samples_are_valid_and_round_trip(seed):
    genes = SPACE.sample(seed=seed)
    SPACE.validate(genes)
    np.testing.assert_array_equal(SPACE.from_string(SPACE.to_string(genes)), genes)
    names = [BLOCKS[g] for g in genes]
    np.testing.assert_array_equal(SPACE.from_string(",".join(names)), genes)
    np.testing.assert_array_equal(SPACE.from_string(repr(names)), genes)


def test_stage_layout_and_encodings():
    assert NUM_LAYERS == 22
    assert [layer_stage(i) for i in range(NUM_LAYERS)] == [0] + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [6]
    archs = SPACE.sample(10, seed=0)
    one_hot = SPACE.one_hot(archs)
    assert one_hot.shape == (10, 198)
    np.testing.assert_array_equal(one_hot.reshape(10, 22, 9).argmax(axis=2), archs)
    assert SPACE.features(archs, version=1).shape == (10, 198 + 9 + 7)
    assert len(SPACE.neighbours(archs[0])) == 22 * 8


def test_features_version_2_adds_the_5x5_kernels_of_each_stage_to_version_1():
    archs = SPACE.sample(10, seed=0)
    newest = SPACE.features(archs)
    assert SPACE.feature_version() == 2 and newest.shape == (10, 198 + 9 + 7 + 7)
    np.testing.assert_array_equal(newest[:, :-7], SPACE.features(archs, version=1))
    every_5x5 = [BLOCKS.index(name) for name in ("k5_e1", "k5_e1_g2", "k5_e3", "k5_e6")]
    layers = np.array([every_5x5[i % 4] for i in range(NUM_LAYERS)])  # every layer 5x5, in all four blocks
    np.testing.assert_array_equal(SPACE.features(layers[None])[0, -7:], [1, 4, 4, 4, 4, 4, 1])
    layers[[0, 5, 21]] = BLOCKS.index("k3_e6")  # stage 0's only layer, stage 2's first, stage 6's only
    np.testing.assert_array_equal(SPACE.features(layers[None])[0, -7:], [0, 4, 3, 4, 4, 4, 0])
    with pytest.raises(ValueError, match=r"no features version 3; this version of nas-envs has \[1, 2\]"):
        SPACE.features(archs, version=3)


@pytest.mark.parametrize(
    "text, message",
    [
        ("FBNet(['k3_e1'])", "expected 22 block names, got 1"),
        (",".join(["k3_e1"] * 21 + ["k7_e6"]), "unknown block 'k7_e6'"),
        ("FBNet([k3_e1, k3_e3])", "not a list of block names"),
    ],
)
def test_bad_strings(text, message):
    with pytest.raises(InvalidArchitectureError, match=message):
        SPACE.from_string(text)


def test_bad_genes():
    genes = SPACE.sample(seed=0)
    genes[4] = 9
    with pytest.raises(InvalidArchitectureError, match="layer 4 has block index 9"):
        SPACE.as_genes(genes)


@pytest.mark.slow
def test_network_shapes_and_exact_cost_table():
    torch.set_num_threads(1)
    protocol = PROTOCOLS["fbnet-smoke"]
    archs = np.vstack([SPACE.sample(3, seed=1), np.full(22, BLOCKS.index("skip")), np.full(22, 7)])
    for genes in archs:
        out = FBNetNetwork(genes.tolist(), **protocol.network)(torch.zeros(2, 1, 14, 14))
        assert out.shape == (2, 10)
    table = build_cost_table(SPACE, protocol, checks=5)  # raises unless exact on fresh architectures
    counts = SPACE.cost_features(archs)
    predicted = np.rint(table["params"]["intercept"] + counts @ np.array(table["params"]["weights"]))
    np.testing.assert_array_equal(predicted, measure_costs(SPACE, protocol, archs)[:, 0])


def test_layer_chain_graphs():
    archs = SPACE.sample(3, seed=5)
    node_type, edge_index, edge_type = SPACE.graphs(archs)
    assert node_type.shape == (3, 24) and edge_index.shape == (3, 2, 23) and edge_type.shape == (3, 23)
    np.testing.assert_array_equal(node_type[:, 1:-1], archs)  # the blocks are the node types
    assert (node_type[:, 0] == 9).all() and (node_type[:, -1] == 10).all()
    np.testing.assert_array_equal(edge_index[0, 1] - edge_index[0, 0], 1)  # each node feeds the next
    assert edge_type[0].tolist() == [layer_stage(i) for i in range(NUM_LAYERS)] + [7]
