"""Learning curves as a fidelity: ``evaluate(archs, epochs=k)`` on a bundle with a ``curve`` model."""

import json

import numpy as np
import pytest

import nas_envs
from nas_envs.cli import main


@pytest.fixture(scope="module")
def curve_bundle(tmp_path_factory):
    """The newest DARTS release plus a learning-curve model fitted on the committed DARTS trainings (seconds)."""
    folder = tmp_path_factory.mktemp("curves") / "darts-curves"
    # a new folder starts as a copy of the newest release, whose features version the curve model reads too
    assert main(["--quiet", "fit", "darts", "--model", "curve", "--out", str(folder)]) == 0
    return folder


def test_a_bundle_without_a_curve_model_answers_for_the_final_epoch_only():
    for name in ("darts", "cityseg-mop2"):
        bench = nas_envs.make_benchmark(name)
        with pytest.raises(ValueError, match="final training state only"):
            bench.evaluate(bench.space.sample(2, seed=0), epochs=1)
        assert bench.epochs is None


def test_epochs_are_checked_where_they_enter(curve_bundle):
    bench = nas_envs.make_benchmark("darts", bundle=curve_bundle)
    archs = bench.space.sample(2, seed=0)
    for bad in (0, 5, -1):
        with pytest.raises(ValueError, match=r"epochs must be in 1\.\.4"):
            bench.evaluate(archs, epochs=bad)
    for bad in (2.5, True, "2"):
        with pytest.raises(TypeError, match="epochs must be an integer"):
            bench.evaluate(archs, epochs=bad)


def test_the_last_epoch_is_the_final_answer_and_fewer_epochs_cost_their_share(curve_bundle):
    bench = nas_envs.make_benchmark("darts", bundle=curve_bundle)
    archs = bench.space.sample(50, seed=0)
    for noise in (True, False):
        final = bench.evaluate(archs, noise=noise, seed=3)
        assert all(np.array_equal(final[k], v) for k, v in bench.evaluate(archs, noise=noise, seed=3,
                                                                        epochs=4).items())
        early = bench.evaluate(archs, noise=noise, seed=3, epochs=1)
        np.testing.assert_allclose(early["train_time_s"], final["train_time_s"] / 4)
        assert np.isnan(early["test_accuracy"]).all()  # trainings measure test accuracy after the last epoch only
        np.testing.assert_array_equal(early["params"], final["params"])
    means = [bench.evaluate(archs, noise=False, epochs=k)["val_accuracy"].mean() for k in (1, 2, 3)]
    assert means == sorted(means) and means[-1] < final["val_accuracy"].mean() + 0.01  # accuracy grows with epochs


def test_an_architecture_s_curve_is_one_draw_with_the_measured_correlation_across_epochs(curve_bundle):
    bench = nas_envs.make_benchmark("darts", bundle=curve_bundle)
    archs = bench.space.sample(3000, seed=1)
    draws = np.column_stack([bench.evaluate(archs, seed=7, epochs=k)["val_accuracy"] for k in (1, 2, 3, 4)])
    again = np.column_stack([bench.evaluate(archs, seed=7, epochs=k)["val_accuracy"] for k in (1, 2, 3, 4)])
    np.testing.assert_array_equal(draws, again)
    means = np.column_stack([bench.evaluate(archs, noise=False, epochs=k)["val_accuracy"] for k in (1, 2, 3, 4)])
    drawn = np.corrcoef((draws - means).T)
    measured = np.array(json.loads((curve_bundle / "manifest.json").read_text())
                        ["data"]["learning_curves"]["seed_deviation_correlation"])
    np.testing.assert_allclose(drawn, measured, atol=0.06)  # 3000 draws: sampling error about 0.02
    assert measured[2, 3] > 0.5 > measured[0, 3]  # late epochs follow the final accuracy, the first barely


def test_the_curve_model_is_judged_per_epoch_in_its_manifest(curve_bundle):
    entry = json.loads((curve_bundle / "manifest.json").read_text())["models"]["curve"]
    assert entry["targets"] == [f"val_accuracy_epoch_{k}" for k in (1, 2, 3, 4)]
    noise = entry["noise_subset"]
    assert set(noise) == set(entry["targets"]) and all(noise[t]["surrogate_n"] >= 100 for t in noise)
    # the later epochs are predicted better than the first, whose seed noise dominates
    assert noise["val_accuracy_epoch_4"]["surrogate_r2"] > noise["val_accuracy_epoch_1"]["surrogate_r2"]


def test_multi_fidelity_searches_keep_to_the_budget_and_charge_only_the_epochs_they_add(curve_bundle):
    from nas_envs.agents.hyperband import hyperband, random_search, successive_halving

    bench = nas_envs.make_benchmark("darts", bundle=curve_bundle)
    budget = 4 * 3600.0
    for search in (random_search, successive_halving, hyperband):
        rows = search(bench, budget, seed=0)
        assert rows and rows[-1]["sim_time"] <= budget
        incumbents = [r["incumbent_val_accuracy"] for r in rows if np.isfinite(r["incumbent_val_accuracy"])]
        assert incumbents == sorted(incumbents)  # the best fully trained architecture only improves
        finished = [r for r in rows if r["epochs"] == bench.epochs]
        assert max(r["val_accuracy"] for r in finished) == rows[-1]["incumbent_val_accuracy"]
        assert all(np.diff([r["sim_time"] for r in rows]) > 0)
    # a promoted architecture is charged the epochs it adds: one epoch, then one more, then two more, each at the
    # same per-epoch cost (its one training-time draw)
    rows = successive_halving(bench, budget, seed=0)
    charged = np.diff([0.0] + [r["sim_time"] for r in rows])
    first = {r["architecture"]: c for r, c in zip(rows, charged) if r["epochs"] == 1}
    for row, cost in zip(rows, charged):
        np.testing.assert_allclose(cost, first[row["architecture"]] * {1: 1, 2: 1, 4: 2}[row["epochs"]])
    assert {r["epochs"] for r in random_search(bench, budget, seed=0)} == {bench.epochs}
    assert {r["epochs"] for r in successive_halving(bench, budget, seed=0)} == {1, 2, 4}
    with pytest.raises(ValueError, match="no learning-curve model"):
        successive_halving(nas_envs.make_benchmark("darts"), budget)


def test_the_model_card_of_a_bundle_with_curves_shows_quality_and_rank_agreement_per_epoch(curve_bundle, tmp_path):
    assert main(["--quiet", "model-card", "darts", "--bundle", str(curve_bundle), "--out", str(tmp_path)]) == 0
    card = (tmp_path / f"{curve_bundle.name}.md").read_text()
    section = card[card.index("## Learning curves"):]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split(" | ")[0] for row in rows] == ["| 1", "| 2", "| 3", "| 4"]
    assert rows[-1].endswith("| 1.00 |")  # the last epoch ranks like itself
