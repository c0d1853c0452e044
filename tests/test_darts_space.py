import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nas_envs.spaces.base import InvalidArchitectureError
from nas_envs.spaces.darts import OPS, DartsSpace

SPACE = DartsSpace()

# Published genotypes as printed by their papers' code (DARTS V2, PC-DARTS, GDAS on CIFAR-10).
DARTS_V2 = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
    "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)], normal_concat=[2, 3, 4, 5], "
    "reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), ('max_pool_3x3', 0), "
    "('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)], reduce_concat=[2, 3, 4, 5])"
)
PC_DARTS = (
    "Genotype(normal=[('sep_conv_3x3', 1), ('skip_connect', 0), ('sep_conv_3x3', 0), ('dil_conv_3x3', 1), "
    "('sep_conv_5x5', 0), ('sep_conv_3x3', 1), ('avg_pool_3x3', 0), ('dil_conv_3x3', 1)], normal_concat=range(2, 6), "
    "reduce=[('sep_conv_5x5', 1), ('max_pool_3x3', 0), ('sep_conv_5x5', 1), ('sep_conv_5x5', 2), ('sep_conv_3x3', 0), "
    "('sep_conv_3x3', 3), ('sep_conv_3x3', 1), ('sep_conv_3x3', 2)], reduce_concat=range(2, 6))"
)
GDAS = (
    "Genotype(normal=[('skip_connect', 0), ('skip_connect', 1), ('skip_connect', 0), ('sep_conv_5x5', 2), "
    "('sep_conv_3x3', 3), ('skip_connect', 0), ('sep_conv_5x5', 4), ('sep_conv_3x3', 3)], normal_concat=range(2, 6), "
    "reduce=[('sep_conv_5x5', 0), ('sep_conv_3x3', 1), ('sep_conv_5x5', 2), ('sep_conv_5x5', 1), ('dil_conv_5x5', 2), "
    "('sep_conv_3x3', 1), ('sep_conv_5x5', 0), ('sep_conv_5x5', 1)], reduce_concat=range(2, 6))"
)

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@pytest.mark.parametrize("text", [DARTS_V2, PC_DARTS, GDAS])
def test_published_genotypes_parse_and_print_back(text):
    genes = SPACE.from_string(text)
    again = SPACE.from_string(SPACE.to_string(genes))
    np.testing.assert_array_equal(genes, again)


def test_pc_darts_node_order_is_canonicalised():
    genes = SPACE.from_string(PC_DARTS)
    # node 2 of the normal cell was printed as (sep_conv_3x3 from 1), (skip_connect from 0)
    assert genes[:4].tolist() == [0, OPS.index("skip_connect"), 1, OPS.index("sep_conv_3x3")]


@given(seeds)
@settings(max_examples=200, deadline=None)
def test_samples_are_valid_canonical_and_round_trip(seed):
    genes = SPACE.sample(seed=seed)
    SPACE.validate(genes)
    np.testing.assert_array_equal(SPACE.canonicalize(genes), genes)
    np.testing.assert_array_equal(SPACE.from_string(SPACE.to_string(genes)), genes)


@given(seeds)
@settings(max_examples=200, deadline=None)
def test_canonicalisation_is_idempotent_and_ignores_edge_order(seed):
    rng = np.random.default_rng(seed)
    genes = SPACE.sample(seed=rng)
    nodes = genes.reshape(-1, 4).copy()
    swap = rng.random(len(nodes)) < 0.5
    nodes[swap] = nodes[swap][:, [2, 3, 0, 1]]
    shuffled = nodes.reshape(-1)
    once = SPACE.canonicalize(shuffled)
    np.testing.assert_array_equal(once, genes)
    np.testing.assert_array_equal(SPACE.canonicalize(once), once)


@given(seeds)
@settings(max_examples=200, deadline=None)
def test_masks_never_allow_an_invalid_architecture(seed):
    rng = np.random.default_rng(seed)
    genes = np.empty(SPACE.num_decisions, dtype=np.int64)
    for step in range(SPACE.num_decisions):
        mask = SPACE.action_mask(genes[:step])
        assert mask.dtype == np.int8 and mask.any()
        genes[step] = rng.choice(np.flatnonzero(mask))
    SPACE.validate(genes)
    np.testing.assert_array_equal(SPACE.canonicalize(genes), genes)  # masks only build canonical forms


