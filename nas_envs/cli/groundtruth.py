"""Ground-truth commands: collect, search-round, merge, data-card, train-supernet, measure-latency."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from nas_envs.assets import data_path, record_file, require_data
from nas_envs.catalogue import FAMILIES
from nas_envs.cli.arguments import non_negative_int, positive_int
from nas_envs.extras import require


def _collect(args: argparse.Namespace) -> int:
    from nas_envs.groundtruth.collect import collect
    from nas_envs.groundtruth.jobs import plan
    from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL, PROTOCOLS

    require("torch", "groundtruth", "nas-envs collect (real trainings)")
    protocol = args.protocol or DEFAULT_PROTOCOL[args.space]
    if protocol not in PROTOCOLS or PROTOCOLS[protocol].space != args.space:
        raise ValueError(f"unknown {args.space} protocol {protocol!r}; allowed: "
                         f"{sorted(name for name, p in PROTOCOLS.items() if p.space == args.space)}")
    seeds = args.seeds if args.seeds is not None else (3 if args.subset == "noise" else 1)
    jobs = plan(args.space, args.source, args.subset, args.n, seeds, start=args.start, trajectory=args.trajectory)
    if args.kind:
        from nas_envs.groundtruth.jobs import trajectory_kinds

        if not args.trajectory:
            raise ValueError("--kind picks rows of a search round's list: give the list with --trajectory")
        kinds = trajectory_kinds(args.trajectory)
        if args.kind not in kinds:
            raise ValueError(f"{args.trajectory} names no row of kind {args.kind!r}; its kinds: "
                             f"{sorted(set(kinds)) or 'none'}")
        jobs = [job for job in jobs if kinds[job.index] == args.kind]
    path = Path(args.out) if args.out else data_path(protocol)
    collect(path, protocol, jobs, workers=args.workers, backend=args.backend, device=args.device,
            threads=args.threads, reserve=not args.no_reserve)
    return 0


def _search_round(args: argparse.Namespace) -> int:
    from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
    from nas_envs.groundtruth.records import read_protocol_records
    from nas_envs.groundtruth.search_rounds import RoundSettings, choose, run_searches, with_predictions, write_round

    out = Path(args.out)
    if out.exists():
        raise ValueError(f"{out} exists: a round's list is written once (its trainings are keyed by its content); "
                         "choose another --out or remove it")
    settings = RoundSettings(round=args.round, bundle=args.bundle, seeds=args.seeds, budget=args.budget,
                             top=args.top, rest=args.rest)
    runs = Path(args.runs or f"search-round-{args.round}-runs")
    run_searches(settings, runs, workers=args.workers)
    protocol = DEFAULT_PROTOCOL["darts"]
    trained = {record["arch"] for record in read_protocol_records(require_data(data_path(protocol)), protocol)}
    rows = with_predictions(choose(settings, runs, trained), settings)
    write_round(rows, out)
    kinds = ", ".join(f"{sum(row['kind'] == kind for row in rows)} {kind}" for kind in ("final", "top", "rest"))
    print(f"wrote {len(rows)} architectures ({kinds}) of {len(settings.agents) * len(settings.surrogates) * args.seeds}"
          f" searches to {out}; train them with 'nas-envs collect darts --trajectory {out} --n {len(rows)}'")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from nas_envs.groundtruth.records import merge

    for source in args.files:
        for protocol, added in merge(Path(source), data_path).items():
            print(f"merge: {source}: {added} new record(s) of {protocol} appended to {data_path(protocol)}")
    return 0


def _data_card(args: argparse.Namespace) -> int:
    import json

    from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL, PROTOCOLS

    protocol = args.protocol or DEFAULT_PROTOCOL[args.space]
    path = require_data(data_path(protocol))
    # imported after the data check, so that an install without the data says so first
    from nas_envs.groundtruth.analysis import (
        darts_group_medians,
        device_agreement,
        incumbent_check,
        noise_subset_agreement,
        plot_darts_analyses,
        summary,
    )
    from nas_envs.groundtruth.records import read_protocol_records

    records = read_protocol_records(path, protocol)
    metric = {"metric": "val_miou"} if args.space == "cityseg" else {}
    seconds = {"seconds": "eval_seconds"} if args.space == "cityseg" else {}
    shown = os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    report = {"protocol": protocol, "file": shown, **summary(records, **metric, **seconds,
                                                                  n_val=PROTOCOLS[protocol].n_val)}
    if args.compare_protocol:
        other = read_protocol_records(data_path(args.compare_protocol), args.compare_protocol)
        report[f"noise_subset_agreement_with_{args.compare_protocol}"] = noise_subset_agreement(records, other)
    if args.device_check:
        other_device = read_protocol_records(Path(args.device_check), protocol)
        report["device_check"] = {"file": args.device_check, **device_agreement(records, other_device, **metric)}
    if args.incumbents:
        from nas_envs.groundtruth.jobs import read_architecture_rows

        report["incumbent_check"] = {"file": args.incumbents,
                                     **incumbent_check(records, read_architecture_rows(args.incumbents))}
    rounds = []
    if args.space == "darts":
        from nas_envs.assets import assets_dir
        from nas_envs.groundtruth.search_rounds import read_round_lists, round_table

        report["median_val_error_by_group"] = darts_group_medians(records)
        rounds = round_table(records, read_round_lists(assets_dir() / "data" / "trajectories" / "search"))
    if args.json:
        print(json.dumps({**report, "search_rounds": rounds}, indent=2))
    else:
        print(readable(report))
        if rounds:
            from nas_envs.groundtruth.search_rounds import format_round_table

            print("search rounds:\n" + "\n".join(f"  {line}" for line in format_round_table(rounds).splitlines()))
    if args.space == "darts":
        folder = Path(args.out or f"data-card-{protocol}")
        for figure in plot_darts_analyses(records, folder):
            print(f"wrote {figure}")
    return 0


def readable(report: dict, indent: int = 0) -> str:
    """A nested report as indented ``key: value`` lines, numbers to four significant digits."""
    lines = []
    for key, value in report.items():
        label = " " * indent + str(key).replace("_", " ")
        if isinstance(value, dict):
            lines.append(f"{label}:")
            lines.append(readable(value, indent + 2))
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            lines.append(f"{label}: " + ", ".join(_number(v) for v in value))
        else:
            lines.append(f"{label}: {_number(value) if isinstance(value, (int, float)) else value}")
    return "\n".join(line for line in lines if line)


def _number(value: float) -> str:
    return str(value) if isinstance(value, (bool, int)) else f"{value:.4g}"


def _train_supernet(args: argparse.Namespace) -> int:
    import json

    from nas_envs.groundtruth.cityseg_supernet import supernet_path, train_supernet
    from nas_envs.groundtruth.protocols import PROTOCOLS

    protocol = PROTOCOLS[args.protocol]
    path = Path(args.out) if args.out else supernet_path(protocol)
    log = train_supernet(protocol, path, seed=args.seed,
                         progress=lambda epoch, entry: print(json.dumps(entry), flush=True))
    print(f"wrote {path} ({len(log['epochs'])} epochs)")
    return 0


def _measure_latency(args: argparse.Namespace) -> int:
    import json

    import numpy as np
    import torch

    from nas_envs.benchmarks.cityseg import LatencyTable
    from nas_envs.groundtruth.cityseg_hardware import PROFILES, measure_latency_table, time_network
    from nas_envs.spaces import get_space
    from nas_envs.surrogates.metrics import kendall_tau

    space = get_space("cityseg")
    for profile in PROFILES:
        if args.profile not in ("all", profile.name):
            continue
        table = measure_latency_table(profile)
        # how well the sum of the parts predicts whole networks (the paper's Figure 5)
        archs = space.sample(args.check, seed=20261129)
        predicted = LatencyTable(table).milliseconds(archs)
        torch.set_num_threads(profile.threads)
        measured, again = (np.array([1000 * time_network(genes, profile.batch) / profile.batch for genes in archs])
                           for _ in range(2))
        table["check"] = {
            "architectures": args.check,
            "mean_abs_percentage_error": float(np.mean(np.abs(predicted - measured) / measured) * 100),
            "kendall_tau": kendall_tau(measured, predicted),
            "kendall_tau_of_a_second_measurement": kendall_tau(measured, again),  # what measurement noise allows
            "measured_ms_range": [float(measured.min()), float(measured.max())],
        }
        path = data_path(f"cityseg-latency-{profile.name}").with_suffix(".json")
        path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        record_file(path)
        print(json.dumps({"profile": profile.name, **table["check"]}), f"wrote {path}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    from nas_envs.groundtruth.jobs import SOURCES

    collect = commands.add_parser("collect", help="train architectures for real and append the results")
    collect.add_argument("space", choices=list(FAMILIES))
    collect.add_argument("--n", type=positive_int, required=True, help="architectures 0..n-1 of the stream (resumes)")
    collect.add_argument("--start", type=non_negative_int, default=0, help="first architecture index of the stream")
    collect.add_argument("--source", default="random", choices=SOURCES,
                         help="uniformly random, or an extreme region of the space (pool-heavy: DARTS only; "
                         "one-block: FBNet only)")
    collect.add_argument("--subset", default="train", choices=["train", "noise"],
                         help="'noise': the held-out repeated subset (3 seeds by default)")
    collect.add_argument("--trajectory", default="", help="train the architectures of this file: a trajectory of "
                         "'nas-envs run' (those after its first 100 evaluations) or a list of 'nas-envs incumbents' "
                         "(all); commit it under assets/data/trajectories/<source>/")
    collect.add_argument("--kind", default=None, choices=["final", "top", "rest"], help="with a search round's "
                         "list: only its rows of this kind, e.g. '--kind final --seeds 2' trains the round's final "
                         "incumbents a second time, so that the agents' measured order has power")
    collect.add_argument("--seeds", type=positive_int, default=None, help="seeds per architecture")
    collect.add_argument("--workers", type=positive_int, default=1, help="trainings at a time (worker processes)")
    collect.add_argument("--threads", type=positive_int, default=1, help="torch threads per worker (one per core "
                         "is fastest on a CPU)")
    collect.add_argument("--backend", default="local", choices=["local", "ray"])
    collect.add_argument("--protocol", default=None, help="protocol name (default: the space's bundled protocol)")
    collect.add_argument("--out", default=None, help="output .jsonl (default: assets/data/<protocol>.jsonl)")
    collect.add_argument("--device", default="cpu", help="torch device of the trainings, e.g. cuda (DARTS, FBNet)")
    collect.add_argument("--no-reserve", action="store_true", help="skip the reserve reading after each training "
                         "(the training images the protocol leaves unused, scored for the measurement-share analysis: "
                         "about an eighth of a DARTS training's CPU); the training and its other fields are the same")
    collect.set_defaults(handler=_collect)

    rounds = commands.add_parser("search-round", help="run every agent on a DARTS bundle and list the architectures "
                                 "of their trajectories to train (a closed search round)")
    rounds.add_argument("--round", type=non_negative_int, required=True, help="the round's number (fixes its seeds)")
    rounds.add_argument("--bundle", default="darts-v1", help="the bundle searched: a release or a folder written by "
                        "'nas-envs fit darts --out DIR' (default: %(default)s)")
    rounds.add_argument("--out", required=True, help="the list to write (assets/data/trajectories/search/round-<k>"
                        ".jsonl)")
    rounds.add_argument("--runs", default=None, help="folder of the round's search runs (resumable; default: "
                        "search-round-<k>-runs)")
    rounds.add_argument("--seeds", type=positive_int, default=2, help="runs per agent and surrogate")
    rounds.add_argument("--top", type=non_negative_int, default=2, help="architectures from each run's top decile")
    rounds.add_argument("--rest", type=non_negative_int, default=1, help="architectures from the rest of each run")
    rounds.add_argument("--budget", default="24h", help="simulated budget of each search")
    rounds.add_argument("--workers", type=positive_int, default=1, help="searches at a time")
    rounds.set_defaults(handler=_search_round)

    merge = commands.add_parser("merge", help="append the records of collection files made elsewhere (another "
                                "machine, a GPU) to the bundled data files, skipping jobs already there")
    merge.add_argument("files", nargs="+")
    merge.set_defaults(handler=_merge)

    card = commands.add_parser("data-card", help="numbers and analysis plots of the collected ground truth")
    card.add_argument("space", choices=list(FAMILIES))
    card.add_argument("--protocol", default=None)
    card.add_argument("--out", default=None, help="folder for the analysis plots (default: data-card-<protocol> in "
                      "the current folder; the committed figures are in assets/data/figures)")
    card.add_argument("--json", action="store_true", help="print the report as JSON, for programs")
    card.add_argument("--compare-protocol", default=None,
                      help="also report how the noise-subset seed means agree with this protocol's")
    card.add_argument("--device-check", default=None, help="a file of the same jobs measured again on another "
                      "device (scripts/collect_gpu.sh): report the paired differences")
    card.add_argument("--incumbents", default=None, help="a list of 'nas-envs incumbents': compare what the "
                      "searches claimed with the trainings of those architectures")
    card.set_defaults(handler=_data_card)

    supernet = commands.add_parser("train-supernet", help="train the CitySeg weight-sharing supernet (resumable)")
    supernet.add_argument("--protocol", default="cityseg-scenes64-supernet-v1")
    supernet.add_argument("--seed", type=non_negative_int, default=0)
    supernet.add_argument("--out", default=None, help="checkpoint (default: assets/data/<protocol>.pt)")
    supernet.set_defaults(handler=_train_supernet)

    latency = commands.add_parser("measure-latency", help="measure the CitySeg latency tables on this machine")
    latency.add_argument("--profile", default="all", choices=["all", "h1", "h2"])
    latency.add_argument("--check", type=non_negative_int, default=40, help="whole networks timed to check the tables")
    latency.set_defaults(handler=_measure_latency)

