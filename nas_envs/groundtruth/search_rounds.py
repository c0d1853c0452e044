"""Closed search rounds: train where the searches go, and judge the surrogate there first.

Random architectures are too sparse near any query of a search (the nearest training architecture of a DARTS
query is about a dozen edits away), so a benchmark is least checked exactly where searches spend their time. A
*round* closes that gap the way NAS-Bench-301 gathered most of its data:

1. every agent of ``nas-envs run`` searches the newest surrogate bundle, with fresh seeds and with each of
   :data:`ROUND_SURROGATES`;
2. from each run's trajectory the round lists its final incumbent, a sample of its top decile (where a search
   exploits the surrogate's over-predictions) and a sample of the rest, leaving out architectures already trained;
   each row keeps what every surrogate of the bundle predicted for it (noise-free), so that the model that chose
   the round can be judged on it after the trainings, whatever is fitted later;
3. ``nas-envs collect darts --trajectory LIST`` trains each listed architecture once, as source ``search-<agent>``;
4. :func:`round_table` judges the bundle on the round's trainings (R2, Kendall tau, bias), and only then is the
   round fitted on and the next round searched on the refit.

A list is committed under ``assets/data/trajectories/search/round-<k>.jsonl``; the runs behind it are
reproducible from the bundle, the seeds and the settings in its rows.
"""

from __future__ import annotations

import collections
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nas_envs.agents.runner import AGENT_NAMES, RunSettings, load_run_groups, parse_duration, run
from nas_envs.files import read_json_lines, write_atomically
from nas_envs.groundtruth.jobs import architecture_row_problem

ROUND_SURROGATES = ("xgb", "xgb+gin")  # both searched each round: each over-predicts in its own places
SEED_BASE = 10_000  # search seeds of round k: SEED_BASE + SEEDS_PER_ROUND * k + j; earlier studies used seeds < 100
SEEDS_PER_ROUND = 100  # room for up to this many seeds a round, so that rounds never share a seed
TOP_FRACTION = 0.1  # a trajectory's "top" is its best decile by the value the agent observed

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoundSettings:
    """What a round searches and how much of each trajectory it lists."""

    round: int
    env_id: str = "SurrNAS-DARTS-v1"  # the newest release's id; a bundle folder replaces its models
    bundle: str = "darts-v1"  # a released bundle or the folder of a refit ('nas-envs fit ... --out DIR')
    seeds: int = 2  # runs per (agent, surrogate)
    budget: str = "24h"
    top: int = 2  # sampled from each trajectory's top decile
    rest: int = 1  # sampled from the rest of each trajectory
    agents: tuple[str, ...] = AGENT_NAMES
    surrogates: tuple[str, ...] = ROUND_SURROGATES

    def __post_init__(self) -> None:
        if self.round < 0:
            raise ValueError(f"round must be >= 0, got {self.round}")
        if not 1 <= self.seeds <= SEEDS_PER_ROUND:
            raise ValueError(f"seeds must be between 1 and {SEEDS_PER_ROUND}, got {self.seeds}")
        if self.top < 0 or self.rest < 0:
            raise ValueError(f"top and rest must be >= 0, got {self.top} and {self.rest}")
        unknown = sorted(set(self.agents) - set(AGENT_NAMES))
        if unknown:
            raise ValueError(f"unknown agents {unknown}; allowed: {AGENT_NAMES}")

    @property
    def search_seeds(self) -> list[int]:
        first = SEED_BASE + SEEDS_PER_ROUND * self.round
        return list(range(first, first + self.seeds))

    def run_settings(self, agent: str, surrogate: str) -> RunSettings:
        return RunSettings(env_id=self.env_id, agent=agent, budget_seconds=parse_duration(self.budget),
                           env_kwargs={"surrogate": surrogate, "bundle": self.bundle})


