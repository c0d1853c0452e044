"""The collector on the seconds-long 'darts-smoke' protocol: real trainings, real processes, real kill -9."""

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from nas_envs.groundtruth.collect import collect
from nas_envs.groundtruth.jobs import Job, job_architecture, plan
from nas_envs.groundtruth.records import read_records, repair_tail
from nas_envs.groundtruth.train import evaluate
from nas_envs.spaces import get_space
from nas_envs.threads import one_thread

SMOKE = "darts-smoke"


def collect_command(out, n):
    return [sys.executable, "-m", "nas_envs.cli", "collect", "darts", "--n", str(n), "--workers", "1",
            "--protocol", SMOKE, "--out", str(out)]


def test_job_architectures_are_deterministic_and_streams_differ():
    space = get_space("darts")
    a = job_architecture(space, Job("darts", "random", "train", 7, 0))
    np.testing.assert_array_equal(a, job_architecture(space, Job("darts", "random", "train", 7, 0)))
    assert not np.array_equal(a, job_architecture(space, Job("darts", "random", "noise", 7, 0)))
    jobs = plan("darts", "random", "noise", 2, seeds=3)
    assert [j.key for j in jobs][:3] == ["random/noise/0/r0", "random/noise/0/r1", "random/noise/0/r2"]
    assert len({j.seed for j in jobs}) == 6


