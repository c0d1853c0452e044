import json

import numpy as np
import pytest

from nas_envs.cli import main
from nas_envs.groundtruth.analysis import (
    MIN_OFFSET_RECORDS,
    curve_summary,
    device_agreement,
    device_offsets,
    loss_noise_summary,
    measurement_share,
    mutation_pair_summary,
    noise_subset_agreement,
    noise_summary,
    summary,
)


def record(arch, val, subset="noise"):
    return {"arch": arch, "val_accuracy": val, "subset": subset}


def test_noise_summary_ratio_on_known_values():
    records = [record("a", v) for v in (0.80, 0.82)] + [record("b", v) for v in (0.90, 0.92)]
    out = noise_summary(records + [record("c", 0.5, subset="train")])
    assert out["architectures"] == 2
    assert out["mean_seed_std"] == pytest.approx(0.0141421, rel=1e-4)  # std of (0.80, 0.82), ddof 1
    assert out["across_architecture_std"] == pytest.approx(0.0707107, rel=1e-4)  # std of (0.81, 0.91)
    assert out["ratio"] == pytest.approx(5.0, rel=1e-4)
    assert "seed_deviation_correlation_with_test" not in out  # no test accuracy in these records


def test_noise_summary_of_a_metric_leaves_out_architectures_measured_before_it_was_recorded():
    with_loss = [dict(record(arch, 0.8), val_loss=loss) for arch, loss in (("a", 0.50), ("a", 0.52), ("b", 0.60),
                                                                            ("b", 0.62), ("c", 0.7))]
    older = [record("c", 0.8), record("d", 0.8), record("d", 0.8)]  # "c": one of its seeds lacks the loss
    out = noise_summary(with_loss + older, metric="val_loss")
    assert out["architectures"] == 2 and out["trainings"] == 4
    assert out["ratio"] == pytest.approx(5.0, rel=1e-4)
    assert noise_summary(older, metric="val_loss") == {"architectures": 0}
    with_loss[1]["val_accuracy"] = 0.9  # accuracy: "a" 0.8 / 0.9, "b" 0.8 / 0.8; "c" and "d" left out as above
    paired = loss_noise_summary(with_loss + older)
    assert paired["ratio"] == out["ratio"]
    # seed stds 0.0707 and 0 (mean 0.0354), seed means 0.85 and 0.80 (std 0.0354)
    assert paired["val_accuracy_ratio_of_the_same_trainings"] == pytest.approx(1.0)


def test_seeds_to_average_follow_from_the_variance_components():
    # seed variance 0.0002; seed means 0.81, 0.84: their variance 0.00045 less sampling variance 0.0001
    out = noise_summary([record("a", v) for v in (0.80, 0.82)] + [record("b", v) for v in (0.83, 0.85)])
    assert out["architecture_std"] == pytest.approx(0.00035**0.5, rel=1e-6)
    assert out["seeds_to_average"] == {"2": 3, "3": 6}  # ceil(4 * 0.0002 / 0.00035), ceil(9 * 0.0002 / 0.00035)
    # seed means closer than their own sampling noise: no spread left, no number of seeds helps
    flat = noise_summary([record("a", v) for v in (0.80, 0.84)] + [record("b", v) for v in (0.82, 0.86)])
    assert flat["architecture_std"] == 0.0 and flat["seeds_to_average"] == {"2": None, "3": None}


def test_seed_deviations_on_validation_and_test_are_correlated():
    def with_test(arch, val, test):
        return dict(record(arch, val), test_accuracy=test)

    # a seed that makes the network better on validation makes it better on test: correlation 1
    same = [with_test("a", 0.80, 0.79), with_test("a", 0.82, 0.81), with_test("b", 0.90, 0.88),
            with_test("b", 0.92, 0.90)]
    assert noise_summary(same)["seed_deviation_correlation_with_test"] == pytest.approx(1.0)
    assert "ratio_by_epoch" not in noise_summary(same)  # no learning curves
    # deviations that disagree (which images happen to be right): correlation -1
    opposite = [with_test("a", 0.80, 0.81), with_test("a", 0.82, 0.79), with_test("b", 0.90, 0.90),
                with_test("b", 0.92, 0.88)]
    assert noise_summary(opposite)["seed_deviation_correlation_with_test"] == pytest.approx(-1.0)


