import json

import numpy as np
import pytest

from agents.blackbox import AGENTS, decode_unit_vector
from agents.cli import main
from agents.plot import incumbent_on_grid, plot_runs
from agents.runner import RunSettings, load_runs, parse_duration, run_seed
from nas_envs.spaces.darts import DartsSpace

ENV_ID = "SurrNAS-DARTS-v0"
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


def test_search_improves_on_its_first_evaluations():
    import nas_envs

    benchmark = nas_envs.make_benchmark("darts")
    gains = []
    for seed in (1, 2, 3):
        rows = run_seed(RunSettings(ENV_ID, "re", 24 * 3600.0), seed=seed)
        genes = np.stack([benchmark.space.from_string(r["architecture"]) for r in rows])
        quality = benchmark.evaluate(genes, noise=False)["val_accuracy"]  # the surrogate mean, without the noise
        gains.append(quality[-100:].mean() - quality[:100].mean())
    # On average, mutations of tournament winners beat the random initial population (one seed may be drawn into
    # a region where the ensemble is unsure and the noisy evaluations are wider).
    assert np.mean(gains) > 0


def test_ppo_learns_from_the_environment():
    from agents.ppo import MaskablePPOAgent

    agent = MaskablePPOAgent(n_steps=128, batch_size=64)
    settings = RunSettings(ENV_ID, "ppo", 2 * 3600.0)
    from agents import runner

    original = runner.make_agent
    runner.make_agent = lambda name, **kwargs: agent
    try:
        rows = run_seed(settings, seed=0)
    finally:
        runner.make_agent = original
    assert len(agent.completed_rewards) == len(rows) - 1 >= 10  # all but the budget-spending one
    assert rows[-1]["sim_time"] >= 2 * 3600.0


def test_decode_unit_vector_always_gives_valid_architectures():
    space = DartsSpace()
    rng = np.random.default_rng(0)
    for vector in rng.random((50, space.num_decisions)):
        genes = decode_unit_vector(space, vector)
        space.validate(genes)
    np.testing.assert_array_equal(decode_unit_vector(space, np.ones(space.num_decisions)),
                                  decode_unit_vector(space, np.full(space.num_decisions, 0.99999)))


def test_durations_parse():
    assert parse_duration("24h") == 86400 and parse_duration("90m") == 5400 and parse_duration("120") == 120
    with pytest.raises(ValueError, match="positive duration"):
        parse_duration("-3h")


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


def test_incumbent_on_grid_is_a_step_function():
    rows = [{"sim_time": 10.0, "v": 0.5}, {"sim_time": 20.0, "v": 0.7}]
    np.testing.assert_array_equal(incumbent_on_grid(rows, np.array([5.0, 10.0, 15.0, 25.0]), "v")[1:], [0.5, 0.5, 0.7])
    assert np.isnan(incumbent_on_grid(rows, np.array([5.0]), "v")[0])


def test_reward_curve_windows_and_cli(tmp_path, capsys):
    from agents.plot import reward_curve

    runs = [[{"val_accuracy": v} for v in (0.1, 0.2, 0.3, 0.4, 0.5)], [{"val_accuracy": v} for v in (0.3, 0.4, 0.5, 0.6)]]
    curve = reward_curve(runs, window=2, steps_per_architecture=32)
    assert [c[0] for c in curve] == [64, 128]
    assert curve[0][1] == pytest.approx((0.15 + 0.35) / 2) and curve[1][1] == pytest.approx((0.35 + 0.55) / 2)
    out = tmp_path / "runs"
    main(["run", "--env", ENV_ID, "--agent", "reinforce", "--budget", "6h", "--seeds", "1", "--out", str(out)])
    assert main(["curve", str(out), "--agent", "reinforce", "--window", "10"]) == 0
    assert "env steps" in capsys.readouterr().out