def run_searches(settings: RoundSettings, runs_dir: Path, workers: int = 1) -> None:
    """Every (agent, surrogate) search of the round into ``runs_dir/<surrogate>/<agent>/`` (resumable: seeds
    already there are skipped)."""
    for surrogate in settings.surrogates:
        for agent in settings.agents:
            logger.info("search round %d: %s on %s", settings.round, agent, surrogate)
            run(settings.run_settings(agent, surrogate), settings.search_seeds, runs_dir / surrogate, workers=workers)


def choose(settings: RoundSettings, runs_dir: Path, trained: set[str]) -> list[dict]:
    """The round's list from the runs in ``runs_dir``: per run its final incumbent, ``top`` architectures sampled
    from its top decile and ``rest`` from the rest, never one in ``trained`` or listed before in the round. Rows
    are ordered seed by seed, then agent, then surrogate, so that a partly trained round covers every search."""
    rng = np.random.default_rng([SEED_BASE, settings.round])
    runs = {}
    for surrogate in settings.surrogates:
        if not (runs_dir / surrogate).is_dir():
            continue
        for group in load_run_groups([runs_dir / surrogate]):
            if group.identity != settings.run_settings(group.identity["agent"], surrogate).identity():
                continue
            for seed, rows in group.seeds.items():
                runs[(seed, group.identity["agent"], surrogate)] = rows
    missing = [(seed, agent, surrogate) for seed in settings.search_seeds for agent in settings.agents
               for surrogate in settings.surrogates if (seed, agent, surrogate) not in runs]
    if missing:
        raise ValueError(f"{runs_dir} lacks {len(missing)} of the round's runs (first: seed {missing[0][0]} of "
                         f"{missing[0][1]} on {missing[0][2]}); run the searches first")
    listed = set(trained)
    out = []
    for (seed, agent, surrogate), rows in sorted(runs.items(), key=lambda item: (
            item[0][0], settings.agents.index(item[0][1]), settings.surrogates.index(item[0][2]))):
        observed: dict[str, float] = {}
        for row in rows:  # an architecture evaluated twice counts with its best observation
            observed[row["architecture"]] = max(observed.get(row["architecture"], -np.inf), row["val_accuracy"])
        ranked = sorted(observed, key=observed.__getitem__, reverse=True)
        incumbent, top_count = ranked[0], max(1, int(np.ceil(TOP_FRACTION * len(ranked))))
        pools = {"final": [incumbent], "top": ranked[1:top_count], "rest": ranked[top_count:]}
        wanted = {"final": 1, "top": settings.top, "rest": settings.rest}
        for kind, pool in pools.items():
            fresh = [arch for arch in pool if arch not in listed]
            picked = fresh if len(fresh) <= wanted[kind] else \
                [fresh[i] for i in sorted(rng.choice(len(fresh), wanted[kind], replace=False))]
            for arch in picked:
                listed.add(arch)
                out.append({"round": settings.round, "agent": agent, "source": f"search-{agent}",
                            "surrogate": surrogate, "seed": seed, "kind": kind, "architecture": arch,
                            "observed_val_accuracy": observed[arch], "evaluations": len(rows),
                            "budget": settings.budget, "env_id": settings.env_id,
                            # a release's name, or a folder's own name: the list names no machine's paths (the
                            # bundle's sha256 identifies it)
                            "bundle": Path(settings.bundle).name})
    return out


def judged_surrogates(settings: RoundSettings) -> list[str]:
    """The surrogates a round's list records the predictions of: those searched, then every other accuracy
    surrogate the bundle holds (a candidate for the next release is judged on the round too)."""
    from nas_envs.assets import read_verified_manifest, resolve_bundle
    from nas_envs.benchmarks.surrogate_benchmark import held_surrogates

    folder, _ = resolve_bundle(settings.bundle)
    held = read_verified_manifest(folder, f"refit the bundle in {folder}")["models"]
    others = [s for s in held_surrogates(held) if s not in settings.surrogates]
    return [*settings.surrogates, *others]


