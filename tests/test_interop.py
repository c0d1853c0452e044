"""The doors for other tools: normalized scores, NAS-Bench-301's query API, Minari datasets."""

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import nas_envs
from nas_envs.catalogue import ENV_BUNDLES, FAMILIES
from nas_envs.scores import normalized_score, reference_scores

ROOT = Path(__file__).resolve().parents[1]


# --- normalized scores ------------------------------------------------------------------------------------------

def test_every_registered_id_has_reference_scores_of_its_own_bundle():
    for env_id, bundle in ENV_BUNDLES.items():
        reference = reference_scores(env_id)
        assert reference.bundle == bundle
        assert reference.random < reference.best


def test_normalized_score_is_zero_at_random_and_one_at_best_for_numbers_and_arrays():
    reference = reference_scores("SurrNAS-DARTS-v0")
    assert normalized_score("SurrNAS-DARTS-v0", reference.random) == pytest.approx(0.0)
    assert normalized_score("SurrNAS-DARTS-v0", reference.best) == pytest.approx(1.0)
    scores = normalized_score("SurrNAS-DARTS-v0", np.array([reference.random, reference.best, 1.0]))
    assert scores.shape == (3,) and scores[2] > 1.0


def test_normalized_score_refuses_percentages_unknown_ids_and_nan():
    with pytest.raises(ValueError, match="fraction in \\[0, 1\\]"):
        normalized_score("SurrNAS-FBNet-v1", 85.0)
    with pytest.raises(ValueError, match="no reference scores for 'SurrNAS-DARTS-v9'"):
        normalized_score("SurrNAS-DARTS-v9", 0.85)
    with pytest.raises(ValueError, match="finite"):
        normalized_score("CitySeg-MOP1-v0", float("nan"))


def test_accuracy_references_are_what_the_fitted_lines_of_the_data_give():
    from nas_envs.fitting.reference_scores import accuracy_references

    committed = json.loads((ROOT / "nas_envs" / "reference_scores.json").read_text())["ids"]
    for family in (FAMILIES["darts"], FAMILIES["fbnet"]):
        for release in family.releases:
            assert accuracy_references(family, release) == committed[release.env_id]


@pytest.mark.parametrize("env_id", ["CitySeg-MOP1-v0", "CitySeg-MOP9-v0"])  # 2 and 4 objectives: a second each
def test_cityseg_references_are_what_the_sample_and_runs_give(env_id):
    """The problems of 5 to 7 objectives take a minute each (their exact hypervolumes): 'python
    scripts/reference_scores.py --check' checks every id."""
    from nas_envs.fitting.reference_scores import cityseg_references

    committed = json.loads((ROOT / "nas_envs" / "reference_scores.json").read_text())["ids"]
    _, release = nas_envs.catalogue.release_of(env_id)
    runs = ROOT / "docs" / "results" / "cityseg_moea6_31runs.jsonl"
    references, expected = cityseg_references(release, runs), committed[env_id]
    # the random sample's hypervolume goes through the rank-net's float arithmetic, whose last digits differ between
    # CPU kinds (1e-10 relative between an Intel Xeon and an AMD EPYC); everything else is exact
    assert references["random"] == pytest.approx(expected["random"], rel=1e-8)
    assert {**references, "random": None} == {**expected, "random": None}


def test_the_fitted_lines_of_a_rewritten_data_file_are_refused(tmp_path):
    import hashlib

    from nas_envs.groundtruth.records import snapshot_prefix

    first, second = (ROOT / "assets" / "data" / "darts-fmnist14-c8l8-e4-v1.jsonl").read_bytes().splitlines(True)[:2]
    path = tmp_path / "data.jsonl"
    path.write_bytes(first + second)
    digest = hashlib.sha256(first).hexdigest()
    assert snapshot_prefix(path, 1, digest) == [json.loads(first)]
    path.write_bytes(second + first)
    with pytest.raises(ValueError, match="not the ones fitted on"):
        snapshot_prefix(path, 1, digest)


# --- NAS-Bench-301's API ----------------------------------------------------------------------------------------

