"""Property tests over the public API: whatever the input, a valid result or a documented error, never an internal
exception."""

import contextlib
import re

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nas_envs
from nas_envs.cli import main
from nas_envs.envs.episodes import Episodes
from nas_envs.envs.sequential import InvalidActionError
from nas_envs.spaces import get_space
from nas_envs.spaces.base import InvalidArchitectureError

ENV_IDS = ["SurrNAS-DARTS-v1", "SurrNAS-FBNet-v1", "CitySeg-MOP15-v0", "SurrNAS-DARTS-MF-v1"]
BENCHMARKS = ["darts", "fbnet", "cityseg-mop15"]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

anything = st.one_of(
    st.integers(-10, 40), st.integers(), st.floats(allow_nan=True), st.text(max_size=8), st.none(), st.booleans(),
    st.lists(st.integers(-3, 12), max_size=3).map(np.array),
)


@FUZZ
@given(env_id=st.sampled_from(ENV_IDS), actions=st.lists(anything, min_size=1, max_size=40))
def test_env_steps_give_a_result_or_a_documented_error(env_id, actions):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=0)
    for action in actions:
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except InvalidActionError:
            continue
        except RuntimeError as error:  # stepping an ended episode
            assert "reset" in str(error)
            env.reset()
            continue
        assert env.observation_space.contains(obs)
        assert np.isfinite(reward).all()
        assert info["action_mask"].dtype == np.int8


@FUZZ
@given(env_id=st.sampled_from(ENV_IDS), seed=st.integers(0, 2**16), steps=st.integers(1, 60))
def test_vector_env_takes_any_integer_action_of_its_space_and_refuses_the_others(env_id, seed, steps):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", budget_seconds=500.0)
    rng = np.random.default_rng(seed)
    envs.reset(seed=seed)
    for _ in range(steps):
        actions = rng.integers(-2, 12, size=3)
        if ((actions < 0) | (actions >= envs.single_action_space.n)).any():
            with pytest.raises(InvalidActionError, match="outside the action space"):
                envs.step(actions)
            actions = np.clip(actions, 0, envs.single_action_space.n - 1)
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert envs.observation_space.contains(obs) and np.isfinite(rewards).all()
        assert not (terminated & truncated).any()


@FUZZ
@given(name=st.sampled_from(BENCHMARKS),
       rows=st.lists(st.lists(st.one_of(st.integers(-3, 12), st.floats(-1, 10)), min_size=20, max_size=34),
                     max_size=4))
def test_evaluate_gives_a_result_or_an_architecture_error(name, rows):
    bench = nas_envs.make_benchmark(name)
    try:
        out = bench.evaluate(rows, seed=0)
    except InvalidArchitectureError:
        return
    assert all(len(v) == len(rows) and np.isfinite(v).all() for v in out.values())


@FUZZ
@given(space_name=st.sampled_from(["darts", "fbnet", "cityseg"]), data=st.data())
def test_string_parsers_parse_or_refuse(space_name, data):
    space = get_space(space_name)
    valid = space.to_string(space.sample(seed=data.draw(st.integers(0, 1000))))
    cut = data.draw(st.integers(0, len(valid)))
    text = data.draw(st.one_of(st.text(max_size=200), st.just(valid[:cut] + data.draw(st.text(max_size=20)))))
    try:
        genes = space.from_string(text)
    except InvalidArchitectureError:
        return
    space.validate(genes)


@settings(max_examples=30, deadline=None)
@given(budget=st.one_of(st.text(max_size=6), st.sampled_from(["1h", "0", "-3h", "24", "1e9d", "nan", "2x"])),
       seeds=st.sampled_from(["1", "0", "-1", "x", "2"]),
       max_evaluations=st.sampled_from(["3", "0", "-1", "abc", "1"]),
       env=st.sampled_from(ENV_IDS + ["SurrNAS-NB201-v0", ""]))
def test_run_arguments_give_a_run_or_a_clear_refusal(tmp_path_factory, budget, seeds, max_evaluations, env):
    out = tmp_path_factory.mktemp("runs")
    command = ["run", "--env", env, "--agent", "rs", "--budget", budget, "--seeds", seeds, "--max-evaluations",
               max_evaluations, "--out", str(out)]
    try:
        code = main(command)
    except SystemExit as exit_:  # argparse's refusal of a malformed value
        assert exit_.code == 2
        return
    assert code in (0, 2)


@pytest.mark.parametrize("command", [["curve", "{out}", "--window", "0"], ["plot", "{out}", "-o", "{out}/x.png"],
                                     ["curve", "{out}/missing"], ["incumbents", "{out}", "--out", "{out}/i.jsonl"]])