def with_predictions(rows: list[dict], settings: RoundSettings) -> list[dict]:
    """The rows with each surrogate's noise-free validation accuracy and the bundle's manifest digest: what the
    round is judged by once trained."""
    from nas_envs.benchmarks import make_benchmark
    from nas_envs.catalogue import release_of

    architectures = [row["architecture"] for row in rows]
    predicted = {}
    surrogates = judged_surrogates(settings)
    for surrogate in surrogates:
        benchmark = make_benchmark(release_of(settings.env_id)[1].benchmark, surrogate=surrogate,
                                   bundle=settings.bundle)
        predicted[surrogate] = benchmark.evaluate(architectures, noise=False)["val_accuracy"]
        digest = benchmark.bundle.manifest_sha256
    return [{**row, "bundle_sha256": digest,
             "predicted_val_accuracy": {s: float(predicted[s][i]) for s in surrogates}} for i, row in enumerate(rows)]


def write_round(rows: list[dict], path: Path) -> None:
    """The list as JSON lines, written whole or not at all."""
    write_atomically(path, "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def read_round_lists(folder: Path) -> list[dict]:
    """Every row of the round lists ``round-*.jsonl`` in ``folder``, oldest round first."""
    def problem(row: dict) -> str | None:
        predicted = row.get("predicted_val_accuracy")
        if not isinstance(predicted, dict) or not all(type(v) in (int, float) and np.isfinite(v)
                                                      for v in predicted.values()):
            return "no 'predicted_val_accuracy' of finite numbers per surrogate"
        return architecture_row_problem(row)

    rows = []
    for path in sorted(folder.glob("round-*.jsonl")):
        rows.extend(read_json_lines(path, problem))
    return rows


def architecture_trainings(records: list[dict]) -> collections.defaultdict[str, list[float]]:
    """Per architecture of ``records``, the validation accuracies of its trainings (empty for one never trained)."""
    per_arch: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
    for record in records:
        per_arch[record["arch"]].append(record["val_accuracy"])
    return per_arch


def architecture_means(records: list[dict]) -> dict[str, float]:
    """Per architecture of ``records``, the mean validation accuracy of its trainings."""
    return {arch: float(np.mean(values)) for arch, values in architecture_trainings(records).items()}


def round_noise_ceiling(records: list[dict], lists: list[dict], rows: list[dict]) -> dict:
    """The R2 and Kendall tau that seed noise allows on the trained round ``rows``
    (:func:`~nas_envs.surrogates.metrics.noise_ceilings`), with the seed variance of the architectures of ``lists``
    trained more than once (searched architectures train more steadily than uniformly random ones), and under
    ``two_seeds`` what it would allow were every one of ``rows`` trained twice; {} where none was."""
    from nas_envs.surrogates.metrics import noise_ceilings

    per_arch = architecture_trainings(records)
    repeated = [per_arch[arch] for arch in {row["architecture"] for row in lists} if len(per_arch[arch]) >= 2]
    if not repeated or len(rows) < 2:
        return {}
    seed_variance = float(np.mean([np.var(values, ddof=1) for values in repeated]))
    means = [np.mean(per_arch[row["architecture"]]) for row in rows]
    trainings = [len(per_arch[row["architecture"]]) for row in rows]
    return {**noise_ceilings(means, trainings, seed_variance), "seed_std": float(np.sqrt(seed_variance)),
            "repeated": len(repeated), "two_seeds": noise_ceilings(means, trainings, seed_variance, seeds=2)}


def round_table(records: list[dict], lists: list[dict], minimum: int = 5) -> list[dict]:
    """Per round, how the bundle that chose it predicts its trainings: over the round and per agent, for each
    surrogate, R2, Kendall tau and bias (noise-free prediction minus measured; mean of the seeds where an
    architecture was trained more than once); and how the trained round's architectures compare with uniformly
    random ones; and per round, the R2 and Kendall tau that seed noise allows there (``ceiling``: a perfect model
    of the expected values against the round's measurements, with the seed variance of the round architectures
    trained more than once). Rounds or agents with fewer than ``minimum`` trained architectures get counts only."""
    from nas_envs.surrogates.metrics import bias, kendall_tau, r2

    measured = architecture_means(records)

    def judge(rows: list[dict]) -> dict:
        truth = np.array([measured[row["architecture"]] for row in rows])
        out: dict = {"trained": len(rows), "measured_mean": float(truth.mean()) if len(rows) else float("nan")}
        if len(rows) >= minimum:
            for surrogate in rows[0]["predicted_val_accuracy"]:
                predicted = np.array([row["predicted_val_accuracy"][surrogate] for row in rows])
                out[surrogate] = {"r2": r2(truth, predicted), "kendall_tau": kendall_tau(truth, predicted),
                                  "bias": bias(truth, predicted)}
        return out

    table = []
    for number in sorted({row["round"] for row in lists}):
        listed = [row for row in lists if row["round"] == number]
        trained = [row for row in listed if row["architecture"] in measured]
        entry = {"round": number, "bundle": listed[0]["bundle"], "listed": len(listed),
                 "surrogates": list(listed[0]["predicted_val_accuracy"]), **judge(trained),
                 "ceiling": round_noise_ceiling(records, lists, trained) if len(trained) >= minimum else {},
                 "by_agent": {agent: judge([row for row in trained if row["agent"] == agent])
                              for agent in dict.fromkeys(row["agent"] for row in listed)},
                 "by_kind": {kind: judge([row for row in trained if row["kind"] == kind])
                             for kind in ("final", "top", "rest")},
                 "by_chooser": {surrogate: judge([row for row in trained if row["surrogate"] == surrogate])
                                for surrogate in dict.fromkeys(row["surrogate"] for row in listed)}}
        table.append(entry)
    return table


def format_round_table(table: list[dict]) -> str:
    """The round table as text: a line per round and, under it, a line per agent and per kind of pick; each with
    the count trained of those listed and, per surrogate of the bundle that chose the round, R2 / Kendall tau /
    bias in % (noise-free prediction minus measured)."""
    # every surrogate judged (those searched, and the bundle's others: candidates judged before a release)
    surrogates = list(dict.fromkeys(surrogate for entry in table for surrogate in entry["surrogates"]))
    header = f"{'round':<6} {'part':<20} {'trained':>11} {'measured %':>10} " + " ".join(
        f"{s + ': R2 / tau / bias %':>28}" for s in surrogates)
    lines = [header]

    def line(label: str, part: str, entry: dict, listed: int | None = None) -> str:
        count = f"{entry['trained']}/{listed}" if listed is not None else str(entry["trained"])
        measured = f"{100 * entry['measured_mean']:.2f}" if entry["trained"] else "-"
        judged = " ".join(f"{entry[s]['r2']:>+9.2f} / {entry[s]['kendall_tau']:>+5.2f} / "
                          f"{100 * entry[s]['bias']:>+5.2f}" if s in entry else f"{'-':>28}" for s in surrogates)
        return f"{label:<6} {part:<20} {count:>11} {measured:>10} {judged}"

    for entry in table:
        lines.append(line(str(entry["round"]), f"all ({Path(entry['bundle']).name})", entry, entry["listed"]))
        if entry["ceiling"]:
            ceiling = entry["ceiling"]
            lines.append(f"{'':<6} {'seed noise allows':<20} R2 {ceiling['r2']:+.2f}, Kendall tau "
                         f"{ceiling['kendall_tau']:+.2f} (seed std {100 * ceiling['seed_std']:.2f} % of the "
                         f"{ceiling['repeated']} round architectures trained more than once); two seeds each: R2 "
                         f"{ceiling['two_seeds']['r2']:+.2f}, tau {ceiling['two_seeds']['kendall_tau']:+.2f}")
        for group in ("by_kind", "by_chooser", "by_agent"):
            for name, part in entry[group].items():
                prefix = "searched on " if group == "by_chooser" else ""
                lines.append(line("", f"{prefix}{name}", part))
    return "\n".join(lines)