def test_noise_ratio_after_each_epoch_from_the_learning_curves():
    def with_curve(arch, curve):
        return dict(record(arch, curve[-1]), val_accuracy_curve=curve)

    records = [with_curve("a", [0.50, 0.80]), with_curve("a", [0.70, 0.82]),
               with_curve("b", [0.60, 0.90]), with_curve("b", [0.80, 0.92])]
    out = noise_summary(records)
    # epoch 1: seed std 0.1414 in both, seed means 0.60 and 0.70; epoch 2: as test_noise_summary_ratio...
    assert out["ratio_by_epoch"] == pytest.approx([0.5, 5.0], rel=1e-4)
    assert out["ratio_by_epoch"][-1] == pytest.approx(out["ratio"])


def test_noise_subset_agreement_between_protocols():
    a = [record(k, v) for k, v in (("x", 0.8), ("y", 0.85), ("z", 0.9))]
    b = [record(k, v) for k, v in (("x", 0.7), ("y", 0.75), ("z", 0.72), ("w", 0.9))]
    out = noise_subset_agreement(a, b)
    assert out["shared_architectures"] == 3
    assert out["kendall_tau"] == pytest.approx(1 / 3)


def test_device_agreement_pairs_the_same_jobs():
    reference = [dict(record(a, v), job=f"{a}/r{i}") for a, values in (("a", (0.80, 0.82)), ("b", (0.90, 0.92)))
                 for i, v in enumerate(values)]
    check = [{"job": "a/r0", "val_accuracy": 0.81}, {"job": "b/r1", "val_accuracy": 0.90},
             {"job": "elsewhere", "val_accuracy": 0.1}]
    out = device_agreement(reference, check)
    assert out["paired_jobs"] == 2
    assert out["mean_difference"] == pytest.approx(-0.005)  # (+0.01 - 0.02) / 2
    assert out["mean_absolute_difference"] == pytest.approx(0.015)
    assert out["reference_mean_seed_std"] == pytest.approx(0.0141421, rel=1e-4)


def test_summary_keeps_the_seconds_of_each_device_apart():
    records = [dict(record("a", v, subset="train"), source="random", train_seconds=s, environment=e)
               for v, s, e in ((0.80, 100.0, {}), (0.84, 120.0, {"device": "cpu"}), (0.81, 30.0, {"device": "cuda"}))]
    records.append(dict(records[0], source="param-free", val_accuracy=0.5))  # not uniformly random: no mean
    out = summary(records)["by_device"]
    assert out["cpu"]["records"] == 3 and out["cpu"]["train_seconds_median"] == 100.0
    assert out["cuda"]["train_seconds_median"] == 30.0
    assert out["cpu"]["random_train_val_accuracy"] == {"records": 2, "mean": pytest.approx(0.82),
                                                       "standard_error": pytest.approx(0.02)}
    assert "random_train_val_accuracy" not in out["cuda"]  # one record: no standard error


