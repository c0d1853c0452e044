"""Experiment commands: list, run, grid, dataset, plot, curve, incumbents, moea, oneshot, oneshot-report."""

from __future__ import annotations

import argparse
import json
import logging
from concurrent.futures import as_completed
from pathlib import Path

import numpy as np

from nas_envs.agents.runner import AGENT_NAMES, AGENT_NEEDS, MULTI_FIDELITY_AGENT_NAMES, multi_fidelity
from nas_envs.catalogue import FAMILIES
from nas_envs.cli.arguments import non_negative_int, number_range, png_path, positive_int
from nas_envs.extras import require
from nas_envs.oneshot import SEARCH_EPOCHS
from nas_envs.parallel import worker_pool
from nas_envs.progress import progress


def _list(args: argparse.Namespace) -> int:
    import re

    from nas_envs.benchmarks import make_benchmark
    from nas_envs.catalogue import ENV_BUNDLES, release_of

    def natural(env_id: str) -> list:
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", env_id)]

    print(f"{'id':<20} {'bundle':<11} {'decisions':>9}  objectives (reward)")
    for env_id in sorted(ENV_BUNDLES, key=natural):
        family, release = release_of(env_id)
        bench = make_benchmark(release.benchmark, bundle=release.bundle)
        print(f"{env_id:<20} {release.bundle:<11} {bench.space.num_decisions:>9}  "
              f"{', '.join(bench.objectives)} ({family.reward})")
    return 0


def check_env_id(env_id: str) -> None:
    """Refuse an id that is not registered, suggesting the nearest one."""
    import nas_envs
    from nas_envs.catalogue import ENV_BUNDLES

    if env_id not in ENV_BUNDLES:
        closest = nas_envs.closest_env_id(env_id)
        hint = f"did you mean {closest!r}? " if closest else ""
        raise ValueError(f"unknown environment {env_id!r}; {hint}'nas-envs list' prints the {len(ENV_BUNDLES)} ids")


def check_agent_on_env(agent: str, env_id: str) -> None:
    """Refuse an unknown id, and a multi-fidelity agent on an id that trains in one go."""
    check_env_id(env_id)
    if agent in MULTI_FIDELITY_AGENT_NAMES and not multi_fidelity(env_id):
        variants = [r.env_id for f in FAMILIES.values() for r in f.releases if multi_fidelity(r.env_id)]
        raise ValueError(f"--agent {agent} trains architectures epoch by epoch: it needs a multi-fidelity "
                         f"environment ({', '.join(variants)}), not {env_id}")


def _run(args: argparse.Namespace) -> int:
    from nas_envs.agents.plot import format_table, summarise
    from nas_envs.agents.runner import RunSettings, load_run_groups, parse_duration, run
    from nas_envs.catalogue import release_of

    check_agent_on_env(args.agent, args.env)
    family, _ = release_of(args.env)
    if args.surrogate is not None and args.surrogate not in family.surrogates:
        raise ValueError(f"--surrogate {args.surrogate}: {args.env} has "
                         + (f"the surrogates {family.surrogates}" if family.surrogates else
                            "none to choose (one predictor)"))
    settings = RunSettings(
        env_id=args.env, agent=args.agent, budget_seconds=parse_duration(args.budget),
        max_evaluations=args.max_evaluations, noise=not args.no_noise,
        env_kwargs={} if args.surrogate is None else {"surrogate": args.surrogate},
    )
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    folder = run(settings, seeds, Path(args.out), workers=args.workers, backend=args.backend)
    group = next(g for g in load_run_groups([folder]) if g.identity == settings.identity())
    print(format_table(summarise({group.label: group.trajectories})))
    return 0


def _grid(args: argparse.Namespace) -> int:
    from nas_envs.agents.plot import format_table, summarise
    from nas_envs.agents.runner import load_run_groups, parse_duration, run_grid

    for env_id in args.envs:
        for agent in args.agents:
            check_agent_on_env(agent, env_id)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    budget = parse_duration(args.budget)
    folders = run_grid(args.envs, args.agents, seeds, Path(args.out), budget, workers=args.workers,
                       backend=args.backend, max_evaluations=args.max_evaluations, noise=not args.no_noise)
    for env_id in args.envs:  # each folder holds runs of its own settings only (run_grid refuses others)
        groups = load_run_groups([folder for folder in folders if folder.parent.name == env_id])
        print(f"{env_id}:\n" + format_table(summarise({g.label: g.trajectories for g in groups})))
    return 0


