"""The seed paper's trajectory test: does a surrogate rank search methods, and draw their anytime curves, as
trainings would?

A search round (:mod:`nas_envs.groundtruth.search_rounds`) lists, for every run of every agent on a bundle, its
final incumbent and samples of its trajectory, each trained for real afterwards. On those trainings this module
judges a bundle (R2, Kendall tau, bias, and the agents ranked by their final incumbents), and replays the round's
random-search and regularized-evolution runs (they are reproducible from the bundle, the seeds and the settings a
list's rows keep) to draw their anytime curves on the surrogate with the measured accuracies of the trained
trajectory architectures over them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OVERLAY_AGENTS = ("rs", "re")  # the two searches every NAS benchmark paper draws


def newest_unseen_round(lists: list[dict], fitted_on: set[str], trained: set[str]) -> list[dict]:
    """The rows of the newest search round that is trained in full and none of whose architectures is in
    ``fitted_on``; [] if none. A round still in training is passed over: its first blocks are a few agents' picks."""
    for number in sorted({row["round"] for row in lists}, reverse=True):
        rows = [row for row in lists if row["round"] == number]
        architectures = {row["architecture"] for row in rows}
        if not architectures & fitted_on and architectures <= trained:
            return rows
    return []


def chosen_round(lists: list[dict], manifest_sha256: str, fitted_on: set[str], trained: set[str]) -> list[dict]:
    """The trained rows of the search round that the bundle with ``manifest_sha256`` chose (searched on and listed),
    unless any of its architectures is in ``fitted_on``; [] if none. There the bundle's searches exploited its own
    errors, as a user's searches on it will."""
    rows = [row for row in lists if row.get("bundle_sha256") == manifest_sha256]
    if not rows or {row["architecture"] for row in rows} & fitted_on:
        return []
    return [row for row in rows if row["architecture"] in trained]


def judge_on_round(rows: list[dict], measured: dict[str, float], predicted: np.ndarray) -> dict:
    """R2, Kendall tau and bias of noise-free ``predicted`` accuracies on a round's trained ``rows`` (``measured``:
    per architecture, the mean of its trainings), and Kendall tau (with p) over the agents between the mean
    prediction and the mean measurement of each agent's final incumbents."""
    from scipy import stats

    from nas_envs.surrogates.metrics import bias, kendall_tau, r2

    truth = np.array([measured[row["architecture"]] for row in rows])
    out = {"r2": r2(truth, predicted), "kendall_tau": kendall_tau(truth, predicted), "bias": bias(truth, predicted)}
    finals = [i for i, row in enumerate(rows) if row["kind"] == "final"]
    agents = sorted({rows[i]["agent"] for i in finals})
    if len(agents) >= 3:
        of = {agent: [i for i in finals if rows[i]["agent"] == agent] for agent in agents}
        tau = stats.kendalltau([truth[of[a]].mean() for a in agents], [predicted[of[a]].mean() for a in agents])
        out.update(agents_tau=float(tau.statistic), agents_tau_p=float(tau.pvalue), agents=len(agents),
                   finals=len(finals))
    return out


def replay_runs(rows: list[dict], bundle: Path, agents: tuple[str, ...] = OVERLAY_AGENTS
                ) -> dict[tuple[str, str, int], list[dict]]:
    """Per (agent, surrogate, seed) of ``agents`` in a round's list ``rows``, the trajectory its run on ``bundle``
    records, replayed. Raises ValueError where a replay does not reproduce the run the list was chosen from (another
    bundle, or code whose searches changed since)."""
    from nas_envs.agents.runner import run_seed
    from nas_envs.groundtruth.search_rounds import RoundSettings

    runs = {}
    for row in rows:
        key = (row["agent"], row["surrogate"], row["seed"])
        if row["agent"] not in agents or key in runs:
            continue
        settings = RoundSettings(round=row["round"], env_id=row["env_id"], bundle=str(bundle), budget=row["budget"])
        trajectory = run_seed(settings.run_settings(row["agent"], row["surrogate"]), row["seed"])
        visited = {step["architecture"] for step in trajectory}
        listed = [other["architecture"] for other in rows if (other["agent"], other["surrogate"], other["seed"]) == key]
        if len(trajectory) != row["evaluations"] or not visited.issuperset(listed):
            raise ValueError(f"replaying round {row['round']}'s {row['agent']} run (seed {row['seed']}, surrogate "
                             f"{row['surrogate']}) on {bundle} gave {len(trajectory)} evaluations, not the list's "
                             f"{row['evaluations']}, or missed a listed architecture: the list was chosen with "
                             "another bundle or another version of the searches")
        runs[key] = trajectory
    return runs


