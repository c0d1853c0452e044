"""The CitySeg pipeline end to end on a seconds-long supernet: train, score sub-networks, fit, evaluate."""

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import nas_envs
from nas_envs.benchmarks.base import objective_matrix
from nas_envs.benchmarks.cityseg_problems import CITYSEG_OBJECTIVES
from nas_envs.fitting.cityseg_fit import fit_cityseg
from nas_envs.groundtruth.cityseg_supernet import supernet_path, train_supernet
from nas_envs.groundtruth.collect import collect
from nas_envs.groundtruth.cost_tables import measure_costs
from nas_envs.groundtruth.jobs import plan
from nas_envs.groundtruth.protocols import PROTOCOLS
from nas_envs.spaces.base import InvalidArchitectureError

pytestmark = pytest.mark.slow  # a supernet, a fit or a Ray instance per module

SMOKE = PROTOCOLS["cityseg-smoke"]
REPO_DATA = Path(__file__).resolve().parents[1] / "assets" / "data"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    assets = tmp_path_factory.mktemp("assets")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NAS_ENVS_ASSETS", str(assets))
        (assets / "data").mkdir()
        for profile in ("h1", "h2"):  # the committed measurements
            shutil.copy(REPO_DATA / f"cityseg-latency-{profile}.json", assets / "data")
        train_supernet(SMOKE, supernet_path(SMOKE))
        records = assets / "data" / "cityseg-smoke.jsonl"
        collect(records, SMOKE.name, plan("cityseg", "random", "train", 40, seeds=1), workers=1)
        collect(records, SMOKE.name, plan("cityseg", "random", "noise", 4, seeds=3), workers=1)
        entry = fit_cityseg(seed=0, protocol=SMOKE.name, members=3, out_dir=assets / "models" / "cityseg-smoke")
        yield assets / "models" / "cityseg-smoke", entry


@pytest.fixture
def mop15(bundle):
    return nas_envs.make_benchmark("cityseg-mop15", bundle=bundle[0]).load()


def ev(benchmark, *args, **kwargs) -> np.ndarray:
    """The (N, M) objective array of an evaluation (EvoXBench's layout)."""
    return objective_matrix(benchmark, benchmark.evaluate(*args, **kwargs))


def test_objectives_are_reproducible_and_noise_stays_in_its_factors(mop15):
    archs = mop15.space.sample(50, seed=0)
    first, again = ev(mop15, archs, seed=7), ev(mop15, archs, seed=7)
    np.testing.assert_array_equal(first, again)
    assert first.shape == (50, 7) and mop15.objectives == CITYSEG_OBJECTIVES
    exact = ev(mop15, archs, noise=False)
    ratio = first / exact
    names = list(mop15.objectives)
    for name, spread in (("h1_latency", 0.02), ("h2_latency", 0.02), ("h1_energy", 0.05), ("h2_energy", 0.05)):
        column = ratio[:, names.index(name)]
        assert (np.abs(column - 1) <= spread + 1e-12).all() and column.std() > 0
    np.testing.assert_array_equal(ratio[:, [names.index("flops"), names.index("params")]], 1.0)
    assert not np.array_equal(ev(mop15, archs, seed=8), first)


def test_flops_and_params_are_those_of_the_real_networks(mop15):
    archs = mop15.space.sample(6, seed=3)
    out = ev(mop15, archs, noise=False)
    names = list(mop15.objectives)
    measured = measure_costs(mop15.space, SMOKE, archs)
    np.testing.assert_array_equal(out[:, names.index("params")], measured[:, 0])
    np.testing.assert_array_equal(out[:, names.index("flops")], measured[:, 1])


def test_problems_select_their_objectives_in_order(bundle, monkeypatch, mop15):
    archs = mop15.space.sample(5, seed=1)
    every = ev(mop15, archs, seed=3)
    mop9 = nas_envs.make_benchmark("cityseg-mop9", bundle=bundle[0])
    columns = [CITYSEG_OBJECTIVES.index(o) for o in ("err", "h2_latency", "h2_energy", "flops")]
    np.testing.assert_array_equal(ev(mop9, archs, seed=3)[:, [0, 1, 3]], every[:, [columns[0], columns[1],
                                                                                         columns[3]]])