def _dataset(args: argparse.Namespace) -> int:
    import os

    check_env_id(args.env)
    if args.out is not None:  # where Minari keeps local datasets
        os.environ["MINARI_DATASETS_PATH"] = str(Path(args.out).resolve())
    from nas_envs.interop.minari_datasets import write_dataset
    from nas_envs.scores import normalized_score, reference_scores

    dataset = write_dataset(args.env, args.agent, args.episodes, args.seed, args.dataset_id, noise=not args.no_noise)
    returns = np.array([episode.rewards.sum() for episode in dataset.iterate_episodes()])
    folder = Path(dataset.storage.data_path)
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    print(f"dataset {dataset.spec.dataset_id}: {dataset.total_episodes} episodes, {dataset.total_steps} steps, "
          f"{size / 1e6:.1f} MB on disk")
    if reference_scores(args.env).metric == "hypervolume":
        print(f"hypervolume of the search (the sum of the returns) after {len(returns)} evaluations: "
              f"{returns.sum():.4f}")
    else:
        print(f"returns: mean {returns.mean():.4f}, best {returns.max():.4f}; normalized score: mean "
              f"{normalized_score(args.env, returns).mean():.3f}, best {normalized_score(args.env, returns.max()):.3f}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    require("matplotlib", "plot", "nas-envs plot")
    from nas_envs.agents.plot import format_table, plot_run_folders

    figures = plot_run_folders([Path(d) for d in args.dirs], Path(args.output), title=args.title)
    for env_id, (path, table) in figures.items():
        if len(figures) > 1:
            print(env_id)
        print(format_table(table))
        print(f"wrote {path}")
    return 0


def _curve(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from nas_envs.agents.plot import plot_reward_curve, reward_curve
    from nas_envs.agents.runner import load_run_groups

    groups = load_run_groups([Path(args.dir)])
    chosen = [g for g in groups if args.agent is None or g.identity["agent"] == args.agent]
    if len(chosen) != 1:
        labels = ", ".join(g.label for g in groups)
        raise ValueError(f"{args.dir} holds runs of {labels}; choose one with --agent" if len(chosen) > 1 or
                         args.agent is None else f"{args.dir} holds no runs of {args.agent!r} (it holds {labels})")
    runs, env_id = chosen[0].trajectories, chosen[0].identity["env_id"]
    decisions = gym.make(env_id).unwrapped.space.num_decisions
    print(f"{'env steps':>10} {'mean score of the window':>32}  ({len(runs)} seeds, {args.window} architectures a "
          "window)")
    curve = reward_curve(runs, args.window, decisions)
    if not curve:
        shortest = min(len(rows) for rows in runs)
        raise ValueError(f"the shortest of these runs evaluated {shortest} architectures, fewer than one window of "
                         f"{args.window}: pass --window {max(1, shortest // 10)} (or less), or run longer")
    for step, mean, se in curve:
        print(f"{step:>10} {100 * mean:>26.3f} +- " + (f"{100 * se:.3f}" if len(runs) > 1 else "n/a"))
    if args.plot:
        plot_reward_curve(curve, Path(args.plot), title=f"{chosen[0].label} on {env_id}, {len(runs)} seed(s)")
        print(f"wrote {args.plot}")
    return 0


def _incumbents(args: argparse.Namespace) -> int:
    from nas_envs.agents.incumbents import (
        final_incumbents,
        incumbent_trajectories,
        observed_minus_mean,
        write_incumbents,
    )

    rows = (incumbent_trajectories if args.trajectory else final_incumbents)(Path(args.dir))
    write_incumbents(rows, Path(args.out))
    kind = (f"incumbents ({len({row['architecture'] for row in rows})} distinct architectures) of the runs' "
            "trajectories" if args.trajectory else "final incumbents")
    print(f"wrote {len(rows)} {kind} to {args.out}; the values the agents observed exceed the surrogate's mean for "
          f"the same architectures by {100 * observed_minus_mean(rows):.2f} % on average")
    return 0


def _moea(args: argparse.Namespace) -> int:
    from nas_envs import make_benchmark
    from nas_envs.agents.moea import (
        MOEAS,
        baseline_table,
        moea_run_key,
        moea_run_problem,
        paper_ordering_table,
        plot_front,
        plot_hypervolumes,
        run_moea,
    )
    from nas_envs.files import append_new, read_json_lines

    require("filelock", "moea", "nas-envs moea")
    problems = args.problems
    algorithms = MOEAS if args.algorithms == "all" else tuple(args.algorithms.split(","))
    out = Path(args.out)
    bundle = make_benchmark("cityseg-mop1", bundle=args.bundle).bundle.manifest_sha256
    # runs of another bundle (or of none recorded) stay in the file but are neither counted as done nor shown
    done = [row for row in read_json_lines(out, moea_run_problem) if row.get("bundle") == bundle]
    keys = {moea_run_key(r) for r in done}
    todo = [(problem, algorithm, seed) for problem in problems for algorithm in algorithms for seed in range(args.runs)
            if (bundle, problem, algorithm, seed, args.evaluations) not in keys]
    with worker_pool(args.workers) as pool:
        futures = [pool.submit(run_moea, problem, algorithm, seed, args.evaluations, None, args.bundle)
                   for problem, algorithm, seed in todo]
        for future in progress(as_completed(futures), total=len(futures), desc="MOEA runs"):  # resumable
            row = {**future.result(), "evaluations_asked": args.evaluations}
            # another 'moea --out' on the same file may have written this run meanwhile: then it is not written again
            if append_new(out, [row], moea_run_key, moea_run_problem):
                done.append(row)
            logging.getLogger("nas_envs.moea").debug(json.dumps(row))
    done = [row for row in read_json_lines(out, moea_run_problem) if row.get("bundle") == bundle]
    selected = [r for r in done if r["problem"] in problems and r["evaluations_asked"] == args.evaluations]
    print(baseline_table(selected))
    print()
    print(paper_ordering_table(selected))
    if args.plot:
        plot_hypervolumes(selected, Path(args.plot))
        print(f"wrote {args.plot}")
    if args.front:
        hv = plot_front(problems[0], algorithms[0], 0, args.evaluations, Path(args.front), bundle=args.bundle)
        print(f"wrote {args.front} (MOP{problems[0]}, {algorithms[0]}, seed 0: hypervolume {hv:.4f})")
    return 0


def _oneshot(args: argparse.Namespace) -> int:
    require("torch", "groundtruth", "nas-envs oneshot (it trains a supernet)")
    from nas_envs.files import write_atomically
    from nas_envs.oneshot.search import SearchSettings, genotypes_to_train, run_search

    out = Path(args.out)
    print(f"{'run':<28} {'epoch':>5} {'xgb mean (%)':>12} {'one-shot val (%)':>16}  genotype")
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        chosen = {"epochs": args.epochs} if args.epochs else {}
        settings = SearchSettings(method=args.method, space=args.space, seed=seed, images=args.images, **chosen)
        name = f"{args.method}-{args.space}-seed{seed}"
        lines = run_search(settings, out / f"{name}.jsonl")
        for line in lines:
            print(f"{name:<28} {line['epoch']:>5} {100 * line['surrogates']['xgb']['val_accuracy']:>12.2f} "
                  f"{100 * line['oneshot_val_accuracy']:>16.2f}  {line['genotype'][:60]}...")
        rows = genotypes_to_train(lines)
        write_atomically(out / "oneshot" / f"{name}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    print(f"to train the genotypes for real (source 'oneshot'): copy {out / 'oneshot'} to assets/data/trajectories/ "
          "and run 'nas-envs collect darts --trajectory FILE --n N' for each file")
    return 0


def _oneshot_report(args: argparse.Namespace) -> int:
    import nas_envs
    from nas_envs.assets import data_path
    from nas_envs.catalogue import family
    from nas_envs.oneshot.report import (
        REPORT_SURROGATE,
        format_report,
        plot_runs,
        read_runs,
        report,
        trained_accuracies,
    )

    runs = read_runs([Path(d) for d in args.dirs])
    trained = trained_accuracies(data_path(family("darts").protocol))
    random_median = float(np.median(nas_envs.make_benchmark("darts", surrogate=REPORT_SURROGATE).random_reference()))
    print(f"surrogate {REPORT_SURROGATE}, noise-free means; measured: the mean of a genotype's trainings in the data")
    print(format_report(report(runs, trained, random_median)))
    if args.plot:
        plot_runs(runs, trained, Path(args.plot), random_median)
        print(f"wrote {args.plot}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    listing = commands.add_parser("list", help="list the registered environment ids")
    listing.set_defaults(handler=_list)
    run = commands.add_parser("run", help="run an agent for several seeds on a simulated budget")
    run.add_argument("--env", required=True, help="environment id, e.g. SurrNAS-DARTS-v0")
    needs = "; ".join(f"{name}: [{AGENT_NEEDS[name][1]}]" for name in AGENT_NAMES if name in AGENT_NEEDS)
    run.add_argument("--agent", required=True, choices=AGENT_NAMES + MULTI_FIDELITY_AGENT_NAMES,
                     help=f"the search agent; extras needed: {needs}; the others run on the core install; "
                          f"{' and '.join(MULTI_FIDELITY_AGENT_NAMES)} need a multi-fidelity environment (-MF-)")
    run.add_argument("--budget", required=True, help="simulated budget with its unit: 3600s, 90m, 24h or 2d")
    run.add_argument("--seeds", type=positive_int, default=10, help="number of seeds")
    run.add_argument("--first-seed", type=non_negative_int, default=0,
                     help="the first seed: seeds FIRST-SEED .. FIRST-SEED+SEEDS-1 run (add seeds to a folder)")
    run.add_argument("--max-evaluations", type=positive_int, default=None,
                     help="also stop a seed after this many evaluated architectures")
    run.add_argument("--no-noise", action="store_true", help="evaluate with ensemble means instead of noisy draws")
    run.add_argument("--surrogate", default=None, choices=sorted({s for f in FAMILIES.values() for s in f.surrogates}),
                     help="accuracy surrogate where the environment has a choice (SurrNAS-*; default: its family's)")
    run.add_argument("--out", required=True, help="output folder (trajectories go to OUT/<agent>/)")
    run.add_argument("--workers", type=positive_int, default=1, help="seeds run at once, one process each")
    run.add_argument("--backend", default="local", choices=["local", "ray"],
                     help="local processes, or Ray tasks (RAY_ADDRESS joins a cluster; needs [ray])")
    run.set_defaults(handler=_run)

    grid = commands.add_parser("grid", help="every (environment, agent, seed) of a grid, one task and one file each, "
                               "on local processes or a Ray cluster")
    grid.add_argument("--envs", nargs="+", required=True, help="environment ids")
    grid.add_argument("--agents", nargs="+", required=True, choices=AGENT_NAMES + MULTI_FIDELITY_AGENT_NAMES,
                      help="search agents (as 'nas-envs run --agent')")
    grid.add_argument("--budget", required=True, help="simulated budget with its unit: 3600s, 90m, 24h or 2d")
    grid.add_argument("--seeds", type=positive_int, default=10, help="number of seeds per (environment, agent)")
    grid.add_argument("--first-seed", type=non_negative_int, default=0, help="the first seed (default 0)")
    grid.add_argument("--max-evaluations", type=positive_int, default=None,
                      help="also stop a run after this many evaluated architectures")
    grid.add_argument("--no-noise", action="store_true", help="evaluate with ensemble means instead of noisy draws")
    grid.add_argument("--out", required=True, help="output folder: OUT/<env id>/<agent>/seed_<k>.jsonl")
    grid.add_argument("--workers", type=positive_int, default=1, help="runs at once (local processes, or the CPUs "
                      "of a local Ray instance)")
    grid.add_argument("--backend", default="local", choices=["local", "ray"],
                      help="local processes, or Ray tasks (RAY_ADDRESS joins a cluster; needs [ray])")
    grid.set_defaults(handler=_grid)

    dataset = commands.add_parser("dataset", help="record an agent's episodes on an id as a Minari dataset (offline "
                                  "RL; needs [minari])")
    dataset.add_argument("--env", required=True, help="environment id, e.g. SurrNAS-DARTS-v0")
    dataset.add_argument("--agent", default="rs", choices=AGENT_NAMES,
                         help="the policy: rs draws architectures uniformly, re is regularized evolution, ppo and "
                              "reinforce learn as they act (default: rs)")
    dataset.add_argument("--episodes", type=positive_int, default=100, help="architectures to record (default 100)")
    dataset.add_argument("--seed", type=non_negative_int, default=0, help="seeds the agent and the noise (default 0)")
    dataset.add_argument("--dataset-id", default=None,
                         help="Minari id (default nas-envs/<env id, lower case>/<agent>-v0)")
    dataset.add_argument("--out", default=None,
                         help="folder of local Minari datasets (default: MINARI_DATASETS_PATH, else "
                              "~/.minari/datasets)")
    dataset.add_argument("--no-noise", action="store_true", help="rewards from ensemble means instead of noisy draws")
    dataset.set_defaults(handler=_dataset)

    plot = commands.add_parser("plot", help="anytime plot of runs: incumbent error against simulated time")
    plot.add_argument("dirs", nargs="+", help="run folders written by 'nas-envs run'")
    plot.add_argument("--plot", "-o", "--output", dest="output", required=True, type=png_path, metavar="PNG",
                      help="PNG file to write (--plot, as in the other commands; -o and --output are the same)")
    plot.add_argument("--title", default=None)
    plot.set_defaults(handler=_plot)

    curve = commands.add_parser("curve", help="learning curve of an RL agent: reward of completed architectures")
    curve.add_argument("dir", help="run folder written by 'nas-envs run'")
    curve.add_argument("--agent", default=None, help="the agent whose runs to draw (needed when DIR holds several)")
    curve.add_argument("--window", type=positive_int, default=100, help="architectures per point")
    curve.add_argument("--plot", default=None, type=png_path, metavar="PNG", help="also draw the curve")
    curve.set_defaults(handler=_curve)

    incumbents = commands.add_parser("incumbents", help="list every run's final incumbent (or its "
                                     "incumbent trajectory), to train them for real (nas-envs collect --trajectory "
                                     "FILE)")
    incumbents.add_argument("dir", help="run folder written by 'nas-envs run'")
    incumbents.add_argument("--out", required=True, help="JSON lines to write, e.g. "
                            "assets/data/trajectories/incumbents/darts_24h.jsonl")
    incumbents.add_argument("--trajectory", action="store_true", help="every incumbent of each run in the order "
                            "found (its incumbent trajectory), not only the final one")
    incumbents.set_defaults(handler=_incumbents)

    oneshot = commands.add_parser("oneshot", help="one-shot NAS (DARTS, PC-DARTS, GDAS) on the DARTS space, the "
                                  "derived genotype scored by the benchmark after every search epoch (resumable)")
    oneshot.add_argument("--method", required=True, choices=["darts", "pcdarts", "gdas"])
    oneshot.add_argument("--space", default="full", choices=["full", "constrained"],
                         help="constrained: only skip_connect and sep_conv_3x3 (and none), where DARTS collapses")
    oneshot.add_argument("--epochs", type=positive_int, default=None,
                         help=f"search epochs (default {SEARCH_EPOCHS}, about 30 CPU-minutes a DARTS run: "
                              "scripts/oneshot_speed.py)")
    oneshot.add_argument("--seeds", type=positive_int, default=1)
    oneshot.add_argument("--first-seed", type=non_negative_int, default=0)
    oneshot.add_argument("--images", type=positive_int, default=None,
                         help="training images to use (default: the DARTS protocol's 10,000); fewer for a try")
    oneshot.add_argument("--out", required=True, help="folder: one <method>-<space>-seed<k>.jsonl per run")
    oneshot.set_defaults(handler=_oneshot)
    oneshot_report = commands.add_parser(
        "oneshot-report", help="one-shot runs: the benchmark's prediction of each epoch's genotype against the "
        "same genotypes trained for real (Kendall tau per optimiser; a figure)")
    oneshot_report.add_argument("dirs", nargs="+", help="folders written by 'nas-envs oneshot --out'")
    oneshot_report.add_argument("--plot", default=None, type=png_path, metavar="PNG",
                                help="PNG: one panel per optimiser and space")
    oneshot_report.set_defaults(handler=_oneshot_report)

    moea = commands.add_parser("moea", help="NSGA-II/III, MOEA/D, RVEA (pymoo), IBEA and HypE on CitySeg/MOP: HV "
                               "table")
    moea.add_argument("--problems", default=list(range(1, len(FAMILIES["cityseg"].benchmarks) + 1)),
                      type=number_range(1, len(FAMILIES["cityseg"].benchmarks), "CitySeg/MOP problems"),
                      help="e.g. 1-15 or 1,6,15 (default: all)")
    moea.add_argument("--algorithms", default="all", help="all or a comma list of nsga2,nsga3,moead,rvea,ibea,hype")
    moea.add_argument("--runs", type=positive_int, default=5, help="seeds per problem and algorithm")
    moea.add_argument("--evaluations", type=positive_int, default=10_000)
    moea.add_argument("--out", default="runs/moea/runs.jsonl", help="JSON lines of finished runs (resumes)")
    moea.add_argument("--workers", type=positive_int, default=1, help="runs in parallel, one process each")
    moea.add_argument("--plot", default=None, type=png_path, metavar="PNG", help="box plots of the runs' hypervolumes")
    moea.add_argument("--front", default=None, type=png_path, metavar="PNG",
                      help="the final population of the first problem's first algorithm, seed 0, over random "
                      "architectures")
    moea.add_argument("--bundle", default=None, help="CitySeg bundle: a release (default: the newest) or a folder "
                      "written by 'nas-envs fit cityseg'")
    moea.set_defaults(handler=_moea)

