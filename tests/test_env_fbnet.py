import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import nas_envs
from nas_envs.spaces.fbnet import FBNetSpace

ENV_ID = "SurrNAS-FBNet-v1"
SPACE = FBNetSpace()
BENCHMARK = nas_envs.make_benchmark("fbnet", bundle=nas_envs.ENV_BUNDLES[ENV_ID])  # the id's own bundle



def play(env, genes):
    for action in genes:
        _, reward, terminated, _, info = env.step(int(action))
    assert terminated
    return reward, info


def test_checkers_pass_without_a_warning():
    env, other = gym.make(ENV_ID).unwrapped, gym.make(ENV_ID).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checkers report most problems as warnings
        check_env(env)
        sb3_check_env(other)


def test_v0_stays_loadable_and_says_its_rewards_are_mostly_noise():
    with pytest.warns(UserWarning, match="mostly noise.*SurrNAS-FBNet-v1"):
        env = gym.make("SurrNAS-FBNet-v0", noise=False)
    env.reset(seed=0)
    genes = SPACE.sample(seed=1)
    reward, _ = play(env, genes)
    v0 = nas_envs.make_benchmark("fbnet", bundle="fbnet-v0").evaluate(genes[None], noise=False)
    assert reward == pytest.approx(v0["val_accuracy"][0]) != BENCHMARK.evaluate(genes[None], noise=False)[
        "val_accuracy"][0]


def test_episode_contract_and_benchmark_agreement():
    env = gym.make(ENV_ID, noise=False)
    obs, info = env.reset(seed=0)
    assert obs.shape == (222,) and info["action_mask"].tolist() == [1] * 9
    genes = SPACE.sample(seed=1)
    reward, info = play(env, genes)
    assert info["architecture"] == SPACE.to_string(genes)
    expected = BENCHMARK.evaluate(genes[None], noise=False)
    assert reward == pytest.approx(expected["val_accuracy"][0])
    assert info["objectives"]["params"] == expected["params"][0]
    assert 0.3 < reward < 1.0


def test_seeded_noise_and_renders():
    genes = SPACE.sample(seed=2)
    rewards = []
    for seed in (0, 0, 1):
        env = gym.make(ENV_ID)
        env.reset(seed=seed)
        rewards.append(play(env, genes)[0])
    assert rewards[0] == rewards[1] != rewards[2]
    env = gym.make(ENV_ID, render_mode="rgb_array")
    env.reset(seed=0)
    for action in genes[:5]:
        env.step(int(action))
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3
    env = gym.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    play(env, genes)
    assert "FBNet([" in env.render()


def test_vector_env_batches_completions():
    venv = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", noise=False)
    venv.reset(seed=0)
    archs = SPACE.sample(3, seed=4)
    for step in range(22):
        _, rewards, terminated, _, info = venv.step(archs[:, step])
    assert terminated.all()
    expected = BENCHMARK.evaluate(archs, noise=False)["val_accuracy"]
    np.testing.assert_allclose(rewards, expected)


def test_each_release_reports_the_exact_params_and_flops_of_its_protocol_network():
    """v1 is fitted on the full-width network and v0 on the half-width one: each reports its own network's costs."""
    import torch

    from nas_envs.groundtruth.cost_tables import measure_costs
    from nas_envs.groundtruth.protocols import PROTOCOLS

    torch.set_num_threads(1)
    archs = SPACE.sample(4, seed=5)
    for bundle in ("fbnet-v0", "fbnet-v1"):
        bench = nas_envs.make_benchmark("fbnet", bundle=bundle)
        out = bench.evaluate(archs, noise=False)
        measured = measure_costs(SPACE, PROTOCOLS[bench.manifest["protocol"]], archs)
        np.testing.assert_array_equal(out["params"], measured[:, 0])
        np.testing.assert_array_equal(out["flops"], measured[:, 1])
    assert bench.manifest["protocol"] == "fbnet-fmnist14-full-e4-v1"