def test_degenerate_head_scores_the_nadir_point(mop15):
    genes = mop15.space.sample(seed=2)
    genes[0] = 0
    out = ev(mop15, genes[None, :], seed=0)[0]
    np.testing.assert_array_equal(out, [mop15.bounds[o][1] for o in mop15.objectives])
    np.testing.assert_allclose(mop15.normalise(out[None, :]), 1.0)
    assert mop15.hypervolume(out[None, :]) == 0.0


def test_normalised_objectives_and_hypervolume(mop15, bundle):
    _, entry = bundle
    out = ev(mop15, mop15.space.sample(200, seed=4), seed=0)
    normalised = mop15.normalise(out)
    assert (normalised >= 0).all() and (normalised <= 1).all()
    point = normalised[:1]
    assert mop15.hypervolume(out[:1]) == pytest.approx(float(np.prod(1 - point)))
    assert mop15.hypervolume(out) >= mop15.hypervolume(out[:1])
    assert entry["bounds"]["err"] == [0.0, 1.0] and entry["noise"]["architectures"] == 4


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros((3, 23), dtype=np.int64), r"shape \(N, 24\)"),
        (np.full((1, 24), 0.5), "integers"),
        (np.full((1, 24), np.nan), "integers"),
        (np.full((1, 24), 3, dtype=np.int64), r"gene 0 \(head depth\) is 3; allowed 0..2"),
    ],
)
def test_bad_input_says_what_is_wrong(mop15, bad, message):
    with pytest.raises(InvalidArchitectureError, match=message):
        ev(mop15, bad)


@pytest.mark.parametrize("algorithm", ["nsga2", "nsga3", "moead", "rvea"])
def test_pymoo_algorithms_run_reproducibly(bundle, monkeypatch, tmp_path, algorithm):
    from nas_envs.agents.moea import run_moea

    first = run_moea(problem=2, algorithm=algorithm, seed=0, evaluations=315, bundle=bundle[0])
    trajectory = tmp_path / algorithm / "seed_0.jsonl"
    assert first == run_moea(problem=2, algorithm=algorithm, seed=0, evaluations=315, trajectory=trajectory,
                             bundle=bundle[0])
    visited = [json.loads(line)["architecture"] for line in trajectory.read_text().splitlines()]
    assert len(visited) == first["evaluations"]  # every evaluation, as canonical strings the collector can train
    space = nas_envs.make_benchmark("cityseg-mop2", bundle=bundle[0]).space
    assert all(space.to_string(space.from_string(a)) == a for a in visited[:50])
    assert first["evaluations"] == 315  # three generations of 105
    assert 0.0 < first["hv"] < 1.0


@pytest.mark.parametrize("env_id", ["CitySeg-MOP1-v0", "CitySeg-MOP15-v0"])
def test_environment_passes_both_checkers(bundle, monkeypatch, env_id):
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env, other = gym.make(env_id, bundle=bundle[0]).unwrapped, gym.make(env_id, bundle=bundle[0]).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checkers report most problems as warnings
        check_env(env)
        sb3_check_env(other)


