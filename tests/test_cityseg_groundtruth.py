import numpy as np
import pytest
import torch

from nas_envs.fitting.cityseg_fit import cost_tables
from nas_envs.groundtruth.cityseg_hardware import activation_words
from nas_envs.groundtruth.cityseg_net import LARGEST_GENES, CitySegNet
from nas_envs.groundtruth.cityseg_supernet import evaluate_subnet, supernet_path, train_supernet
from nas_envs.groundtruth.cost_tables import build_cost_table, measure_costs
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from nas_envs.groundtruth.scenes import BACKGROUND, confusion_matrix, make_scenes, mean_iou
from nas_envs.spaces import get_space

SPACE = get_space("cityseg")
SMOKE = PROTOCOLS["cityseg-smoke"]


def test_supernet_runs_every_subnet_with_the_weights_it_extracts():
    torch.manual_seed(0)
    supernet = CitySegNet(LARGEST_GENES)
    with torch.no_grad():  # give BatchNorm non-trivial statistics, so that slicing them is tested too
        for module in supernet.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    supernet.eval()
    x = torch.randn(2, 1, 64, 64)
    for genes in SPACE.sample(4, seed=0):
        subnet = supernet.extract(genes).eval()
        assert sum(p.numel() for p in subnet.parameters()) < sum(p.numel() for p in supernet.parameters())
        with torch.no_grad():
            torch.testing.assert_close(supernet(x, genes), subnet(x), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_flops_and_params_tables_are_exact():
    table = build_cost_table(SPACE, SMOKE, checks=10)  # raises unless 10 fresh networks are reproduced exactly
    archs = SPACE.sample(5, seed=11)
    features = SPACE.cost_features(archs)
    predicted = np.stack(
        [np.rint(table[k]["intercept"] + features @ np.array(table[k]["weights"])) for k in ("params", "flops")], axis=1
    )
    np.testing.assert_array_equal(predicted, measure_costs(SPACE, SMOKE, archs))


def test_the_cost_tables_a_fit_reads_count_fresh_networks_exactly():
    """A CitySeg fit takes the released bundle's cost tables instead of rebuilding them: they must still count
    every kind of cost of the networks as built now."""
    tables = cost_tables(SPACE)
    archs = SPACE.canonicalize(SPACE.sample(3, seed=12))
    features = SPACE.cost_features(archs)
    predicted = np.stack([np.rint(tables[k]["intercept"] + features @ np.array(tables[k]["weights"]))
                          for k in ("params", "flops", "activation_words")], axis=1)
    protocol = PROTOCOLS[DEFAULT_PROTOCOL["cityseg"]]
    measured = np.hstack([measure_costs(SPACE, protocol, archs), activation_words(archs)])
    np.testing.assert_array_equal(predicted, measured)


def test_scenes_are_reproducible_and_labelled_by_item():
    scenes = make_scenes("val", 6)
    again = make_scenes("val", 3, start=3)
    np.testing.assert_array_equal(scenes.images[3:], again.images)
    np.testing.assert_array_equal(scenes.labels[3:], again.labels)
    assert not np.array_equal(make_scenes("test", 3).images, scenes.images[:3])
    bright = scenes.images[:, 0] > 0.2
    np.testing.assert_array_equal(scenes.labels != BACKGROUND, bright)  # item pixels, and only they, carry a class
    assert mean_iou(confusion_matrix(scenes.labels, scenes.labels)) == 1.0
    everything_background = np.full_like(scenes.labels, BACKGROUND)
    assert mean_iou(confusion_matrix(everything_background, scenes.labels)) < 0.2


@pytest.mark.slow
def test_supernet_training_resumes_exactly_and_subnets_are_scored_reproducibly(tmp_path, monkeypatch):
    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path))
    (tmp_path / "data").mkdir()
    interrupted = tmp_path / "data" / "resumed.pt"

    def killed_after_first_epoch(epoch: int, _entry: dict) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_supernet(SMOKE, interrupted, progress=killed_after_first_epoch)
    assert len(torch.load(interrupted, weights_only=True)["log"]["epochs"]) == 1
    resumed_log = train_supernet(SMOKE, interrupted)
    straight = supernet_path(SMOKE)
    straight_log = train_supernet(SMOKE, straight)
    assert [e["loss"] for e in resumed_log["epochs"]] == [e["loss"] for e in straight_log["epochs"]]
    for name, tensor in torch.load(straight, weights_only=True)["model"].items():
        torch.testing.assert_close(torch.load(interrupted, weights_only=True)["model"][name], tensor)

    genes = SPACE.sample(seed=2).tolist()
    first, again = evaluate_subnet(SMOKE, genes, seed=0), evaluate_subnet(SMOKE, genes, seed=0)
    assert {k: v for k, v in first.items() if k != "eval_seconds"} == {
        k: v for k, v in again.items() if k != "eval_seconds"
    }
    assert 0.0 <= first["val_miou"] <= 1.0 and first["err"] == pytest.approx(1.0 - first["val_miou"])
    assert first["params"] == sum(p.numel() for p in CitySegNet(genes).parameters())


class _RunsCodeWhenUnpickled:
    """A stand-in for a malicious checkpoint: unpickling it would create a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_replaced_checkpoint_is_refused_without_running_its_code(tmp_path, monkeypatch):
    import pickle

    from nas_envs.groundtruth.cityseg_supernet import _trained_supernet

    monkeypatch.setenv("NAS_ENVS_ASSETS", str(tmp_path))
    (tmp_path / "data").mkdir()
    marker = tmp_path / "ran"
    checkpoint = supernet_path(SMOKE)
    torch.save({"model": _RunsCodeWhenUnpickled(str(marker)), "log": {"epochs": []}}, checkpoint)
    with pytest.raises(pickle.UnpicklingError):
        _trained_supernet(str(checkpoint))
    with pytest.raises(pickle.UnpicklingError):
        train_supernet(SMOKE, checkpoint)
    assert not marker.exists()


def test_committed_data_assets_are_checked_against_their_manifest(tmp_path):
    import shutil

    from nas_envs.assets import REPO_ASSETS, AssetError, checked_file, record_file

    for name in ("manifest.json", "cityseg-latency-h1.json"):
        shutil.copy(REPO_ASSETS / "data" / name, tmp_path / name)
    table = tmp_path / "cityseg-latency-h1.json"
    assert checked_file(table) == table
    table.write_text(table.read_text().replace("1", "2", 1))
    with pytest.raises(AssetError, match="not the committed file"):
        checked_file(table)
    record_file(table)  # what measure-latency does after writing a new table on purpose
    assert checked_file(table) == table