def overlay_summary(runs: dict[tuple[str, str, int], list[dict]], rows: list[dict], measured: dict[str, float]
                    ) -> list[dict]:
    """Per agent of ``runs``: its runs, the mean incumbent a run ends with as the surrogate showed it (a noisy
    draw, the best of many), the surrogate's noise-free mean of those incumbents, and the mean measured accuracy
    of the trained final incumbents, top-decile picks and other picks."""
    summary = []
    for agent in dict.fromkeys(agent for agent, _, _ in runs):
        keys = [key for key in runs if key[0] == agent]
        mine = [row for row in rows if row["agent"] == agent and row["architecture"] in measured]
        finals = [row for row in mine if row["kind"] == "final"]
        entry = {"agent": agent, "runs": len(keys),
                 "observed_end": float(np.mean([runs[key][-1]["incumbent_val_accuracy"] for key in keys])),
                 "predicted_finals": float(np.mean([row["predicted_val_accuracy"][row["surrogate"]]
                                                    for row in finals])) if finals else float("nan")}
        for kind in ("final", "top", "rest"):
            values = [measured[row["architecture"]] for row in mine if row["kind"] == kind]
            entry[f"measured_{kind}"] = float(np.mean(values)) if values else float("nan")
            entry[f"trained_{kind}"] = len(values)
        summary.append(entry)
    return summary


def plot_overlay(runs: dict[tuple[str, str, int], list[dict]], rows: list[dict], measured: dict[str, float],
                 output: Path, title: str) -> None:
    """One panel per agent: each run's anytime curve on the surrogate (the incumbent's observed validation accuracy
    against simulated hours) and, at the simulated time the run first evaluated it, the measured accuracy (mean of
    its trainings) of each trained architecture the round listed from that run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = list(dict.fromkeys(agent for agent, _, _ in runs))
    surrogates = list(dict.fromkeys(surrogate for _, surrogate, _ in runs))
    colours = dict(zip(surrogates, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    markers = {"final": "*", "top": "^", "rest": "o"}
    figure, axes = plt.subplots(1, len(agents), figsize=(4.4 * len(agents), 3.8), sharey=True, squeeze=False)
    for ax, agent in zip(axes[0], agents):
        for (name, surrogate, seed), trajectory in runs.items():
            if name != agent:
                continue
            hours = np.array([step["sim_time"] for step in trajectory]) / 3600
            ax.step(hours, [100 * step["incumbent_val_accuracy"] for step in trajectory], where="post",
                    color=colours[surrogate], linewidth=1, alpha=0.8)
            first_seen: dict[str, float] = {}
            for step in trajectory:
                first_seen.setdefault(step["architecture"], step["sim_time"] / 3600)
            for row in rows:
                if (row["agent"], row["surrogate"], row["seed"]) == (name, surrogate, seed) \
                        and row["architecture"] in measured:
                    ax.scatter(first_seen[row["architecture"]], 100 * measured[row["architecture"]],
                               marker=markers[row["kind"]], color=colours[surrogate], s=40 if row["kind"] == "final"
                               else 18, edgecolors="black", linewidths=0.4, zorder=3)
        ax.set_title(agent, fontsize=9)
        ax.set_xlabel("simulated hours")
    axes[0][0].set_ylabel("validation accuracy (%)")
    handles = [plt.Line2D([], [], color=colours[s], label=f"incumbent on {s} (surrogate)") for s in surrogates]
    handles += [plt.Line2D([], [], marker=m, linestyle="", color="grey", label=f"{kind}, trained")
                for kind, m in markers.items()]
    axes[0][-1].legend(handles=handles, fontsize=7, loc="lower right")
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(output, dpi=110)
    plt.close(figure)