def test_environment_rewards_hypervolume_improvement_of_its_archive(bundle, monkeypatch, mop15):
    import gymnasium as gym

    env = gym.make("CitySeg-MOP4-v0", bundle=bundle[0], budget_seconds=4.5 * mop15.seconds_per_evaluation)
    _, info = env.reset(seed=3)
    assert info["action_mask"].tolist() == [0, 1, 1, 0]  # head depth 0 is masked
    rng = np.random.default_rng(0)
    total, points = 0.0, []
    for episode in range(5):
        if episode:
            _, info = env.reset()
        for _ in range(24):
            legal = np.flatnonzero(info["action_mask"])
            _, reward, terminated, _, info = env.step(int(rng.choice(legal)))
        assert terminated and reward >= 0.0
        total += reward
        points.append(list(info["objectives"].values()))
        assert list(info["objectives"]) == ["err", "h1_latency", "h1_energy", "flops"]
    assert total == pytest.approx(info["hypervolume"])
    assert info["hypervolume"] == pytest.approx(
        nas_envs.make_benchmark("cityseg-mop4", bundle=bundle[0]).hypervolume(np.array(points)))
    assert info["budget_exhausted"]
    _, info = env.reset()
    assert info["budget_exhausted"]
    _, info = env.reset(options={"reset_budget": True})
    assert env.unwrapped.hypervolume == 0.0 and info["sim_time"] == 0.0


def test_vector_environment_matches_single_environments(bundle, monkeypatch):
    import gymnasium as gym

    space = nas_envs.make_benchmark("cityseg-mop2", bundle=bundle[0]).space
    episodes = [space.sample(3, seed=s) for s in (10, 11)]  # two rounds of three architectures
    venv = gym.make_vec("CitySeg-MOP2-v0", num_envs=3, vectorization_mode="vector_entry_point", noise=False,
                        bundle=bundle[0])
    venv.reset(seed=0)
    vector_rewards = []
    for archs in episodes:
        for step in range(24):
            _, rewards, terminated, _, info = venv.step(archs[:, step])
        assert terminated.all() and set(info["objectives"]) == {"err", "h1_latency", "flops"}
        vector_rewards.append(rewards)
        venv.step(np.zeros(3, dtype=np.int64))  # the autoreset step
    for copy in range(3):
        env = gym.make("CitySeg-MOP2-v0", bundle=bundle[0], noise=False)
        _, info = env.reset(seed=0)
        for round_, archs in enumerate(episodes):
            if round_:
                env.reset()
            for action in archs[copy]:
                _, reward, _, _, info = env.step(int(action))
            assert reward == pytest.approx(vector_rewards[round_][copy])  # each copy keeps its own archive


def test_vector_reward_mode_gives_minus_the_normalised_objectives(bundle, monkeypatch):
    import gymnasium as gym

    archs = nas_envs.make_benchmark("cityseg-mop5", bundle=bundle[0]).space.sample(2, seed=4)
    env = gym.make("CitySeg-MOP5-v0", bundle=bundle[0], noise=False, reward="vector")
    assert env.unwrapped.reward_dim == 5 and env.unwrapped.reward_space.shape == (5,)
    env.reset(seed=0)
    for action in archs[0]:
        _, reward, terminated, _, info = env.step(int(action))
        assert reward.shape == (5,) and reward.dtype == np.float32
        if not terminated:
            assert not reward.any()
    normalised = np.array(list(info["normalised_objectives"].values()))
    np.testing.assert_allclose(reward, -normalised, rtol=1e-6)
    assert reward in env.unwrapped.reward_space and (normalised > 0).any()
    assert info["hypervolume"] > 0  # the archive is kept as in the default mode

    venv = gym.make_vec("CitySeg-MOP5-v0", num_envs=2, vectorization_mode="vector_entry_point", noise=False,
                        reward="vector", bundle=bundle[0])
    venv.reset(seed=0)
    for step in range(24):
        _, rewards, terminated, _, info = venv.step(archs[:, step])
    assert rewards.shape == (2, 5) and terminated.all()
    np.testing.assert_allclose(rewards[0], reward, rtol=1e-6)  # noise-free: the same architecture, the same vector
    with pytest.raises(ValueError, match=r"reward must be one of \('hv', 'vector'\), got 'pareto'"):
        gym.make("CitySeg-MOP5-v0", bundle=bundle[0], reward="pareto")


