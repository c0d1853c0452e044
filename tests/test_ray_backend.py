"""The Ray backends on a real local Ray instance: same jobs, same results as the local process pool."""

import pytest

ray = pytest.importorskip("ray", reason="the ray backend is optional: pip install -e '.[ray]'")

from nas_envs.agents.runner import RunSettings, load_runs, run  # noqa: E402
from nas_envs.groundtruth.collect import collect  # noqa: E402
from nas_envs.groundtruth.jobs import plan  # noqa: E402
from nas_envs.groundtruth.records import read_records  # noqa: E402

pytestmark = pytest.mark.slow  # a supernet, a fit or a Ray instance per module


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_collect_on_ray_gives_the_same_records_as_local_workers(tmp_path):
    jobs = plan("darts", "random", "train", 2, 1)
    assert collect(tmp_path / "ray.jsonl", "darts-smoke", jobs, workers=2, backend="ray") == 2
    assert collect(tmp_path / "local.jsonl", "darts-smoke", jobs, workers=1) == 2
    by_job = {r["job"]: r for r in read_records(tmp_path / "local.jsonl")}
    for record in read_records(tmp_path / "ray.jsonl"):
        for key in ("val_accuracy_curve", "test_accuracy", "params", "flops", "arch"):
            assert record[key] == by_job[record["job"]][key]


def test_runner_seeds_on_ray_match_local_runs(tmp_path):
    settings = RunSettings("SurrNAS-DARTS-v1", "re", 4 * 3600.0)
    run(settings, [0, 1], tmp_path / "ray", workers=2, backend="ray")
    run(settings, [0, 1], tmp_path / "local", workers=1)
    assert load_runs(tmp_path / "ray") == load_runs(tmp_path / "local")


def test_a_grid_on_ray_writes_the_same_files_as_a_grid_on_local_workers(tmp_path):
    from nas_envs.agents.runner import run_grid

    envs, agents = ["SurrNAS-DARTS-v1", "CitySeg-MOP2-v0"], ["rs", "re"]
    on_ray = run_grid(envs, agents, [0, 1], tmp_path / "ray", 2 * 3600.0, workers=2, backend="ray")
    local = run_grid(envs, agents, [0, 1], tmp_path / "local", 2 * 3600.0, workers=1)
    assert [f.relative_to(tmp_path / "ray") for f in on_ray] == [f.relative_to(tmp_path / "local") for f in local]
    files = sorted(p.relative_to(tmp_path / "local") for p in (tmp_path / "local").rglob("seed_*.jsonl"))
    assert len(files) == len(envs) * len(agents) * 2
    for name in files:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
