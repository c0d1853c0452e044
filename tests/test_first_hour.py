"""What a new user trips over first: mixed run folders, missing extras, the vector idiom, names, and bad input at
every door. Each test fails on the code before its fix."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nas_envs
from nas_envs.agents.plot import coinciding_until, format_table, plot_run_folders, plot_runs, time_unit
from nas_envs.agents.runner import RunSettings, load_run_groups, run
from nas_envs.assets import AssetError, sha256_file, write_manifest
from nas_envs.cli import main
from nas_envs.spaces.base import InvalidArchitectureError


def quick_run(env_id, agent, out, seeds=(0,), budget=1800.0):
    return run(RunSettings(env_id=env_id, agent=agent, budget_seconds=budget), list(seeds), out)


def test_a_folder_of_two_environments_plots_one_figure_each(tmp_path):
    quick_run("CitySeg-MOP3-v0", "re", tmp_path)
    quick_run("SurrNAS-DARTS-v1", "rs", tmp_path)
    figures = plot_run_folders([tmp_path], tmp_path / "m.png")
    assert set(figures) == {"CitySeg-MOP3-v0", "SurrNAS-DARTS-v1"}
    assert all(path.is_file() and path.name == f"m-{env}.png" for env, (path, _) in figures.items())
    assert "hypervolume_mean" in figures["CitySeg-MOP3-v0"][1]["re"]
    with pytest.raises(ValueError, match="2 environments"):
        plot_runs([tmp_path], tmp_path / "one.png")
    assert main(["plot", str(tmp_path), "-o", str(tmp_path / "cli.png")]) == 0


def test_every_figure_option_is_spelt_plot_and_names_the_file_it_writes(tmp_path, capsys):
    quick_run("SurrNAS-DARTS-v1", "rs", tmp_path)
    assert main(["plot", str(tmp_path), "--plot", str(tmp_path / "anytime")]) == 0
    assert f"wrote {tmp_path / 'anytime.png'}" in capsys.readouterr().out
    assert (tmp_path / "anytime.png").is_file() and not (tmp_path / "anytime").exists()


def test_the_time_axis_speaks_the_budget_unit_and_coinciding_curves_are_named():
    assert time_unit(24 * 3600) == ("h", 3600.0) and time_unit(2 * 86400)[0] == "d"
    assert time_unit(90 * 60)[0] == "min" and time_unit(1000)[0] == "s"
    grid = np.arange(10.0)
    same = {"re": np.r_[np.ones(5), np.zeros(5)], "rs": np.ones(10), "ls": np.full(10, 3.0)}
    assert coinciding_until(grid, same) == [("re", "rs", 4.0)]


def test_tables_show_enough_digits_to_see_the_spread():
    table = {"re": {"seeds": 2, "evaluations_mean": 10, "hypervolume_mean": 0.43453, "hypervolume_se": 0.00042}}
    assert "0.43453 +- 0.00042" in format_table(table)


def run_without(module, args):
    """``nas-envs ARGS`` in a fresh process where ``module`` cannot be imported (as in a core install)."""
    code = (f"import sys; sys.modules[{module!r}] = None\nfrom nas_envs.cli import main\n"
            f"raise SystemExit(main({args!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize("module,extra,args", [
    ("matplotlib", "plot", ["plot", "NOWHERE", "-o", "x.png"]),
    ("pymoo", "moea", ["moea", "--problems", "1", "--runs", "1", "--evaluations", "50", "--out", "OUT"]),
    ("scipy", "groundtruth", ["evaluate-surrogate", "darts", "--model", "xgb"]),
])
def test_a_command_whose_extra_is_missing_names_it_in_one_line(tmp_path, module, extra, args):
    args = [str(tmp_path / "m.jsonl") if a == "OUT" else a for a in args]
    result = run_without(module, args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"nas-envs[{extra}]" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_gin_surrogate_without_its_extra_is_refused_at_make():
    code = ("import sys; sys.modules['torch_geometric'] = None\nimport gymnasium as gym, nas_envs\n"
            "try:\n    gym.make('SurrNAS-DARTS-v1', surrogate='gin')\nexcept ImportError as e:\n    print(e)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "nas-envs[gin]" in result.stdout


def test_the_single_env_mask_idiom_works_on_the_vector_env():
    env = gym.make_vec("SurrNAS-DARTS-v1", num_envs=4, vectorization_mode="vector_entry_point")
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(70):
        mask = info["action_mask"]
        action = env.action_space.sample(mask)
        assert all(mask[i, action[i]] or not mask[i].any() for i in range(4))  # all-zero: the autoreset step
        _, _, _, _, info = env.step(action)


def test_unknown_ids_get_the_closest_one(capsys):
    assert nas_envs.closest_env_id("SurrNAS-Darts-v0") == "SurrNAS-DARTS-v0"
    assert nas_envs.closest_env_id("cityseg-mop3-v0") == "CitySeg-MOP3-v0"
    assert main(["run", "--env", "SurrNAS-Darts-v0", "--agent", "rs", "--budget", "1h", "--out", "x"]) == 2
    assert "did you mean 'SurrNAS-DARTS-v0'" in capsys.readouterr().err
    assert gym.make("nas_envs:SurrNAS-DARTS-v1").spec.id == "SurrNAS-DARTS-v1"  # the id form without the import


def test_quiet_works_after_the_command_and_curve_says_why_it_is_empty(tmp_path, capsys):
    quick_run("SurrNAS-DARTS-v1", "rs", tmp_path)
    assert main(["curve", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "fewer than one window of 100" in err and "--window" in err
    assert main(["curve", str(tmp_path), "--window", "5"]) == 0


# --- bad input, by kind -----------------------------------------------------------------------------------------

def test_a_bundle_of_another_space_or_kind_is_refused_when_opened():
    with pytest.raises(ValueError, match="is a fbnet bundle; a darts benchmark needs a darts bundle"):
        nas_envs.make_benchmark("darts", bundle="fbnet-v0").verify()
    with pytest.raises(ValueError, match="is a darts bundle; a cityseg benchmark"):
        gym.make("CitySeg-MOP1-v0", bundle="darts-v0")
    with pytest.raises(ValueError, match="is a cityseg bundle"):
        gym.make("SurrNAS-FBNet-v1", bundle="cityseg-v0")


@pytest.mark.parametrize("broken", ["costs.json", "xgb/val_accuracy/member_0.json", "runtime/ridge.npz"])
def test_own_bundles_with_broken_files_name_the_file(tmp_path, broken):
    folder = tmp_path / "bundle"
    shutil.copytree(Path(nas_envs.__file__).parent / "bundles" / "darts-v0", folder)
    (folder / broken).write_bytes(b"PK\x03\x04 not what it should be")
    manifest = json.loads((folder / "manifest.json").read_text())
    files = [folder / name for name in manifest.pop("files")]
    write_manifest(folder, files, **manifest)  # re-hashed: the checksums pass, the content is broken
    assert sha256_file(folder / broken) == json.loads((folder / "manifest.json").read_text())["files"][broken]
    benchmark = nas_envs.make_benchmark("darts", bundle=folder)
    with pytest.raises(AssetError, match=broken.split("/")[0]):
        benchmark.evaluate(benchmark.space.sample(2, seed=0))


@pytest.mark.parametrize("kwargs,error,words", [
    ({"surrogate": ""}, ValueError, "unknown surrogate ''"),
    ({"surrogate": ["xgb"]}, ValueError, "unknown surrogate"),
    ({"bundle": ""}, ValueError, "bundle must be"),
    ({"bundle": 123}, ValueError, "bundle must be"),
    ({"budget_seconds": 10**400}, ValueError, "beyond float range"),
])
def test_keyword_values_are_checked_where_they_are_given(kwargs, error, words):
    with pytest.raises(error, match=words):
        gym.make("SurrNAS-DARTS-v1", **kwargs)


def test_a_problem_given_as_a_string_of_its_number_is_that_problem():
    env = gym.make("CitySeg-MOP1-v0", problem="3").unwrapped
    assert env.benchmark_name == "cityseg-mop3"
    for bad, words in (("x", "an integer 1..15"), (3.0, "an integer 1..15"), (16, "MOP16 does not exist")):
        with pytest.raises((TypeError, ValueError), match=words):
            gym.make("CitySeg-MOP1-v0", problem=bad)


def test_reset_options_are_checked():
    env = gym.make("SurrNAS-DARTS-v1").unwrapped
    with pytest.raises(TypeError, match=r"options\['reset_budget'\] must be True or False"):
        env.reset(options={"reset_budget": "no"})
    with pytest.raises(TypeError, match="reset options must be a dict"):
        env.reset(options="reset")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["darts", "fbnet", "cityseg-mop3"]),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40),
                       st.text(max_size=3)),
       row_count=st.integers(0, 3))
def test_the_pymoo_adapter_refuses_what_evaluate_refuses(name, value, row_count):
    from nas_envs.benchmarks.pymoo_adapter import BenchmarkProblem

    benchmark = nas_envs.make_benchmark(name)
    problem = BenchmarkProblem(benchmark, seed=0)
    genes = benchmark.space.sample(max(row_count, 1), seed=0)[:row_count]
    x = np.array(genes, dtype=object)
    if row_count:
        x[0, 0] = value
    # an integer within the genes' bounds that breaks a rule of the space is projected (what pymoo's operators
    # produce, documented); everything else evaluate refuses, the adapter refuses too
    in_bounds = isinstance(value, (int, float)) and 0 <= value <= benchmark.space.gene_upper_bounds()[0] and \
        float(value).is_integer()
    try:
        expected = benchmark.evaluate(np.array(x.tolist()), noise=True, seed=0) if row_count else None
    except InvalidArchitectureError:
        if in_bounds:
            assert problem.evaluate(np.array(x.tolist(), dtype=float)).shape == (row_count, problem.n_obj)
        else:
            with pytest.raises(InvalidArchitectureError):
                problem.evaluate(np.array(x.tolist()))
        return
    F = problem.evaluate(np.array(x.tolist(), dtype=float) if row_count else np.empty((0, genes.shape[1])))
    assert F.shape == (row_count, problem.n_obj)
    if row_count:  # the same architecture, never a projection onto another
        assert problem.evaluated[-1].tolist() == benchmark.space.as_batch(np.array(x.tolist())).tolist()
        assert expected is not None


def test_the_pymoo_adapter_checks_its_noise_flag():
    from nas_envs.benchmarks.pymoo_adapter import BenchmarkProblem

    with pytest.raises(TypeError, match="noise must be True or False"):
        BenchmarkProblem(nas_envs.make_benchmark("darts"), noise="no")


def test_run_folder_readers_skip_and_name_what_cannot_count(tmp_path, caplog):
    folder = quick_run("SurrNAS-DARTS-v1", "rs", tmp_path / "runs", seeds=(0, 1, 2))
    other = quick_run("SurrNAS-FBNet-v1", "rs", tmp_path / "other")
    shutil.copy(other / "seed_0.jsonl", folder / "seed_5.jsonl")  # another environment's run
    shutil.copy(folder / "seed_0.jsonl", folder / "seed_0 (copy).jsonl")
    (folder / "seed_1.jsonl").write_text("")
    lines = (folder / "seed_2.jsonl").read_text().splitlines()
    (folder / "seed_2.jsonl").write_text("\n".join(lines[:-1] + [lines[-1][:40]]))  # truncated
    legacy = [json.loads(line) for line in lines]
    (folder / "seed_6.jsonl").write_text("".join(json.dumps({k: v for k, v in row.items() if k != "run"}) + "\n"
                                                 for row in legacy))  # written before rows named their run
    nan_row = {**legacy[0], "sim_time": float("nan")}
    (folder / "seed_7.jsonl").write_text(json.dumps(nan_row) + "\n")
    [group] = load_run_groups([tmp_path / "runs"])
    assert sorted(group.seeds) == [0, 6]
    for name in ("seed_5", "seed_0 (copy)", "seed_1", "seed_2", "seed_7"):
        assert name in caplog.text
    again = run(RunSettings(env_id="SurrNAS-DARTS-v1", agent="rs", budget_seconds=1800.0), [0, 1, 2], tmp_path / "runs")
    assert sorted(load_run_groups([again.parent])[0].seeds) == [0, 1, 2, 6]  # the empty and the truncated: rerun
    (folder / "run.json").write_text("{}")
    with pytest.raises(ValueError, match="run.json is not a run record"):
        load_run_groups([tmp_path / "runs"])
    (folder / "run.json").write_text("not json")
    assert main(["plot", str(tmp_path / "runs"), "-o", str(tmp_path / "p.png")]) == 2


def test_claims_that_are_malformed_or_held_by_an_unrelated_process_never_block_a_job(tmp_path):
    from nas_envs.groundtruth.claims import CLAIM_LEASE_SECONDS, claim

    path = tmp_path / "data.jsonl"
    claims = path.with_name(path.name + ".claims")
    host = socket.gethostname()
    stale = [
        "{not json", "[1, 2]", "42", json.dumps({"job": "a"}),
        # pid 1 is alive but is not the collector that claimed: its start time differs
        json.dumps({"job": "a", "host": host, "pid": 1, "started": "0"}),
        # another machine's collector whose lease ran out
        json.dumps({"job": "a", "host": "elsewhere", "pid": 7, "claimed_at": 0.0}),
    ]
    claims.write_text("\n".join(stale) + "\n")
    assert claim(path, "a", set())
    claims.write_text(json.dumps({"job": "b", "host": "elsewhere", "pid": 7,
                                  "claimed_at": __import__("time").time() - CLAIM_LEASE_SECONDS / 2}) + "\n")
    assert not claim(path, "b", set())  # a live claim elsewhere, within its lease, holds
    parent = os.getppid()
    from nas_envs.groundtruth.claims import _process_start

    now = __import__("time").time()
    claims.write_text(json.dumps({"job": "c", "host": host, "pid": parent, "started": _process_start(parent),
                                  "claimed_at": now}) + "\n")
    assert not claim(path, "c", set())  # the claiming process itself still runs
    # the older format without the process's start time: a live process may have reused the pid, so it is stale
    claims.write_text(json.dumps({"job": "d", "host": host, "pid": parent, "claimed_at": now}) + "\n")
    assert claim(path, "d", set())


def test_the_percentile_reward_averages_one_half_on_its_reference_distribution():
    benchmark = nas_envs.make_benchmark("darts")
    reference = benchmark.random_reference()
    scores = benchmark.score(benchmark.evaluate(benchmark.space.sample(2000, seed=5), noise=False))
    assert abs(np.mean(np.searchsorted(reference, scores) / len(reference)) - 0.5) < 0.03


def test_command_messages_reach_the_stderr_of_the_moment():
    """Notebooks and captures swap sys.stderr between commands: the messages follow, none go to an old stream."""
    import contextlib
    import io
    import logging

    from nas_envs.cli import configure_output

    configure_output(quiet=False)
    for _ in range(2):
        buffer = io.StringIO()
        with contextlib.redirect_stderr(buffer):
            configure_output(quiet=False)
            logging.getLogger("nas_envs.agents.runner").warning("seeds already there")
        assert buffer.getvalue() == "seeds already there\n"


@pytest.mark.parametrize(("argv", "words"), [
    (["moea", "--problems", "3-1"], "argument --problems: '3-1': CitySeg/MOP problems run from 1 to 15"),
    (["moea", "--problems", "1-"], "argument --problems: '1-' is not a list of CitySeg/MOP problems"),
    (["moea", "--problems", "a"], "is not a list of CitySeg/MOP problems: write e.g. 1-15"),
    (["moea", "--problems", "16"], "run from 1 to 15"),
    (["moea", "--runs", "-1"], "argument --runs: must be an integer >= 1, got -1"),
    (["moea", "--evaluations", "0"], "argument --evaluations: must be an integer >= 1, got 0"),
    (["collect", "darts", "--n", "-1"], "argument --n: must be an integer >= 1, got -1"),
    (["collect", "darts", "--n", "2", "--seeds", "0"], "argument --seeds: must be an integer >= 1, got 0"),
    (["run", "--env", "SurrNAS-DARTS-v1", "--agent", "rs", "--budget", "1h", "--seeds", "x"],
     "argument --seeds: must be an integer, got 'x'"),
])
def test_command_line_numbers_are_checked_where_they_are_given(argv, words, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and words in capsys.readouterr().err


def test_a_one_shot_search_needs_two_batches_of_images():
    from nas_envs.oneshot.search import SearchSettings

    with pytest.raises(ValueError, match="images must be at least two batches"):
        SearchSettings(images=1)


def test_a_missing_module_names_the_commands_extra(monkeypatch, capsys):
    """A command whose side package is missing names the extra that installs the whole command."""
    import nas_envs.cli.groundtruth as commands

    def missing(args):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(commands, "_train_supernet", missing)
    from nas_envs.cli import main

    assert main(["train-supernet"]) == 2
    assert "pip install 'nas-envs[groundtruth]'" in capsys.readouterr().err
