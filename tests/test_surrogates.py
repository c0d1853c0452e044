import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb

from nas_envs.assets import AssetError, read_verified_manifest, write_manifest
from nas_envs.surrogates import forest as forest_module
from nas_envs.surrogates.forest import ForestEnsemble
from nas_envs.surrogates.metrics import all_metrics, sparse_kendall_tau
from nas_envs.surrogates.noise import SeedNoise, calibration_scale, measure_seed_noise, noise_std
from nas_envs.surrogates.xgb import fit_xgb_ensemble


@pytest.fixture(scope="module")
def ensemble_files(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(300, 40)).astype(np.float32)
    x[:, -1] = rng.normal(size=300)  # one continuous feature with arbitrary thresholds
    y = x[:, :5].sum(axis=1) * 0.01 + 0.02 * x[:, -1] + rng.normal(0, 0.005, size=300)
    paths = fit_xgb_ensemble(x, y, tmp_path_factory.mktemp("ens"), members=4, seed=1, rounds=60,
                             params={"max_depth": 5})
    return x, y, paths


def test_forest_matches_xgboost_predictions(ensemble_files):
    x, _, paths = ensemble_files
    forest = ForestEnsemble.from_files(paths)
    rng = np.random.default_rng(5)
    probe = np.concatenate([x[:50], rng.integers(0, 2, size=(20, 40)).astype(np.float32)])
    ours = forest.predict(probe)
    for member, path in enumerate(paths):
        booster = xgb.Booster(model_file=str(path))
        np.testing.assert_allclose(ours[:, member], booster.predict(xgb.DMatrix(probe)), rtol=1e-5, atol=1e-6)


def test_one_row_predictions_match_xgboost(ensemble_files):
    """The environments' path, one architecture at a time, on trees whose leaves sit at several depths."""
    x, _, paths = ensemble_files
    forest = ForestEnsemble.from_files(paths)
    boosters = [xgb.Booster(model_file=str(path)) for path in paths]
    for row in x[:12]:
        ours = forest.predict(row[None])
        for member, booster in enumerate(boosters):
            np.testing.assert_allclose(ours[0, member], booster.predict(xgb.DMatrix(row[None]))[0], rtol=1e-5,
                                       atol=1e-6)


def test_forest_refuses_trees_deeper_than_its_layout(ensemble_files, monkeypatch):
    _, _, paths = ensemble_files
    monkeypatch.setattr(forest_module, "MAX_DEPTH", 4)  # the fixture's trees reach depth 5
    with pytest.raises(ValueError, match="trees of depth at most 4 are supported .* got depth 5"):
        ForestEnsemble.from_files(paths)


def test_forest_rejects_wrong_feature_width(ensemble_files):
    _, _, paths = ensemble_files
    with pytest.raises(ValueError, match=r"shape \(N, 40\)"):
        ForestEnsemble.from_files(paths).predict(np.zeros((3, 39)))


def test_ensemble_fit_is_deterministic_and_members_differ(ensemble_files, tmp_path):
    x, y, paths = ensemble_files
    again = fit_xgb_ensemble(x, y, tmp_path, members=4, seed=1, rounds=60, params={"max_depth": 5})
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in paths]
    predictions = ForestEnsemble.from_files(paths).predict(x[:20])
    assert predictions.std(axis=1).mean() > 0  # bootstrap members disagree: the spread the noise model uses


def test_ridge_ensemble_recovers_a_linear_cost_and_round_trips(tmp_path):
    from nas_envs.surrogates.linear import RidgeEnsemble, cross_validated_alpha

    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(200, 6)).astype(np.float64)
    counts[:, -1] = 2.0  # a constant column (every architecture has it): weight 0, no division by zero
    cost = np.array([3.0, 1.0, 0.5, 0.0, 2.0, 0.0])
    y = (4.0 + counts @ cost + rng.normal(0, 0.1, 200))[:, None]
    alpha = cross_validated_alpha(counts, y, seed=1)
    assert alpha <= 3.0  # little noise: little penalty
    assert cross_validated_alpha(counts, rng.normal(size=(200, 1)), seed=1) >= 30.0  # pure noise: a large one
    ensemble = RidgeEnsemble.fit(counts, y, alpha, members=5, seed=2)
    probe = rng.integers(0, 5, size=(30, 6)).astype(np.float64)
    probe[:, -1] = 2.0
    predictions = ensemble.predict(probe)
    assert predictions.shape == (30, 5, 1)
    np.testing.assert_allclose(predictions.mean(axis=1)[:, 0], 4.0 + probe @ cost, atol=0.1)
    assert predictions.std(axis=1).mean() > 0  # bootstrap members disagree
    again = RidgeEnsemble.fit(counts, y, alpha, members=5, seed=2)
    np.testing.assert_array_equal(again.weights, ensemble.weights)
    loaded = RidgeEnsemble.load(ensemble.save(tmp_path / "ridge.npz"))
    np.testing.assert_array_equal(loaded.predict(probe), predictions)
    with pytest.raises(ValueError, match=r"shape \(N, 6\)"):
        ensemble.predict(probe[:, :5])


def test_a_ridge_fit_writes_the_same_weights_whatever_the_blas_threads():
    """A bundle refitted on another machine or thread setting must be byte for byte the one a search round named:
    products this wide sum in another order on two BLAS threads unless the fit pins one."""
    from threadpoolctl import threadpool_limits

    from nas_envs.surrogates.linear import RidgeEnsemble

    rng = np.random.default_rng(0)
    x = rng.normal(size=(1500, 400))
    y = x[:, :3].sum(axis=1, keepdims=True) + rng.normal(size=(1500, 1))
    fits = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            fits.append(RidgeEnsemble.fit(x, y, 1.0, members=2).weights)
    np.testing.assert_array_equal(*fits)


