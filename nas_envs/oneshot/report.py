"""What the benchmark said of each epoch's genotype of a one-shot run, against the same genotypes trained for real.

NAS-Bench-301 (Fig. 26) monitors DARTS, PC-DARTS and GDAS by querying the surrogate with the genotype derived after
every search epoch, and checks the surrogate's trajectory against the genotypes trained from scratch, including
DARTS in a constrained space where it collapses to parameter-free cells. :func:`report` does that for the runs of
``nas-envs oneshot`` (their JSON lines) and the committed trainings of the DARTS protocol (any source: a genotype
trained for real counts whichever list trained it, its trainings averaged): per optimiser and space, the Kendall tau
between the surrogate's noise-free means and the measured accuracies over the distinct genotypes its runs' epochs
derived and that were trained, the skip connections of the final normal cells (a collapse piles them up), and
whether the final genotypes are predicted as they train, against random architectures. :func:`plot_runs` draws one
panel per optimiser and space: each run's predicted trajectory with its noise spread, and the trained genotypes.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path

import numpy as np

from nas_envs.extras import require
from nas_envs.files import read_json_lines
from nas_envs.groundtruth.records import read_records
from nas_envs.oneshot import run_line_problem
from nas_envs.spaces.darts import GENES_PER_CELL, OPS, DartsSpace
from nas_envs.surrogates.metrics import kendall_tau

logger = logging.getLogger(__name__)
#: the surrogate whose predictions the report judges: the one that ranks the noise subset best
REPORT_SURROGATE = "xgb+gin"


def read_runs(folders: list[Path]) -> list[list[dict]]:
    """The search runs in ``folders``: every ``*.jsonl`` whose lines are epochs of ``nas-envs oneshot`` (the lists of
    genotypes to train, in ``oneshot/`` below them, are not runs)."""
    runs, seen = [], {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.jsonl")):
            lines = read_json_lines(path, run_line_problem) if _is_run_file(path) else []
            if not lines:
                continue
            settings = json.dumps(lines[0]["settings"], sort_keys=True)
            if settings in seen:  # a search is deterministic: the same settings twice are one run copied
                logger.warning("%s: the same search as %s (its settings); counted once", path, seen[settings])
                continue
            seen[settings] = path
            runs.append(lines)
    if not runs:
        raise FileNotFoundError(f"no one-shot runs in {', '.join(map(str, folders))}: looked for the JSON lines that "
                                "'nas-envs oneshot --out DIR' writes")
    return runs


def _is_run_file(path: Path) -> bool:
    """Whether a ``.jsonl`` file holds one-shot epochs (its first line names search ``settings``), not a list of
    genotypes to train; what its lines hold is then checked line by line."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        head = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return True  # a damaged run file: read_json_lines names its line
    return isinstance(head, dict) and "settings" in head


def trained_accuracies(data: Path) -> dict[bytes, float]:
    """Canonical genes -> mean validation accuracy of their trainings in the collection file ``data``."""
    space = DartsSpace()
    values: dict[bytes, list[float]] = defaultdict(list)
    for record in read_records(data):
        values[space.canonicalize(np.asarray(record["genes"])).tobytes()].append(record["val_accuracy"])
    return {key: float(np.mean(v)) for key, v in values.items()}


def _genes(line: dict) -> bytes:
    """The canonical genes of an epoch's genotype, as :func:`trained_accuracies` keys them."""
    return DartsSpace().from_string(line["genotype"]).tobytes()


def _measured(line: dict, trained: dict[bytes, float]) -> float | None:
    return trained.get(_genes(line))


def _normal_skips(line: dict) -> int:
    """Skip connections in the normal cell of an epoch's genotype: a collapsing search piles them up."""
    genes = DartsSpace().from_string(line["genotype"])
    return int((genes[1:GENES_PER_CELL:2] == OPS.index("skip_connect")).sum())


def _group(run: list[dict]) -> str:
    settings = run[0]["settings"]
    return settings["method"] if settings["space"] == "full" else f"{settings['method']} ({settings['space']})"


