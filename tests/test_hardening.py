"""Bad input at the public boundary gets a documented error, never an internal one or a silently wrong result."""

import json
import shutil

import gymnasium as gym
import numpy as np
import pytest

import nas_envs
from nas_envs.assets import AssetError, packaged_bundle
from nas_envs.envs.sequential import InvalidActionError
from nas_envs.spaces.base import InvalidArchitectureError

ENV_ID = "SurrNAS-DARTS-v1"


@pytest.mark.parametrize("action", [0.9, 2.7, "0", None, np.nan, np.inf, True, np.array([0.0]), np.array([0, 1])])
def test_actions_must_be_integers(action):
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="an action must be an integer"):
        env.unwrapped.step(action)


@pytest.mark.parametrize("action", [0, np.int64(0), np.int8(0), np.array(0), np.array([0])])
def test_integer_actions_of_every_common_shape_are_accepted(action):
    env = gym.make(ENV_ID)
    _, info = env.reset(seed=0)
    _, _, terminated, _, info = env.step(action)
    assert not terminated and info["decision"] == 1


def test_vector_env_checks_its_actions_and_its_start():
    envs = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point")
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(4, dtype=np.int64))
    envs.reset(seed=0)
    for bad in (np.zeros((2, 2), dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(4)):
        with pytest.raises(TypeError, match=r"integers of shape \(4,\)"):
            envs.step(bad)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"noise": "False"}, TypeError, "noise must be True or False"),
    ({"noise": "no"}, TypeError, "noise must be True or False"),
    ({"noise": 0}, TypeError, "noise must be True or False"),
    ({"budget_seconds": True}, TypeError, "budget_seconds must be None or a number"),
    ({"budget_seconds": "3600"}, TypeError, "budget_seconds must be None or a number"),
    ({"budget_seconds": float("nan")}, ValueError, "positive number"),
    ({"strict_budget": "yes"}, TypeError, "strict_budget must be True or False"),
])
def test_options_have_their_documented_types(kwargs, error, message):
    with pytest.raises(error, match=message):
        gym.make(ENV_ID, **kwargs)


@pytest.mark.parametrize("name", ["darts", "fbnet", "cityseg-mop3"])
def test_batches_may_be_empty(name):
    bench = nas_envs.make_benchmark(name)
    for empty in ([], np.empty((0, bench.space.num_decisions), dtype=np.int64)):
        out = bench.evaluate(empty)
        assert set(out) == set(bench.objectives) and all(v.shape == (0,) for v in out.values())


def test_evaluate_checks_noise_and_reads_arrays_of_strings_and_objects():
    bench = nas_envs.make_benchmark("darts")
    genes = bench.space.sample(2, seed=0)
    with pytest.raises(TypeError, match="noise must be True or False"):
        bench.evaluate(genes, noise="False")
    strings = np.array([bench.space.to_string(g) for g in genes])
    expected = bench.evaluate(genes, noise=False)["val_accuracy"]
    np.testing.assert_array_equal(bench.evaluate(strings, noise=False)["val_accuracy"], expected)
    np.testing.assert_array_equal(bench.evaluate(genes.astype(object), noise=False)["val_accuracy"], expected)
    for bad in (np.zeros(32, dtype=bool), np.full(32, 2**62), np.array([None] * 32, dtype=object)):
        with pytest.raises(InvalidArchitectureError):
            bench.evaluate(bad)


def rewrite_listed(folder, name: str, content: str) -> None:
    """Write a bundle file and list its new sha256 in the manifest: content that passes the checksums."""
    from nas_envs.assets import sha256_file

    (folder / name).write_text(content)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][name] = sha256_file(folder / name)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def broken_copy(tmp_path, edit) -> str:
    folder = tmp_path / "darts"
    shutil.copytree(packaged_bundle("darts-v0"), folder)
    edit(folder)
    return str(folder)


