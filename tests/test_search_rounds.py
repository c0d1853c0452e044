"""Closed search rounds: what a round lists from its searches, how its list becomes jobs, and how it is judged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nas_envs.groundtruth.jobs import plan
from nas_envs.groundtruth.search_rounds import (
    RoundSettings,
    choose,
    read_round_lists,
    round_table,
    run_searches,
    with_predictions,
    write_round,
)


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    settings = RoundSettings(round=3, seeds=2, budget="12h", top=2, rest=1, agents=("rs", "re"), surrogates=("xgb",))
    runs = tmp_path_factory.mktemp("runs")
    run_searches(settings, runs)
    return settings, runs


def test_a_round_lists_each_runs_incumbent_a_top_sample_and_a_rest_sample(searched):
    settings, runs = searched
    rows = choose(settings, runs, trained=set())
    assert settings.search_seeds == [10_300, 10_301]
    assert [(row["seed"], row["agent"]) for row in rows if row["kind"] == "final"] == [
        (10_300, "rs"), (10_300, "re"), (10_301, "rs"), (10_301, "re")]
    assert len({row["architecture"] for row in rows}) == len(rows)  # never listed twice
    for seed in settings.search_seeds:
        for agent in settings.agents:
            mine = [row for row in rows if (row["seed"], row["agent"]) == (seed, agent)]
            observed = {row["kind"]: [r["observed_val_accuracy"] for r in mine if r["kind"] == row["kind"]]
                        for row in mine}
            assert len(observed["top"]) == 2 and len(observed["rest"]) == 1
            # the incumbent is the best the run observed; the top sample lies above the rest sample
            assert max(observed["final"]) >= max(observed["top"]) >= min(observed["top"]) >= max(observed["rest"])
            assert all(row["source"] == f"search-{agent}" for row in mine)
    # the same runs list the same architectures
    assert choose(settings, runs, trained=set()) == rows


def test_architectures_already_trained_are_not_listed_again(searched):
    settings, runs = searched
    first = choose(settings, runs, trained=set())
    trained = {row["architecture"] for row in first if row["kind"] == "final"}
    again = choose(settings, runs, trained=trained)
    assert not trained & {row["architecture"] for row in again}
    assert all(row["kind"] != "final" for row in again)  # every incumbent was trained; tops and rests remain
    assert sum(row["kind"] == "top" for row in again) == sum(row["kind"] == "top" for row in first)


def test_a_round_refuses_runs_that_are_missing(searched, tmp_path):
    settings, _ = searched
    with pytest.raises(ValueError, match="lacks 4 of the round's runs"):
        choose(settings, tmp_path, trained=set())


def test_a_round_list_becomes_jobs_named_by_agent_and_is_judged_by_its_predictions(searched, tmp_path):
    settings, runs = searched
    rows = with_predictions(choose(settings, runs, trained=set()), settings)
    # searched on xgb; darts-v1 also holds a GIN and a stack, so their predictions (the GIN's pooled too) are judged
    assert all(sorted(row["predicted_val_accuracy"]) == ["gin", "stack", "xgb", "xgb+gin"]
               and len(row["bundle_sha256"]) == 64 for row in rows)
    path = tmp_path / "search" / "round-03.jsonl"
    write_round(rows, path)
    jobs = plan("darts", "random", "train", len(rows), 1, trajectory=str(path))
    assert [job.source for job in jobs] == [row["source"] for row in rows]
    assert jobs[0].key.startswith("search-rs:round-03@")

    # trainings of the listed architectures: the measured value is the prediction plus a known offset and noise
    rng = np.random.default_rng(0)
    records = [{"arch": row["architecture"], "val_accuracy": row["predicted_val_accuracy"]["xgb"] - 0.01
                + 0.001 * rng.standard_normal()} for row in rows[:-2]]  # the last two not trained yet
    table = round_table(records, read_round_lists(path.parent))
    assert [entry["round"] for entry in table] == [3]
    entry = table[0]
    assert (entry["listed"], entry["trained"]) == (len(rows), len(rows) - 2)
    assert entry["xgb"]["bias"] == pytest.approx(0.01, abs=0.001)
    assert entry["xgb"]["kendall_tau"] > 0.5
    assert set(entry["by_agent"]) == {"rs", "re"} and set(entry["by_kind"]) == {"final", "top", "rest"}
    assert json.dumps(table)  # plain numbers, for the data card


def test_round_settings_refuse_what_has_no_meaning():
    with pytest.raises(ValueError, match="round must be >= 0"):
        RoundSettings(round=-1)
    with pytest.raises(ValueError, match="unknown agents"):
        RoundSettings(round=0, agents=("rs", "sh"))


def test_collect_trains_the_rows_of_one_kind_of_a_round_list_a_second_time(searched, tmp_path, capsys):
    from nas_envs.cli import main
    from nas_envs.groundtruth.records import read_records

    settings, runs = searched
    rows = choose(settings, runs, trained=set())
    path = tmp_path / "search" / "round-03.jsonl"
    write_round(rows, path)
    out = tmp_path / "smoke.jsonl"
    common = ["--quiet", "collect", "darts", "--protocol", "darts-smoke", "--trajectory", str(path),
              "--n", str(len(rows)), "--out", str(out)]
    assert main([*common, "--kind", "final", "--seeds", "2"]) == 0
    trained = read_records(out)
    finals = {row["architecture"] for row in rows if row["kind"] == "final"}
    assert len(trained) == 2 * len(finals) and {r["arch"] for r in trained} == finals
    assert sorted({r["replicate"] for r in trained}) == [0, 1]
    assert main(["--quiet", "collect", "darts", "--kind", "final", "--n", "2", "--out", str(out)]) != 0
    assert "give the list with --trajectory" in capsys.readouterr().err


def test_a_rounds_rs_and_re_runs_replay_as_listed_and_draw_over_their_trainings(searched, tmp_path):
    from nas_envs.assets import resolve_bundle
    from nas_envs.fitting.trajectory_test import overlay_summary, plot_overlay, replay_runs

    settings, runs = searched
    rows = with_predictions(choose(settings, runs, trained=set()), settings)
    folder, _ = resolve_bundle(settings.bundle)
    replayed = replay_runs(rows, folder)
    assert sorted(replayed) == [(agent, "xgb", seed) for agent in ("re", "rs") for seed in settings.search_seeds]
    for (agent, _, seed), trajectory in replayed.items():
        final = next(row for row in rows if (row["agent"], row["seed"], row["kind"]) == (agent, seed, "final"))
        assert len(trajectory) == final["evaluations"]
        assert trajectory[-1]["incumbent_val_accuracy"] == pytest.approx(final["observed_val_accuracy"])

    measured = {row["architecture"]: row["predicted_val_accuracy"]["xgb"] - 0.01 for row in rows[:-1]}
    summary = overlay_summary(replayed, rows, measured)
    assert [entry["agent"] for entry in summary] == ["rs", "re"]
    assert all(entry["runs"] == 2 and entry["trained_final"] == 2 for entry in summary)
    assert summary[0]["measured_final"] == pytest.approx(summary[0]["predicted_finals"] - 0.01)
    output = tmp_path / "overlay.png"
    plot_overlay(replayed, rows, measured, output, "test")
    assert output.stat().st_size > 10_000

    # a list the replay does not reproduce (another bundle, or searches changed since) is refused
    changed = [{**row, "evaluations": row["evaluations"] + 1} if row["agent"] == "re" else row for row in rows]
    with pytest.raises(ValueError, match="does not reproduce|not the list's"):
        replay_runs(changed, folder)


def test_what_seed_noise_allows_on_a_round_follows_the_seed_variance_of_its_repeated_architectures():
    from nas_envs.groundtruth.search_rounds import round_noise_ceiling
    from nas_envs.surrogates.metrics import noise_ceilings

    # measured variance 4e-5 over single trainings of seed variance 1e-5: R2 3/4, Kendall tau 2/pi arcsin(sqrt 3/4)
    measured = np.array([0.85, 0.85 + 2 * np.sqrt(1e-5), 0.85 + 4 * np.sqrt(1e-5)])
    assert np.var(measured, ddof=1) == pytest.approx(4e-5)
    ceilings = noise_ceilings(measured, np.ones(3), 1e-5)
    assert ceilings["r2"] == pytest.approx(0.75) and ceilings["kendall_tau"] == pytest.approx(2 / 3)
    # a mean of two seeds halves the noise there
    assert noise_ceilings(measured, np.array([2, 2, 2]), 1e-5)["r2"] == pytest.approx(0.875)
    # the same trainings, projected to two seeds each: expected values' variance 3e-5 against noise 0.5e-5
    assert noise_ceilings(measured, np.ones(3), 1e-5, seeds=2)["r2"] == pytest.approx(3 / 3.5)
    assert noise_ceilings(measured, np.array([2, 2, 2]), 1e-5, seeds=2)["r2"] == pytest.approx(0.875)

    lists = [{"architecture": arch} for arch in "abc"]
    records = [{"arch": "a", "val_accuracy": 0.80}, {"arch": "a", "val_accuracy": 0.82},
               {"arch": "b", "val_accuracy": 0.83}, {"arch": "c", "val_accuracy": 0.86},
               {"arch": "z", "val_accuracy": 0.70}, {"arch": "z", "val_accuracy": 0.90}]  # not a round's: ignored
    ceiling = round_noise_ceiling(records, lists, lists)
    assert (ceiling["repeated"], ceiling["seed_std"]) == (1, pytest.approx(np.sqrt(2e-4)))
    expected = 1 - np.mean([2e-4 / 2, 2e-4, 2e-4]) / np.var([0.81, 0.83, 0.86], ddof=1)
    assert ceiling["r2"] == pytest.approx(expected)
    assert ceiling["r2"] < ceiling["two_seeds"]["r2"] < 1  # two seeds of b and c halve their noise there
    assert round_noise_ceiling(records[2:4], lists, lists) == {}  # nothing trained twice: no ceiling
