"""Which benchmarks exist is declared once: a family added to the catalogue is known everywhere."""

import gymnasium as gym
import pytest

import nas_envs
from nas_envs.catalogue import ENV_BUNDLES, FAMILIES, register_family, unregister_family
from nas_envs.cli import main
from nas_envs.spaces import get_space
from tests.toy_family import TOY


@pytest.fixture
def toy_family():
    register_family(TOY)
    yield TOY
    unregister_family(TOY.name)


def test_a_family_declared_once_is_seen_by_make_benchmark_gym_list_and_run(toy_family, tmp_path, capsys):
    assert get_space("toy").num_decisions == 3
    bench = nas_envs.make_benchmark("toy")
    assert bench.evaluate(["Toy(3,3,3)"], noise=False)["val_accuracy"].tolist() == [pytest.approx(0.95)]
    env = gym.make("Toy-NAS-v0")
    obs, info = env.reset(seed=0)
    for action in (3, 3, 3):
        obs, reward, terminated, truncated, info = env.step(action)
    assert terminated and info["architecture"] == "Toy(3,3,3)"
    vector = gym.make_vec("Toy-NAS-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert vector.action_space.shape == (2,)
    assert main(["list"]) == 0
    assert "Toy-NAS-v0           toy-v0" in capsys.readouterr().out
    assert main(["run", "--env", "Toy-NAS-v0", "--agent", "re", "--budget", "2h", "--seeds", "2",
                 "--out", str(tmp_path)]) == 0
    assert "re             2      72" in capsys.readouterr().out  # 7200 s at 100 s an evaluation
    assert nas_envs.closest_env_id("toy-nas-v0") == "Toy-NAS-v0"


def test_unregistering_forgets_the_family_everywhere(toy_family):
    unregister_family("toy")
    assert "toy" not in FAMILIES and "Toy-NAS-v0" not in ENV_BUNDLES and "Toy-NAS-v0" not in gym.registry
    with pytest.raises(ValueError, match="unknown benchmark 'toy'"):
        nas_envs.make_benchmark("toy")
    register_family(TOY)  # for the fixture's teardown


def test_a_second_family_of_a_declared_name_is_refused(toy_family):
    with pytest.raises(ValueError, match="already declared"):
        register_family(TOY)


def test_every_registered_id_comes_from_the_catalogue():
    declared = {release.env_id for family in FAMILIES.values() for release in family.releases}
    assert declared == set(ENV_BUNDLES) == set(nas_envs.ENV_BUNDLES)
    registered = {env_id for env_id, spec in gym.registry.items() if str(spec.entry_point).startswith("nas_envs.")}
    assert registered == declared
