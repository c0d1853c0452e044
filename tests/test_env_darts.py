import json
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import nas_envs
from nas_envs import BudgetExhaustedError
from nas_envs.envs.sequential import InvalidActionError
from nas_envs.spaces.darts import DartsSpace

ENV_ID = "SurrNAS-DARTS-v1"
SPACE = DartsSpace()


def play(env, genes):
    info = None
    for action in genes:
        _, reward, terminated, truncated, info = env.step(int(action))
    assert terminated and not truncated
    return reward, info


def random_episode_rewards(seed, episodes=3):
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(episodes):
        env.reset()
        for _ in range(SPACE.num_decisions):
            action = rng.choice(np.flatnonzero(env.unwrapped.action_masks()))
            _, reward, terminated, _, info = env.step(action)
        out.append((info["architecture"], reward, info["objectives"]["test_accuracy"], info["sim_time"]))
    return out


def test_gymnasium_and_sb3_checkers_pass_without_a_warning():
    env, other = gym.make(ENV_ID).unwrapped, gym.make(ENV_ID).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checkers report most problems as warnings
        check_env(env)
        sb3_check_env(other)


def test_episode_builds_the_architecture_and_reports_the_contract():
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=0)
    assert obs.shape == (258,) and obs.dtype == np.float32
    assert info["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(info["action_mask"], env.unwrapped.action_masks())
    genes = SPACE.sample(seed=4)
    reward, info = play(env, genes)
    assert info["architecture"] == SPACE.to_string(genes)
    objectives = info["objectives"]
    assert set(objectives) == {"val_accuracy", "test_accuracy", "train_time_s", "params", "flops"}
    assert reward == objectives["val_accuracy"] and 0.5 < reward < 1.0
    assert info["sim_time"] == pytest.approx(objectives["train_time_s"])
    assert info["budget_exhausted"] is False


def test_rewards_match_the_benchmark():
    bench = nas_envs.make_benchmark("darts")
    genes = SPACE.sample(seed=8)
    env = gym.make(ENV_ID, noise=False)
    env.reset(seed=1)
    reward, info = play(env, genes)
    expected = bench.evaluate([SPACE.to_string(genes)], noise=False)
    assert reward == pytest.approx(expected["val_accuracy"][0])
    assert info["objectives"]["params"] == expected["params"][0]


def test_same_seed_same_episodes_across_processes():
    here = random_episode_rewards(seed=5)
    assert here == random_episode_rewards(seed=5)
    assert here != random_episode_rewards(seed=6)
    code = (
        "import json, sys; sys.path.insert(0, 'tests'); from test_env_darts import random_episode_rewards; "
        "print(json.dumps(random_episode_rewards(seed=5)))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert [tuple(row) for row in json.loads(other)] == here


def test_noise_is_seeded_and_noise_free_mode_is_deterministic():
    genes = SPACE.sample(seed=2)
    rewards = []
    for noise, seed in ((True, 0), (True, 0), (True, 1), (False, 0), (False, 1)):
        env = gym.make(ENV_ID, noise=noise)
        env.reset(seed=seed)
        rewards.append(play(env, genes)[0])
    assert rewards[0] == rewards[1] != rewards[2]
    assert rewards[3] == rewards[4]


def test_illegal_action_ends_the_episode_without_spending_time():
    env = gym.make(ENV_ID)
    _, info = env.reset(seed=0)
    # node 2 has inputs 0 and 1 and input_a must be the smaller one: only 0 is legal
    np.testing.assert_array_equal(info["action_mask"], [1, 0, 0, 0, 0, 0, 0])
    obs, reward, terminated, truncated, info = env.step(1)
    assert terminated and not truncated and reward == 0.0 and info["illegal_action"] is True
    assert info["sim_time"] == 0.0
    env.reset()
    with pytest.raises(RuntimeError, match="episode has ended"):
        play(env, SPACE.sample(seed=0))
        env.step(0)


def spend_budget(env) -> dict:
    """Play random architectures until the budget is spent; returns the info of the spending step."""
    env.reset(seed=0)
    spent = 0
    while True:
        _, info = play(env, SPACE.sample(seed=spent))
        spent += 1
        if info["budget_exhausted"]:
            return info
        obs, _ = env.reset()
        assert 0.0 < obs[-1] < 1.0  # the remaining fraction is observed


def test_reset_after_the_budget_is_spent_succeeds_and_the_next_step_is_truncated():
    env = gym.make(ENV_ID, budget_seconds=250.0)
    info = spend_budget(env)
    assert info["sim_time"] >= 250.0
    obs, info = env.reset()  # never raises: wrappers and auto-reset loops rely on it
    assert info["budget_exhausted"] is True and obs[-1] == 0.0
    spent_time = info["sim_time"]
    obs, reward, terminated, truncated, info = env.step(0)
    assert truncated and not terminated and reward == 0.0 and "objectives" not in info
    assert info["sim_time"] == spent_time  # nothing beyond the budget is evaluated
    _, info = env.reset(options={"reset_budget": True})
    assert info["sim_time"] == 0.0 and info["budget_exhausted"] is False


def test_strict_budget_raises_on_reset_once_spent():
    env = gym.make(ENV_ID, budget_seconds=250.0, strict_budget=True)
    spend_budget(env)
    with pytest.raises(BudgetExhaustedError, match="reset_budget"):
        env.reset()
    _, info = env.reset(seed=1)
    assert info["sim_time"] == 0.0


def test_vector_copies_over_budget_truncate_without_evaluating():
    envs = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", budget_seconds=120.0)
    envs.reset(seed=0)
    truncated_seen = False
    for _ in range(SPACE.num_decisions * 4):
        masks = envs.unwrapped.action_masks()
        _, rewards, terminated, truncated, info = envs.step(masks.argmax(axis=1))
        truncated_seen |= truncated.any()
        assert (rewards[truncated] == 0.0).all()
        if "objectives" in info:
            assert not (info["_objectives"] & truncated).any()
    assert truncated_seen and info["budget_exhausted"].all()


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="budget_seconds must be None or a positive"):
        gym.make(ENV_ID, budget_seconds=-5)
    with pytest.raises(ValueError, match="render_mode must be one of"):
        gym.make(ENV_ID, render_mode="video")
    for not_a_string in (1, 2.5, ["ansi"]):  # Gymnasium's make would fail on str.endswith before the environment
        with pytest.raises(ValueError, match=r"render_mode must be one of \['ansi', 'rgb_array'\] or None, got"):
            gym.make(ENV_ID, render_mode=not_a_string)
    with pytest.raises(ValueError, match="unknown surrogate"):
        gym.make(ENV_ID, surrogate="lgb")


def test_renders():
    env = gym.make(ENV_ID, render_mode="ansi", noise=False)
    env.reset(seed=0)
    genes = SPACE.sample(seed=3)
    play(env, genes)
    text = env.render()
    assert SPACE.to_string(genes) in text and "val_accuracy" in text
    env = gym.make(ENV_ID, render_mode="rgb_array")
    env.reset(seed=0)
    blank = env.render()
    for action in genes[:16]:
        env.step(int(action))
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.shape == blank.shape and not np.array_equal(frame, blank)  # drawn edges appear


def test_vector_env_matches_single_envs():
    num_envs = 4
    venv = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", noise=False)
    obs, info = venv.reset(seed=0)
    assert obs.shape == (num_envs, 258)
    archs = SPACE.sample(num_envs, seed=9)
    for step in range(SPACE.num_decisions):
        np.testing.assert_array_equal(info["action_mask"][0], SPACE.action_mask(archs[0, :step]))
        obs, rewards, terminated, truncated, info = venv.step(archs[:, step])
    assert terminated.all() and info["_architecture"].all()
    single = gym.make(ENV_ID, noise=False)
    for row in range(num_envs):
        single.reset(seed=0)
        reward, single_info = play(single, archs[row])
        assert rewards[row] == pytest.approx(reward)
        assert info["architecture"][row] == single_info["architecture"]
        np.testing.assert_array_equal(obs[row], single.unwrapped._episodes.obs[0])
    # next-step autoreset: the following step starts new architectures and ignores the actions
    obs, rewards, terminated, _, info = venv.step(np.zeros(num_envs, dtype=int))
    assert not terminated.any() and (rewards == 0).all()
    assert (obs[:, 7 * 32] == 1).all()


@pytest.mark.parametrize("action", [-1, 7, 99, 2**40])
def test_an_action_outside_the_action_space_is_a_programming_error(action):
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match=r"outside the action space Discrete\(7\): allowed are 0 to 6"):
        env.step(action)
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    with pytest.raises(InvalidActionError, match="of copy 1 is outside the action space"):
        venv.step(np.array([0, action]))


