"""Model cards: what a bundle's surrogates were fitted on and how good they are, generated from its manifest and
the data (``nas-envs model-card``), never typed by hand.

Every number comes from the functions ``nas-envs evaluate-surrogate`` prints, so the two always agree.
"""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import NamedTuple

import numpy as np

from nas_envs.assets import (
    DEFAULT_BUNDLES,
    REPO_ASSETS,
    data_path,
    read_verified_manifest,
    require_data,
    resolve_bundle,
    sha256_file,
)
from nas_envs.benchmarks.surrogate_benchmark import held_surrogates
from nas_envs.catalogue import ENV_BUNDLES
from nas_envs.fitting.surrogate_fit import HELD_OUT_FRACTION

logger = logging.getLogger(__name__)
ACCURACY_KINDS = ("xgb", "gin", "xgb+gin")
#: what a new release of a family is held to on data it was never fitted on, next to what its earlier release
#: reads there: the noise subset's seed means (R2, sparse Kendall tau), the newest search round (R2, Kendall tau,
#: mean bias as a fraction, either sign) and how alike the round's final incumbents rank the agents (Kendall tau)
RELEASE_TARGETS = {"noise_r2": 0.70, "noise_sparse_tau": 0.70, "round_r2": 0.6, "round_tau": 0.6,
                   "round_bias": 0.0015, "agents_tau": 0.8}
#: where ``scripts/record_output.py`` keeps the recorded outputs of studies (in a checkout)
RECORDINGS = REPO_ASSETS.parent / "docs" / "results" / "outputs"


class Lever(NamedTuple):
    """A change of a family's fitting recipe, measured before a release: what it is, the recorded readings, and what
    the recipe did with it."""

    what: str
    readings: tuple[str, ...]  # names of recorded outputs in RECORDINGS
    verdict: str


#: per family, the features version from which its fits read the recipe these levers shaped, and the levers
RECIPE_LEVERS: dict[str, tuple[int, tuple[Lever, ...]]] = {"darts": (2, (
    Lever("Neural graph features of the cells (the space's features version 2) against version 1, the XGB recipe "
          "on the same records: on the noise subset, and in 5-fold cross-validation",
          ("xgb_features_darts_graph", "xgb_features_darts_graph_cv"), "kept: every model reads version 2"),
    Lever("A third, differently biased member: XGB, a bootstrap ridge and XGBoost's random-forest mode weighted on "
          "out-of-fold predictions, against XGB alone", ("xgb_stacking_darts",),
          "kept as the model kind `stack` (`surrogate=\"stack\"`, torch-free)"),
    Lever("The GIN's pairwise ranking loss: `{}` is the recipe (weight 1), `{\"ranking_weight\": 0.0}` none; the "
          "second reading's recipe line is the first line of the multi-task reading below (the same records)",
          ("gin_ranking_loss_darts", "gin_ranking_loss_darts_second"),
          "kept at weight 1: it trades about as much R2 for ranking as readings move"),
    Lever("Earlier epochs' validation accuracy and the validation loss as further GIN targets (multi-task), never "
          "read by a query", ("gin_multi_task_darts",), "not kept: no lift beyond what readings move"),
))}


def _pct(value: float) -> str:
    return f"{100 * value:.2f} %"


def _quality_rows(space: str, bundle: Path) -> tuple[list[str], dict]:
    """Markdown rows of every accuracy model (and the pooled one) judged on the data of its protocol as it is
    now."""
    from nas_envs.fitting.surrogate_fit import assess_bundle

    rows, scored = [], {}
    models = read_verified_manifest(bundle, "")["models"]
    for kind in held_surrogates(models):
        logger.info("model card: scoring %s", kind)
        report = assess_bundle(space, kind, bundle=bundle)
        scored[kind] = report
        held = report["held_out_metrics"].get("val_accuracy")
        noise = report["noise_subset"].get("val_accuracy")
        held_cells = (f"{held['n']} | {held['r2']:.2f} | {held['sparse_kendall_tau']:.2f} | {_pct(held['mae'])}"
                      if held else "too few records | - | - | -")
        noise_cells = (f"{noise['surrogate_n']} | {noise['surrogate_r2']:.2f} | "
                       f"{noise['surrogate_sparse_kendall_tau']:.2f} | {_pct(noise['surrogate_mae'])} | "
                       f"{_pct(noise['single_training_mae'])} | {_pct(noise['constant_mae'])}"
                       if noise else "none | - | - | - | - | -")
        rows.append(f"| {kind} | {held_cells} | {noise_cells} |")
    return rows, scored