def test_a_manifest_without_files_is_named(tmp_path):
    def drop_files(folder):
        manifest = json.loads((folder / "manifest.json").read_text())
        del manifest["files"]
        (folder / "manifest.json").write_text(json.dumps(manifest))

    with pytest.raises(AssetError, match="lists no files"):
        gym.make(ENV_ID, bundle=broken_copy(tmp_path, drop_files))  # found at make, not at the 32nd step


def test_a_model_file_missing_from_the_manifest_is_not_loaded_unchecked(tmp_path):
    def unlist(folder):
        manifest = json.loads((folder / "manifest.json").read_text())
        del manifest["files"]["xgb/val_accuracy/member_0.json"]
        (folder / "manifest.json").write_text(json.dumps(manifest))

    bench = nas_envs.make_benchmark("darts", bundle=broken_copy(tmp_path, unlist))
    with pytest.raises(AssetError, match="member_0.json not listed"):
        bench.evaluate(bench.space.sample(1, seed=0))


def test_content_that_matches_its_checksum_but_cannot_be_read_is_named(tmp_path):
    def break_content(folder):
        rewrite_listed(folder, "xgb/val_accuracy/member_0.json", '{"not": "an xgboost model"}')

    bench = nas_envs.make_benchmark("darts", bundle=broken_copy(tmp_path, break_content))
    with pytest.raises(AssetError, match="'xgb' model files .*could not be read"):
        bench.evaluate(bench.space.sample(1, seed=0))


def test_an_empty_assets_variable_is_refused(monkeypatch):
    monkeypatch.setenv("NAS_ENVS_ASSETS", "")
    with pytest.raises(AssetError, match="NAS_ENVS_ASSETS is set but empty"):
        nas_envs.make_benchmark("darts")


@pytest.mark.slow
def test_workers_die_with_their_parent_and_write_nothing_after(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    out = tmp_path / "runs"
    parent = subprocess.Popen([sys.executable, "-m", "nas_envs.cli", "run", "--env", ENV_ID, "--agent", "re",
                               "--budget", "3000d", "--seeds", "6", "--workers", "2", "--out", str(out)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers: list = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = [p for p in psutil.Process(parent.pid).children(recursive=True)
                   if "spawn_main" in " ".join(p.cmdline()) and "resource_tracker" not in " ".join(p.cmdline())]
    assert len(workers) == 2, "the workers did not start"
    os.kill(parent.pid, signal.SIGKILL)  # the parent only, not its process group
    parent.wait()
    gone, alive = psutil.wait_procs(workers, timeout=60)
    assert not alive, f"workers outlived their parent: {[p.pid for p in alive]}"
    written = sorted(out.glob("re/seed_*.jsonl"))
    time.sleep(2)
    assert sorted(out.glob("re/seed_*.jsonl")) == written and not list(out.glob("re/*.tmp"))[1:]


def test_an_output_folder_that_cannot_be_created_is_one_clear_line(tmp_path, capsys):
    from nas_envs.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["run", "--env", ENV_ID, "--agent", "rs", "--budget", "1h", "--seeds", "1", "--out",
                 str(blocker / "runs")])
    assert code == 2 and "nas-envs run: error:" in capsys.readouterr().err


@pytest.mark.parametrize("space_name", ["darts", "fbnet", "cityseg"])
def test_printed_strings_take_the_fast_path_and_agree_with_the_full_parser(space_name):
    from nas_envs.spaces import get_space

    space = get_space(space_name)
    genes = space.sample(50, seed=3)
    texts = [space.to_string(g) for g in genes]
    assert all(space.parse_printed(t) is not None for t in texts)
    np.testing.assert_array_equal(space.as_batch(texts), np.stack([space.from_string(t) for t in texts]))
    np.testing.assert_array_equal(space.as_batch(texts), genes)
    if space_name == "darts":  # another order of a node's two inputs: the same architecture, canonicalised
        swapped = texts[0].replace("normal=[(", "normal=[  (", 1)
        assert space.parse_printed(swapped) is None and np.array_equal(space.as_batch([swapped])[0], genes[0])
    with pytest.raises(InvalidArchitectureError):
        space.as_batch([texts[0], texts[1][:-2]])  # one broken string: the full parser names what is wrong


@pytest.mark.parametrize("objectives", [2, 3, 5, 7])
def test_the_archive_hypervolume_stays_exact_as_it_grows(objectives):
    from pymoo.indicators.hv import HV

    from nas_envs.envs.cityseg import Archive

    rng = np.random.default_rng(objectives)
    archive = Archive(objectives)
    points = rng.random((600, objectives)) ** 0.4 * 1.05  # a few beyond the reference point
    gains = [archive.add(point) for point in points]
    inside = archive.points[(archive.points <= 1).all(axis=1)]
    exact = HV(ref_point=np.ones(objectives))(inside)
    assert archive.hypervolume == pytest.approx(exact, rel=1e-12) and sum(gains) == pytest.approx(exact, rel=1e-12)
    assert min(gains) >= 0.0


def test_atomic_writes_leave_the_old_file_or_the_new_one(tmp_path):
    from nas_envs.files import replace_folder, write_atomically

    path = tmp_path / "a.json"
    write_atomically(path, "old")

    def crash(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, crash)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.json"]
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new"
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "x").write_text("1")
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "y").write_text("2")
    replace_folder(tmp_path / "new", tmp_path / "dest")
    assert [p.name for p in (tmp_path / "dest").iterdir()] == ["x"] and not (tmp_path / "dest.old").exists()