NB301_EXAMPLE = ("Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
                 "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)], "
                 "normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), "
                 "('max_pool_3x3', 1), ('max_pool_3x3', 0), ('skip_connect', 2), ('skip_connect', 2), "
                 "('max_pool_3x3', 1)], reduce_concat=[2, 3, 4, 5])")


def test_nasbench301_code_runs_with_one_changed_import():
    from nas_envs.interop import nasbench301 as nb

    nb.download_models(version="0.9", delete_zip=True, download_dir=".")
    performance_model = nb.load_ensemble("nb_models_0.9/xgb_v0.9")
    runtime_model = nb.load_ensemble("nb_models_0.9/lgb_runtime_v0.9")
    genotype = eval(NB301_EXAMPLE, {"Genotype": nb.Genotype})
    mean = performance_model.predict(config=genotype, representation="genotype", with_noise=False)
    benchmark = nas_envs.make_benchmark("darts", surrogate="xgb")
    expected = benchmark.evaluate(NB301_EXAMPLE, noise=False)
    assert mean == pytest.approx(100 * expected["val_accuracy"][0])
    noisy = [performance_model.predict(config=genotype, representation="genotype") for _ in range(20)]
    assert np.std(noisy) > 0 and abs(np.mean(noisy) - mean) < 1.0  # percent: draws around the mean
    assert runtime_model.predict(config=genotype, representation="genotype", with_noise=False) == pytest.approx(
        expected["train_time_s"][0])


def test_nasbench301_representations_of_one_architecture_agree():
    from nas_envs.interop import nasbench301 as nb
    from nas_envs.spaces.configspace import configuration_from_genes

    model = nb.load_ensemble("nb_models_1.0/gnn_gin_v1.0")
    assert model.model == "gin"
    genes = model.benchmark.space.from_string(NB301_EXAMPLE)
    configuration = configuration_from_genes(model.benchmark.space, genes)
    with_fixed = {**dict(configuration), "OptimizerSelector:sgd:learning_rate": 0.025}  # NB301 adds these
    genotype = eval(NB301_EXAMPLE, {"Genotype": nb.Genotype})
    bananas = tuple([(node, nb.OPS.index(op)) for op, node in cell] for cell in (genotype.normal, genotype.reduce))
    answers = {model.predict(config, representation, with_noise=False) for config, representation in
               ((genotype, "genotype"), (NB301_EXAMPLE, "genotype"), (configuration, "configspace"),
                (with_fixed, "configspace"), (bananas, "BANANAS"))}
    assert len(answers) == 1
    with pytest.raises(NotImplementedError, match="genotype, configspace, BANANAS"):
        model.predict(genotype, "compact")


def test_nasbench301_noise_is_seeded_at_load():
    from nas_envs.interop import nasbench301 as nb

    first, second = (nb.load_ensemble("xgb_v0.9", seed=3) for _ in range(2))
    assert [first.predict(NB301_EXAMPLE, "genotype") for _ in range(3)] == [
        second.predict(NB301_EXAMPLE, "genotype") for _ in range(3)]


# --- Minari ------------------------------------------------------------------------------------------------------

def test_a_minari_dataset_recovers_its_environment_and_normalizes_its_returns(tmp_path, monkeypatch):
    minari = pytest.importorskip("minari", reason="Minari datasets are optional: pip install -e '.[minari]'")
    pytest.importorskip("h5py")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    from nas_envs.interop.minari_datasets import write_dataset

    dataset = write_dataset("SurrNAS-FBNet-v1", "re", episodes=12, seed=5)
    assert dataset.total_episodes == 12 and dataset.total_steps == 12 * 22
    loaded = minari.load_dataset("nas-envs/surrnas-fbnet-v1/re-v0")
    env = loaded.recover_environment()
    assert env.spec.id == "SurrNAS-FBNet-v1"
    episodes = list(loaded.iterate_episodes())
    for episode in episodes:  # every stored step is legal and in the spaces
        assert episode.observations.shape == (23, *env.observation_space.shape)
        assert env.observation_space.contains(episode.observations[0].astype(np.float32))
        assert episode.terminations[-1] and not episode.terminations[:-1].any()
    returns = np.array([episode.rewards.sum() for episode in episodes])
    assert np.allclose(minari.get_normalized_score(loaded, returns), normalized_score("SurrNAS-FBNet-v1", returns))
    # the same seed gives the same episodes
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "again"))
    again = write_dataset("SurrNAS-FBNet-v1", "re", episodes=12, seed=5)
    for ours, theirs in zip(episodes, again.iterate_episodes()):
        assert np.array_equal(ours.actions, theirs.actions) and np.array_equal(ours.rewards, theirs.rewards)