def test_reading_commands_refuse_empty_or_missing_folders(tmp_path, command):
    (tmp_path / "rs").mkdir()
    (tmp_path / "rs" / "seed_0.jsonl").write_text("")
    try:
        code = main([part.format(out=tmp_path) for part in command])
    except SystemExit as exit_:
        assert exit_.code == 2
        return
    assert code == 2


def _noise_free_scorer(bench, curves: bool = False):
    """The environments' scorer without noise; with ``curves``, the multi-fidelity one."""
    def scorer(_rows, genes):
        values, curve = bench.evaluate_curves(genes, False, np.random.default_rng(0)) if curves else (
            bench.evaluate_genes(genes, False, np.random.default_rng(0)), None)
        return (bench.score(values), values, bench.simulated_seconds(values)) + ((curve,) if curves else ())

    return scorer


@FUZZ
@given(name=st.sampled_from(["darts", "fbnet", "darts-mf-v0"]), budget=st.sampled_from([None, 400.0, 5000.0]),
       seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 300))
def test_the_single_copy_fast_path_follows_the_batched_rules(name, budget, seed, steps):
    """The single environment's scalar step and the vector environment's batched step keep identical state: legal
    actions mostly (so that architectures complete and budgets run out), now and then one outside the mask; with
    the multi-fidelity rules too (a bundle name stands for them)."""
    bench = nas_envs.make_benchmark("darts", bundle=name) if name.endswith("-v0") else nas_envs.make_benchmark(name)
    epochs = bench.epochs if name.endswith("-v0") else None
    scorer = _noise_free_scorer(bench, curves=epochs is not None)
    one, batched = (Episodes(bench.space, 1, budget, epochs=epochs) for _ in range(2))
    first = np.zeros(1, dtype=np.int64)
    for episodes in (one, batched):
        episodes.start_budgets(first)
        episodes.restart(first)
    completed = 0
    for draw in np.random.default_rng(seed).random(steps):
        legal, illegal = np.flatnonzero(one.masks[0]), np.flatnonzero(one.masks[0] == 0)
        if draw < 0.97 or not len(illegal):
            action = int(legal[min(int(draw / 0.97 * len(legal)), len(legal) - 1)]) if len(legal) else 0
        else:
            action = int(illegal[int((draw - 0.97) / 0.02 * len(illegal))]) if draw < 0.99 else -1
        fast = one.step_one(action, scorer)
        outcome = batched.step(np.array([action]), np.ones(1, dtype=bool), scorer)
        assert (fast.terminated, fast.truncated, fast.illegal) == (
            outcome.terminated[0], outcome.truncated[0], outcome.illegal[0])
        assert float(fast.reward) == float(outcome.rewards[0])
        assert (fast.values is None) == (len(outcome.completed) == 0)
        completed += fast.values is not None
        for field in ("genes", "steps", "obs", "masks", "sim_time", "budget_exhausted"):
            np.testing.assert_array_equal(getattr(one, field), getattr(batched, field), err_msg=field)
        if fast.terminated or fast.truncated:
            one.restart(first)
            batched.restart(first)
    assert completed <= steps // bench.space.num_decisions


json_values = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=6),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=6)
# a line: random bytes, random JSON, or a JSON object with the fields the readers look at, of any type
lines = st.one_of(
    st.binary(max_size=30),
    json_values.map(lambda value: __import__("json").dumps(value).encode()),
    st.fixed_dictionaries({"architecture": json_values, "sim_time": json_values, "predicted_val_accuracy": json_values,
                           "val_accuracy": json_values, "protocol": json_values}).map(
        lambda row: __import__("json").dumps(row).encode()),
)


@FUZZ
@given(content=st.lists(lines, max_size=5), last_newline=st.booleans())
def test_every_json_lines_reader_reads_or_names_the_file_and_line(tmp_path_factory, content, last_newline):
    from nas_envs.agents.runner import read_trajectory
    from nas_envs.files import read_json_lines
    from nas_envs.groundtruth.jobs import read_architecture_rows
    from nas_envs.groundtruth.records import snapshot
    from nas_envs.groundtruth.search_rounds import read_round_lists

    folder = tmp_path_factory.mktemp("lines")
    path = folder / "round-00.jsonl"
    path.write_bytes(b"\n".join(content) + (b"\n" if last_newline and content else b""))
    for reader in (read_json_lines, read_architecture_rows, lambda p: snapshot(p)[0],
                   lambda p: read_round_lists(p.parent)):
        try:
            rows = reader(path)
        except ValueError as error:  # refused: the file and the line say where
            assert str(path) in str(error) and f"{path}:" in str(error), error
        else:
            assert all(isinstance(row, dict) for row in rows)
    assert read_trajectory(path, {}) is None or isinstance(read_trajectory(path, {}), list)  # never raises


