"""SurrNAS-DARTS-MF-v0, SurrNAS-DARTS-MF-v1 and SurrNAS-FBNet-MF-v1: architectures trained epoch by epoch on their
learning curves, freeze-thaw, and the multi-fidelity agents of 'nas-envs run'."""

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import nas_envs
from nas_envs.agents.runner import load_runs
from nas_envs.assets import resolve_bundle
from nas_envs.cli import main

ENV_ID = "SurrNAS-DARTS-MF-v1"
EPOCHS = 4
#: (multi-fidelity id, its family's benchmark, its bundle): the environment tests run on each
MF_IDS = [("SurrNAS-DARTS-MF-v0", "darts", "darts-mf-v0"), ("SurrNAS-DARTS-MF-v1", "darts", "darts-mf-v1"),
          ("SurrNAS-FBNet-MF-v1", "fbnet", "fbnet-mf-v1")]
each_mf_id = pytest.mark.parametrize("env_id, family, mf_bundle", MF_IDS)


def build(env, genes):
    """Play the build decisions of ``genes``; the ``info`` of the completing step."""
    for action in genes:
        _, reward, terminated, truncated, info = env.step(int(action))
        assert reward == 0 and not truncated
    return terminated, info


@each_mf_id
def test_gymnasium_and_sb3_checkers_pass_without_a_warning(env_id, family, mf_bundle):
    env, other = gym.make(env_id).unwrapped, gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)
        sb3_check_env(other)


@each_mf_id
def test_the_fully_trained_architecture_is_that_of_the_base_benchmark_and_its_curve_the_benchmark_s(
        env_id, family, mf_bundle):
    env = gym.make(env_id, noise=False).unwrapped
    base = json.loads((resolve_bundle(mf_bundle)[0] / "manifest.json").read_text())["base"]
    bench = nas_envs.make_benchmark(family, bundle=base)
    mf = nas_envs.make_benchmark(family, bundle=mf_bundle)
    genes = env.space.sample(seed=3)
    env.reset(seed=0)
    terminated, info = build(env, genes)
    assert not terminated and info["sim_time"] == 0.0 and info["epochs_trained"] == 0
    assert info["action_mask"].tolist() == [0] * env.space.num_actions + [1, 1]  # only TRAIN and STOP
    seen, seconds = [], []
    for epoch in range(1, EPOCHS + 1):
        _, reward, terminated, _, info = env.step(env.train_action)
        seen.append(info["epoch_val_accuracy"])
        seconds.append(info["sim_time"])
        assert info["epochs_trained"] == epoch and terminated == (epoch == EPOCHS)
    expected = [mf.evaluate(genes, noise=False, epochs=k)["val_accuracy"][0] for k in range(1, EPOCHS + 1)]
    np.testing.assert_allclose(seen, expected)
    final = bench.evaluate(genes, noise=False)
    assert reward == pytest.approx(final["val_accuracy"][0]) == info["score"]
    assert info["objectives"] == pytest.approx({k: v[0] for k, v in final.items()})
    np.testing.assert_allclose(np.diff([0.0, *seconds]), final["train_time_s"][0] / EPOCHS)  # each epoch its share


@each_mf_id
def test_stopping_early_pays_nothing_and_rebuilding_resumes_the_same_curve_where_it_stopped(
        env_id, family, mf_bundle):
    env = gym.make(env_id, budget_seconds=10 * 86400).unwrapped
    space = env.space
    first, other = space.sample(seed=1), space.sample(seed=2)
    env.reset(seed=5)
    build(env, first)
    env.step(env.train_action)
    _, _, _, _, info = env.step(env.train_action)
    two_epochs, clock = info["epoch_val_accuracy"], info["sim_time"]
    _, reward, terminated, _, info = env.step(env.stop_action)
    assert terminated and reward == 0 and info["sim_time"] == clock
    env.reset()
    build(env, other)
    env.step(env.stop_action)
    env.reset()
    terminated, info = build(env, first)  # freeze-thaw: the same architecture again
    assert not terminated and info["epochs_trained"] == 2 and info["epoch_val_accuracy"] == two_epochs
    _, _, _, _, info = env.step(env.train_action)
    assert info["epochs_trained"] == 3 and info["sim_time"] - clock == pytest.approx(clock / 2)  # one epoch more
    _, reward, terminated, _, info = env.step(env.train_action)
    assert terminated and reward == info["score"] > 0
    env.reset()
    terminated, again = build(env, first)  # fully trained: nothing left, nothing spent
    assert terminated and again["already_trained"] and again["score"] == info["score"]
    assert again["sim_time"] == info["sim_time"] and "objectives" not in again
    env.reset(seed=5)  # a fresh budget forgets the trainings
    assert build(env, first)[1]["epochs_trained"] == 0