def test_a_minari_dataset_replays_in_its_recovered_environment(tmp_path, monkeypatch):
    """The stored actions of an episode, played in the recovered environment, end with the stored reward
    (noise-free, so the reward does not depend on the noise stream)."""
    pytest.importorskip("minari", reason="Minari datasets are optional: pip install -e '.[minari]'")
    pytest.importorskip("h5py")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    from nas_envs.interop.minari_datasets import write_dataset

    dataset = write_dataset("SurrNAS-DARTS-v1", "rs", episodes=3, seed=0, noise=False)
    env = gym.make(dataset.spec.env_spec, noise=False)
    for episode in dataset.iterate_episodes():
        observation, _ = env.reset(seed=0)
        assert np.allclose(observation, episode.observations[0])
        for action in episode.actions:
            observation, reward, terminated, _, _ = env.step(int(action))
        assert terminated and reward == pytest.approx(episode.rewards[-1])


# --- the mask in the observation: TorchRL, RLlib -----------------------------------------------------------------

def test_the_mask_in_the_observation_passes_gymnasiums_checker_and_is_the_environments_mask():
    from gymnasium.utils.env_checker import check_env

    from nas_envs.interop.masks import MaskInObservation

    for env_id in ("SurrNAS-DARTS-v1", "SurrNAS-FBNet-v1", "CitySeg-MOP2-v0", "SurrNAS-DARTS-MF-v1"):
        env = MaskInObservation(gym.make(env_id))
        with pytest.warns(UserWarning, match="different from the unwrapped"):  # the checker's note on wrappers
            check_env(env, skip_render_check=True)
        observation, info = env.reset(seed=0)
        assert np.array_equal(observation["action_mask"], info["action_mask"])
        observation, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        assert np.array_equal(observation["action_mask"], env.unwrapped.action_masks())
        assert env.observation_space.contains(observation)


def test_the_mask_in_the_observation_needs_a_masked_discrete_environment():
    from nas_envs.interop.masks import MaskInObservation

    with pytest.raises(ValueError, match="Discrete action space and action_masks"):
        MaskInObservation(gym.make("Pendulum-v1"))


def _run_example(name: str, *arguments: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), *arguments], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_torchrl_trains_a_masked_policy_that_takes_only_legal_actions():
    pytest.importorskip("torchrl", reason="the TorchRL example is optional: pip install torchrl")
    output = _run_example("torchrl_masked_ppo.py", "--frames", "2048")
    assert "64 architectures completed in 2048 decisions" in output  # an illegal action ends an episode early


@pytest.mark.slow
def test_rllib_trains_a_masked_policy_that_takes_only_legal_actions():
    pytest.importorskip("ray.rllib", reason="the RLlib example is optional: pip install 'ray[rllib]'")
    pytest.importorskip("ray.tune", reason="the RLlib example is optional: pip install 'ray[rllib]'")
    output = _run_example("rllib_masked_ppo.py", "--iterations", "2")
    lengths = [line.rsplit("mean length ", 1)[1] for line in output.splitlines() if "mean length" in line]
    assert lengths == ["32.0", "32.0"]  # every episode a whole architecture: no illegal action ended one early


# --- syne-tune ---------------------------------------------------------------------------------------------------

def test_a_flat_assignment_of_every_choice_reads_as_its_active_configuration():
    from nas_envs.spaces import get_space
    from nas_envs.spaces.configspace import active_values

    for name in ("darts", "fbnet", "cityseg"):
        space = get_space(name)
        genes = space.sample(5, seed=1)
        for row in genes:
            values = space.values_from_genes(row)
            flat = {hp.name: values.get(hp.name, hp.choices[-1]) for hp in space.hyperparameters()}
            assert np.array_equal(space.genes_from_values(active_values(space, flat)), space.canonicalize(row))


