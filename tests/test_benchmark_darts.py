import shutil

import numpy as np
import pytest
import torch

import nas_envs
from nas_envs.assets import AssetError, packaged_bundle
from nas_envs.benchmarks import SurrogateBenchmark
from nas_envs.benchmarks.model_kinds import MODEL_KINDS, Encodings
from nas_envs.groundtruth.cost_tables import measure_costs
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from nas_envs.spaces.base import InvalidArchitectureError
from nas_envs.spaces.darts import DartsSpace
from tests.test_darts_space import DARTS_V2, PC_DARTS


@pytest.fixture(scope="module")
def bench():
    return nas_envs.make_benchmark("darts").load()


def test_batched_evaluation_returns_every_objective(bench):
    archs = bench.space.sample(100, seed=0)
    out = bench.evaluate(archs, noise=False)
    assert set(out) == set(bench.objectives)
    for values in out.values():
        assert values.shape == (100,) and np.isfinite(values).all()
    assert ((out["val_accuracy"] > 0.5) & (out["val_accuracy"] < 1)).all()
    assert (out["train_time_s"] > 0).all()
    assert out["val_accuracy"].std() > 0  # architectures are told apart


def test_published_genotype_strings_are_accepted(bench):
    out = bench.evaluate([DARTS_V2, PC_DARTS], noise=False)
    genes = bench.space.as_batch([DARTS_V2, PC_DARTS])
    np.testing.assert_array_equal(out["val_accuracy"], bench.evaluate(genes, noise=False)["val_accuracy"])


def test_noise_follows_the_seed(bench):
    archs = bench.space.sample(50, seed=1)
    a = bench.evaluate(archs, noise=True, seed=7)
    np.testing.assert_array_equal(a["val_accuracy"], bench.evaluate(archs, noise=True, seed=7)["val_accuracy"])
    b = bench.evaluate(archs, noise=True, seed=8)
    assert not np.array_equal(a["val_accuracy"], b["val_accuracy"])
    mean = bench.evaluate(archs, noise=False)["val_accuracy"]
    spread = np.std(a["val_accuracy"] - mean)
    assert 0 < spread < 0.02  # about the measured seed-to-seed noise, not more


def test_noise_stays_within_the_measured_range_of_seed_noise(bench):
    archs = bench.space.sample(300, seed=2)
    entry = bench.manifest["models"]["xgb"]
    low, high = entry["noise_range"]["val_accuracy"]
    assert 0 < low < high < 0.01
    inputs = MODEL_KINDS["xgb"].inputs(Encodings(bench.space, archs, bench.cost_table, bench.feature_version))
    members = bench._models["xgb"].predict(inputs)[:, :, 0]
    scaled = members.std(axis=1, ddof=1) * entry["noise_scale"]["val_accuracy"]
    assert scaled.min() < low and scaled.max() > high  # the clipping binds at both ends
    _, noise = bench.mean_and_noise_std(archs)["val_accuracy"]
    assert noise.min() == pytest.approx(low) and noise.max() == pytest.approx(high)
    widest = archs[np.argmax(noise)][None].repeat(4000, axis=0)
    draws = bench.evaluate(widest, noise=True, seed=3)["val_accuracy"]
    assert np.std(draws) == pytest.approx(high, rel=0.1)


def test_xgb_plus_gin_averages_the_means_and_noise_of_both_ensembles():
    archs = nas_envs.make_benchmark("darts").space.sample(30, seed=4)
    single = {kind: nas_envs.make_benchmark("darts", surrogate=kind).mean_and_noise_std(archs)
              for kind in ("xgb", "gin")}
    both = nas_envs.make_benchmark("darts", surrogate="xgb+gin")
    for target, (mean, noise) in both.mean_and_noise_std(archs).items():
        np.testing.assert_allclose(mean, (single["xgb"][target][0] + single["gin"][target][0]) / 2)
        np.testing.assert_allclose(noise, (single["xgb"][target][1] + single["gin"][target][1]) / 2)
    assert not np.allclose(single["xgb"]["val_accuracy"][0], single["gin"]["val_accuracy"][0])
    np.testing.assert_allclose(both.evaluate(archs, noise=False)["val_accuracy"],
                               both.mean_and_noise_std(archs)["val_accuracy"][0])


def test_params_and_flops_are_exact(bench):
    torch.set_num_threads(1)
    archs = bench.space.sample(8, seed=3)
    out = bench.evaluate(archs, noise=False)
    measured = measure_costs(bench.space, PROTOCOLS[DEFAULT_PROTOCOL["darts"]], archs)
    np.testing.assert_array_equal(out["params"], measured[:, 0])
    np.testing.assert_array_equal(out["flops"], measured[:, 1])


def test_bad_architectures_raise(bench):
    with pytest.raises(InvalidArchitectureError, match=r"shape \(N, 32\)"):
        bench.evaluate(np.zeros((3, 31), dtype=int))
    bad = bench.space.sample(2, seed=0)
    bad[1, 0] = 9
    with pytest.raises(InvalidArchitectureError, match="input 9 is not allowed"):
        bench.evaluate(bad)
    with pytest.raises(InvalidArchitectureError, match="not a Genotype"):
        bench.evaluate(["Genotype(normal=[(]"])


def test_corrupted_or_missing_model_files_are_named(tmp_path):
    copy = tmp_path / "darts"
    shutil.copytree(packaged_bundle("darts-v0"), copy)
    member = next(copy.glob("xgb/val_accuracy/member_*.json"))
    member.write_bytes(member.read_bytes()[:-10])
    with pytest.raises(AssetError, match=rf"corrupted model file .*{member.name}.*nas-envs fit"):
        SurrogateBenchmark(DartsSpace(), copy).evaluate(DARTS_V2)
    member.unlink()
    with pytest.raises(AssetError, match=rf"missing model file .*{member.name}"):
        SurrogateBenchmark(DartsSpace(), copy).evaluate(DARTS_V2)


def test_a_changed_released_bundle_is_refused(tmp_path, monkeypatch):
    for copy in ("faithful", "changed"):
        shutil.copytree(packaged_bundle("darts-v0"), tmp_path / copy / "models" / "darts-v0")
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path / "faithful"))
    assert nas_envs.make_benchmark("darts", bundle="darts-v0").evaluate(DARTS_V2, noise=False)["val_accuracy"][0] > 0.5
    manifest = tmp_path / "changed" / "models" / "darts-v0" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"seed": 0', '"seed": 1', 1))  # a refit, say
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path / "changed"))
    with pytest.raises(AssetError, match="not the released manifest"):
        nas_envs.make_benchmark("darts", bundle="darts-v0").evaluate(DARTS_V2)


def test_unknown_benchmark_and_surrogate():
    with pytest.raises(ValueError, match="unknown benchmark 'nb201'"):
        nas_envs.make_benchmark("nb201")
    with pytest.raises(ValueError, match="unknown surrogate 'lgb'"):
        nas_envs.make_benchmark("darts", surrogate="lgb")