def _commands():
    """Every command's own parser, by name."""
    import argparse

    from nas_envs.cli import build_parser

    return next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices


def _typed_options():
    """(command, option, type) of every option of every command that converts its value."""
    return [(name, action.option_strings[0] if action.option_strings else action.dest, action.type)
            for name, command in _commands().items() for action in command._actions if action.type is not None]


def test_no_command_takes_a_number_without_a_typed_range():
    """A bare int or float accepts -5, 0 and 1e308 where a count, seed or size is meant: every option names its
    range (nas_envs.cli.arguments)."""
    bare = [(name, option) for name, option, kind in _typed_options() if kind in (int, float)]
    assert not bare, f"options typed as a bare int or float: {bare}"


@FUZZ
@given(text=st.one_of(st.text(max_size=12), st.integers().map(str), st.floats().map(str)))
def test_every_typed_option_converts_or_refuses_with_a_message(text):
    import argparse

    for name, option, kind in _typed_options():
        try:
            kind(text)
        except (argparse.ArgumentTypeError, ValueError) as error:
            assert str(error), (name, option, text)


def _argv_tokens(command_parser):
    """Tokens an argv of one command is drawn from: its own option strings and choices, and values of every kind
    (numbers out of range, non-ASCII digits, paths that do not exist or are not what the option wants)."""
    options = [s for action in command_parser._actions for s in action.option_strings if s not in ("-h", "--help")]
    choices = [str(c) for action in command_parser._actions for c in (action.choices or ())]
    values = ["0", "-1", "3", "1e308", "nan", "²", "٣", "1-", "3-1", "1,15", "", " ", "--", "-", "x.png", "/", ".",
              "/nonexistent/x", "../../outside.jsonl", "24h", "-3h", "SurrNAS-DARTS-v0", "darts", "rs", "\x00"]
    return st.sampled_from(options + choices + values) | st.text(max_size=6)


@FUZZ
@given(data=st.data())
def test_random_argv_for_every_command_parses_or_is_refused_with_one_message(data, capsys):
    """Whatever the command line, argparse takes it or refuses it with exit status 2 and a message naming the
    option; a conversion never escapes as a traceback (a Unicode digit such as '²' passes ``str.isdigit``)."""
    from nas_envs.cli import build_parser

    capsys.readouterr()
    commands = _commands()
    name = data.draw(st.sampled_from(sorted(commands)))
    argv = [name, *data.draw(st.lists(_argv_tokens(commands[name]), max_size=8))]
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:
        assert exit_.code == 2, argv
        error = capsys.readouterr().err
        # argparse's own words for a conversion that failed without saying why ("invalid parse value: '²'")
        assert "error:" in error and not re.search(r"invalid \w+ value", error), (argv, error)


READING_COMMANDS = ["plot", "curve", "incumbents", "oneshot-report"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A folder of real runs, as 'nas-envs run' writes them (two agents, two seeds each)."""
    out = tmp_path_factory.mktemp("real-runs")
    for agent in ("rs", "re"):
        assert main(["--quiet", "run", "--env", "SurrNAS-FBNet-v1", "--agent", agent, "--budget", "2h", "--seeds", "2",
                     "--max-evaluations", "12", "--out", str(out)]) == 0
    return out


@FUZZ
@given(data=st.data(), content=st.lists(lines, max_size=3), damaged=st.booleans())
def test_random_argv_for_the_reading_commands_runs_or_is_refused_in_one_line(tmp_path_factory, two_runs, data,
                                                                               content, damaged, capsys):
    """The commands that read a folder of runs, with random options, on real runs of which one file may end in
    random lines: a result, or exit status 2 with one line that says what was wrong, never a traceback."""
    import shutil

    capsys.readouterr()
    folder = tmp_path_factory.mktemp("runs") / "runs"
    shutil.copytree(two_runs, folder)
    if damaged:
        with open(folder / "rs" / "seed_1.jsonl", "ab") as seed_file:
            seed_file.write(b"\n".join(content))
    commands = _commands()
    name = data.draw(st.sampled_from(READING_COMMANDS))
    options = data.draw(st.lists(_argv_tokens(commands[name]), max_size=5))
    outputs = ["--out", str(folder / "out.jsonl")] if name == "incumbents" else ["--plot", str(folder / "p.png")]
    try:
        # A drawn option may name another output (a relative '-o -1'): it lands in the folder, not the checkout.
        with contextlib.chdir(folder):
            code = main([name, str(folder), *outputs, *options])
    except SystemExit as exit_:
        assert exit_.code == 2
        return
    assert code in (0, 2), (name, options)
    if code == 2:
        assert len([line for line in capsys.readouterr().err.splitlines() if "error:" in line]) == 1