@pytest.mark.slow
def test_kill_9_mid_run_loses_only_trainings_in_flight_and_resume_completes(tmp_path):
    out = tmp_path / "smoke.jsonl"
    process = subprocess.Popen(collect_command(out, 6), stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(read_records(out)) < 2:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the writer and its worker, mid-training
    process.wait()
    after_kill = read_records(out)
    assert 2 <= len(after_kill) < 6
    assert out.read_bytes().endswith(b"\n")

    subprocess.run(collect_command(out, 6), check=True, stderr=subprocess.DEVNULL, timeout=300)
    records = read_records(out)
    keys = [r["job"] for r in records]
    assert sorted(keys) == sorted(f"random/train/{i}/r0" for i in range(6))  # complete, no duplicates
    assert records[: len(after_kill)] == after_kill  # earlier lines untouched
    for record in records:
        assert record["protocol"] == SMOKE
        assert len(record["val_accuracy_curve"]) == 1
        assert record["val_accuracy"] == record["val_accuracy_curve"][-1]
        assert record["val_loss"] == record["val_loss_curve"][-1] and len(record["val_loss_curve"]) == 1
        assert 0.0 <= record["test_accuracy"] <= 1.0
        assert record["train_seconds"] > 0 and record["params"] > 0 and record["flops"] > 0
        assert 0 < record["train_cpu_seconds"] <= 1.5 * record["train_seconds"]  # one thread per worker
        assert record["environment"]["torch"]
        assert get_space("darts").to_string(np.array(record["genes"])) == record["arch"]


@pytest.mark.slow
def test_a_job_another_collector_finished_is_neither_trained_nor_written_again(tmp_path):
    elsewhere = tmp_path / "elsewhere.jsonl"
    collect(elsewhere, SMOKE, plan("darts", "random", "train", 3, 1), workers=1)
    lines = {json.loads(line)["job"]: line for line in elsewhere.read_text().splitlines(keepends=True)}
    out = tmp_path / "smoke.jsonl"

    class OtherCollector(logging.Handler):
        """When this collector reports its first record, another one appends the job still in flight here
        (0 or 1, with two workers) and job 2, which has not started here yet."""

        messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage()
            self.messages.append(text)
            if "[1/3]" in text:
                in_flight = ({"random/train/0/r0", "random/train/1/r0"} - {text.split()[2]}).pop()
                with open(out, "a") as handle:
                    handle.write(lines[in_flight] + lines["random/train/2/r0"])

    other = OtherCollector()
    collector_log = logging.getLogger("nas_envs.groundtruth.collect")
    collector_log.addHandler(other)
    collector_log.setLevel(logging.INFO)
    try:
        assert collect(out, SMOKE, plan("darts", "random", "train", 3, 1), workers=2) == 1
    finally:
        collector_log.removeHandler(other)
    assert sorted(r["job"] for r in read_records(out)) == sorted(lines)  # each job once
    dropped = [line for line in other.messages if "written meanwhile by another collector" in line]
    assert len(dropped) == 1 and "random/train/2/r0" not in dropped[0]  # job 2 never started here


def test_writer_follows_a_file_that_git_replaced(tmp_path):
    from nas_envs.groundtruth.records import AppendOnlyWriter

    out = tmp_path / "data.jsonl"
    writer = AppendOnlyWriter(out)
    writer.append({"job": "a"})
    replacement = tmp_path / "checked-out.jsonl"  # as git checkout or git stash write a file: a new one, renamed
    replacement.write_text('{"job": "a"}\n')
    os.replace(replacement, out)
    writer.append({"job": "b"})
    assert out.read_text() == '{"job": "a"}\n{"job": "b"}\n'
    out.unlink()
    writer.append({"job": "c"})
    writer.close()
    assert out.read_text() == '{"job": "c"}\n'  # never into a deleted file


@pytest.mark.slow
def test_partial_last_line_is_repaired_and_never_read(tmp_path):
    out = tmp_path / "smoke.jsonl"
    assert collect(out, SMOKE, plan("darts", "random", "train", 1, 1), workers=1) == 1
    complete = out.read_bytes()
    with open(out, "ab") as handle:
        handle.write(b'{"job": "random/train/1/r0", "val_acc')  # a writer killed mid-write
    assert len(read_records(out)) == 1
    assert repair_tail(out) > 0
    assert out.read_bytes() == complete
    assert collect(out, SMOKE, plan("darts", "random", "train", 2, 1), workers=1) == 1
    assert [r["job"] for r in read_records(out)] == ["random/train/0/r0", "random/train/1/r0"]


@pytest.mark.slow
def test_same_job_same_result_across_processes(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        subprocess.run(collect_command(out, 1), check=True, stderr=subprocess.DEVNULL, timeout=600)
    a, b = read_records(first)[0], read_records(second)[0]
    for key in ("val_accuracy_curve", "val_loss_curve", "test_accuracy", "train_loss_curve", "params", "flops",
                "genes"):
        assert a[key] == b[key]


def test_evaluation_reads_accuracy_and_plain_cross_entropy_over_every_batch():
    class Fixed(torch.nn.Module):  # the same logits for every image: class 0 is twice as likely as each other one
        def forward(self, x):
            return torch.log(torch.tensor([2.0] + [1.0] * 9)).expand(len(x), 10)

    labels = torch.tensor([0, 0, 0, 5, 9])
    accuracy, loss = evaluate(Fixed(), torch.zeros(5, 1, 2, 2), labels, batch_size=2)
    assert accuracy == pytest.approx(3 / 5)
    assert loss == pytest.approx((3 * -np.log(2 / 11) + 2 * -np.log(1 / 11)) / 5)


def test_corrupted_line_in_the_middle_is_reported(tmp_path):
    out = tmp_path / "bad.jsonl"
    collect(out, SMOKE, plan("darts", "random", "train", 2, 1), workers=1)
    first, second = out.read_text().splitlines()
    out.write_text(f"{first}\nnot json\n{second}\n")
    with pytest.raises(ValueError, match="bad.jsonl:2: not a JSON line"):
        read_records(out)


def test_missing_dataset_gives_install_hint(tmp_path, monkeypatch):
    from nas_envs.groundtruth import fashion_mnist

    monkeypatch.setenv("NAS_ENVS_FASHION_MNIST", str(tmp_path))
    fashion_mnist.load_raw.cache_clear()
    try:
        with pytest.raises(fashion_mnist.DatasetMissingError, match="apt-get install dataset-fashion-mnist"):
            fashion_mnist.load_raw()
    finally:
        fashion_mnist.load_raw.cache_clear()


@pytest.mark.slow
def test_records_are_json_lines_with_sorted_keys(tmp_path):
    out = tmp_path / "smoke.jsonl"
    collect(out, SMOKE, plan("darts", "param-free", "train", 1, 1), workers=1)
    line = out.read_text().splitlines()[0]
    record = json.loads(line)
    assert list(record) == sorted(record)
    from nas_envs.spaces.darts import PARAMETER_FREE_OPS

    assert get_space("darts").count_ops(np.array(record["genes"]), "normal", PARAMETER_FREE_OPS) >= 5


def test_trajectory_jobs_train_the_optimisers_architectures_after_its_initial_population(tmp_path):
    from nas_envs.groundtruth.jobs import trajectory_architectures

    trajectory = tmp_path / "re" / "seed_0.jsonl"
    trajectory.parent.mkdir()
    space = get_space("darts")
    archs = [space.to_string(g) for g in space.sample(104, seed=0)]
    rows = archs[:102] + [archs[101], archs[102], archs[103]]  # one repeat after the initial population
    trajectory.write_text("".join(json.dumps({"architecture": a}) + "\n" for a in rows))
    assert trajectory_architectures(str(trajectory)) == [archs[100], archs[101], archs[102], archs[103]]
    jobs = plan("darts", "random", "train", 2, 1, trajectory=str(trajectory))
    assert [j.source for j in jobs] == ["re", "re"]
    assert jobs[0].key.startswith("re:seed_0@") and jobs[0].key.endswith("/train/0/r0")
    assert space.to_string(job_architecture(space, jobs[1])) == archs[101]
    with pytest.raises(ValueError, match="holds 4 architectures"):
        plan("darts", "random", "train", 5, 1, trajectory=str(trajectory))


def test_trajectory_jobs_skip_degenerate_cityseg_networks(tmp_path):
    space = get_space("cityseg")
    archs = space.sample(106, seed=0)
    archs[[101, 104], 0] = 0  # head depth 0: scored at the nadir by the benchmark, never measured
    trajectory = tmp_path / "nsga2" / "seed_0.jsonl"
    trajectory.parent.mkdir()
    # the first 100 lines are the optimiser's initial population, which trajectories skip
    trajectory.write_text("".join(json.dumps({"architecture": space.to_string(a)}) + "\n" for a in archs))
    jobs = plan("cityseg", "random", "train", 6, seeds=1, trajectory=str(trajectory))
    assert [job.index for job in jobs] == [0, 2, 3, 5] and {job.source for job in jobs} == {"nsga2"}


def test_snapshot_digest_describes_exactly_the_records_read(tmp_path):
    import hashlib

    from nas_envs.groundtruth.records import snapshot

    path = tmp_path / "records.jsonl"
    collect(path, SMOKE, plan("darts", "random", "train", 2, 1), workers=1)
    complete = path.read_bytes()
    path.write_bytes(complete + b'{"job": "random/train/2/r0", "val')  # a collector is writing the third line
    records, digest, lines = snapshot(path)
    assert [r["job"] for r in records] == ["random/train/0/r0", "random/train/1/r0"] and lines == 2
    assert digest == hashlib.sha256(complete).hexdigest()


@pytest.mark.slow
def test_merge_appends_only_new_jobs_and_repairs_a_partial_tail(tmp_path):
    from nas_envs.groundtruth.records import merge

    elsewhere, here = tmp_path / "elsewhere.jsonl", tmp_path / f"{SMOKE}.jsonl"
    collect(elsewhere, SMOKE, plan("darts", "random", "train", 2, 1), workers=1)
    collect(here, SMOKE, plan("darts", "random", "train", 1, 1), workers=1)
    with open(here, "ab") as handle:
        handle.write(b'{"job": "random/train/9/r0", "val')  # a writer killed mid-write
    assert merge(elsewhere, lambda protocol: tmp_path / f"{protocol}.jsonl") == {SMOKE: 1}
    assert [r["job"] for r in read_records(here)] == ["random/train/0/r0", "random/train/1/r0"]
    assert here.read_bytes().endswith(b"\n")
    assert merge(elsewhere, lambda protocol: tmp_path / f"{protocol}.jsonl") == {}


@pytest.mark.slow
def test_cpu_records_hold_cpu_seconds_and_their_device(tmp_path):
    out = tmp_path / "smoke.jsonl"
    collect(out, SMOKE, plan("darts", "random", "train", 1, 1), workers=1)
    record = read_records(out)[0]
    assert record["environment"]["device"] == "cpu"
    assert 0 < record["train_cpu_seconds"]


def test_cityseg_scorings_refuse_a_gpu(tmp_path):
    with pytest.raises(ValueError, match="CPU only"):
        collect(tmp_path / "x.jsonl", "cityseg-smoke", plan("cityseg", "random", "train", 1, 1), device="cuda")


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_training_starts_from_the_cpu_weights_and_batches():
    from nas_envs.groundtruth.protocols import PROTOCOLS
    from nas_envs.groundtruth.train import train

    genes = get_space("darts").sample(seed=0).tolist()
    on_cpu = train(PROTOCOLS[SMOKE], genes, seed=3)
    on_gpu = train(PROTOCOLS[SMOKE], genes, seed=3, device="cuda")
    assert on_gpu["params"] == on_cpu["params"] and "train_cpu_seconds" not in on_gpu
    assert on_gpu["train_loss_curve"][0] == pytest.approx(on_cpu["train_loss_curve"][0], rel=1e-3)


@pytest.mark.slow
def test_two_collectors_on_one_range_split_the_work_and_write_each_job_once(tmp_path):
    out = tmp_path / "smoke.jsonl"
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    processes = [subprocess.Popen(collect_command(out, 8), stderr=open(log, "w")) for log in logs]
    for process in processes:
        assert process.wait(timeout=300) == 0
    keys = [r["job"] for r in read_records(out)]
    assert sorted(keys) == sorted(f"random/train/{i}/r0" for i in range(8))  # complete, each job once
    trained = [{line.split()[2] for line in log.read_text().splitlines() if line.startswith("collect: [")}
               for log in logs]
    assert not trained[0] & trained[1] and trained[0] | trained[1] == set(keys)  # nobody trained a job twice
    assert all("dropped" not in log.read_text() for log in logs)


def test_a_complete_last_record_without_its_newline_is_kept(tmp_path):
    from nas_envs.groundtruth.records import merge

    out = tmp_path / "data.jsonl"
    collect(out, SMOKE, plan("darts", "random", "train", 2, 1), workers=1)
    out.write_text(out.read_text().rstrip("\n"))
    assert [r["job"] for r in read_records(out)] == ["random/train/0/r0", "random/train/1/r0"]
    target = tmp_path / "merged.jsonl"
    assert merge(out, lambda protocol: target) == {SMOKE: 2}  # merge reads it too
    assert repair_tail(out) == 0 and out.read_text().endswith("}\n") and len(read_records(out)) == 2
    out.write_text(out.read_text() + '{"job": "c", "proto')  # a partial line: left out, with a warning
    with pytest.warns(UserWarning, match="partial last line"):
        assert len(read_records(out)) == 2


def test_trajectory_jobs_are_keyed_by_the_file_content_not_its_folder(tmp_path):
    space = get_space("darts")
    archs = [space.to_string(space.sample(seed=s)) for s in range(104)]
    paths = []
    for folder, order in (("runsA", archs), ("runsB", archs[:100] + archs[100:][::-1])):
        path = tmp_path / folder / "re" / "seed_0.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps({"architecture": a}) + "\n" for a in order))
        paths.append(str(path))
    keys = [{job.key for job in plan("darts", "random", "train", 4, 1, trajectory=p)} for p in paths]
    assert not keys[0] & keys[1]  # same folder and file names, other architectures: other jobs


def test_pool_heavy_jobs_fill_the_normal_cell_with_pooling():
    space = get_space("darts")
    pools = {"max_pool_3x3", "avg_pool_3x3"}
    counts = [space.count_ops(job_architecture(space, job), "normal", pools)
              for job in plan("darts", "pool-heavy", "train", 40, 1)]
    assert min(counts) >= 6 and max(counts) == 8
    with pytest.raises(ValueError, match="allowed: \\('random', 'param-free', 'one-block', 'mutation-pair'\\)"):
        plan("fbnet", "pool-heavy", "train", 2, 1)


def test_one_block_jobs_repeat_one_convolutional_block_over_most_layers():
    from nas_envs.spaces.fbnet import BLOCKS, NUM_LAYERS, SKIP

    space = get_space("fbnet")
    archs = [job_architecture(space, job) for job in plan("fbnet", "one-block", "train", 60, 1)]
    dominant = [np.bincount(genes, minlength=len(BLOCKS)).argmax() for genes in archs]
    shares = [np.bincount(genes, minlength=len(BLOCKS)).max() for genes in archs]
    assert min(shares) >= 3 * NUM_LAYERS // 4 and SKIP not in dominant
    assert set(dominant) == set(range(len(BLOCKS))) - {SKIP}  # every block leads some of them
    with pytest.raises(ValueError, match="unknown region"):
        space.poor_region_variant(archs[0], np.random.default_rng(0), region="pool-heavy")


@pytest.mark.slow
def test_every_training_also_reads_the_reserve_without_changing_the_training(tmp_path):
    from dataclasses import replace

    from nas_envs.groundtruth.protocols import PROTOCOLS
    from nas_envs.groundtruth.train import train

    protocol = PROTOCOLS["fbnet-smoke"]
    splits = protocol.splits()
    used = np.concatenate([splits.train_x, splits.val_x]).reshape(-1, 196)
    reserve = splits.reserve_x.reshape(-1, 196)
    assert len(reserve) == protocol.n_reserve
    assert not set(map(bytes, reserve)) & set(map(bytes, used))  # disjoint from both splits
    genes = get_space("fbnet").sample(seed=np.random.default_rng(3)).tolist()
    with one_thread():  # as the collectors' workers train
        record = train(protocol, genes, seed=5)
        without = train(replace(protocol, n_reserve=0), genes, seed=5)
    assert record["reserve_images"] == protocol.n_reserve and 0 <= record["reserve_accuracy"] <= 1
    assert "reserve_accuracy" not in without
    assert without["val_accuracy_curve"] == record["val_accuracy_curve"]
    assert without["test_accuracy"] == record["test_accuracy"]


def test_untimed_evaluations_in_cpu_chunks_measure_what_the_protocols_batch_measures(monkeypatch):
    from nas_envs.groundtruth import train as train_module
    from nas_envs.groundtruth.protocols import PROTOCOLS

    protocol = PROTOCOLS["fbnet-smoke"]
    genes = get_space("fbnet").sample(seed=np.random.default_rng(4)).tolist()
    records = {}
    for chunk in (32, protocol.eval_batch_size):  # several chunks per set, then the protocol's batch
        monkeypatch.setattr(train_module, "UNTIMED_CPU_EVAL_CHUNK", chunk)
        with one_thread():  # as the collectors' workers train
            records[chunk] = train_module.train(protocol, genes, seed=5)
    chunked, whole = records.values()
    assert chunked["test_accuracy"] == whole["test_accuracy"]
    assert chunked["reserve_accuracy"] == whole["reserve_accuracy"]
    assert chunked["val_accuracy_curve"] == whole["val_accuracy_curve"]  # the timed validation keeps the batch


@pytest.mark.slow
def test_the_gpu_burst_script_runs_every_stream_and_a_search_round_and_its_files_merge(tmp_path):
    space = get_space("darts")
    listed = tmp_path / "search" / "round-00.jsonl"
    listed.parent.mkdir()
    listed.write_text("".join(json.dumps({"agent": agent, "source": f"search-{agent}", "architecture":
                                          space.to_string(space.sample(seed=seed))}) + "\n"
                              for seed, agent in enumerate(("re", "ppo"))))
    out = tmp_path / "burst"
    # a fixed number of jobs per stream, and a deadline far enough not to cut any on a busy machine
    env = {**os.environ, "SMOKE": "1", "DEVICE": "cpu", "PROBE_SECONDS": "4", "JOBS": "1",
           "NAS_ENVS_ASSETS": str(tmp_path), "TRAJECTORY": str(listed)}
    run_script(["bash", str(Path(__file__).parents[1] / "scripts" / "collect_gpu.sh"), str(out), "900", "fbnet",
                "darts"], env)
    streams = {path.name: read_records(path) for path in out.glob("*.jsonl")}
    assert set(streams) == {"fbnet-noise.jsonl", "fbnet-train.jsonl", "fbnet-param-free.jsonl",
                            "fbnet-one-block.jsonl", "darts-noise.jsonl", "darts-train.jsonl", "darts-round.jsonl",
                            "darts-param-free.jsonl", "darts-pool-heavy.jsonl"}
    assert all(records for records in streams.values())
    assert {r["source"] for r in streams["fbnet-one-block.jsonl"]} == {"one-block"}
    assert min(r["index"] for r in streams["fbnet-train.jsonl"]) == 5000  # far above the CPU collectors
    assert [r["source"] for r in streams["darts-round.jsonl"]] == ["search-re"]  # JOBS=1: the list's first
    checks = read_records(out / "checks" / "fbnet-smoke-gpu-check.jsonl")
    assert checks and {r["job"].split("/")[1] for r in checks} == {"noise"}
    run_script([sys.executable, "-m", "nas_envs.cli", "merge", *map(str, out.glob("*.jsonl"))], env)
    for name in ("fbnet", "darts"):
        merged = read_records(tmp_path / "data" / f"{name}-smoke.jsonl")
        assert len(merged) == sum(len(records) for file, records in streams.items() if file.startswith(name))


def run_script(command: list[str], env: dict) -> None:
    """Run a script; a failure shows what it printed (a bare CalledProcessError hides why)."""
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    printed = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{command[:3]} exited {done.returncode}:\n{printed}"


@pytest.mark.parametrize("space_name", ["darts", "fbnet"])
def test_mutation_pairs_are_a_random_architecture_and_one_edit_of_it(space_name):
    space = get_space(space_name)
    archs = [job_architecture(space, job) for job in plan(space_name, "mutation-pair", "train", 20, 1)]
    for base, edited in zip(archs[0::2], archs[1::2]):
        assert any(np.array_equal(edited, n) for n in space.neighbours(base))
    assert len({space.to_string(a) for a in archs[0::2]}) == 10  # distinct random bases


def test_a_collection_without_the_reserve_records_the_same_trainings(tmp_path):
    jobs = plan("darts", "random", "train", 2, 1)
    collect(tmp_path / "with.jsonl", SMOKE, jobs)
    collect(tmp_path / "without.jsonl", SMOKE, jobs, reserve=False)
    with_reserve, without = (read_records(tmp_path / name) for name in ("with.jsonl", "without.jsonl"))
    assert all("reserve_accuracy" in r for r in with_reserve) and not any("reserve_accuracy" in r for r in without)
    for a, b in zip(with_reserve, without):
        assert (a["job"], a["val_accuracy_curve"], a["test_accuracy"]) == (b["job"], b["val_accuracy_curve"],
                                                                            b["test_accuracy"])


@pytest.mark.parametrize("protocol", ["../../outside", "/tmp/absolute", "darts-unknown-v9"])
def test_merge_refuses_a_protocol_that_is_not_in_the_catalogue_and_writes_nothing(tmp_path, protocol):
    from nas_envs.groundtruth.records import merge

    elsewhere = tmp_path / "elsewhere.jsonl"
    collect(elsewhere, SMOKE, plan("darts", "random", "train", 1, 1), workers=1)
    record = json.loads(elsewhere.read_text())
    elsewhere.write_text(json.dumps({**record, "protocol": protocol}) + "\n")
    written = []
    with pytest.raises(ValueError, match="unknown protocols .* nothing was merged"):
        merge(elsewhere, lambda name: written.append(name) or tmp_path / "data" / f"{name}.jsonl")
    assert written == [] and not (tmp_path / "data").exists()


@pytest.mark.parametrize(("field", "value", "words"), [
    ("val_accuracy", float("nan"), "'val_accuracy' is nan; a measured fraction is a finite number in [0, 1]"),
    ("val_accuracy", 1e308, "'val_accuracy' is 1e+308"),
    ("test_accuracy", "0.9", "'test_accuracy' is '0.9'"),
    ("train_seconds", -1.0, "measured seconds are a finite number >= 0"),
    ("val_accuracy_curve", [0.5, float("inf")], "'val_accuracy_curve' must be a list of finite numbers"),
    ("job", None, "field 'job' missing"),
])
def test_a_record_with_a_bad_number_or_field_is_refused_with_its_file_line_and_field(tmp_path, field, value, words):
    path = tmp_path / "c.jsonl"
    collect(path, SMOKE, plan("darts", "random", "train", 2, 1), workers=1)
    lines = path.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), field: value})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as error:
        read_records(path)
    assert str(error.value).startswith(f"{path}:2: ") and words in str(error.value)
    path.write_text(lines[0] + "\n[]\n")
    with pytest.raises(ValueError, match=r":2: a JSON list where an object is expected"):
        read_records(path)