def test_metrics_on_known_values():
    y = np.array([0.80, 0.82, 0.84, 0.86])
    metrics = all_metrics(y, y + 0.001)
    assert metrics["r2"] == pytest.approx(1 - 4 * 0.001**2 / np.sum((y - y.mean()) ** 2))
    assert metrics["mae"] == pytest.approx(0.001) and metrics["bias"] == pytest.approx(0.001)
    assert metrics["kendall_tau"] == pytest.approx(1.0)
    # predictions equal after rounding to 0.1 % are ties: sparse Kendall tau drops
    tied = np.array([0.8001, 0.8002, 0.8403, 0.8404])  # rounds to 0.800, 0.800, 0.840, 0.840
    assert all_metrics(y, tied)["kendall_tau"] == pytest.approx(1.0)
    assert sparse_kendall_tau(y, tied) == pytest.approx(4 / np.sqrt(6 * 4))  # tau-b with two tied pairs


def test_seed_noise_range_is_net_of_sampling_scatter():
    rng = np.random.default_rng(0)
    # 400 architectures with the same true noise: sample stds of 3 seeds scatter widely, the range does not
    equal = list(rng.normal(0.0, 0.005, (400, 3)))
    noise = measure_seed_noise(equal)
    assert np.sqrt(noise.variance) == pytest.approx(0.005, rel=0.05)
    assert max(np.std(v, ddof=1) for v in equal) > 0.009
    assert 0.004 < noise.low <= noise.high < 0.006
    # half of them four times noisier: the range widens to cover both
    unequal = [v * (4 if i % 2 else 1) for i, v in enumerate(equal)]
    noisy = measure_seed_noise(unequal)
    assert noisy.low < 0.004 and noisy.high > 0.014
    with pytest.raises(ValueError, match="at least 2 seeds"):
        measure_seed_noise([np.array([0.8, 0.81]), np.array([0.8])])


def test_noise_calibration_matches_the_seed_variance_after_clipping():
    spread = np.array([0.001, 0.002, 0.003, 0.01])
    unclipped = calibration_scale(spread, SeedNoise(variance=0.004**2, low=0.0, high=np.inf))
    assert np.mean((unclipped * spread) ** 2) == pytest.approx(0.004**2)
    noise = SeedNoise(variance=0.004**2, low=0.003, high=0.005)
    scale = calibration_scale(spread, noise)
    drawn = noise_std(spread, scale, noise.low, noise.high)
    assert np.mean(drawn**2) == pytest.approx(0.004**2)
    assert drawn.min() == pytest.approx(0.003) and drawn.max() == pytest.approx(0.005)
    with pytest.raises(ValueError, match="no spread"):
        calibration_scale(np.zeros(3), noise)
    with pytest.raises(ValueError, match="outside the range"):
        calibration_scale(spread, SeedNoise(variance=0.006**2, low=0.003, high=0.005))


def test_manifest_detects_missing_and_corrupted_files(tmp_path):
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"weights": [1, 2, 3]}))
    write_manifest(tmp_path, [model], note="test")
    assert read_verified_manifest(tmp_path, "hint")["note"] == "test"
    model.write_text(json.dumps({"weights": [1, 2, 4]}))
    with pytest.raises(AssetError, match=r"corrupted model file .*model.json.*restore me"):
        read_verified_manifest(tmp_path, "restore me")
    model.unlink()
    with pytest.raises(AssetError, match=r"missing model file .*model.json"):
        read_verified_manifest(tmp_path, "restore me")
    (tmp_path / "manifest.json").write_text("{broken")
    with pytest.raises(AssetError, match="corrupted .*manifest.json"):
        read_verified_manifest(tmp_path, "restore me")