def test_moea_command_runs_in_parallel_and_resumes(bundle, monkeypatch, tmp_path):
    from nas_envs.agents.moea import run_moea
    from nas_envs.cli import main

    out = tmp_path / "runs.jsonl"
    command = ["moea", "--problems", "2", "--algorithms", "nsga2", "--runs", "2", "--evaluations", "210",
               "--workers", "2", "--out", str(out), "--bundle", str(bundle[0])]
    assert main(command) == 0
    rows = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["seed"])
    assert [r["seed"] for r in rows] == [0, 1]
    again = run_moea(problem=2, algorithm="nsga2", seed=1, evaluations=210, bundle=bundle[0])
    assert rows[1] == {**again, "evaluations_asked": 210}
    assert main(command) == 0 and len(out.read_text().splitlines()) == 2  # finished runs are not run again
    # a run killed while writing its line leaves a partial line: the next command drops it and runs that one again
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][: len(lines[1]) // 2])
    assert main(command) == 0
    again = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["seed"])
    assert again == rows
    # a run of another bundle is kept but not counted as done: that run is redone on this bundle
    other = {**rows[0], "bundle": "0" * 64}
    out.write_text(json.dumps(other) + "\n" + json.dumps(rows[1]) + "\n")
    assert main(command) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0] == other and lines[1:] == rows[1:] + rows[:1]


def test_two_moea_commands_on_one_runs_file_write_each_run_once(bundle, tmp_path):
    out = tmp_path / "runs.jsonl"
    command = [sys.executable, "-m", "nas_envs.cli", "--quiet", "moea", "--problems", "2", "--algorithms", "nsga2",
               "--runs", "3", "--evaluations", "210", "--out", str(out), "--bundle", str(bundle[0])]
    racers = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    assert all(racer.wait(timeout=300) == 0 for racer in racers), [racer.stderr.read() for racer in racers]
    seeds = [json.loads(line)["seed"] for line in out.read_text().splitlines()]
    assert sorted(seeds) == [0, 1, 2]


@pytest.mark.parametrize(("line", "words"), [
    ("", "not a JSON line"), ("[]", "a JSON list where an object is expected"), ("{\"hv\": 0.5}", "field 'problem'"),
    ("HV", "not a JSON line"),
])
def test_a_runs_file_with_a_bad_line_in_the_middle_is_refused_with_file_and_line(bundle, tmp_path, line, words,
                                                                                capsys):
    from nas_envs.cli import main

    out = tmp_path / "runs.jsonl"
    command = ["moea", "--problems", "2", "--algorithms", "nsga2", "--runs", "1", "--evaluations", "210", "--out",
               str(out), "--bundle", str(bundle[0])]
    assert main(command) == 0
    good = out.read_text()
    for bad in ({**json.loads(good), "hv": float("nan")}, {**json.loads(good), "hv": 1e308}):
        out.write_text(json.dumps(bad) + "\n" + good)
        assert main(command) == 2
        assert "runs.jsonl:1: field 'hv' is" in capsys.readouterr().err
    out.write_text(good + line + "\n" + good)
    assert main(command) == 2
    assert f"runs.jsonl:2: {words}" in capsys.readouterr().err


def test_the_moea_table_says_when_its_marks_cannot_tell_algorithms_apart_and_who_stopped_short():
    from nas_envs.agents.moea import runs_to_tell_apart, table_notes

    runs = [{"problem": 1, "algorithm": a, "seed": s, "hv": 0.4, "evaluations": 100 if a != "rvea" else 96,
             "evaluations_asked": 100} for a in ("nsga2", "rvea") for s in range(2)]
    notes = "\n".join(table_notes(runs))
    assert runs_to_tell_apart() == 3
    assert "With 2 run(s)" in notes and "at least 3 runs each" in notes
    assert "rvea: 2 run(s) stopped at 96 of 100 evaluations asked" in notes and "nsga2:" not in notes
    more = [{**r, "seed": r["seed"] + 10} for r in runs] + [{**r, "seed": r["seed"] + 20} for r in runs]
    assert "rank-sum" not in "\n".join(table_notes(runs + more))
