import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nas_envs.spaces import get_space
from nas_envs.spaces.base import InvalidArchitectureError
from nas_envs.spaces.cityseg import CHOICES, EXPAND_START, NUM_GENES, WIDTH_START, active_slots

SPACE = get_space("cityseg")
raw_genes = st.lists(st.integers(0, 3), min_size=NUM_GENES, max_size=NUM_GENES).map(
    lambda values: np.minimum(np.array(values), CHOICES - 1)
)


def test_layout_matches_evoxbench():
    assert NUM_GENES == 24 and SPACE.num_actions == 4
    assert CHOICES[:5].tolist() == [3, 3, 3, 4, 3]  # head 0..2, stages 0..2, 0..2, 0..3, 0..2
    assert (CHOICES[5:] == 3).all() and WIDTH_START - EXPAND_START == 13
    assert SPACE.one_hot(SPACE.sample(3, seed=0)).shape == (3, 73)  # the width of EvoXBench's rank-net input


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=100, deadline=None)
def test_samples_are_canonical_non_degenerate_and_round_trip(seed):
    genes = SPACE.sample(seed=seed)
    SPACE.validate(genes)
    assert genes[0] >= 1
    np.testing.assert_array_equal(SPACE.canonicalize(genes), genes)
    np.testing.assert_array_equal(SPACE.from_string(SPACE.to_string(genes)), genes)
    one_hot = SPACE.one_hot(genes)[0]
    assert one_hot.sum() == NUM_GENES


@given(raw_genes)
@settings(max_examples=200, deadline=None)
def test_masks_build_exactly_the_canonical_form(genes):
    """Following the masks, a gene vector is reachable iff it is canonical and non-degenerate."""
    reachable = True
    for step in range(NUM_GENES):
        mask = SPACE.action_mask(genes[:step])
        batch_mask = SPACE.action_masks(genes[None, :], np.array([step]))[0]
        np.testing.assert_array_equal(mask, batch_mask)
        reachable &= bool(mask[genes[step]])
    canonical = np.array_equal(SPACE.canonicalize(genes), genes)
    assert reachable == (canonical and genes[0] >= 1)


@given(raw_genes)
@settings(max_examples=100, deadline=None)
def test_inactive_slots_do_not_change_the_network(genes):
    """Two gene vectors that differ only in inactive expand slots have one canonical form and one encoding."""
    other = genes.copy()
    inactive = ~active_slots(genes)[0]
    other[EXPAND_START:WIDTH_START][inactive] = (other[EXPAND_START:WIDTH_START][inactive] + 1) % 3
    np.testing.assert_array_equal(SPACE.canonicalize(genes), SPACE.canonicalize(other))
    np.testing.assert_array_equal(SPACE.features(SPACE.canonicalize(genes)), SPACE.features(SPACE.canonicalize(other)))


def test_degenerate_head_is_valid_but_flagged():
    genes = SPACE.sample(seed=1)
    genes[0] = 0
    np.testing.assert_array_equal(SPACE.as_batch(genes[None, :])[0], genes)  # accepted, as in EvoXBench
    assert SPACE.degenerate_rows(genes[None, :]).tolist() == [True]
    assert SPACE.action_mask(np.array([], dtype=np.int64)).tolist() == [0, 1, 1, 0]


def test_neighbours_differ_in_one_active_gene():
    genes = SPACE.sample(seed=3)
    neighbours = SPACE.neighbours(genes)
    assert len({n.tobytes() for n in neighbours}) == len(neighbours)
    for n in neighbours:
        assert n[0] >= 1 and not np.array_equal(n, genes)
        np.testing.assert_array_equal(SPACE.canonicalize(n), n)
        changed = np.flatnonzero(n != genes)
        # a depth change may also reset the slots it deactivates
        assert len(changed) == 1 or (changed[0] < EXPAND_START and (changed[1:] >= EXPAND_START).all())


def test_strings_in_evoxbench_dict_form():
    genes = SPACE.sample(seed=4)
    text = SPACE.to_string(genes)
    assert text.startswith("CitySeg(d=[")
    depths, expands, widths = genes[:5].tolist(), genes[EXPAND_START:WIDTH_START].tolist(), genes[WIDTH_START:].tolist()
    as_dict = f"{{'d': {depths}, 'e': {expands}, 'w': {widths}}}"
    np.testing.assert_array_equal(SPACE.from_string(as_dict), genes)  # expand ratios as indices also parse


E13 = str([0.2] * 13)
W6 = str([0] * 6)


@pytest.mark.parametrize(
    "text, message",
    [
        (f"CitySeg(d=[1, 1, 1, 1], e={E13}, w={W6})", "'d' must be a list of 5 values"),
        (f"CitySeg(d=[1, 1, 1, 4, 1], e={E13}, w={W6})", r"gene 3 \(stage 3 depth\) is 4; allowed 0..3"),
        (f"{{'d': [1, 1, 1, 1, 1], 'e': [0.3] + {E13[:-5]}], 'w': {W6}}}", "expected 'CitySeg"),  # not a literal
        (f"{{'d': [1, 1, 1, 1, 1], 'e': [0.3{E13[4:]}, 'w': {W6}}}", r"expand ratio 0.3 is not one of"),
        (f"{{'d': [1, 1, 1, 1, 1], 'e': {E13}}}", "'w' must be a list of 6 values"),
        ("[1, 2, 3]", "expected a dict with keys"),
        ("ResNet50", "expected 'CitySeg"),
    ],
)
def test_bad_strings_say_what_is_wrong(text, message):
    with pytest.raises(InvalidArchitectureError, match=message):
        SPACE.from_string(text)


def test_bad_arrays_say_what_is_allowed():
    with pytest.raises(InvalidArchitectureError, match=r"shape \(N, 24\)"):
        SPACE.as_batch(np.zeros((2, 23), dtype=np.int64))
    genes = SPACE.sample(seed=0)
    genes[20] = 3
    with pytest.raises(InvalidArchitectureError, match=r"gene 20 \(stage 1 width\) is 3; allowed 0..2"):
        SPACE.as_batch(genes[None, :])
    with pytest.raises(InvalidArchitectureError, match="integers"):
        SPACE.as_genes(np.full(NUM_GENES, 0.5))


def test_problems_follow_table_1_and_table_4():
    from nas_envs.benchmarks.cityseg_problems import CITYSEG_OBJECTIVES, PROBLEM_OBJECTIVES, get_problem

    sizes = [len(PROBLEM_OBJECTIVES[n]) for n in range(1, 16)]
    assert sizes == [2, 3, 3, 4, 5, 2, 3, 3, 4, 5, 3, 5, 6, 6, 7]  # M of Table 1
    for objectives in PROBLEM_OBJECTIVES.values():
        assert objectives[0] == "err" and len(set(objectives)) == len(objectives)
        order = [CITYSEG_OBJECTIVES.index(o) for o in objectives]
        assert order == sorted(order)  # Table 1 lists objectives in one global order: err, latencies, energies, costs
    assert PROBLEM_OBJECTIVES[10] != PROBLEM_OBJECTIVES[5]  # EvoXBench < 1.0.5 duplicated MOP5 as MOP10
    assert PROBLEM_OBJECTIVES[10] == ("err", "h2_latency", "h2_energy", "flops", "params")
    assert get_problem(15).population_size == 217 and get_problem(1).population_size == 100
    with pytest.raises(ValueError, match="MOP16 does not exist; problem must be an integer 1..15"):
        get_problem(16)