def test_numpy_and_merged_paths_agree(ensemble_files):
    x, _, paths = ensemble_files
    forest = ForestEnsemble.from_files(paths)
    np.testing.assert_allclose(forest.predict_numpy(x[:40]), forest.predict_merged(x[:40]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(forest.predict(x[:3]), forest.predict(x[:40])[:3], rtol=1e-5, atol=1e-6)


def test_members_with_different_tree_counts_merge_into_one_call(ensemble_files, tmp_path):
    x, y, paths = ensemble_files
    shorter = fit_xgb_ensemble(x, -y, tmp_path, members=2, seed=2, rounds=25)
    forest = ForestEnsemble.from_files([*paths, *shorter])
    merged = forest.predict_merged(x[:40])
    for member, path in enumerate([*paths, *shorter]):
        booster = xgb.Booster(model_file=str(path))
        np.testing.assert_allclose(merged[:, member], booster.predict(xgb.DMatrix(x[:40])), rtol=1e-5, atol=1e-6)


def test_gin_ensemble_learns_a_graph_signal_and_round_trips(tmp_path):
    import torch

    from nas_envs.spaces.darts import DartsSpace
    from nas_envs.surrogates.gin import GINConfig, GINEnsemble, GraphBatch, pairwise_hinge

    space = DartsSpace()
    archs = space.sample(250, seed=0)
    graphs = GraphBatch(*space.graphs(archs))
    # two targets that depend on the graph: the share of convolutions (ops 3..6) and of skips (op 2) among the
    # 16 edges; one network predicts both
    ops = space.one_hot(archs).reshape(250, 2, 14, 7)
    y = np.stack([0.80 + 0.1 * ops[..., 3:].sum(axis=(1, 2, 3)) / 16, 0.5 + 0.4 * ops[..., 2].sum(axis=(1, 2)) / 16], 1)
    config = GINConfig(num_node_types=8, num_edge_types=8, outputs=2, hidden=16, layers=3, epochs=40,
                       learning_rate=1e-2)
    ensemble = GINEnsemble.fit(graphs.subset(np.arange(200)), y[:200], config, members=2, seed=0)
    predicted = ensemble.predict(graphs.subset(np.arange(200, 250)))
    assert predicted.shape == (50, 2, 2)  # (architectures, members, targets)
    for target in range(2):
        assert np.corrcoef(predicted[:, :, target].mean(axis=1), y[200:, target])[0, 1] > 0.9
    with pytest.raises(ValueError, match=r"shape \(200, 2\)"):
        GINEnsemble.fit(graphs.subset(np.arange(200)), y[:200, 0], config, members=1)
    paths = ensemble.save(tmp_path)
    loaded = GINEnsemble.load(tmp_path, count=len(paths) - 1)
    first = graphs.subset(np.arange(5))
    np.testing.assert_allclose(loaded.predict(first), ensemble.predict(first))
    # the ranking loss is zero once every better architecture is predicted at least the margin higher
    assert float(pairwise_hinge(torch.tensor([3.0, 1.0]), torch.tensor([2.0, 1.0]), 0.1)) == 0.0
    assert float(pairwise_hinge(torch.tensor([1.0, 1.0]), torch.tensor([2.0, 1.0]), 0.1)) == pytest.approx(0.1)


def test_a_gin_learns_a_target_that_some_records_lack_from_those_that_have_it():
    """Fitting-time targets that only some trainings carry (NaN elsewhere) are learnt from the rows that have
    them; the other targets still use every row."""
    from nas_envs.spaces.darts import DartsSpace
    from nas_envs.surrogates.gin import GINConfig, GINEnsemble, GraphBatch

    space = DartsSpace()
    archs = space.sample(250, seed=3)
    graphs = GraphBatch(*space.graphs(archs))
    ops = space.one_hot(archs).reshape(250, 2, 14, 7)
    y = np.stack([0.80 + 0.1 * ops[..., 3:].sum(axis=(1, 2, 3)) / 16, 0.5 + 0.4 * ops[..., 2].sum(axis=(1, 2)) / 16], 1)
    lacking = y.copy()
    lacking[::2, 1] = np.nan  # half the fitting rows lack the second target
    config = GINConfig(num_node_types=8, num_edge_types=8, outputs=2, hidden=16, layers=3, epochs=40,
                       learning_rate=1e-2)
    predicted = GINEnsemble.fit(graphs.subset(np.arange(200)), lacking[:200], config, members=2,
                                seed=0).predict(graphs.subset(np.arange(200, 250))).mean(axis=1)
    assert np.isfinite(predicted).all()
    for target in range(2):
        assert np.corrcoef(predicted[:, target], y[200:, target])[0, 1] > 0.9
    missing_everywhere = lacking[:200].copy()
    missing_everywhere[:, 1] = np.nan
    with pytest.raises(ValueError, match="at least one graph"):
        GINEnsemble.fit(graphs.subset(np.arange(200)), missing_everywhere, config, members=1)
    infinite = y[:200].copy()
    infinite[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        GINEnsemble.fit(graphs.subset(np.arange(200)), infinite, config, members=1)


def test_stacked_gin_equals_each_members_forward():
    from nas_envs.spaces.darts import DartsSpace
    from nas_envs.surrogates.gin import GINConfig, GINEnsemble, GraphBatch

    space = DartsSpace()
    graphs = GraphBatch(*space.graphs(space.sample(40, seed=1)))
    y = np.stack([np.linspace(0.8, 0.9, 40), np.linspace(0.9, 0.7, 40)], axis=1)
    ensemble = GINEnsemble.fit(graphs, y, GINConfig(num_node_types=8, num_edge_types=8, outputs=2, hidden=8,
                                                    layers=3, epochs=3), members=3, seed=2)
    reference = ensemble.predict_per_member(graphs)
    np.testing.assert_allclose(ensemble.predict(graphs), reference, rtol=1e-5, atol=1e-6)
    ensemble.activation_budget = 3 * 26 * 8 * 7  # blocks of 7 graphs (members x edges x hidden each), last one short
    np.testing.assert_allclose(ensemble.predict(graphs), reference, rtol=1e-5, atol=1e-6)
    assert ensemble.predict(graphs.subset(slice(0, 0))).shape == (0, 3, 2)


def test_gin_with_tabular_features_reads_them_standardised_and_stacks_them_exactly(tmp_path):
    from dataclasses import replace

    from nas_envs.spaces.darts import DartsSpace
    from nas_envs.surrogates.gin import GINConfig, GINEnsemble, GraphBatch

    space = DartsSpace()
    archs = space.sample(40, seed=3)
    # a feature on a scale far from 1, which the member standardises with the fitting data's mean and std
    features = np.column_stack([space.features(archs), 1e6 + 1e4 * np.arange(40)]).astype(np.float32)
    graphs = GraphBatch(*space.graphs(archs), features=features)
    y = np.stack([np.linspace(0.8, 0.9, 40), np.linspace(0.9, 0.7, 40)], axis=1)
    config = GINConfig.for_graphs(graphs, 2, hidden=8, layers=3, epochs=3)
    assert config.num_features == features.shape[1]
    ensemble = GINEnsemble.fit(graphs, y, config, members=3, seed=2)
    member = ensemble.members[0]
    np.testing.assert_allclose(member.feature_center.numpy(), features.mean(axis=0), rtol=1e-5)
    assert float(member.feature_scale[-1]) == pytest.approx(features[:, -1].std(), rel=1e-5)
    assert float(member.feature_scale[np.flatnonzero(features.std(axis=0) == 0)[0]]) == 1.0  # a constant column
    reference = ensemble.predict_per_member(graphs)
    np.testing.assert_allclose(ensemble.predict(graphs), reference, rtol=1e-5, atol=1e-6)
    # the features change the prediction, and the centre and scale are saved with the weights
    shifted = replace(graphs, features=features + features.std(axis=0))
    assert not np.allclose(ensemble.predict(shifted), reference, atol=1e-4)
    paths = ensemble.save(tmp_path)
    np.testing.assert_allclose(GINEnsemble.load(tmp_path, count=len(paths) - 1).predict(graphs), reference,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=f"reads {features.shape[1]} tabular features per graph, the batch has none"):
        ensemble.predict(replace(graphs, features=None))


def test_held_out_split_is_fixed_as_the_collection_grows():
    from nas_envs.fitting.surrogate_fit import held_out_split

    keys = np.array([f"random/train/{i}/r0" for i in range(400)] + [f"re:seed_0/train/{i}/r0" for i in range(8)])
    sources = np.array(["random"] * 400 + ["re"] * 8)
    _, held_small = held_out_split(sources[:300], keys[:300])
    _, held_large = held_out_split(sources, keys)
    assert set(held_small) <= set(held_large)  # records never change sides when more arrive
    assert 0.06 < np.isin(np.arange(400), held_large).mean() < 0.14
    assert np.isin(np.arange(400, 408), held_large).any()  # the small source holds one out too
    _, other_seed = held_out_split(sources, keys, seed=1)
    assert set(other_seed) != set(held_large)


def test_runtime_model_is_fitted_on_trainings_with_cpu_seconds_only(tmp_path):
    from nas_envs.assets import data_path
    from nas_envs.fitting.surrogate_fit import fit_and_assess, load_dataset
    from nas_envs.spaces import get_space

    data = load_dataset(data_path("darts-fmnist14-c8l8-e4-v1"), "darts-fmnist14-c8l8-e4-v1")
    unmeasured = np.isnan(data.targets["log_train_cpu_seconds"])  # GPU trainings, and CPU ones before the field
    assert unmeasured.any() and not unmeasured.all() and not np.isnan(data.targets["val_accuracy"]).any()
    rows = np.random.default_rng(0).permutation(len(data.genes))
    fit_rows, eval_rows = np.sort(rows[:-40]), np.sort(rows[-40:])
    assert unmeasured[eval_rows].any() and not unmeasured[eval_rows].all()
    from nas_envs.assets import packaged_bundle

    cost_table = json.loads((packaged_bundle("darts-v0") / "costs.json").read_text())
    runtime = fit_and_assess("runtime", get_space("darts"), data, cost_table, fit_rows, eval_rows, tmp_path, seed=0)
    assert runtime.fit_records == int((~unmeasured[fit_rows]).sum())
    assert runtime.held_out_records == int((~unmeasured[eval_rows]).sum())
    assert np.isfinite(runtime.held_out["log_train_cpu_seconds"]["r2"])


def test_gpu_accuracies_are_fitted_on_the_cpu_scale():
    from nas_envs.assets import data_path
    from nas_envs.fitting.surrogate_fit import load_dataset
    from nas_envs.groundtruth.records import read_records

    path = data_path("darts-fmnist14-c8l8-e4-v1")
    data = load_dataset(path, "darts-fmnist14-c8l8-e4-v1")
    train = [r for r in read_records(path) if r["subset"] == "train"][: len(data.genes)]  # a collector may append
    on_gpu = np.array([r["environment"].get("device") == "cuda" for r in train])
    measured = np.array([r["val_accuracy"] for r in train])
    offset = data.device_offsets["cuda"]["val_accuracy"]["offset"]
    assert 0 < offset < 0.01  # the H200's random trainings read lower than the CPU's (data card, "GPU trainings")
    assert np.allclose(data.targets["val_accuracy"][on_gpu], measured[on_gpu] + offset)
    assert np.array_equal(data.targets["val_accuracy"][~on_gpu], measured[~on_gpu])


def test_a_bundle_is_judged_on_the_grown_noise_subset_without_refitting(tmp_path, monkeypatch):

    from nas_envs.fitting.surrogate_fit import assess_bundle, fit_surrogate

    name = "darts-fmnist14-c8l8-e4-v1.jsonl"
    lines = (Path(__file__).resolve().parents[1] / "assets" / "data" / name).read_text().splitlines(keepends=True)
    train = [line for line in lines if '"subset": "train"' in line]
    noise = [line for line in lines if '"subset": "noise"' in line]
    data = tmp_path / "data" / name
    data.parent.mkdir()
    data.write_text("".join(train[:120] + noise[:30]))
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path))
    refit = tmp_path / "models" / "darts-refit"
    entry = fit_surrogate("darts", "xgb", out_dir=refit)
    same = assess_bundle("darts", "xgb", bundle=refit)  # the data it was fitted with: its manifest's numbers
    for part in ("noise_subset", "held_out_metrics"):
        for target, metrics in entry[part].items():
            assert same[part][target] == pytest.approx(metrics)
    with open(data, "a") as handle:
        handle.write("".join(noise[30:60]))
    grown = assess_bundle("darts", "xgb", bundle=refit)
    assert grown["bundle_data_lines"] == entry["data_lines"] == 150 and grown["data_lines"] == 180
    assert grown["noise_architectures"] > same["noise_architectures"]
    assert grown["noise_subset"]["val_accuracy"]["surrogate_n"] == grown["noise_architectures"]
    ceiling = grown["r2_ceiling"]["val_accuracy"]
    # seed means average the noise away: they allow a higher R2 than single trainings
    assert 0 < ceiling["held_out_single_seed"] < ceiling["noise_subset_seed_means"] < 1


@pytest.mark.slow  # builds the full-width cost table: about 30 s
def test_a_bundle_is_judged_on_its_own_protocols_data(tmp_path, monkeypatch):
    """A bundle fitted on another protocol than the space's default (FBNet v1's full width) is judged, and its model
    card drawn, on that protocol's file."""
    from nas_envs.fitting.model_card import write_model_card
    from nas_envs.fitting.surrogate_fit import assess_bundle, fit_surrogate

    assets = Path(__file__).resolve().parents[1] / "assets" / "data"
    (tmp_path / "data").mkdir()
    for name, lines in (("fbnet-fmnist14-full-e4-v1.jsonl", 60), ("fbnet-fmnist14-half-e4-v1.jsonl", 70)):
        (tmp_path / "data" / name).write_text("".join((assets / name).read_text().splitlines(keepends=True)[:lines]))
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path))
    refit = tmp_path / "models" / "fbnet-full"
    for kind in ("xgb", "runtime"):
        fit_surrogate("fbnet", kind, "fbnet-fmnist14-full-e4-v1", out_dir=refit)
    judged = assess_bundle("fbnet", "xgb", bundle=refit)
    assert judged["data_lines"] == judged["bundle_data_lines"] == 60
    card = write_model_card("fbnet", refit, tmp_path / "card").read_text()
    assert "Judged on the data as it is now (60 lines; the models read 60)" in card