@each_mf_id
def test_train_and_stop_are_illegal_while_building_and_build_actions_after_it(env_id, family, mf_bundle):
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(env.train_action)
    assert terminated and info["illegal_action"] and reward == 0
    env.reset()
    build(env, env.space.sample(seed=0))
    _, _, terminated, _, info = env.step(0)
    assert terminated and info["illegal_action"] and info["sim_time"] == 0.0


@each_mf_id
def test_an_epoch_that_spends_the_budget_completes_and_the_next_step_is_truncated(env_id, family, mf_bundle):
    env = gym.make(env_id, budget_seconds=30.0).unwrapped
    env.reset(seed=0)
    build(env, env.space.sample(seed=0))
    truncated = False
    for _ in range(EPOCHS):
        _, _, terminated, truncated, info = env.step(env.train_action)
        if info["budget_exhausted"]:
            assert not truncated and "epoch_val_accuracy" in info
            break
    assert info["budget_exhausted"] and not terminated
    _, reward, terminated, truncated, info = env.step(env.train_action)
    assert truncated and not terminated and reward == 0 and "epoch_val_accuracy" not in info


@each_mf_id
def test_the_same_seed_gives_the_same_episodes_in_the_single_and_the_vector_environment(env_id, family, mf_bundle):
    def single(seed):
        env = gym.make(env_id).unwrapped
        obs, info = env.reset(seed=seed)
        rng, out = np.random.default_rng(seed), []
        for _ in range(150):
            mask = info["action_mask"]
            legal = np.flatnonzero(mask)
            action = env.train_action if mask[env.train_action] and rng.random() < 0.8 else rng.choice(legal)
            obs, reward, terminated, truncated, info = env.step(action)
            out.append((obs.tobytes(), float(reward), info.get("epoch_val_accuracy")))
            if terminated or truncated:
                obs, info = env.reset()
        return out

    assert single(4) == single(4) != single(5)

    def vector(seed):
        envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
        obs, info = envs.reset(seed=seed)
        envs.action_space.seed(seed)
        trace = []
        for _ in range(120):
            obs, rewards, terminated, truncated, info = envs.step(envs.action_space.sample(info["action_mask"]))
            trace.append((obs.tobytes(), rewards.tobytes(), info.get("epoch_val_accuracy", np.zeros(0)).tobytes()))
        return trace

    assert vector(9) == vector(9) != vector(10)


@each_mf_id
def test_the_vector_environment_reports_the_epochs_of_the_copies_that_trained(env_id, family, mf_bundle):
    vector = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", noise=False)
    space = vector.unwrapped.space
    genes = space.sample(2, seed=0)
    vector.reset(seed=0)
    for step in range(space.num_decisions):
        vector.step(genes[:, step])
    train, stop = space.num_actions, space.num_actions + 1
    _, rewards, terminated, _, info = vector.step(np.array([train, stop]))
    assert info["_epoch_val_accuracy"].tolist() == [True, False] and info["epochs_trained"][0] == 1
    assert terminated.tolist() == [False, True] and rewards.tolist() == [0.0, 0.0]
    bench = nas_envs.make_benchmark(family, bundle=mf_bundle)
    assert info["epoch_val_accuracy"][0] == pytest.approx(bench.evaluate(genes[0], noise=False, epochs=1)
                                                          ["val_accuracy"][0])
    for _ in range(3):  # copy 0 trains to the end; copy 1 autoresets and waits
        vector.step(np.array([train, 0]))
    vector.step(np.array([0, 0]))  # copy 0 autoresets
    for step in range(space.num_decisions):  # copy 0 builds its architecture again
        last = space.num_decisions - 1
        _, _, terminated, _, info = vector.step(np.array([genes[0, step], genes[1, min(step, last)]]))
    assert terminated[0] and info["_already_trained"][0] and info["already_trained"][0]


