"""One-shot NAS monitored by the benchmark: the derivation rule, the three mixing methods, resumable runs."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from nas_envs.cli import main
from nas_envs.oneshot import search
from nas_envs.oneshot.search import SEARCH_SPACES, SearchSettings, derive_genes, run_search
from nas_envs.oneshot.supernet import EDGES, METHODS, Supernet
from nas_envs.spaces.darts import DartsSpace


def test_derivation_takes_each_nodes_two_strongest_edges_and_their_strongest_real_op():
    ops = SEARCH_SPACES["full"]
    strengths = np.full((2, EDGES, len(ops)), 0.01)
    strengths[:, :, 0] = 0.9  # "none" everywhere strongest: never chosen
    # node 0 (edges 0, 1): both inputs; node 1 (edges 2-4): inputs 2 (node 0) and 0
    strengths[0, 0, ops.index("sep_conv_3x3")] = 0.5
    strengths[0, 1, ops.index("skip_connect")] = 0.4
    strengths[0, 4, ops.index("dil_conv_5x5")] = 0.6
    strengths[0, 2, ops.index("max_pool_3x3")] = 0.3
    genotype = DartsSpace().to_string(derive_genes(strengths, ops))
    assert genotype.startswith("Genotype(normal=[('sep_conv_3x3', 0), ('skip_connect', 1), ('max_pool_3x3', 0), "
                               "('dil_conv_5x5', 2)")
    assert "none" not in genotype
    constrained = derive_genes(np.random.default_rng(0).random((2, EDGES, 3)), SEARCH_SPACES["constrained"])
    assert set(DartsSpace().to_string(constrained).split("'")[1::2]) <= {"skip_connect", "sep_conv_3x3"}


@pytest.mark.parametrize("method", METHODS)
def test_every_method_mixes_and_learns_its_architecture_parameters(method):
    torch.manual_seed(0)
    model = Supernet(SEARCH_SPACES["full"], method, channels=8, layers=3)
    x, y = torch.randn(8, 1, 14, 14), torch.randint(0, 10, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    assert model(x).shape == (8, 10) and model.alphas.grad.abs().sum() > 0
    if method == "pcdarts":
        assert model.betas.grad.abs().sum() > 0
    assert model.edge_strengths().shape == (2, EDGES, len(SEARCH_SPACES["full"]))


@pytest.mark.slow
def test_a_killed_search_resumes_as_if_it_had_not_stopped(tmp_path, monkeypatch):
    settings = SearchSettings(method="gdas", epochs=2, images=256, layers=3)
    whole = run_search(settings, tmp_path / "whole.jsonl")
    calls = {"n": 0}
    predictions = search._predictions

    def crash_in_the_second_epoch(genes):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return predictions(genes)

    monkeypatch.setattr(search, "_predictions", crash_in_the_second_epoch)
    with pytest.raises(KeyboardInterrupt):
        run_search(settings, tmp_path / "cut.jsonl")
    assert len((tmp_path / "cut.jsonl").read_text().splitlines()) == 1
    monkeypatch.setattr(search, "_predictions", predictions)
    resumed = run_search(settings, tmp_path / "cut.jsonl")
    same = ("genotype", "oneshot_val_accuracy", "surrogates")
    assert [{k: line[k] for k in same} for line in resumed] == [{k: line[k] for k in same} for line in whole]
    assert {"xgb", "gin", "xgb+gin"} == set(whole[-1]["surrogates"])
    with pytest.raises(ValueError, match="other settings"):
        run_search(SearchSettings(method="darts", epochs=2, images=256, layers=3), tmp_path / "cut.jsonl")

    # a state file someone replaced with a pickle that runs code is refused, and the code never runs
    (tmp_path / "cut.jsonl").write_text((tmp_path / "cut.jsonl").read_text().splitlines()[0] + "\n")
    torch.save({"epoch": 1, "payload": _Payload(tmp_path / "ran")}, tmp_path / "cut.state.pt")
    with pytest.raises(pickle.UnpicklingError):
        run_search(settings, tmp_path / "cut.jsonl")
    assert not (tmp_path / "ran").exists()


class _Payload:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


@pytest.mark.slow
def test_the_command_writes_one_file_per_run(tmp_path, capsys):
    assert main(["oneshot", "--method", "pcdarts", "--space", "constrained", "--epochs", "1", "--images", "128",
                 "--out", str(tmp_path)]) == 0
    line = json.loads((tmp_path / "pcdarts-constrained-seed0.jsonl").read_text())
    assert line["epoch"] == 1 and line["genotype"].startswith("Genotype(") and "pcdarts-constrained" in \
        capsys.readouterr().out
    listed = tmp_path / "oneshot" / "pcdarts-constrained-seed0.jsonl"
    from nas_envs.groundtruth.jobs import plan

    [job] = plan("darts", "random", "train", 1, 1, trajectory=str(listed))
    assert job.source == "oneshot" and job.trajectory == str(listed)  # the collector trains it as its own source


def test_the_genotypes_to_train_are_every_other_epochs_and_the_last():
    from nas_envs.oneshot.search import genotypes_to_train

    settings = {"method": "darts", "space": "constrained", "seed": 3}
    lines = [{"epoch": e, "genotype": f"G{e}", "settings": settings} for e in range(1, 6)]
    rows = genotypes_to_train(lines)
    assert [r["epoch"] for r in rows] == [2, 4, 5] and rows[0]["agent"] == "oneshot-darts-constrained"


@pytest.mark.slow
def test_the_report_pairs_each_epoch_s_prediction_with_its_genotype_trained_for_real(tmp_path, capsys):
    """Two tiny real searches; 'trained' accuracies made up for this test (the committed data holds none of these
    genotypes), in the ranking opposite to the surrogate's for one run: the report's tau follows the pairing."""
    from nas_envs.oneshot.report import read_runs, report

    for method in ("gdas", "darts"):
        run_search(SearchSettings(method=method, epochs=3, images=256, layers=3), tmp_path / f"{method}.jsonl")
    runs = read_runs([tmp_path])
    space = DartsSpace()
    trained = {}
    for run in runs:
        predicted = [line["surrogates"]["xgb+gin"]["val_accuracy"] for line in run]
        sign = -1 if run[0]["settings"]["method"] == "gdas" else 1  # gdas: measured in the opposite order
        for line, value in zip(run, predicted):
            trained[space.from_string(line["genotype"]).tobytes()] = 0.5 + sign * value
    rows = {row["optimiser"]: row for row in report(runs, trained, random_median=0.85)}
    for run in runs:  # a genotype that several epochs derive counts once
        distinct = {space.from_string(line["genotype"]).tobytes() for line in run}
        assert rows[run[0]["settings"]["method"]]["trained_genotypes"] == len(distinct)
    assert rows["darts"]["trained_genotypes"] == 3
    assert rows["darts"]["kendall_tau"] == pytest.approx(1.0)  # three distinct genotypes, ranked alike
    gdas_tau = rows["gdas"]["kendall_tau"]  # measured in the opposite order; none from fewer than three genotypes
    assert gdas_tau is None if rows["gdas"]["trained_genotypes"] < 3 else gdas_tau < 0
    assert main(["oneshot-report", str(tmp_path), "--plot", str(tmp_path / "report.png")]) == 0
    assert "gdas" in capsys.readouterr().out and (tmp_path / "report.png").stat().st_size > 0


def _epoch_line(seed: int, epoch: int) -> str:
    from nas_envs.spaces.darts import DartsSpace

    space = DartsSpace()
    return json.dumps({"settings": {"method": "darts", "seed": seed}, "epoch": epoch,
                       "genotype": space.to_string(space.sample(seed=epoch)), "surrogates": {"xgb": 0.85}}) + "\n"


def test_a_copied_run_file_counts_once_and_a_damaged_line_is_named(tmp_path, caplog):
    from nas_envs.oneshot.report import read_runs

    caplog.set_level("WARNING", logger="nas_envs")  # an earlier '--quiet' command may have raised the level
    run = _epoch_line(0, 1) + _epoch_line(0, 2)
    (tmp_path / "darts-seed0.jsonl").write_text(run)
    (tmp_path / "darts-seed0 (copy).jsonl").write_text(run)
    (tmp_path / "darts-seed1.jsonl").write_text(_epoch_line(1, 1))
    assert sorted(len(lines) for lines in read_runs([tmp_path])) == [1, 2]
    assert "the same search as" in caplog.text
    (tmp_path / "darts-seed1.jsonl").write_text(_epoch_line(1, 1) + '{"settings": {}, "epoch": "two"}\n')
    with pytest.raises(ValueError, match=r"darts-seed1.jsonl:2: 'epoch' is 'two'"):
        read_runs([tmp_path])


def test_a_second_search_on_a_file_being_written_is_refused(tmp_path):
    from nas_envs.files import locked
    from nas_envs.oneshot.search import SearchSettings, run_search

    out = tmp_path / "run.jsonl"
    with locked(out):  # another process's search holds the file
        with pytest.raises(RuntimeError, match="is being written by another process"):
            run_search(SearchSettings(epochs=1, images=256), out)