def test_r2_ceiling_on_known_noise():
    from nas_envs.fitting.surrogate_fit import Dataset, r2_ceilings

    seeds = [np.array([0.80, 0.82]), np.array([0.90, 0.92])]  # seed variance 0.0002 each; seed means 0.81, 0.91
    data = Dataset(genes=np.zeros((3, 1)), targets={"val_accuracy": np.array([0.80, 0.85, 0.90])},
                   sources=np.array(["random"] * 3), keys=np.array(["a", "b", "c"]), noise_genes=np.zeros((2, 1)),
                   noise_targets={"val_accuracy": seeds}, noise={}, learning_curves=None, device_offsets={},
                   data_sha256="", data_lines=5)
    ceiling = r2_ceilings(data, "val_accuracy")
    assert ceiling["held_out_single_seed"] == pytest.approx(1 - 0.0002 / 0.0025)  # variance of 0.80, 0.85, 0.90
    assert ceiling["noise_subset_seed_means"] == pytest.approx(1 - 0.0001 / 0.005)  # 0.0002 / 2 over var(0.81, 0.91)


def test_a_model_of_another_format_is_refused_with_the_refit_command(tmp_path):
    from nas_envs.benchmarks.model_kinds import load_bundled

    stale = {"targets": ["val_accuracy", "test_accuracy"], "inputs": "features", "files": [], "noise_range": {}}
    with pytest.raises(ValueError, match=r"inputs 'features'.*'nas-envs fit darts --model xgb'"):
        load_bundled("xgb", stale, tmp_path, "darts")
    uncalibrated = {**stale, "inputs": "features_and_log_costs"}
    del uncalibrated["noise_range"]
    with pytest.raises(ValueError, match=r"no calibrated noise range.*'nas-envs fit darts --model xgb'"):
        load_bundled("xgb", uncalibrated, tmp_path, "darts")