def test_device_offsets_put_a_device_on_the_cpu_scale_only_with_enough_random_records():
    def on(device_name, values, source="random"):
        return [dict(record(f"{device_name}{i}", v, subset="train"), source=source, test_accuracy=v - 0.01,
                     environment={"device": device_name}) for i, v in enumerate(values)]

    n = MIN_OFFSET_RECORDS
    cpu = on("cpu", [0.85, 0.86] * (n // 2))  # mean 0.855, std 0.0051
    gpu = on("cuda", [0.84, 0.85] * (n // 2)) + on("cuda", [0.5] * n, source="param-free")  # not random: ignored
    offsets = device_offsets(cpu + gpu, ("val_accuracy", "test_accuracy"))
    assert set(offsets) == {"cuda"}
    for metric in ("val_accuracy", "test_accuracy"):
        assert offsets["cuda"][metric]["offset"] == pytest.approx(0.01)
        assert offsets["cuda"][metric]["standard_error"] == pytest.approx(np.hypot(*[0.0051299 / np.sqrt(n)] * 2),
                                                                          rel=1e-4)
        assert offsets["cuda"][metric]["records"] == offsets["cuda"][metric]["reference_records"] == n
    assert device_offsets(cpu + gpu[: n - 1], ("val_accuracy",)) == {}  # too few on the device: no offset


def test_data_card_command_on_the_committed_data(tmp_path, capsys):
    assert main(["data-card", "darts", "--out", str(tmp_path), "--json"]) == 0
    printed = capsys.readouterr().out
    report = json.loads(printed[: printed.index("wrote")])
    assert report["records"] >= 100
    assert report["noise"]["ratio"] > 2  # the bundled protocol's floor
    assert set(report["median_val_error_by_group"]) == {"param_free_normal", "skip_normal", "depth_normal"}
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "val_error_vs_depth_normal.png", "val_error_vs_param_free_normal.png", "val_error_vs_skip_normal.png"
    ]


def test_data_card_prints_a_readable_report_and_writes_figures_only_where_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["data-card", "darts"]) == 0
    printed = capsys.readouterr().out
    assert "noise:" in printed and "ratio:" in printed and "000000" not in printed  # no float noise
    figures = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.png"))
    assert figures and all(f.startswith("data-card-darts-fmnist14-c8l8-e4-v1/") for f in figures)


def test_noise_summary_reports_seed_agreement_and_the_random_architectures_alone():
    from nas_envs.groundtruth.analysis import noise_summary

    def rec(arch, source, replicate, value):
        return {"arch": arch, "source": source, "subset": "noise", "replicate": replicate, "val_accuracy": value}

    records = [rec("a", "random", r, v) for r, v in enumerate((0.60, 0.61, 0.62))]
    records += [rec("b", "random", r, v) for r, v in enumerate((0.65, 0.66, 0.67))]
    records += [rec("c", "random", r, v) for r, v in enumerate((0.70, 0.71, 0.72))]
    records += [rec("d", "param-free", r, v) for r, v in enumerate((0.90, 0.91, 0.92))]
    out = noise_summary(records)
    assert out["seed_kendall_tau"] == pytest.approx(1.0)  # every seed ranks the four the same
    alone = out["random_architectures_only"]
    assert alone["architectures"] == 3 and alone["ratio"] == pytest.approx(0.05 / 0.01)
    assert alone["ratio"] < out["ratio"]


def test_measurement_share_recovers_the_per_image_noise_of_two_fixed_image_sets():
    # Seeds move an architecture's expected accuracy by 0.4 %; scoring on n fixed images adds a measurement error
    # of variance c / n with c = 0.09 (0.3 % on 10,000 images): 0.09 / (0.16 + 0.09) of the seed variance.
    rng = np.random.default_rng(0)
    c, n_val, n_reserve = 0.09, 10_000, 40_000
    records = []
    for arch in range(400):
        for _seed in range(3):
            expected = 0.84 + 0.01 * (arch % 7) + rng.normal(0, 0.004)
            records.append({**record(f"a{arch}", expected + rng.normal(0, np.sqrt(c / n_val))),
                            "reserve_accuracy": expected + rng.normal(0, np.sqrt(c / n_reserve)),
                            "reserve_images": n_reserve})
    out = measurement_share(records, n_val)
    assert out["architectures"] == 400
    assert out["val_measurement_std"] == pytest.approx(0.003, rel=0.15)
    assert out["measurement_share_of_val_seed_variance"] == pytest.approx(0.09 / (0.16 + 0.09), rel=0.2)
    assert measurement_share(records[:3], n_val) == {"architectures": 1}
    # the same trainings as mutation pairs (training subset, several seeds each) read the same; single seeds do not
    pairs = [{**r, "subset": "train", "source": "mutation-pair"} for r in records]
    assert measurement_share(pairs, n_val) == out
    assert measurement_share([{**r, "subset": "train", "source": "random"} for r in records], n_val) == {
        "architectures": 0}


def mutation_pairs(rho, pairs=400, seeds=3, seed=0):
    """Collected records of a landscape whose architecture effects (std 1 %) correlate by ``rho`` one edit apart,
    each training adding seed noise of std 0.5 %."""
    rng = np.random.default_rng(seed)
    records = []
    for k in range(pairs):
        first = rng.normal(0, 0.01)
        second = rho * first + np.sqrt(1 - rho**2) * rng.normal(0, 0.01)
        for member, effect in enumerate((first, second)):
            records += [{"arch": f"p{k}m{member}", "source": "mutation-pair", "subset": "train",
                         "index": 2 * k + member, "val_accuracy": 0.85 + effect + rng.normal(0, 0.005)}
                        for _ in range(seeds)]
    return records


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_mutation_pair_summary_recovers_the_correlation_one_edit_apart(rho):
    out = mutation_pair_summary(mutation_pairs(rho))
    assert out["pairs"] == 400 and out["trainings"] == 2400
    assert out["seed_std"] == pytest.approx(0.005, rel=0.05)
    assert out["architecture_std"] == pytest.approx(0.01, rel=0.1)
    assert out["edit_std"] == pytest.approx(0.01 * np.sqrt(2 * (1 - rho)), abs=0.0015)
    low, high = out["correlation_one_edit_90"]
    assert low < out["correlation_one_edit"] < high and high - low < 0.3
    assert out["correlation_one_edit"] == pytest.approx(rho, abs=0.1)


def test_mutation_pair_summary_counts_only_pairs_with_repeated_seeds_on_both_sides():
    records = mutation_pairs(0.5, pairs=5)
    records = [r for r in records if r["index"] != 3] + [r for r in records if r["index"] == 3][:1]  # pair 1: 1 seed
    records += [{**r, "source": "random"} for r in mutation_pairs(0.5, pairs=5, seed=1)]  # other sources left out
    out = mutation_pair_summary(records)
    assert out["pairs"] == 4 and out["trainings"] == 24
    assert mutation_pair_summary(records[:18]) == {"pairs": 2}  # pairs 0 and 2
    timed = [{**r, "train_seconds": 60.0} for r in records]
    assert summary(timed)["mutation_pairs"] == out and "mutation_pairs" not in summary(
        [r for r in timed if r["source"] == "random"])


def test_curve_summary_reads_rankings_and_seed_deviations_across_epochs():
    rng = np.random.default_rng(0)
    finals = rng.uniform(0.8, 0.9, size=20)
    # epoch 1 ranks the architectures in reverse, epoch 2 like the final epoch
    random = [{"arch": f"r{i}", "subset": "train", "source": "random", "val_accuracy": f,
               "val_accuracy_curve": [1.7 - f, f - 0.1, f]} for i, f in enumerate(finals)]
    noise = []
    for arch, base in (("a", 0.8), ("b", 0.85)):
        for deviation in (-0.01, 0.0, 0.01):  # the same deviation at every epoch but the first, which flips it
            noise.append({"arch": arch, "subset": "noise", "source": "random", "val_accuracy": base + deviation,
                          "val_accuracy_curve": [base - 3 * deviation, base + 2 * deviation, base + deviation]})
    out = curve_summary(random + noise)
    assert out["random_trainings"] == 20 and out["epochs"] == 3
    np.testing.assert_allclose(out["kendall_tau_with_final_by_epoch"], [-1.0, 1.0, 1.0])
    np.testing.assert_allclose(out["seed_deviation_correlation_with_final_by_epoch"], [-1.0, 1.0, 1.0])
    np.testing.assert_allclose(out["seed_deviation_correlation_with_previous_epoch"], [-1.0, 1.0])
    np.testing.assert_allclose(out["noise_seed_std_by_epoch"], [0.03, 0.02, 0.01])
    assert curve_summary(random[:5]) is None  # too few random trainings to rank


def test_protocol_agreement_reports_rank_correlations_beside_the_seed_noise_ceiling():
    from nas_envs.groundtruth.analysis import noise_subset_agreement

    def record(arch: str, value: float) -> dict:
        return {"arch": arch, "subset": "noise", "val_accuracy": value}

    quality = {f"a{i}": 0.80 + 0.01 * i for i in range(8)}
    short = [record(a, q + noise) for a, q in quality.items() for noise in (-0.002, 0.002)]
    longer = [record(a, q + 0.05) for a, q in quality.items()]
    agreement = noise_subset_agreement(short, longer)
    assert agreement["shared_architectures"] == 8
    assert agreement["kendall_tau"] == pytest.approx(1.0) and agreement["spearman"] == pytest.approx(1.0)
    assert agreement["seed_ceiling_kendall_tau"] == pytest.approx(1.0)  # seeds far apart from each other's noise