def _scatter(space: str, protocol: str, bundle: Path, kind: str, output: Path) -> None:
    """Predicted (noise-free) against measured (seed means) validation accuracy on the noise subset of
    ``protocol``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nas_envs.benchmarks import make_benchmark
    from nas_envs.fitting.surrogate_fit import load_dataset

    data = load_dataset(require_data(data_path(protocol)), protocol)
    measured = np.array([v.mean() for v in data.noise_targets["val_accuracy"]])
    predicted = make_benchmark(space, surrogate=kind, bundle=bundle).evaluate(data.noise_genes, noise=False)
    figure, ax = plt.subplots(figsize=(4.2, 4.2))
    ax.scatter(100 * measured, 100 * predicted["val_accuracy"], s=12, alpha=0.7)
    low, high = 100 * min(measured.min(), predicted["val_accuracy"].min()), 100 * max(measured.max(),
                                                                                   predicted["val_accuracy"].max())
    ax.plot([low, high], [low, high], color="grey", linewidth=1, linestyle=":")
    ax.set_xlabel("measured, mean of the seeds (%)")
    ax.set_ylabel(f"{kind}, noise-free (%)")
    ax.set_title(f"{space}: validation accuracy, {len(measured)} held-out architectures", fontsize=9)
    figure.tight_layout()
    figure.savefig(output, dpi=110)
    plt.close(figure)


def _searched_bundle(row: dict) -> str:
    """The bundle whose surrogate a listed incumbent was found on (its environment's, unless the run named one)."""
    return Path(str((row.get("env_kwargs") or {}).get("bundle") or ENV_BUNDLES[row["env_id"]])).name


def _incumbent_rows(space: str, protocol: str, bundles: set[str]) -> list[str]:
    """The final incumbents of the committed searches on ``bundles`` (a bundle and the release it extends),
    trained for real under ``protocol``, against what the searches saw."""
    from nas_envs.groundtruth.analysis import incumbent_check
    from nas_envs.groundtruth.records import read_protocol_records

    folder = REPO_ASSETS / "data" / "trajectories" / "incumbents"
    records = read_protocol_records(require_data(data_path(protocol)), protocol)
    rows = []
    for path in sorted(folder.glob(f"{space}_*.jsonl")) if folder.is_dir() else []:
        listed = [json.loads(line) for line in path.read_text().splitlines()]
        if not {_searched_bundle(row) for row in listed} <= bundles:
            continue  # searched on another bundle: its surrogate means are not this one's
        check = incumbent_check(records, listed)
        if check.get("incumbents"):
            rows.append(f"| `{path.name}` | {check['incumbents']} | {_pct(check['observed'])} | "
                        f"{_pct(check['surrogate_mean'])} | {_pct(check['measured'])} "
                        f"(+- {_pct(check['measured_standard_error'])}) | {_pct(check['random_mean'])} | "
                        f"{_tau(check, 'kendall_tau')} | {_tau(check, 'agents_kendall_tau')} |")
    return rows


def _tau(check: dict, key: str) -> str:
    """A Kendall tau of :func:`~nas_envs.groundtruth.analysis.incumbent_check` with its p-value, or "-"."""
    return f"{check[key]:.2f} (p {check[key + '_p']:.2g})" if key in check else "-"


def write_model_card(space: str, bundle: str | Path | None = None, out_dir: Path = Path("."),
                     refits: bool = False) -> Path:
    """Write ``<bundle>.md`` (and its figures) to ``out_dir``; returns the card's path. ``refits`` adds the
    analyses that refit the XGB ensemble (leave one source out, learning curve: minutes)."""
    name = bundle or DEFAULT_BUNDLES[space]
    folder, _ = resolve_bundle(name)
    title = Path(str(name)).name
    manifest = read_verified_manifest(folder, "")
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"# Model card: `{title}`", "",
             f"Generated by `nas-envs model-card {space}` from the bundle's manifest and the committed data; "
             "regenerate it rather than editing it.", ""]
    if space == "cityseg":
        lines += _cityseg_card(manifest)
    else:
        lines += _surrogate_card(space, folder, manifest, out_dir, title, refits)
    card = out_dir / f"{title}.md"
    card.write_text("\n".join(lines) + "\n")
    return card