def test_every_canonical_architecture_is_reachable_through_masks():
    for genes in SPACE.sample(50, seed=3):
        for step in range(SPACE.num_decisions):
            assert SPACE.action_mask(genes[:step])[genes[step]] == 1


def test_sampling_is_uniform_over_input_pairs():
    archs = SPACE.sample(6000, seed=0)
    node5 = archs[:, 12:16]  # normal cell, node 5: 10 possible input pairs
    pairs, counts = np.unique(node5[:, [0, 2]], axis=0, return_counts=True)
    assert len(pairs) == 10
    assert counts.min() > 0.8 * 600 and counts.max() < 1.2 * 600


def test_sampling_is_reproducible():
    np.testing.assert_array_equal(SPACE.sample(5, seed=11), SPACE.sample(5, seed=11))
    assert not np.array_equal(SPACE.sample(5, seed=11), SPACE.sample(5, seed=12))


def test_neighbours_differ_in_one_edge_and_are_valid():
    genes = SPACE.from_string(DARTS_V2)
    neighbours = SPACE.neighbours(genes)
    assert len(neighbours) == len({tuple(n) for n in neighbours})
    for n in neighbours:
        SPACE.validate(n)
        np.testing.assert_array_equal(SPACE.canonicalize(n), n)
        changed_edges = (SPACE.one_hot(n[None]) != SPACE.one_hot(genes[None])).sum()
        assert changed_edges == 2  # one edge removed, one added
    assert SPACE.mutate(genes, seed=0).tolist() in [n.tolist() for n in neighbours]


@pytest.mark.parametrize("seed", range(5))
def test_isomorphs_are_the_same_network_renumbered(seed):
    genes = SPACE.sample(seed=seed)
    isomorphs = SPACE.isomorphs(genes)
    assert len(isomorphs) == len({tuple(g) for g in isomorphs})
    assert any((g == genes).all() for g in isomorphs)
    for g in isomorphs:
        SPACE.validate(g)
        np.testing.assert_array_equal(SPACE.canonicalize(g), g)
        # the same ops on the same kinds of input, the same depth: the same params and FLOPs
        np.testing.assert_array_equal(SPACE.cost_features(g[None]), SPACE.cost_features(genes[None]))
        np.testing.assert_array_equal(SPACE.cell_depths(g[None]), SPACE.cell_depths(genes[None]))
        assert {tuple(h) for h in SPACE.isomorphs(g)} == {tuple(h) for h in isomorphs}  # one class


def test_isomorph_counts_follow_the_cells_order_constraints():
    reads_inputs_only = [0, 3, 1, 4] * 4  # every node reads the two cell inputs: any order of the four
    chain = [0, 3, 1, 4, 0, 3, 2, 4, 0, 3, 3, 4, 0, 3, 4, 4]  # node k reads node k - 1: one order
    assert len(SPACE.isomorphs(np.array(reads_inputs_only + chain))) == 1  # all 24 orders give the same genes
    distinct_ops = sum(([0, op, 1, op] for op in range(4)), [])  # inputs only, a different op in each node
    assert len(SPACE.isomorphs(np.array(distinct_ops + chain))) == 24
    assert len(SPACE.isomorphs(np.array(distinct_ops + distinct_ops))) == 24 * 24