def test_spread_against_seed_noise_tells_a_spread_that_follows_the_seeds_from_one_that_does_not():
    from nas_envs.fitting.surrogate_fit import spread_against_seed_noise

    # seed stds 0.01, 0.02, 0.04 (ddof 1): an ensemble spread in the same order correlates 1, reversed -1
    values = [np.array([0.80, 0.81, 0.82]), np.array([0.80, 0.82, 0.84]), np.array([0.80, 0.84, 0.88])]
    assert spread_against_seed_noise(np.array([0.1, 0.2, 0.3]), values)["spread_seed_std_spearman"] == 1.0
    assert spread_against_seed_noise(np.array([0.3, 0.2, 0.1]), values)["spread_seed_std_spearman"] == -1.0
    rng = np.random.default_rng(0)
    same_noise = [0.85 + 0.005 * rng.standard_normal(3) for _ in range(40)]
    mixed_noise = same_noise[:20] + [0.85 + 0.05 * rng.standard_normal(3) for _ in range(20)]
    spread = rng.random(40)
    assert spread_against_seed_noise(spread, same_noise)["equal_seed_variance_bartlett_p"] > 0.05
    assert spread_against_seed_noise(spread, mixed_noise)["equal_seed_variance_bartlett_p"] < 0.001


def test_the_pooled_surrogate_is_scored_on_what_the_benchmark_predicts():
    import nas_envs
    from nas_envs.assets import data_path
    from nas_envs.fitting.surrogate_fit import assess_bundle, leave_one_source_out, load_dataset
    from nas_envs.surrogates.metrics import mae

    scored = assess_bundle("darts", "xgb+gin")
    assert "noise_calibration" not in scored  # the benchmark draws each part's own calibrated noise, not the pool's
    data = load_dataset(data_path("darts-fmnist14-c8l8-e4-v1"), "darts-fmnist14-c8l8-e4-v1")
    means = nas_envs.make_benchmark("darts", surrogate="xgb+gin").evaluate(data.noise_genes, noise=False)
    seed_means = np.array([v.mean() for v in data.noise_targets["val_accuracy"]])
    expected = mae(seed_means, means["val_accuracy"])
    assert scored["noise_subset"]["val_accuracy"]["surrogate_mae"] == pytest.approx(expected)
    with pytest.raises(ValueError, match="fitted one by one"):
        leave_one_source_out("darts", "xgb+gin")