def report(runs: list[list[dict]], trained: dict[bytes, float], random_median: float,
           surrogate: str = REPORT_SURROGATE) -> list[dict]:
    """One row per optimiser and space: runs, trained genotypes (distinct), Kendall tau between predicted and measured
    accuracy over them, and the final genotypes' mean prediction and measurement against ``random_median`` (the median
    accuracy of random architectures)."""
    groups: dict[str, list[list[dict]]] = defaultdict(list)
    for run in runs:
        groups[_group(run)].append(run)
    rows = []
    for name, members in sorted(groups.items()):
        # one point per distinct genotype: late epochs often repeat one, which would count it several times
        predictions = {_genes(line): line["surrogates"][surrogate]["val_accuracy"] for run in members for line in run}
        trained_genes = [genes for genes in predictions if genes in trained]
        predicted = np.array([predictions[genes] for genes in trained_genes])
        measured = np.array([trained[genes] for genes in trained_genes])
        finals = [(run[-1]["surrogates"][surrogate]["val_accuracy"], _measured(run[-1], trained)) for run in members]
        final_measured = [m for _, m in finals if m is not None]
        rows.append({
            "optimiser": name, "runs": len(members), "trained_genotypes": len(measured),
            "kendall_tau": kendall_tau(measured, predicted) if len(measured) >= 3 else None,
            "final_normal_skips": float(np.mean([_normal_skips(run[-1]) for run in members])),
            "final_predicted": float(np.mean([p for p, _ in finals])),
            "final_measured": float(np.mean(final_measured)) if final_measured else None,
            "random_median": random_median,
        })
    return rows


def format_report(rows: list[dict]) -> str:
    def percent(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.2f}"

    lines = [f"{'optimiser':<22} {'runs':>4} {'trained':>7} {'tau':>6} {'final skips':>11} "
             f"{'final predicted (%)':>20} {'final measured (%)':>19} {'random median (%)':>18}"]
    for row in rows:
        tau = "-" if row["kendall_tau"] is None else f"{row['kendall_tau']:.2f}"
        lines.append(f"{row['optimiser']:<22} {row['runs']:>4} {row['trained_genotypes']:>7} {tau:>6} "
                     f"{row['final_normal_skips']:>11.1f} {percent(row['final_predicted']):>20} "
                     f"{percent(row['final_measured']):>19} {percent(row['random_median']):>18}")
    return "\n".join(lines)


def plot_runs(runs: list[list[dict]], trained: dict[bytes, float], output: Path, random_median: float,
              surrogate: str = REPORT_SURROGATE) -> None:
    """One panel per optimiser and space: each run's predicted accuracy by search epoch (its noise spread shaded)
    and, where trained, the measured accuracy of that epoch's genotype; the random architectures' median dashed."""
    require("matplotlib", "plot", "the one-shot report's figure")
    from matplotlib.figure import Figure

    names = sorted({_group(run) for run in runs})
    figure = Figure(figsize=(3.6 * len(names), 3.2), layout="tight")
    for panel, name in enumerate(names):
        ax = figure.add_subplot(1, len(names), panel + 1)
        for number, run in enumerate(r for r in runs if _group(r) == name):
            colour = f"C{number}"
            epochs = [line["epoch"] for line in run]
            mean = np.array([line["surrogates"][surrogate]["val_accuracy"] for line in run]) * 100
            spread = np.array([line["surrogates"][surrogate]["noise_std"] for line in run]) * 100
            ax.plot(epochs, mean, color=colour, marker=".", label=f"seed {run[0]['settings']['seed']}: predicted")
            ax.fill_between(epochs, mean - spread, mean + spread, color=colour, alpha=0.15)
            measured = [(line["epoch"], _measured(line, trained)) for line in run]
            measured = [(epoch, value * 100) for epoch, value in measured if value is not None]
            if measured:
                ax.plot(*zip(*measured), "o", color=colour, markerfacecolor="none", label="trained")
        ax.axhline(random_median * 100, color="grey", linestyle="--", linewidth=0.8, label="random median")
        ax.set_title(name, fontsize=10)
        last = max(line["epoch"] for run in runs if _group(run) == name for line in run)
        ax.set_xlim(0.5, last + 0.5)  # whole epochs, ticks on epochs only, even for a one-epoch run
        ax.set_xticks(range(1, last + 1, max(1, -(-last // 8))))
        ax.set_xlabel("search epoch")
        ax.set_ylabel("validation accuracy (%)")
        ax.legend(fontsize=6)
    figure.savefig(output, dpi=110)