def test_syne_tune_replays_the_multi_fidelity_benchmark_on_its_simulated_clock(tmp_path, monkeypatch):
    pytest.importorskip("syne_tune", reason="the syne-tune blackbox is optional: pip install -e '.[synetune]'")
    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.experiments import load_experiment
    from syne_tune.optimizer.baselines import ASHA

    from nas_envs.interop.syne_tune import ELAPSED_TIME, EPOCH, blackbox

    monkeypatch.setenv("SYNETUNE_FOLDER", str(tmp_path))
    box = blackbox("SurrNAS-DARTS-MF-v1", seed=0)
    configuration = {name: domain.sample(random_state=np.random.RandomState(0))
                     for name, domain in box.configuration_space.items()}
    table = box.objective_function(configuration, seed=3)
    assert table.shape == (4, len(box.objectives_names))
    assert np.array_equal(table, box.objective_function(configuration, seed=3))  # one draw per architecture
    assert np.all(np.diff(table[:, box.objectives_names.index(ELAPSED_TIME)]) > 0)
    scheduler = ASHA(box.configuration_space, metric="val_accuracy", do_minimize=False, time_attr=EPOCH, max_t=4,
                     reduction_factor=2, random_seed=0)
    tuner = Tuner(UserBlackboxBackend(blackbox=box, elapsed_time_attr=ELAPSED_TIME, seed=0), scheduler,
                  StoppingCriterion(max_wallclock_time=3600), n_workers=4, sleep_time=0,
                  callbacks=[SimulatorCallback()], save_tuner=False, tuner_name="darts-asha")
    tuner.run()
    results = load_experiment(tuner.name).results
    assert results["st_tuner_time"].max() <= 3600 + 200  # the simulated clock, not this machine's
    assert results[EPOCH].isin([1, 2, 3, 4]).all() and (results[EPOCH] == 1).sum() > (results[EPOCH] == 4).sum()
    assert results["val_accuracy"].between(0, 1).all()


# --- the command line's doors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["dataset", "--env", "SurrNAS-Darts-v0"], "did you mean 'SurrNAS-DARTS-v0'"),
    (["dataset", "--env", "SurrNAS-DARTS-v0", "--episodes", "0"], "must be an integer >= 1"),
    (["grid", "--envs", "SurrNAS-FBNet-v1", "--agents", "sh", "--budget", "1h", "--out", "x"],
     "needs a multi-fidelity environment"),
    (["grid", "--envs", "SurrNAS-DARTS-v0", "--agents", "rs", "--budget", "24", "--out", "x"], "with its unit"),
])
def test_dataset_and_grid_refuse_bad_arguments_with_a_clear_line(argv, message, capsys):
    from nas_envs.cli import main

    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own refusals
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_grid_rerun_adds_seeds_and_never_mixes_settings(tmp_path, capsys):
    from nas_envs.cli import main

    out = str(tmp_path / "grid")
    assert main(["--quiet", "grid", "--envs", "SurrNAS-FBNet-v1", "--agents", "rs", "--budget", "1h", "--seeds",
                 "2", "--out", out]) == 0
    assert "SurrNAS-FBNet-v1:" in capsys.readouterr().out
    assert main(["--quiet", "grid", "--envs", "SurrNAS-FBNet-v1", "--agents", "rs", "--budget", "1h", "--seeds",
                 "1", "--first-seed", "2", "--out", out]) == 0
    assert sorted(p.name for p in (tmp_path / "grid" / "SurrNAS-FBNet-v1" / "rs").glob("seed_*")) == [
        "seed_0.jsonl", "seed_1.jsonl", "seed_2.jsonl"]
    assert main(["--quiet", "grid", "--envs", "SurrNAS-FBNet-v1", "--agents", "rs", "--budget", "2h", "--out",
                 out]) == 2
    assert "holds runs of other settings" in capsys.readouterr().err