@pytest.mark.slow
def test_the_model_card_shows_what_evaluate_surrogate_computes(tmp_path):
    from nas_envs.cli import main
    from nas_envs.fitting.surrogate_fit import assess_bundle

    assert main(["model-card", "darts", "--out", str(tmp_path)]) == 0
    card = (tmp_path / "darts-v1.md").read_text()
    for kind in ("xgb", "gin", "xgb+gin", "stack"):
        noise = assess_bundle("darts", kind)["noise_subset"]["val_accuracy"]
        row = [line for line in card.splitlines() if line.startswith(f"| {kind} | ") and "%" in line][0]
        assert f"| {noise['surrogate_r2']:.2f} | {noise['surrogate_sparse_kendall_tau']:.2f} | " \
               f"{100 * noise['surrogate_mae']:.2f} % |" in row
    assert (tmp_path / "darts-v1-scatter.png").stat().st_size > 0
    # darts-v1 chose search round 4 and is judged there, against darts-v0 on the newest complete round neither
    # read, with the levers of its recipe as recorded
    assert "## Trajectory test: search round 4, which this bundle chose" in card
    assert "| `darts-v0` | xgb+gin |" in card and "| what seed noise allows |" in card
    assert "## Levers of the fitting recipe" in card and "$ python studies/gin_settings.py" in card


def test_a_fit_cross_validates_its_leaf_size_and_records_it(tmp_path):
    from nas_envs.surrogates.xgb import cross_validated_settings

    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, size=(240, 10)).astype(np.float32)
    # A few rare, much worse architectures decide the spread (FBNet's skip-heavy ones): leaves of 8 cannot hold them.
    rare = np.arange(240) < 8
    x[:, 0] = rare
    y_rare = 0.84 + 0.002 * x[:, 1] + rng.normal(0, 0.004, 240) - 0.15 * rare
    rare_params, _ = cross_validated_settings(x, y_rare, seed=0)
    assert rare_params["min_child_weight"] < 8.0

    paths = fit_xgb_ensemble(x, y_rare, tmp_path, members=2, seed=0, rounds=10, params=rare_params)
    attributes = json.loads(paths[0].read_text())["learner"]["attributes"]
    assert float(attributes["min_child_weight"]) == rare_params["min_child_weight"]
    assert ForestEnsemble.from_files(paths).predict(x[:2]).shape == (2, 2)


def test_a_variant_bundle_takes_what_it_shares_from_its_release_and_evaluates_the_same(tmp_path):
    import shutil

    import nas_envs
    from nas_envs.assets import MANIFEST, bundle_file, resolve_bundle
    from nas_envs.fitting.release import share_files_with_base

    released, _ = resolve_bundle("darts-mf-v0")
    manifest = json.loads((released / MANIFEST).read_text())
    variant = tmp_path / "variant"  # darts-mf-v0 as a fit writes it: every file in its own folder, no base
    for name in manifest["files"]:
        (variant / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(bundle_file(released, name), variant / name)
    write_manifest(variant, [variant / name for name in manifest["files"]],
                   **{k: v for k, v in manifest.items() if k not in ("files", "base")})
    with pytest.raises(ValueError, match="not a released bundle"):
        share_files_with_base(variant, "darts-v9")

    shared = share_files_with_base(variant, "darts-v0")
    base_files = json.loads((resolve_bundle("darts-v0")[0] / MANIFEST).read_text())["files"]
    assert sorted(shared) == sorted(base_files) and not (variant / "xgb").exists()
    assert all(name.startswith("curve/") for name in manifest["files"] if (variant / name).exists())
    genes = nas_envs.make_benchmark("darts").space.sample(20, seed=0)
    ours, theirs = (nas_envs.make_benchmark("darts", bundle=bundle).evaluate_curves(genes, True,
                                                                                    np.random.default_rng(1))
                    for bundle in (variant, "darts-mf-v0"))
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[0].keys() == theirs[0].keys() and all(np.array_equal(ours[0][k], theirs[0][k]) for k in ours[0])


def test_a_bundle_reads_the_version_of_the_features_its_models_were_fitted_on(tmp_path):
    import nas_envs
    from nas_envs.benchmarks.model_kinds import bundle_feature_version
    from nas_envs.spaces import get_space

    released = nas_envs.make_benchmark("fbnet", bundle="fbnet-v0")
    assert "feature_version" not in released.manifest["models"]["xgb"]  # written before bundles recorded it
    assert released.feature_version == 1 < released.space.feature_version()
    genes = released.space.sample(3, seed=0)
    assert released.encodings(genes).features_and_log_costs.shape == (3, 198 + 9 + 7 + 2)
    released.evaluate(genes, noise=False)  # its trees read the columns they were fitted on

    space = get_space("fbnet")
    newer = {"xgb": {"feature_version": 2}, "runtime": {}}
    assert bundle_feature_version(newer, space, tmp_path) == 2
    assert bundle_feature_version({"runtime": {}}, space, tmp_path) is None  # no model reads features
    with pytest.raises(ValueError, match=r"different versions of the fbnet features \(\[1, 2\]\).*nas-envs fit fbnet"):
        bundle_feature_version({**newer, "gin": {}}, space, tmp_path)
    with pytest.raises(ValueError, match=r"no features version 3; this version of nas-envs has \[1, 2\]"):
        bundle_feature_version({"xgb": {"feature_version": 3}}, space, tmp_path)


def test_refitting_one_model_drops_those_fitted_on_another_features_version(tmp_path, monkeypatch, caplog):
    """A refit into a copy of fbnet-v0 (features version 1): the new XGB reads version 2, so the copied GIN, which
    the benchmark could not evaluate beside it, is dropped with a warning."""
    import nas_envs
    from nas_envs.fitting.surrogate_fit import fit_surrogate

    name = "fbnet-fmnist14-half-e4-v1.jsonl"
    (tmp_path / "data").mkdir()
    lines = (Path(__file__).resolve().parents[1] / "assets" / "data" / name).read_text().splitlines(keepends=True)
    (tmp_path / "data" / name).write_text("".join(lines[:40]))
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path))
    refit = tmp_path / "models" / "fbnet-refit"
    shutil.copytree(nas_envs.assets.packaged_bundle("fbnet-v0"), refit)
    with caplog.at_level("WARNING", logger="nas_envs"):
        entry = fit_surrogate("fbnet", "xgb", name.removesuffix(".jsonl"), out_dir=refit)
    assert entry["feature_version"] == 2
    assert "dropped the gin model(s)" in caplog.text
    bench = nas_envs.make_benchmark("fbnet", bundle=refit)
    assert sorted(bench.manifest["models"]) == ["runtime", "xgb"] and bench.feature_version == 2
    assert "feature_version" not in bench.manifest["models"]["runtime"]  # it reads the cost features only
    bench.evaluate(bench.space.sample(3, seed=0), noise=False)