def test_human_rendering_is_refused_at_make_with_the_supported_modes():
    with pytest.raises(ValueError, match=r"render_mode must be one of \['ansi', 'rgb_array'\] or None, got 'human'"):
        gym.make(ENV_ID, render_mode="human")


def test_vector_env_flags_illegal_actions_per_copy():
    venv = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    _, rewards, terminated, _, info = venv.step(np.array([0, 6]))  # 6 is no input of node 2
    assert terminated.tolist() == [False, True]
    assert info["illegal_action"].tolist() == [False, True]


@pytest.mark.parametrize("reward", ["standardised", "percentile"])
def test_learning_rewards_are_the_score_against_random_architectures(reward):
    bench = nas_envs.make_benchmark("darts")
    reference = bench.random_reference()
    env = gym.make(ENV_ID, reward=reward, noise=False)
    env.reset(seed=0)
    genes = SPACE.sample(seed=5)
    shaped, info = play(env, genes)
    score = info["score"]
    assert score == pytest.approx(bench.evaluate(genes, noise=False)["val_accuracy"][0])
    expected = (score - reference.mean()) / reference.std() if reward == "standardised" else \
        np.mean(reference < score)
    assert shaped == pytest.approx(expected)
    vector = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", reward=reward, noise=False)
    vector.reset(seed=0)
    for action in genes:
        _, rewards, _, _, _ = vector.step(np.array([action, action]))
    np.testing.assert_allclose(rewards, shaped)
    with pytest.raises(ValueError, match="reward must be one of"):
        gym.make(ENV_ID, reward="rank")


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_the_readmes_vector_sampling_idiom_works_in_every_vectorization_mode(mode):
    envs = gym.make_vec("SurrNAS-DARTS-v1", num_envs=3, vectorization_mode=mode)
    _, info = envs.reset(seed=0)
    envs.action_space.seed(0)
    for _ in range(32):
        _, _, terminated, _, info = envs.step(envs.action_space.sample(tuple(info["action_mask"])))
    assert terminated.all()  # every copy completed its architecture: no masked action was drawn
