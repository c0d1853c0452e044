import json

import gymnasium as gym
import numpy as np
import pytest

from nas_envs.agents.blackbox import AGENTS, decode_unit_vector
from nas_envs.agents.plot import incumbent_on_grid, plot_runs
from nas_envs.agents.runner import AGENT_NAMES, RunSettings, load_runs, parse_duration, run_seed
from nas_envs.cli import main
from nas_envs.spaces.darts import DartsSpace

ENV_ID = "SurrNAS-DARTS-v1"
BUDGET = 3 * 3600.0  # about 100 evaluations of about 100 simulated seconds


@pytest.mark.parametrize("agent", sorted(AGENTS) + ["reinforce"])
def test_every_agent_spends_the_budget_and_records_a_consistent_trajectory(agent):
    rows = run_seed(RunSettings(ENV_ID, agent, BUDGET), seed=0)
    assert len(rows) >= 20
    times = np.array([r["sim_time"] for r in rows])
    assert (np.diff(times) > 0).all()
    assert times[-2] < BUDGET <= times[-1]  # the last evaluation is the one that exhausts the budget
    incumbent = np.array([r["incumbent_val_accuracy"] for r in rows])
    np.testing.assert_allclose(incumbent, np.maximum.accumulate([r["val_accuracy"] for r in rows]))
    best = int(np.argmax([r["val_accuracy"] for r in rows]))
    assert rows[-1]["incumbent_test_accuracy"] == rows[best]["test_accuracy"]
    space = DartsSpace()
    for row in rows[:5]:
        space.from_string(row["architecture"])


def test_same_seed_same_trajectory():
    settings = RunSettings(ENV_ID, "re", 3600.0)
    assert run_seed(settings, seed=3) == run_seed(settings, seed=3)
    assert run_seed(settings, seed=3) != run_seed(settings, seed=4)


@pytest.mark.slow
def test_search_improves_on_its_first_evaluations():
    import nas_envs

    benchmark = nas_envs.make_benchmark("darts")
    reference = benchmark.random_reference()  # noise-free scores of random architectures
    late = []
    for seed in (1, 2, 3):
        rows = run_seed(RunSettings(ENV_ID, "re", 24 * 3600.0), seed=seed)
        genes = np.stack([benchmark.space.from_string(r["architecture"]) for r in rows])
        quality = benchmark.evaluate(genes, noise=False)["val_accuracy"]  # the surrogate mean, without the noise
        late.append(quality[-100:].mean())
    # Mutations of tournament winners beat random sampling: every seed's last 100 architectures lie above the
    # random median, and on average above its 90th percentile (measured: 0.8548, 0.8594, 0.8609 against 0.8506 and
    # 0.8562; a search no better than random would average the median).
    assert min(late) > np.quantile(reference, 0.5) and np.mean(late) > np.quantile(reference, 0.9)


def test_ppo_stops_where_the_budget_is_spent_and_records_every_architecture():
    from nas_envs.agents.ppo import MaskablePPOAgent

    agent = MaskablePPOAgent(n_steps=128, batch_size=64)
    settings = RunSettings(ENV_ID, "ppo", 2 * 3600.0)
    from nas_envs.agents import runner

    original = runner.make_agent
    runner.make_agent = lambda name, **kwargs: agent
    try:
        rows = run_seed(settings, seed=0)
    finally:
        runner.make_agent = original
    assert len(agent.completed_rewards) == len(rows) >= 10  # every architecture, the budget-spending one included
    assert rows[-1]["sim_time"] >= 2 * 3600.0


@pytest.mark.slow
def test_the_ppo_recipe_learns_to_propose_better_architectures():
    from stable_baselines3.common.callbacks import BaseCallback

    import nas_envs
    from nas_envs.agents.ppo import ENV_KWARGS, make_model

    proposed: list[str] = []

    class Record(BaseCallback):
        def _on_step(self) -> bool:
            proposed.extend(info["architecture"] for info in self.locals["infos"] if "architecture" in info)
            return True

    make_model(gym.make(ENV_ID, **ENV_KWARGS), seed=0).learn(16_384, callback=Record())
    bench = nas_envs.make_benchmark("darts")
    accuracy = bench.evaluate(proposed, noise=False)["val_accuracy"]  # the surrogate's mean: no noise to luck into
    first, last = accuracy[:150].mean(), accuracy[-150:].mean()
    assert last - first > 0.003  # measured: 84.83 % -> 85.47 %
    assert last > np.quantile(bench.random_reference(), 0.75)  # better than three random architectures in four