def test_a_bundle_without_a_curve_model_is_refused_at_make():
    with pytest.raises(ValueError, match="learning-curve model"):
        gym.make(ENV_ID, bundle="darts-v0")


def test_successive_halving_and_hyperband_run_from_the_command_line_beside_full_fidelity_agents(tmp_path, capsys):
    out = tmp_path / "runs"
    for agent in ("sh", "hyperband", "rs"):
        assert main(["--quiet", "run", "--env", ENV_ID, "--agent", agent, "--budget", "4h", "--seeds", "2",
                     "--out", str(out)]) == 0
    runs = load_runs(out)
    for agent in ("sh", "hyperband", "rs"):
        for rows in runs[agent]:
            assert rows and all(row["sim_time"] < 4 * 3600 for row in rows[:-1])  # the last epoch may cross it
            assert rows[-1]["incumbent_score"] == max(r["score"] for r in rows)
    # halving trains many architectures partly: fewer full trainings than random search in the same time
    assert sum(map(len, runs["sh"])) < sum(map(len, runs["rs"]))
    png = tmp_path / "anytime.png"
    assert main(["plot", str(out), "-o", str(png)]) == 0 and png.stat().st_size > 0
    printed = capsys.readouterr().out
    assert all(agent in printed for agent in ("sh", "hyperband", "rs"))
    assert json.loads((out / "sh" / "run.json").read_text())["env_id"] == ENV_ID


def test_multi_fidelity_agents_are_refused_on_other_environments(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["run", "--env", "SurrNAS-DARTS-v1", "--agent", "hyperband", "--budget", "1h", "--out",
                 str(out)]) == 2
    assert ("needs a multi-fidelity environment (SurrNAS-DARTS-MF-v0, SurrNAS-DARTS-MF-v1, SurrNAS-FBNet-MF-v1)"
            in capsys.readouterr().err)
    assert not out.exists()


def test_a_bundle_takes_unchanged_files_from_its_base_release_and_checks_them_itself(tmp_path):
    """darts-mf-v0 holds only its learning-curve model and names darts-v0 as its base; a copy of it is checked
    against its own manifest, and a base that is not a released bundle is refused."""
    import shutil

    from nas_envs.assets import AssetError, packaged_bundle

    folder = tmp_path / "mf"
    shutil.copytree(packaged_bundle("darts-mf-v0"), folder)
    assert not (folder / "xgb").exists() and (folder / "curve").is_dir()
    genes = nas_envs.make_benchmark("darts").space.sample(3, seed=0)
    copy = nas_envs.make_benchmark("darts", bundle=folder).evaluate(genes, seed=1, epochs=2)
    assert copy["val_accuracy"].tolist() == nas_envs.make_benchmark("darts", bundle="darts-mf-v0").evaluate(
        genes, seed=1, epochs=2)["val_accuracy"].tolist()
    manifest = json.loads((folder / "manifest.json").read_text())
    tampered, elsewhere = tmp_path / "tampered", tmp_path / "elsewhere"  # new folders: benchmarks are shared
    wrong_sum = {"files": {**manifest["files"], "xgb/val_accuracy/member_0.json": "0" * 64}}
    for copy_folder, change in ((tampered, wrong_sum), (elsewhere, {"base": "darts-v9"})):
        shutil.copytree(folder, copy_folder)
        (copy_folder / "manifest.json").write_text(json.dumps({**manifest, **change}))
    with pytest.raises(AssetError, match=r"darts-v0/xgb/val_accuracy/member_0.json"):  # a base file not the listed one
        nas_envs.make_benchmark("darts", bundle=tampered).evaluate(genes)
    with pytest.raises(AssetError, match="not a released bundle"):
        nas_envs.make_benchmark("darts", bundle=elsewhere).evaluate(genes)


def test_a_budget_too_small_for_one_evaluation_names_the_smallest_that_works(tmp_path, capsys):
    assert main(["run", "--env", ENV_ID, "--agent", "sh", "--budget", "5m", "--seeds", "1",
                 "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    smallest = int(error.rsplit("give a budget of at least ", 1)[1].strip().removesuffix("m"))
    assert "nothing was evaluated within the budget of 300 simulated seconds" in error and smallest > 5
    assert main(["--quiet", "run", "--env", ENV_ID, "--agent", "sh", "--budget", f"{smallest}m", "--seeds", "1",
                 "--out", str(tmp_path / "enough")]) == 0