@pytest.mark.parametrize(
    "text, message",
    [
        ("Genotype(normal=[('sep_conv_3x3', 0)], reduce=[])", "list of 8"),
        (DARTS_V2.replace("'dil_conv_3x3', 2", "'conv_7x1', 2"), "unknown op 'conv_7x1'"),
        (DARTS_V2.replace("('sep_conv_3x3', 0), ('sep_conv_3x3', 1)", "('sep_conv_3x3', 0), ('sep_conv_3x3', 0)", 1),
         "both edges come from input 0"),
        (DARTS_V2.replace("('dil_conv_3x3', 2)", "('dil_conv_3x3', 5)"), "input 5 is not allowed"),
        (DARTS_V2.replace("normal_concat=[2, 3, 4, 5]", "normal_concat=[2, 3]"), "normal_concat must be"),
        ("Genotype(normal=[", "not a Genotype"),
        ("Genome(normal=[], reduce=[])", "expected 'Genotype"),
        (DARTS_V2.replace("normal=", "nromal="), "unknown Genotype field 'nromal'"),
    ],
)
def test_invalid_strings_raise_clear_errors(text, message):
    with pytest.raises(InvalidArchitectureError, match=message):
        SPACE.from_string(text)


def test_invalid_genes_raise_clear_errors():
    genes = SPACE.sample(seed=0)
    with pytest.raises(InvalidArchitectureError, match="expected 32 genes"):
        SPACE.as_genes(genes[:-1])
    bad = genes.copy()
    bad[1] = 7
    with pytest.raises(InvalidArchitectureError, match=r"op index 7 is not in \[0, 6\]"):
        SPACE.as_genes(bad)
    with pytest.raises(InvalidArchitectureError, match="genes must be integers"):
        SPACE.as_genes(genes + 0.5)
    with pytest.raises(InvalidArchitectureError, match=r"shape \(N, 32\)"):
        SPACE.as_batch(np.zeros((2, 3, 32), dtype=int))


def test_one_hot_marks_eight_edges_per_cell():
    x = SPACE.one_hot(SPACE.sample(20, seed=1))
    assert x.shape == (20, 196)
    np.testing.assert_array_equal(x.reshape(20, 2, -1).sum(axis=2), 8)


def test_features_count_each_cells_eight_ops_by_position_and_edge():
    archs = SPACE.sample(20, seed=1)
    x = SPACE.features(archs, version=1)
    assert x.shape == (20, 58) and x.dtype == np.float32
    by_op_and_input, edges_used, depths = x[:, :28].reshape(20, 2, -1), x[:, 28:56].reshape(20, 2, -1), x[:, 56:]
    np.testing.assert_array_equal(by_op_and_input.sum(axis=2), 8)
    np.testing.assert_array_equal(edges_used.sum(axis=2), 8)
    np.testing.assert_array_equal(depths, SPACE.cell_depths(archs))
    # the normal cell of DARTS-V2: its first node reads both cell inputs, so edges 0 and 1 carry one op each
    v2 = SPACE.features(SPACE.from_string(DARTS_V2)[None])[0]
    assert v2[28] == 1 and v2[29] == 1


def test_graph_encoding_has_typed_edges_for_both_cells():
    node_type, edge_index, edge_type = SPACE.graph(SPACE.from_string(DARTS_V2))
    assert node_type.shape == (14,)
    assert edge_index.shape == (2, 26) and edge_type.shape == (26,)
    assert (edge_type == 7).sum() == 10  # 2 x 4 into the outputs + 2 joining the cells
    assert edge_index.max() == 13


def test_poor_region_variant_has_many_parameter_free_normal_ops():
    rng = np.random.default_rng(0)
    from nas_envs.spaces.darts import PARAMETER_FREE_OPS

    for genes in SPACE.sample(30, seed=5):
        variant = SPACE.poor_region_variant(genes, rng)
        SPACE.validate(variant)
        assert SPACE.count_ops(variant, "normal", PARAMETER_FREE_OPS) >= 5


@given(seeds)
@settings(max_examples=50, deadline=None)
def test_batched_masks_equal_single_masks(seed):
    rng = np.random.default_rng(seed)
    genes = SPACE.sample(16, seed=rng)
    steps = rng.integers(SPACE.num_decisions, size=16)
    expected = np.stack([SPACE.action_mask(g[:s]) for g, s in zip(genes, steps)])
    np.testing.assert_array_equal(SPACE.action_masks(genes, steps), expected)