def test_a_model_card_reads_only_incumbents_searched_on_its_own_bundle():
    """The RE trajectory of SurrNAS-FBNet-v1 belongs to fbnet-v1's card, not to fbnet-v0's, whose protocol and
    surrogate means are other ones; a run that named a bundle folder counts for that folder's bundle."""
    from nas_envs.fitting.model_card import _incumbent_rows, _searched_bundle

    assert _searched_bundle({"env_id": "SurrNAS-FBNet-v0"}) == "fbnet-v0"
    assert _searched_bundle({"env_id": "SurrNAS-FBNet-v0", "env_kwargs": {"bundle": "/x/fbnet-v1"}}) == "fbnet-v1"
    assert _searched_bundle({"env_id": "SurrNAS-DARTS-v0", "env_kwargs": {"surrogate": "xgb+gin"}}) == "darts-v0"
    own = _incumbent_rows("fbnet", "fbnet-fmnist14-full-e4-v1", {"fbnet-v1"})
    assert any("fbnet_v1_re.jsonl" in row for row in own)
    assert _incumbent_rows("fbnet", "fbnet-fmnist14-half-e4-v1", {"fbnet-v0"}) == []


def test_xgboost_cross_validation_reads_its_history_with_pandas_installed_too():
    """xgboost.cv returns a DataFrame when pandas is importable; the settings search must not index it by label."""
    pytest.importorskip("pandas")
    from nas_envs.surrogates.xgb import cross_validated_settings

    rng = np.random.default_rng(0)
    x = rng.random((120, 4))
    params, rounds = cross_validated_settings(x, x[:, 0] + 0.1 * rng.random(120), seed=0)
    assert rounds >= 1 and "min_child_weight" in params


@pytest.mark.slow
def test_a_stack_weighs_its_members_out_of_fold_and_predicts_as_its_files_say(tmp_path):
    from nas_envs.surrogates.stack import MEMBERS, StackEnsemble, fit_stack

    rng = np.random.default_rng(0)
    x = rng.random((240, 5))
    y = x[:, 0] + 0.5 * x[:, 1] ** 2 + 0.05 * rng.standard_normal(240)
    paths = fit_stack(x, y, tmp_path / "val_accuracy", seed=0)
    stack = StackEnsemble.load(paths)
    assert set(stack.weights) == set(MEMBERS) and min(stack.weights.values()) >= 0 and sum(stack.weights.values()) > 0
    predicted = stack.predict(x[:50])
    assert predicted.shape == (50, 10) and np.corrcoef(predicted.mean(axis=1), y[:50])[0, 1] > 0.9
    assert np.array_equal(StackEnsemble.load(paths).predict(x[:50]), predicted)  # the files are the model
    again = fit_stack(x, y, tmp_path / "again", seed=0)  # the same seed, the same weights
    assert again[-1].read_text() == paths[-1].read_text()


def test_the_stack_surrogate_is_refused_where_a_bundle_has_none():
    import nas_envs

    bench = nas_envs.make_benchmark("darts", surrogate="stack", bundle="darts-v0")
    with pytest.raises(FileNotFoundError, match="no 'stack' model is bundled.*nas-envs fit darts --model stack"):
        bench.evaluate(bench.space.sample(1, seed=0))
    released = nas_envs.make_benchmark("darts", surrogate="stack", bundle="darts-v1")  # released with one
    assert 0.8 < released.evaluate(released.space.sample(1, seed=0), noise=False)["val_accuracy"][0] < 0.9