@pytest.mark.parametrize("edit", [lambda table: table.pop("params"),
                                  lambda table: table["flops"].update(weights=table["flops"]["weights"][:3]),
                                  lambda table: table["flops"].update(intercept=float("nan"))])
def test_a_cost_table_without_a_finite_row_per_cost_is_named(tmp_path, edit):
    def break_costs(folder):
        table = json.loads((folder / "costs.json").read_text())
        edit(table)
        rewrite_listed(folder, "costs.json", json.dumps(table))

    bench = nas_envs.make_benchmark("darts", bundle=broken_copy(tmp_path, break_costs))
    with pytest.raises(AssetError, match="costs.json: '(params|flops)' must hold a finite 'intercept'"):
        bench.evaluate(bench.space.sample(1, seed=0))


def test_a_base_that_is_not_a_bundle_name_is_named(tmp_path):
    def listed_base(folder):
        manifest = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps({**manifest, "base": ["darts-v0"]}))

    with pytest.raises(AssetError, match=r"names \[.darts-v0.\] as its base, which is not a released bundle"):
        nas_envs.make_benchmark("darts", bundle=broken_copy(tmp_path, listed_base)).verify()


@pytest.mark.parametrize("call, message", [
    (lambda space, other: space.as_batch(space.to_string(space.sample(seed=0)).encode()), "must be str, got bytes"),
    (lambda space, other: space.sample("3"), "non-negative integer"),
    (lambda space, other: space.sample(True), "non-negative integer"),
    (lambda space, other: space.values_from_genes(other.sample(seed=0)), "expected 32 genes"),
])
def test_the_space_doors_name_what_is_wrong(call, message):
    from nas_envs.spaces import get_space

    with pytest.raises((ValueError, InvalidArchitectureError), match=message):
        call(get_space("darts"), get_space("fbnet"))


@pytest.mark.parametrize("edit, message", [(lambda table: table["parts"].pop("decoder"), "missing or empty: decoder"),
                                           (lambda table: table["parts"]["head"].update(x=float("nan")),
                                            "finite milliseconds")])
def test_a_latency_table_without_every_part_or_with_a_bad_latency_is_named(tmp_path, edit, message):
    folder = tmp_path / "cityseg"
    shutil.copytree(packaged_bundle("cityseg-v0"), folder)
    table = json.loads((folder / "latency-h1.json").read_text())
    edit(table)
    rewrite_listed(folder, "latency-h1.json", json.dumps(table))
    bench = nas_envs.make_benchmark("cityseg-mop3", bundle=str(folder))
    with pytest.raises(AssetError, match=f"latency-h1.json: .*{message}"):
        bench.evaluate(bench.space.sample(1, seed=0))