def test_decode_unit_vector_always_gives_valid_architectures():
    space = DartsSpace()
    rng = np.random.default_rng(0)
    for vector in rng.random((50, space.num_decisions)):
        genes = decode_unit_vector(space, vector)
        space.validate(genes)
    np.testing.assert_array_equal(decode_unit_vector(space, np.ones(space.num_decisions)),
                                  decode_unit_vector(space, np.full(space.num_decisions, 0.99999)))


def test_durations_parse():
    assert parse_duration("24h") == 86400 and parse_duration("90m") == 5400 and parse_duration("120s") == 120
    for unitless_or_bad in ("120", "24", "-3h", "0h", "2x", ""):
        with pytest.raises(ValueError, match="positive duration with its unit"):
            parse_duration(unitless_or_bad)


def test_runner_cli_and_plot(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["run", "--env", ENV_ID, "--agent", "rs", "--budget", "2h", "--seeds", "3", "--out", str(out)]) == 0
    runs = load_runs(out)
    assert list(runs) == ["rs"] and len(runs["rs"]) == 3
    assert json.loads((out / "rs" / "run.json").read_text())["seeds"] == [0, 1, 2]
    png = tmp_path / "plot.png"
    assert main(["plot", str(out), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "rs" in printed and "val error" in printed
    table = plot_runs([out], tmp_path / "again.png")
    assert table["rs"]["seeds"] == 3 and table["rs"]["val_error_se"] > 0


def test_a_run_on_another_surrogate_records_it_and_its_incumbents_are_judged_by_it(tmp_path, capsys):
    import nas_envs

    out = tmp_path / "runs"
    args = ["run", "--env", ENV_ID, "--agent", "rs", "--budget", "1h", "--seeds", "1", "--out", str(out)]
    assert main(args + ["--surrogate", "xgb+gin"]) == 0
    assert json.loads((out / "rs" / "run.json").read_text())["env_kwargs"] == {"surrogate": "xgb+gin"}
    listed = tmp_path / "incumbents.jsonl"
    assert main(["incumbents", str(out), "--out", str(listed)]) == 0
    row = json.loads(listed.read_text())
    both = nas_envs.make_benchmark("darts", surrogate="xgb+gin").evaluate([row["architecture"]], noise=False)
    assert row["surrogate_mean_val_accuracy"] == pytest.approx(float(both["val_accuracy"][0]))
    xgb = nas_envs.make_benchmark("darts").evaluate([row["architecture"]], noise=False)
    assert row["surrogate_mean_val_accuracy"] != pytest.approx(float(xgb["val_accuracy"][0]))
    assert main(["run", "--env", "CitySeg-MOP1-v0", "--agent", "rs", "--budget", "1h", "--surrogate", "gin",
                 "--out", str(out)]) != 0
    assert "CitySeg-MOP1-v0 has none to choose" in capsys.readouterr().err


def test_incumbents_list_each_runs_final_incumbent_for_training(tmp_path, capsys):
    import nas_envs
    from nas_envs.groundtruth.analysis import incumbent_check
    from nas_envs.groundtruth.jobs import job_architecture, plan, trajectory_architectures

    out = tmp_path / "runs"
    for agent in ("rs", "re"):
        command = ["run", "--env", ENV_ID, "--agent", agent, "--budget", "1h", "--seeds", "2", "--out", str(out)]
        assert main(command) == 0
    listed = tmp_path / "incumbents" / "darts_1h.jsonl"
    assert main(["incumbents", str(out), "--out", str(listed)]) == 0
    assert "wrote 4 final incumbents" in capsys.readouterr().out
    rows = [json.loads(line) for line in listed.read_text().splitlines()]
    assert [(r["seed"], r["agent"]) for r in rows] == [(0, "re"), (0, "rs"), (1, "re"), (1, "rs")]  # seed by seed
    runs = load_runs(out)
    for row in rows:
        trajectory = runs[row["agent"]][row["seed"]]
        assert row["observed_val_accuracy"] == trajectory[-1]["incumbent_val_accuracy"]
        assert trajectory[row["found_at_evaluation"]]["architecture"] == row["architecture"]
    means = nas_envs.make_benchmark("darts").evaluate([r["architecture"] for r in rows], noise=False)["val_accuracy"]
    np.testing.assert_allclose([r["surrogate_mean_val_accuracy"] for r in rows], means)
    # the incumbent is the best of the noisy draws its run observed, found where the list says
    for row in rows:
        trajectory = runs[row["agent"]][row["seed"]]
        assert row["observed_val_accuracy"] == max(t["val_accuracy"] for t in trajectory)

    # the collector trains all of them (an incumbents list has no initial population to skip)
    distinct = list(dict.fromkeys(r["architecture"] for r in rows))
    assert trajectory_architectures(str(listed)) == distinct
    jobs = plan("darts", "random", "train", len(distinct), 1, trajectory=str(listed))
    assert jobs[0].key.startswith("incumbents:darts_1h@") and jobs[0].key.endswith("/train/0/r0")
    space = DartsSpace()
    assert [space.to_string(job_architecture(space, job)) for job in jobs] == distinct

    # compared with trainings of those architectures (here: made-up measurements 1 % below the surrogate mean)
    trained = [r for r in rows if r["architecture"] != rows[-1]["architecture"]]  # one not trained yet
    records = [{"arch": r["architecture"], "val_accuracy": r["surrogate_mean_val_accuracy"] - 0.01} for r in trained]
    check = incumbent_check(records, rows)
    assert check["incumbents"] == len(trained) and check["surrogate_mean_minus_measured"] == pytest.approx(0.01)
    assert check["by_agent"]["re"]["incumbents"] == sum(r["agent"] == "re" for r in trained)
    assert "random_mean" not in check  # no random training records given
    random = [{"arch": "x", "val_accuracy": v, "source": "random", "subset": "train"} for v in (0.80, 0.84)]
    check = incumbent_check(records + random, rows)
    assert check["random_mean"] == pytest.approx(0.82) and check["random_best"] == 0.84


def test_incumbent_trajectories_list_every_improvement_and_the_check_ranks_them(tmp_path, capsys):
    from nas_envs.groundtruth.analysis import incumbent_check

    out = tmp_path / "runs"
    assert main(["run", "--env", ENV_ID, "--agent", "re", "--budget", "2h", "--seeds", "2", "--out", str(out)]) == 0
    listed = tmp_path / "incumbents" / "re_trajectory.jsonl"
    assert main(["incumbents", str(out), "--out", str(listed), "--trajectory"]) == 0
    assert "of the runs' trajectories" in capsys.readouterr().out
    rows = [json.loads(line) for line in listed.read_text().splitlines()]
    runs = load_runs(out)["re"]
    for seed, trajectory in enumerate(runs):  # seeds 0, 1
        mine = [r for r in rows if r["seed"] == seed]
        running_best = np.maximum.accumulate([t["val_accuracy"] for t in trajectory])
        improved = [i for i in range(len(trajectory)) if i == 0 or running_best[i] > running_best[i - 1]]
        assert [r["found_at_evaluation"] for r in mine] == improved  # every improvement, in the order found
        assert mine[-1]["observed_val_accuracy"] == trajectory[-1]["incumbent_val_accuracy"]  # ends at the final one
    assert [r["seed"] for r in rows] == sorted(r["seed"] for r in rows)

    # measurements that order the architectures as the surrogate does, then in reverse
    distinct = {r["architecture"]: r["surrogate_mean_val_accuracy"] for r in rows}
    assert len(distinct) >= 3
    agreeing = [{"arch": a, "val_accuracy": m - 0.01} for a, m in distinct.items()]
    reversed_ = [{"arch": a, "val_accuracy": 1.0 - m} for a, m in distinct.items()]
    assert incumbent_check(agreeing, rows)["kendall_tau"] == pytest.approx(1.0)
    check = incumbent_check(reversed_, rows)
    assert check["kendall_tau"] == pytest.approx(-1.0) and check["architectures"] == len(distinct)
    assert "agents_kendall_tau" not in check  # one agent: nothing to rank

    # three agents whose incumbents the benchmark rates 0.80 < 0.82 < 0.84, measured in the reverse order
    listed = [{"agent": agent, "architecture": f"a{agent}{k}", "observed_val_accuracy": 0.9,
               "surrogate_mean_val_accuracy": mean} for agent, mean in (("x", 0.80), ("y", 0.82), ("z", 0.84))
              for k in range(2)]
    measured = [{"arch": row["architecture"], "val_accuracy": 1.64 - row["surrogate_mean_val_accuracy"]}
                for row in listed]
    assert incumbent_check(measured, listed)["agents_kendall_tau"] == pytest.approx(-1.0)


def test_incumbent_on_grid_is_a_step_function():
    rows = [{"sim_time": 10.0, "v": 0.5}, {"sim_time": 20.0, "v": 0.7}]
    np.testing.assert_array_equal(incumbent_on_grid(rows, np.array([5.0, 10.0, 15.0, 25.0]), "v")[1:], [0.5, 0.5, 0.7])
    assert np.isnan(incumbent_on_grid(rows, np.array([5.0]), "v")[0])


def test_reward_curve_windows_and_cli(tmp_path, capsys):
    from nas_envs.agents.plot import reward_curve

    runs = [[{"score": v} for v in (0.1, 0.2, 0.3, 0.4, 0.5)], [{"score": v} for v in (0.3, 0.4, 0.5, 0.6)]]
    curve = reward_curve(runs, window=2, steps_per_architecture=32)
    assert [c[0] for c in curve] == [64, 128]
    assert curve[0][1] == pytest.approx((0.15 + 0.35) / 2) and curve[1][1] == pytest.approx((0.35 + 0.55) / 2)
    out = tmp_path / "runs"
    command = ["run", "--env", ENV_ID, "--agent", "reinforce", "--budget", "6h", "--seeds", "1", "--out", str(out)]
    assert main(command) == 0
    png = tmp_path / "curve.png"
    assert main(["curve", str(out), "--agent", "reinforce", "--window", "10", "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    points = [line.split() for line in printed.splitlines() if line.strip()[:1].isdigit()]
    assert len(points) >= 3 and [int(p[0]) for p in points][:2] == [320, 640]  # 10 architectures of 32 decisions
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["SurrNAS-DARTS-v1", "SurrNAS-FBNet-v1", "CitySeg-MOP1-v0", "SurrNAS-DARTS-MF-v1"])
@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_every_agent_runs_on_every_kind_of_environment(tmp_path, env_id, agent):
    out = tmp_path / "runs"
    command = ["run", "--env", env_id, "--agent", agent, "--budget", "24h", "--max-evaluations", "12", "--seeds", "1",
               "--out", str(out)]
    assert main(command) == 0
    rows = load_runs(out)[agent][0]
    assert len(rows) == 12
    objectives = gym.make(env_id).unwrapped.benchmark.objectives
    assert all(name in rows[-1] for name in objectives)  # every objective of the benchmark is recorded
    assert rows[-1]["incumbent_score"] == max(r["score"] for r in rows)
    if env_id.startswith("CitySeg"):
        assert 0.0 < rows[-1]["hypervolume"] <= 1.0
        assert [r["hypervolume"] for r in rows] == sorted(r["hypervolume"] for r in rows)  # it never shrinks
    png = tmp_path / "plot.png"
    assert main(["plot", str(out), "-o", str(png)]) == 0 and png.stat().st_size > 0


def test_run_refuses_an_unknown_environment_before_writing_anything(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["run", "--env", "SurrNAS-NB201-v0", "--agent", "rs", "--budget", "1h", "--out", str(out)]) == 2
    assert "unknown environment 'SurrNAS-NB201-v0'" in capsys.readouterr().err and not out.exists()


def test_run_folders_keep_one_setting_and_reruns_add_nothing(tmp_path, capsys):
    out = tmp_path / "runs"
    base = ["run", "--env", ENV_ID, "--agent", "re", "--budget", "1h", "--out", str(out)]
    assert main(base + ["--seeds", "2"]) == 0
    first = sorted((out / "re").glob("seed_*.jsonl"))
    contents = [p.read_text() for p in first]
    assert main(base + ["--seeds", "2"]) == 0  # the same settings and seeds: skipped, nothing duplicated
    assert "already there" in capsys.readouterr().err
    assert [p.read_text() for p in sorted((out / "re").glob("seed_*.jsonl"))] == contents
    assert main(base + ["--seeds", "3"]) == 0  # a new seed of the same settings joins
    assert json.loads((out / "re" / "run.json").read_text())["seeds"] == [0, 1, 2]
    other = ["run", "--env", ENV_ID, "--agent", "re", "--budget", "1h", "--max-evaluations", "50", "--seeds", "1",
             "--surrogate", "gin", "--out", str(out)]
    assert main(other) == 2
    error = capsys.readouterr().err
    assert "holds runs of other settings" in error and "max_evaluations" in error and "surrogate" in error
    assert len(list((out / "re").glob("seed_*.jsonl"))) == 3


def test_plots_group_by_settings_and_count_each_seed_once(tmp_path, capsys):
    import shutil

    xgb, both, copy = tmp_path / "xgb", tmp_path / "both", tmp_path / "copy"
    assert main(["run", "--env", ENV_ID, "--agent", "rs", "--budget", "1h", "--seeds", "2", "--out", str(xgb)]) == 0
    assert main(["run", "--env", ENV_ID, "--agent", "rs", "--budget", "1h", "--seeds", "2", "--surrogate",
                 "xgb+gin", "--out", str(both)]) == 0
    shutil.copytree(xgb, copy)
    table = plot_runs([xgb, copy, both], tmp_path / "plot.png")
    assert set(table) == {"rs (surrogate=xgb)", "rs (surrogate=xgb+gin)"}
    assert table["rs (surrogate=xgb)"]["seeds"] == 2  # the copy's seeds are the same runs
    assert "counted once" in capsys.readouterr().err


def test_curve_takes_the_agent_the_folder_holds(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["run", "--env", ENV_ID, "--agent", "rs", "--budget", "6h", "--seeds", "1", "--out", str(out)]) == 0
    assert main(["curve", str(out), "--window", "10"]) == 0  # no PPO run, and none asked for
    assert "mean score" in capsys.readouterr().out
    assert main(["curve", str(out), "--agent", "ppo"]) == 2
    assert "holds no runs of 'ppo'" in capsys.readouterr().err


def test_tables_say_n_a_for_one_seed_and_plots_read_an_agents_own_folder(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["run", "--env", ENV_ID, "--agent", "re", "--budget", "2h", "--seeds", "1", "--out", str(out)]) == 0
    assert "n/a" in capsys.readouterr().out and "+- 0.000" not in capsys.readouterr().out
    assert main(["plot", str(out / "re"), "-o", str(tmp_path / "re.png")]) == 0  # the agent's folder itself
    assert "re " in capsys.readouterr().out


def _moea_runs(problem: int, centres: dict[str, float], spread: float, runs: int = 31) -> list[dict]:
    rng = np.random.default_rng(problem)
    return [{"problem": problem, "algorithm": a, "seed": s, "hv": c + spread * rng.standard_normal()}
            for a, c in centres.items() for s in range(runs)]


def test_rank_sum_marks_follow_table_7():
    from nas_envs.agents.moea import rank_sum_marks

    apart = {"nsga3": np.linspace(0.50, 0.51, 31), "nsga2": np.linspace(0.40, 0.41, 31)}
    assert rank_sum_marks(apart) == {"nsga3": "+", "nsga2": "-"}
    tied = {"nsga3": np.linspace(0.50, 0.51, 31), "nsga2": np.linspace(0.50, 0.51, 31) - 1e-4,
            "rvea": np.linspace(0.30, 0.31, 31)}
    assert rank_sum_marks(tied) == {"nsga3": "≈", "nsga2": "≈", "rvea": "-"}


def test_moea_table_marks_the_best_group_among_the_algorithms_that_ran():
    from nas_envs.agents.moea import baseline_table, paper_ordering_table

    runs = _moea_runs(1, {"nsga2": 0.80, "rvea": 0.90}, 0.001)
    row = next(line for line in baseline_table(runs).splitlines() if line.startswith("| MOP1 "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1].endswith(" -") and cells[4].startswith("**0.8999 (") and cells[4].endswith("** +")
    assert cells[2] == "-" and cells[-3:] == ["31", "rvea", "nsga2"]  # the paper's best among those that ran
    assert paper_ordering_table(runs).startswith("No problem")  # rankings need all six


def test_moea_ordering_table_says_where_the_papers_findings_hold():
    from nas_envs.agents.moea import MOEAS, PAPER_TABLE7, paper_ordering_table

    as_in_paper = _moea_runs(12, dict(zip(MOEAS, PAPER_TABLE7[12])), 1e-4)
    reversed_ = _moea_runs(1, dict(zip(MOEAS, [1 - hv for hv in PAPER_TABLE7[1]])), 1e-4)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in paper_ordering_table(as_in_paper + reversed_).splitlines()[2:]}
    assert rows["MOP12"][3:] == ["+1.00", "yes (yes)", "no (no)"]  # IBEA below RVEA there, in the paper too
    assert rows["MOP1"][3:] == ["-1.00", "no (yes)", "no (yes)"]


def test_list_sorts_naturally_and_describes_each_id(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    ids = [line.split()[0] for line in lines]
    from nas_envs.catalogue import ENV_BUNDLES

    assert ids[:3] == ["CitySeg-MOP1-v0", "CitySeg-MOP2-v0", "CitySeg-MOP3-v0"] and sorted(ids) == sorted(ENV_BUNDLES)
    assert all("(" in line and line.split()[1] == ENV_BUNDLES[line.split()[0]] for line in lines)  # bundle, reward