@pytest.mark.slow
def test_a_bundle_fitted_with_a_stack_evaluates_with_it_without_torch(tmp_path):
    import subprocess
    import sys

    from nas_envs.cli import main

    assert main(["--quiet", "fit", "darts", "--model", "stack", "--out", str(tmp_path / "b")]) == 0
    code = ("import sys, nas_envs; b = nas_envs.make_benchmark('darts', surrogate='stack', bundle=sys.argv[1]); "
            "v = b.evaluate(b.space.sample(3, seed=0), seed=0)['val_accuracy']; "
            "assert v.shape == (3,) and 0.5 < v.min() <= v.max() < 1, v; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "b")], check=True)


def test_a_release_is_judged_on_the_newest_round_none_of_its_data_holds_and_agents_by_their_finals():
    from nas_envs.fitting.trajectory_test import chosen_round, judge_on_round, newest_unseen_round

    def row(number: int, arch: str, agent: str = "rs", kind: str = "top") -> dict:
        return {"round": number, "architecture": arch, "agent": agent, "kind": kind}

    lists = [row(0, "a"), row(0, "b"), row(1, "c"), row(1, "d"), row(2, "e"), row(2, "f")]
    assert newest_unseen_round(lists, fitted_on={"a", "c"}, trained={"a", "e", "f"}) == [row(2, "e"), row(2, "f")]
    # round 2 was fitted on: round 1 is the newest that was not, once it is trained in full
    assert newest_unseen_round(lists, fitted_on={"a", "f"}, trained={"c", "d"}) == [row(1, "c"), row(1, "d")]
    assert newest_unseen_round(lists, fitted_on={"a", "f"}, trained={"c"}) == []
    # a round still in training is passed over for the newest complete one
    assert newest_unseen_round(lists, fitted_on=set(), trained={"a", "b", "c", "d", "e"}) == [row(1, "c"), row(1, "d")]
    assert newest_unseen_round(lists, fitted_on={"a", "c", "e"}, trained={"a"}) == []
    # the round a bundle chose is known by its manifest's sha256, and counts only where it was never fitted on
    chosen = [{**row, "bundle_sha256": "b" if row["round"] == 1 else "a"} for row in lists]
    assert chosen_round(chosen, "b", fitted_on={"a"}, trained={"c", "e"}) == [chosen[2]]
    assert chosen_round(chosen, "b", fitted_on={"d"}, trained={"c", "e"}) == []
    assert chosen_round(chosen, "z", fitted_on=set(), trained={"c"}) == []

    agents = ["rs", "re", "ls", "de"]
    rows = [row(3, f"{agent}{k}", agent, "final" if k < 2 else "top") for agent in agents for k in range(3)]
    measured = {r["architecture"]: 0.80 + 0.01 * agents.index(r["agent"]) + 0.001 * i for i, r in enumerate(rows)}
    truth = np.array([measured[r["architecture"]] for r in rows])
    judged = judge_on_round(rows, measured, truth + 0.002)
    assert judged["r2"] == pytest.approx(1 - 0.002**2 * len(truth) / ((truth - truth.mean()) ** 2).sum())
    assert judged["kendall_tau"] == pytest.approx(1.0) and judged["bias"] == pytest.approx(0.002)
    assert (judged["agents"], judged["finals"], judged["agents_tau"]) == (4, 8, pytest.approx(1.0))
    # the agents in the opposite order: finals ranked against the measurement, whatever the other picks say
    reversed_agents = np.array([0.9 - 0.01 * agents.index(r["agent"]) if r["kind"] == "final" else t
                                for r, t in zip(rows, truth)])
    assert judge_on_round(rows, measured, reversed_agents)["agents_tau"] == pytest.approx(-1.0)


@pytest.mark.slow  # two XGBoost fits with cross-validation: about 30 s
def test_a_fit_on_the_first_lines_of_a_grown_file_repeats_the_fit_on_those_lines(tmp_path, monkeypatch, capsys):
    """'nas-envs fit --lines N' on a file that has grown since writes what a fit of the N-line file wrote: the
    same model files and the same record of the data read."""
    from nas_envs.cli import main

    name = "fbnet-fmnist14-half-e4-v1.jsonl"
    lines = (Path(__file__).resolve().parents[1] / "assets" / "data" / name).read_text().splitlines(keepends=True)
    for folder, kept in (("then", 40), ("now", 60)):
        (tmp_path / folder / "data").mkdir(parents=True)
        (tmp_path / folder / "data" / name).write_text("".join(lines[:kept]))
    fitted = {}
    for folder, extra in (("then", []), ("now", ["--lines", "40"])):
        monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path / folder))
        out = tmp_path / folder / "bundle"
        assert main(["--quiet", "fit", "fbnet", "--model", "xgb", "--protocol", name.removesuffix(".jsonl"),
                     "--out", str(out), *extra]) == 0
        fitted[folder] = json.loads((out / "manifest.json").read_text())
    assert fitted["now"]["files"] == fitted["then"]["files"]
    assert fitted["now"]["models"]["xgb"]["data_lines"] == 40
    assert fitted["now"]["models"]["xgb"]["data_sha256"] == fitted["then"]["models"]["xgb"]["data_sha256"]
    assert main(["--quiet", "fit", "fbnet", "--model", "xgb", "--protocol", name.removesuffix(".jsonl"),
                 "--out", str(tmp_path / "too-many"), "--lines", "61"]) != 0
    assert "holds 60 complete lines; asked for the first 61 (give 1 to 60)" in capsys.readouterr().err