def _surrogate_card(space: str, folder: Path, manifest: dict, out_dir: Path, title: str, refits: bool) -> list[str]:
    models = manifest["models"]
    lines = ["## What it was fitted on", "",
             f"Protocol `{manifest['protocol']}` (data file `assets/data/{manifest['data']['file']}`). Every model is "
             f"fitted on {100 * (1 - HELD_OUT_FRACTION):.0f} % of the training records and judged on the other "
             f"{100 * HELD_OUT_FRACTION:.0f} % (a fixed split by job key) and on "
             "the noise subset: architectures trained with several seeds, never fitted on.", "",
             "| model | targets | fitted on (records) | held out | data lines read |",
             "| --- | --- | --- | --- | --- |"]
    for kind, entry in models.items():
        lines.append(f"| {kind} | {', '.join(entry['targets'])} | {entry['fit_records']} | "
                     f"{entry['held_out_records']} | {entry['data_lines']} |")
    rows, scored = _quality_rows(space, folder)
    current = next(iter(scored.values()), {})
    lines += ["", "## Quality (validation accuracy)", "",
              f"Judged on the data as it is now ({current.get('data_lines', '?')} lines; the models read "
              f"{current.get('bundle_data_lines', '?')}): the held-out split, and the noise subset's seed means, "
              "against the error of one training (one seed against the mean of the others) and of a constant. "
              "Same numbers as `nas-envs evaluate-surrogate " + space + " --model KIND`.", "",
              "| model | held out | R2 | sparse Kendall tau | MAE | noise subset | R2 | sparse Kendall tau | MAE | "
              "one training's MAE | constant's MAE |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows]
    if current.get("r2_ceiling", {}).get("val_accuracy"):
        ceiling = current["r2_ceiling"]["val_accuracy"]
        lines += ["", f"What seed noise allows: R2 at most {ceiling['held_out_single_seed']:.2f} on single trainings "
                  f"(held out) and {ceiling['noise_subset_seed_means']:.2f} on the noise subset's seed means."]
    best = "xgb+gin" if "xgb+gin" in scored else next(iter(scored), None)
    if best is not None:
        figure = out_dir / f"{title}-scatter.png"
        _scatter(space, manifest["protocol"], folder, best, figure)
        lines += ["", f"![predicted against measured]({figure.name})"]
    if refits:
        from nas_envs.fitting.surrogate_fit import leave_one_source_out, quality_against_data_size

        logger.info("model card: leave-one-source-out refits")
        loso = leave_one_source_out(space, "xgb", manifest["protocol"])
        lines += ["", "## Leave one source out (XGB refitted without each source, judged on it)", "",
                  "| source | records | R2 | sparse Kendall tau | bias |", "| --- | --- | --- | --- | --- |"]
        for source, metrics in loso.items():
            m = metrics["val_accuracy"]
            lines.append(f"| {source} | {m['n']} | {m['r2']:.2f} | {m['sparse_kendall_tau']:.2f} | "
                         f"{100 * m['bias']:+.2f} % |")
        logger.info("model card: learning-curve refits")
        curve = quality_against_data_size(space, "xgb", manifest["protocol"])
        lines += ["", "## Learning curve (XGB refitted on growing parts of the fitting split)", "",
                  "| fitting records | held-out R2 | noise-subset R2 | noise-subset sparse Kendall tau |",
                  "| --- | --- | --- | --- |"]
        for point in curve:
            noise = point["noise_subset"]["val_accuracy"]
            lines.append(f"| {point['records']} | {point['held_out']['val_accuracy']['r2']:.2f} | "
                         f"{noise['surrogate_r2']:.2f} | {noise['surrogate_sparse_kendall_tau']:.2f} |")
    if "curve" in models:
        lines += ["", *_curve_rows(models["curve"], manifest["data"].get("learning_curves") or {})]
    lines += ["", *_noise_rows(space, folder, [kind for kind in ACCURACY_KINDS if kind in scored])]
    lines += _lever_rows(space, models)
    rounds = _search_rounds(space, manifest)
    lines += _release_comparison(space, folder, manifest, title, scored, rounds)
    lines += _trajectory_section(folder, out_dir, title, rounds)
    incumbents = _incumbent_rows(space, manifest["protocol"], {title, manifest.get("base", title)})
    if incumbents:
        lines += ["", "## Incumbents of searches, trained for real", "",
                  "The final incumbents of committed agent runs, each trained once: what the searches observed "
                  "(noisy draws, the best of many), the surrogate's noise-free mean, and the training; and how "
                  "alike the surrogate's mean and the trainings rank them (Kendall tau over the architectures) and "
                  "rank the agents by their incumbents' means (Kendall tau over the agents).", "",
                  "| list | incumbents | observed | surrogate mean | measured | random architectures | "
                  "architectures ranked alike | agents ranked alike |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |", *incumbents]
    return lines


def _read_by(manifest: dict, path: Path) -> set[str]:
    """The architectures of the data lines a bundle's models read (the most any of them read)."""
    from nas_envs.groundtruth.records import snapshot_prefix

    newest = max(manifest["models"].values(), key=lambda model: model["data_lines"])
    return {record["arch"] for record in snapshot_prefix(path, newest["data_lines"], newest["data_sha256"])}


class SearchRounds(NamedTuple):
    """What the model card's sections on search rounds read, once per card."""

    lists: list[dict]  # the family's search-round lists
    path: Path  # its data file under the bundle's protocol
    records: list[dict]  # that file's records
    measured: dict[str, float]  # per architecture trained there, the mean of its trainings
    read: set[str] | None  # the architectures of the data lines the bundle read; None where the file lacks them


def recorded_block(recorded: dict, lines: list[str] | None = None) -> str:
    """A recording of ``scripts/record_output.py`` as the docs show it: when, where and at which commit, then the
    command and what it printed (``lines``: a part of the output; default: all of it)."""
    shown = recorded["output"].rstrip("\n").splitlines() if lines is None else lines
    return (f"Recorded on {recorded['date']} at commit `{recorded['commit']}` ({recorded['machine']}):\n\n"
            f"```\n$ {recorded['command']}\n" + "\n".join(shown) + "\n```")


def _lever_rows(space: str, models: dict) -> list[str]:
    """The levers measured for the recipe a bundle was fitted with, each with its recorded readings; [] for a bundle
    fitted before them, or outside a checkout (no recordings)."""
    since, levers = RECIPE_LEVERS.get(space, (0, ()))
    version = max((entry.get("feature_version", 1) for entry in models.values()), default=1)
    if not levers or version < since or not RECORDINGS.is_dir():
        return []
    lines = ["", "## Levers of the fitting recipe", "",
             "Each change of the recipe was measured on the noise subset before this release, and kept or not as "
             "each says; the readings as recorded (`python scripts/record_output.py NAME -- COMMAND` reruns one).",
             ""]
    for lever in levers:
        lines += [f"- {lever.what}. {lever.verdict[0].upper()}{lever.verdict[1:]}.", ""]
        for name in lever.readings:  # indented into the list item
            block = recorded_block(json.loads((RECORDINGS / f"{name}.json").read_text()))
            lines += [textwrap.indent(block, "  "), ""]
    return lines[:-1]


def _search_rounds(space: str, manifest: dict) -> SearchRounds:
    """The family's search rounds and data as the bundle of ``manifest`` sees them; empty where it has no rounds."""
    from nas_envs.catalogue import FAMILIES
    from nas_envs.groundtruth.records import read_protocol_records
    from nas_envs.groundtruth.search_rounds import architecture_means, read_round_lists

    folder_of_rounds = REPO_ASSETS / "data" / "trajectories" / "search"
    path = data_path(manifest["protocol"])
    ids = {release.env_id for release in FAMILIES[space].releases}
    lists = [row for row in read_round_lists(folder_of_rounds) if row.get("env_id") in ids] \
        if folder_of_rounds.is_dir() else []
    if not lists:
        return SearchRounds([], path, [], {}, set())
    records = read_protocol_records(require_data(path), manifest["protocol"])
    try:
        read = _read_by(manifest, path)
    except ValueError as error:  # a data file that does not hold what the bundle read: no round is known unseen
        logger.warning("model card: no search-round sections: %s", error)
        read = None
    return SearchRounds(lists, path, records, architecture_means(records), read)


def _judged_cells(judged: dict) -> str:
    """R2, Kendall tau and bias of :func:`~nas_envs.fitting.trajectory_test.judge_on_round` as table cells."""
    return f"{judged['r2']:.2f} | {judged['kendall_tau']:.2f} | {100 * judged['bias']:+.2f} %"


def _agents_cell(judged: dict) -> str:
    return (f"{judged['agents_tau']:.2f} (p {judged['agents_tau_p']:.2g}; {judged['agents']} agents, "
            f"{judged['finals']} incumbents)" if "agents_tau" in judged else "-")


def _release_comparison(space: str, folder: Path, manifest: dict, title: str, scored: dict,
                        rounds: SearchRounds) -> list[str]:
    """This bundle against the family's earlier releases of the same protocol (those before it in the catalogue; all
    of them for a bundle folder), on the noise subset, on the newest search round of the family none of them was
    fitted on, and each on the round it chose, with :data:`RELEASE_TARGETS`; [] for a variant bundle, or where
    there is no earlier release or no such round with 5 trainings."""
    from nas_envs.benchmarks import make_benchmark
    from nas_envs.catalogue import FAMILIES
    from nas_envs.fitting.surrogate_fit import assess_bundle
    from nas_envs.fitting.trajectory_test import chosen_round, judge_on_round, newest_unseen_round
    from nas_envs.groundtruth.search_rounds import round_noise_ceiling

    if "base" in manifest:
        return []  # a variant (multi-fidelity) bundle's accuracy models are its base release's
    names = [release.bundle for release in FAMILIES[space].releases if not release.env]
    earlier = []
    for name in names[:names.index(title)] if title in names else names:
        other, _ = resolve_bundle(name)
        other_manifest = read_verified_manifest(other, "")
        if other_manifest["protocol"] == manifest["protocol"]:
            earlier.append((name, other, other_manifest))
    lists, path, records, measured, own_read = rounds
    if not earlier or not lists or own_read is None:
        return []
    try:
        read = {title: own_read, **{name: _read_by(m, path) for name, _, m in earlier}}
    except ValueError as error:  # a data file that does not hold what a bundle read: no round is known unseen
        logger.warning("model card: no comparison with the earlier release: %s", error)
        return []
    rows = newest_unseen_round(lists, set().union(*read.values()), set(measured))
    if len(rows) < 5:
        return []
    lines = ["## Against the earlier release, on data neither was fitted on", "",
             "Each accuracy surrogate of this bundle and of the family's earlier releases of the same protocol, on the "
             f"noise subset's seed means and on search round {rows[0]['round']} (the newest trained in full, "
             f"{len(rows)} architectures, none of them in the data any of these bundles read): R2, Kendall tau and "
             "bias (noise-free prediction minus measured, mean of the trainings where an architecture was trained more "
             "than once), and how alike "
             "the measured accuracies of the round's final incumbents and the surrogate's predictions of them rank the "
             "round's agents (Kendall tau over the agents' means, with its p value). Most of a round's architectures "
             "are trained once, so seed noise bounds what any model can reach there: the row before the targets is a "
             "perfect model of the expected values (with the seed variance of the round architectures trained more "
             "than once; its Kendall tau for normal values and noise). A round favours the bundles that "
             "did not choose it: its searches went where the chooser over-predicts. So each bundle is also judged on "
             "the round it chose itself, where its own searches exploited its errors as a user's will (R2 / Kendall "
             "tau on that round; - where it chose none, or was fitted on it). The last row is what a new release is "
             "held to.", "",
             "| bundle | surrogate | noise subset R2 | sparse Kendall tau | round R2 | round Kendall tau | "
             "round bias | agents ranked alike | on the round it chose |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    architectures = [row["architecture"] for row in rows]
    for name, bundle_folder, bundle_manifest in [(title, folder, manifest), *earlier]:
        own = chosen_round(lists, sha256_file(bundle_folder / "manifest.json"), read[name], set(measured))
        for kind in held_surrogates(bundle_manifest["models"]):
            noise = (scored.get(kind) if name == title else None) or assess_bundle(space, kind, bundle=bundle_folder)
            noise = noise["noise_subset"]["val_accuracy"]
            benchmark = make_benchmark(space, surrogate=kind, bundle=bundle_folder)
            judged = judge_on_round(rows, measured, np.asarray(
                benchmark.evaluate(architectures, noise=False)["val_accuracy"]))
            own_cell = "-"
            if len(own) >= 5:
                own_judged = judge_on_round(own, measured, np.asarray(benchmark.evaluate(
                    [row["architecture"] for row in own], noise=False)["val_accuracy"]))
                own_cell = (f"{own_judged['r2']:.2f} / {own_judged['kendall_tau']:.2f} (round {own[0]['round']}, "
                            f"{len(own)} trained)")
            lines.append(f"| `{name}` | {kind} | {noise['surrogate_r2']:.2f} | "
                         f"{noise['surrogate_sparse_kendall_tau']:.2f} | {_judged_cells(judged)} | "
                         f"{_agents_cell(judged)} | {own_cell} |")
    ceiling = round_noise_ceiling(records, lists, rows)
    if ceiling:
        lines.append(f"| what seed noise allows | | | | {ceiling['r2']:.2f} | {ceiling['kendall_tau']:.2f} | | | |")
    targets = RELEASE_TARGETS
    lines.append(f"| target | | >= {targets['noise_r2']:.2f} | >= {targets['noise_sparse_tau']:.2f} | "
                 f">= {targets['round_r2']:.2f} | >= {targets['round_tau']:.2f} | within "
                 f"+-{100 * targets['round_bias']:.2f} % | >= {targets['agents_tau']:.2f} | |")
    if ceiling and (ceiling["r2"] < targets["round_r2"] or ceiling["kendall_tau"] < targets["round_tau"]):
        lines += ["", f"On round {rows[0]['round']} what seed noise allows is below the round targets: no model of the "
                  "expected values meets them against these trainings, and a model is read against that ceiling "
                  f"(were every round architecture trained twice: R2 {ceiling['two_seeds']['r2']:.2f}, Kendall tau "
                  f"{ceiling['two_seeds']['kendall_tau']:.2f})."]
    return [""] + lines


def _trajectory_section(folder: Path, out_dir: Path, title: str, rounds: SearchRounds) -> list[str]:
    """The trajectory test on the search round this bundle chose: how its surrogates predict the round's trainings
    and rank its agents, and the round's RS and RE runs replayed on it with the trained architectures' measured
    accuracies drawn over their anytime curves; [] where the bundle chose no round it was not fitted on."""
    from nas_envs.fitting.trajectory_test import (
        chosen_round,
        judge_on_round,
        overlay_summary,
        plot_overlay,
        replay_runs,
    )
    from nas_envs.groundtruth.search_rounds import round_noise_ceiling

    lists, _, records, measured, read = rounds
    if not lists or read is None:
        return []
    rows = chosen_round(lists, sha256_file(folder / "manifest.json"), read, set(measured))
    if len(rows) < 5:
        return []
    number = rows[0]["round"]
    lines = ["", f"## Trajectory test: search round {number}, which this bundle chose", "",
             f"Every agent of `nas-envs run` searched this bundle (round {number} of the search rounds, "
             "`docs/data-card.md`); of each run, its final incumbent and samples of its top decile and of the rest "
             f"were trained for real ({len(rows)} architectures trained). How each surrogate of the bundle predicts "
             "them (noise-free, as the round's list recorded): R2, Kendall tau, bias, and the agents ranked by "
             "their final incumbents' means, measured against predicted (Kendall tau over the agents, with its p "
             "value).", "",
             "| surrogate | R2 | Kendall tau | bias | agents ranked alike |", "| --- | --- | --- | --- | --- |"]
    for surrogate in rows[0]["predicted_val_accuracy"]:
        judged = judge_on_round(rows, measured, np.array([row["predicted_val_accuracy"][surrogate] for row in rows]))
        lines.append(f"| {surrogate} | {_judged_cells(judged)} | {_agents_cell(judged)} |")
    ceiling = round_noise_ceiling(records, lists, rows)
    if ceiling:
        lines += ["", f"What seed noise allows on these trainings (a perfect model of the expected values; seed std "
                  f"{_pct(ceiling['seed_std'])}, from the {ceiling['repeated']} round architectures trained more than "
                  f"once): R2 {ceiling['r2']:.2f}, Kendall tau {ceiling['kendall_tau']:.2f}."]
    logger.info("model card: replaying round %d's RS and RE runs", number)
    listed = [row for row in lists if row["round"] == number]
    runs = replay_runs(listed, folder)
    figure = out_dir / f"{title}-trajectories.png"
    plot_overlay(runs, listed, measured, figure, f"round {number} on {title}: anytime curves on the surrogate, "
                 "trained architectures measured")
    lines += ["", "The round's random-search and regularized-evolution runs, replayed on this bundle: per agent, its "
              "runs, the incumbent a run ends with as the surrogate showed it (a noisy draw, the best of many), the "
              "surrogate's noise-free mean of those incumbents, and the measured mean of the trained final "
              "incumbents, top-decile picks and other picks (count in brackets). The figure draws each run's "
              "anytime curve and, where the run first evaluated it, each trained architecture's measured accuracy.",
              "", "| agent | runs | incumbent at the end (observed) | its noise-free mean | measured: final | top | "
              "rest |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for entry in overlay_summary(runs, listed, measured):
        measured_cells = " | ".join(f"{_pct(entry[f'measured_{kind}'])} ({entry[f'trained_{kind}']})"
                                    if entry[f"trained_{kind}"] else "-" for kind in ("final", "top", "rest"))
        lines.append(f"| {entry['agent']} | {entry['runs']} | {_pct(entry['observed_end'])} | "
                     f"{_pct(entry['predicted_finals'])} | {measured_cells} |")
    return lines + ["", f"![anytime curves and trainings]({figure.name})"]


def _noise_rows(space: str, folder: Path, kinds: list[str]) -> list[str]:
    """The noise model against repeated seeds (:mod:`nas_envs.fitting.noise_check`), per accuracy surrogate on the
    final validation accuracy and, with the first surrogate, per epoch of a learning-curve model."""
    from nas_envs.fitting.noise_check import COVERAGE, DRAWS, noise_model_check

    rows, better, judged = [], 0, 0
    for index, kind in enumerate(kinds):
        logger.info("model card: noise model of %s against repeated seeds", kind)
        checks = noise_model_check(space, folder, kind, curves=not index)
        for target, check in checks.items():
            model, constant = check["model"], check["constant"]
            judged += 1
            better += model["crps"] < constant["crps"]
            rows.append(f"| {kind} | `{target}` | {check['architectures']} ({check['seeds']}) | "
                        f"{_pct(check['mean_seed_std'])} | {_pct(model['mean_predicted_std'])} / "
                        f"{_pct(constant['mean_predicted_std'])} | {100 * model['std_error']:.3f} % / "
                        f"{100 * constant['std_error']:.3f} % | {100 * model['crps']:.3f} % / "
                        f"{100 * constant['crps']:.3f} % | "
                        f"{model['coverage']:.2f} / {constant['coverage']:.2f} | "
                        f"{100 * model['above_best']:.2f} % / {100 * constant['above_best']:.2f} % |")
    verdict = (f"The noise model's CRPS is lower than the constant's on {better} of {judged} rows"
               + ("." if better == judged else
                  ": where it is not, a constant seed noise would describe the trainings as well or better, and "
                  "the per-architecture spread is not to be read as knowledge of which architectures train "
                  "steadily."))
    return ["## Noise model against repeated seeds", "",
            f"For each noise-subset architecture, {DRAWS} noisy evaluations (`noise=True`) against its seeds trained "
            "for real, as NAS-Bench-301 judges its noise model: the mean of the seeds' standard deviations, the "
            "predicted standard deviation, the error of the predicted standard deviation against the seeds' "
            f"(mean absolute), the CRPS of each seed under the draws (lower is better) and the share of seeds in "
            f"the central {COVERAGE:.0%} of the draws, and the share of draws above the best value any training "
            "of the data reached (a tail no training shows). Each cell is model / constant: the same means with one "
            "standard deviation for every architecture, the pooled one of these seeds (fitted on what it is "
            "judged on). " + verdict, "",
            "| surrogate | target | architectures (seeds) | seeds' std | predicted std | std error | CRPS | "
            f"{COVERAGE:.0%} coverage | draws above the best measured |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows]


def _curve_rows(entry: dict, curves: dict) -> list[str]:
    """The learning-curve model judged per epoch (as fitted), beside how the measured ranking after each epoch agrees
    with the final one."""
    taus = curves.get("kendall_tau_with_final_by_epoch", [])
    lines = ["## Learning curves (validation accuracy after each epoch, `evaluate(archs, epochs=k)`)", "",
             "Per epoch: the curve model on the held-out split and on the noise subset's seed means (never fitted "
             "on), and the Kendall tau between the measured accuracies after that epoch and after the last "
             f"({curves.get('random_trainings', '?')} uniformly random trainings).", "",
             "| epoch | held-out R2 | noise subset R2 | sparse Kendall tau | MAE | one training's MAE | measured "
             "rank agreement with the last epoch |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for epoch, target in enumerate(entry["targets"]):
        held, noise = entry["held_out_metrics"].get(target), entry["noise_subset"].get(target)
        tau = f"{taus[epoch]:.2f}" if epoch < len(taus) else "-"
        lines.append(f"| {epoch + 1} | {held['r2']:.2f} | {noise['surrogate_r2']:.2f} | "
                     f"{noise['surrogate_sparse_kendall_tau']:.2f} | {_pct(noise['surrogate_mae'])} | "
                     f"{_pct(noise['single_training_mae'])} | {tau} |" if held and noise else
                     f"| {epoch + 1} | - | - | - | - | - | {tau} |")
    return lines


def _cityseg_card(manifest: dict) -> list[str]:
    held = manifest.get("held_out_metrics", {})
    lines = ["## What it was fitted on", "",
             f"Protocol `{manifest['protocol']}`: sub-networks of the CitySeg supernet scored on held-out scenes; the "
             f"rank-net ensemble is fitted on {manifest['fit_records']} and judged on {manifest['held_out_records']} "
             "held-out sub-networks. Latency tables are measured, energy modelled, FLOPs and parameters exact "
             "(`docs/cityseg.md`).", "", "## Quality (validation mIoU, held out)", "",
             "| metric | value |", "| --- | --- |"]
    lines += [f"| {key} | {value:.4g} |" for key, value in held.items() if isinstance(value, (int, float))]
    return lines