@pytest.mark.parametrize(
    "replace, message",
    [
        ("normal_concat=range(0, 10000000)", r"normal_concat must be \[2, 3, 4, 5\], got range\(0, 10000000\)"),
        ("normal_concat=5", "normal_concat must be"),
        ("normal_concat=None", "normal_concat must be"),
        ("normal_concat=range(2, x)", "not a literal list"),
    ],
)
def test_hostile_genotype_strings_are_refused_without_expanding_anything(replace, message):
    text = SPACE.to_string(SPACE.sample(seed=0)).replace("normal_concat=[2, 3, 4, 5]", replace)
    with pytest.raises(InvalidArchitectureError, match=message):
        SPACE.from_string(text)
    huge_input = SPACE.to_string(SPACE.sample(seed=0)).replace(", 0)", ", " + "9" * 200 + ")", 1)
    with pytest.raises(InvalidArchitectureError, match="input 0..5"):
        SPACE.from_string(huge_input)
    with pytest.raises(InvalidArchitectureError, match="at most 4096 characters"):
        SPACE.from_string("Genotype(" + " " * 5000 + ")")
    published = SPACE.to_string(SPACE.sample(seed=0)).replace("[2, 3, 4, 5]", "range(2, 6)")
    np.testing.assert_array_equal(SPACE.from_string(published), SPACE.sample(seed=0))  # as the DARTS code prints


def test_masks_come_from_a_read_only_table_that_agrees_with_the_rule():
    """The rule: a node's first input leaves room for a larger second; the second is larger than the first and
    at most the node's own index; ops are free."""
    space = DartsSpace()
    rng = np.random.default_rng(0)
    for genes in space.sample(50, seed=1):
        for step in range(space.num_decisions):
            mask = space.action_mask(genes[:step])
            node, slot = (step % 16) // 4, step % 4
            expected = np.zeros(7, dtype=np.int8)
            if slot == 0:
                expected[: node + 1] = 1
            elif slot == 2:
                expected[genes[step - 2] + 1 : node + 2] = 1
            else:
                expected[:] = 1
            np.testing.assert_array_equal(mask, expected)
    mask = space.action_mask(np.zeros(0, dtype=np.int64))
    with pytest.raises(ValueError):
        mask[0] = 0  # a shared row: writing to it would change every later mask
    assert not space.action_mask(rng.integers(5, 9, size=2)).any()  # a prefix no environment builds: nothing legal


def test_graph_features_read_paths_from_each_cell_input():
    # DARTS V2's normal cell: node 2 = sep(0) + sep(1), node 3 = sep(0) + sep(1), node 4 = sep(1) + skip(0),
    # node 5 = skip(0) + dil(2)
    features = SPACE.graph_features(SPACE.from_string(DARTS_V2)[None]).reshape(2, 2, 11)
    reached, read_by, fewest, most, *ops = features[0, 0]  # normal cell, input 0
    assert (reached, read_by, fewest, most) == (4, 4, 0, 2)  # a skip joins input 0 to the output: 0 convolutions
    assert dict(zip(OPS, ops)) == {"max_pool_3x3": 0, "avg_pool_3x3": 0, "skip_connect": 2, "sep_conv_3x3": 2,
                                   "sep_conv_5x5": 0, "dil_conv_3x3": 1, "dil_conv_5x5": 0}
    assert tuple(features[0, 1, :4]) == (4, 3, 1, 2)  # input 1 reaches the output through one convolution at least
    assert SPACE.features(SPACE.sample(3, seed=0)).shape == (3, 58 + 44)
    assert SPACE.features(SPACE.sample(3, seed=0), version=1).shape == (3, 58)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_graph_features_agree_with_each_other(seed):
    features = SPACE.graph_features(SPACE.sample(1, seed=seed)).reshape(2, 2, 11)
    for cell in features:
        for reached, read_by, fewest, most, *ops in cell:  # node 2 reads both inputs: each reaches a node
            assert 1 <= reached <= 4 and 1 <= read_by <= 4 and 0 <= fewest <= most <= 4
            assert read_by <= sum(ops) <= 8 and most <= sum(ops[3:])  # convolutions are the last four ops
