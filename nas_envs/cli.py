"""The ``nas-envs`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nas_envs.assets import data_path


def _collect(args: argparse.Namespace) -> int:
    from nas_envs.groundtruth.collect import collect, plan
    from nas_envs.groundtruth.train import DEFAULT_PROTOCOL

    protocol = args.protocol or DEFAULT_PROTOCOL[args.space]
    seeds = args.seeds if args.seeds is not None else (3 if args.subset == "noise" else 1)
    jobs = plan(args.space, args.source, args.subset, args.n, seeds, start=args.start, trajectory=args.trajectory)
    path = Path(args.out) if args.out else data_path(protocol)
    collect(path, protocol, jobs, workers=args.workers, backend=args.backend, device=args.device)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from nas_envs.groundtruth.collect import merge

    for source in args.files:
        for protocol, added in merge(Path(source), data_path).items():
            print(f"merge: {source}: {added} new record(s) of {protocol} appended to {data_path(protocol)}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    import json

    args.model = args.model or ("ranknet" if args.space == "cityseg" else "xgb")

    if args.space == "cityseg":
        from nas_envs.benchmarks.cityseg_fit import fit_cityseg

        if args.model != "ranknet":
            raise ValueError("the CitySeg bundle has one learned model: --model ranknet")
        result = fit_cityseg(seed=args.seed, protocol=args.protocol)
        print(json.dumps({k: result[k] for k in ("held_out_metrics", "noise", "fit_records", "bounds")}, indent=2))
        return 0
    from nas_envs.benchmarks.fit import fit_surrogate

    if args.model == "ranknet":
        raise ValueError("the rank-net is CitySeg's model; DARTS and FBNet have --model xgb, gin or runtime")
    result = fit_surrogate(args.space, kind=args.model, protocol_name=args.protocol, seed=args.seed)
    summary = {k: result[k] for k in ("held_out_metrics", "noise_calibration", "noise_subset", "fit_records")}
    print(json.dumps(summary, indent=2))
    return 0


def _evaluate_surrogate(args: argparse.Namespace) -> int:
    import json

    from nas_envs.benchmarks import make_benchmark
    from nas_envs.benchmarks.fit import leave_one_source_out, quality_against_data_size, score_bundle

    pooled = "+" in args.model
    if pooled and (args.leave_one_source_out or args.learning_curve):
        raise ValueError(f"{args.model} pools separately fitted ensembles: it is scored as bundled; refit analyses "
                         "(--leave-one-source-out, --learning-curve) take xgb or gin")
    if not pooled:
        bench = make_benchmark(args.space, surrogate="xgb" if args.model == "runtime" else args.model)
        entry = bench.manifest["models"][args.model]
        print(json.dumps({"bundled": {k: entry[k] for k in ("fit_records", "held_out_records", "held_out_metrics",
                                                             "noise_subset", "noise_calibration")}}, indent=2))
    print(json.dumps({"bundle_on_current_data": score_bundle(args.space, args.model)}, indent=2))
    if args.leave_one_source_out:
        print(json.dumps({"leave_one_source_out": leave_one_source_out(args.space, args.model)}, indent=2))
    if args.learning_curve:
        from nas_envs.benchmarks.plots import plot_quality_against_data_size

        curve = quality_against_data_size(args.space, args.model)
        print(json.dumps({"quality_against_data_size": curve}, indent=2))
        plot_quality_against_data_size(curve, Path(args.learning_curve), f"{args.space} {args.model}")
        print(f"wrote {args.learning_curve}")
    return 0


def _data_card(args: argparse.Namespace) -> int:
    import json

    from nas_envs.groundtruth.analysis import (
        darts_group_medians,
        device_agreement,
        incumbent_check,
        load,
        noise_subset_agreement,
        plot_darts_analyses,
        summary,
    )
    from nas_envs.groundtruth.train import DEFAULT_PROTOCOL

    protocol = args.protocol or DEFAULT_PROTOCOL[args.space]
    path = data_path(protocol)
    records = load(path, protocol)
    metric = {"metric": "val_miou"} if args.space == "cityseg" else {}
    seconds = {"seconds": "eval_seconds"} if args.space == "cityseg" else {}
    report = {"protocol": protocol, "file": str(path), **summary(records, **metric, **seconds)}
    if args.compare_protocol:
        other = load(data_path(args.compare_protocol), args.compare_protocol)
        report[f"noise_subset_agreement_with_{args.compare_protocol}"] = noise_subset_agreement(records, other)
    if args.device_check:
        report["device_check"] = {"file": args.device_check,
                                  **device_agreement(records, load(Path(args.device_check), protocol), **metric)}
    if args.incumbents:
        with open(args.incumbents) as handle:
            report["incumbent_check"] = {"file": args.incumbents,
                                         **incumbent_check(records, [json.loads(line) for line in handle])}
    if args.space == "darts":
        report["median_val_error_by_group"] = darts_group_medians(records)
    print(json.dumps(report, indent=2))
    if args.space == "darts":
        for figure in plot_darts_analyses(records, Path(args.figures)):
            print(f"wrote {figure}")
    return 0


def _train_supernet(args: argparse.Namespace) -> int:
    import json

    from nas_envs.groundtruth.cityseg_supernet import supernet_path, train_supernet
    from nas_envs.groundtruth.train import PROTOCOLS

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
    from surrogates.metrics import kendall_tau

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
        print(json.dumps({"profile": profile.name, **table["check"]}), f"wrote {path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import nas_envs  # noqa: F401 - registers the ids

    for env_id in sorted(i for i in gym.registry if i.startswith(("SurrNAS", "CitySeg"))):
        print(env_id)
    return 0


def build_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The parser and its sub-command group (to which :mod:`agents.cli` adds ``run`` and ``plot``)."""
    parser = argparse.ArgumentParser(prog="nas-envs", description="Surrogate NAS benchmarks as Gymnasium environments.")
    commands = parser.add_subparsers(dest="command", required=True)

    collect = commands.add_parser("collect", help="train architectures for real and append the results")
    collect.add_argument("space", choices=["darts", "fbnet", "cityseg"])
    collect.add_argument("--n", type=int, required=True, help="architectures 0..n-1 of the stream (resumes)")
    collect.add_argument("--start", type=int, default=0, help="first architecture index of the stream")
    collect.add_argument("--source", default="random", choices=["random", "param-free"])
    collect.add_argument("--subset", default="train", choices=["train", "noise"],
                         help="'noise': the held-out repeated subset (3 seeds by default)")
    collect.add_argument("--trajectory", default="", help="train the architectures of this file: a trajectory of "
                         "'nas-envs run' (those after its first 100 evaluations) or a list of 'nas-envs incumbents' "
                         "(all); commit it under assets/data/trajectories/<source>/")
    collect.add_argument("--seeds", type=int, default=None, help="seeds per architecture")
    collect.add_argument("--workers", type=int, default=1)
    collect.add_argument("--backend", default="local", choices=["local", "ray"])
    collect.add_argument("--protocol", default=None, help="protocol name (default: the space's bundled protocol)")
    collect.add_argument("--out", default=None, help="output .jsonl (default: assets/data/<protocol>.jsonl)")
    collect.add_argument("--device", default="cpu", help="torch device of the trainings, e.g. cuda (DARTS, FBNet)")
    collect.set_defaults(handler=_collect)

    merge = commands.add_parser("merge", help="append the records of collection files made elsewhere (another "
                                "machine, a GPU) to the bundled data files, skipping jobs already there")
    merge.add_argument("files", nargs="+")
    merge.set_defaults(handler=_merge)

    fit = commands.add_parser("fit", help="fit a benchmark's surrogates on the collected data")
    fit.add_argument("space", choices=["darts", "fbnet", "cityseg"])
    fit.add_argument("--model", default=None, choices=["xgb", "gin", "runtime", "ranknet"],
                     help="default: xgb (DARTS, FBNet), ranknet (CitySeg)")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--protocol", default=None)
    fit.set_defaults(handler=_fit)

    evaluate = commands.add_parser("evaluate-surrogate", help="quality metrics of a bundled surrogate")
    evaluate.add_argument("space", choices=["darts", "fbnet"])
    evaluate.add_argument("--model", default="xgb", choices=["xgb", "gin", "xgb+gin", "runtime"],
                          help="xgb+gin: both accuracy ensembles averaged, as the benchmark's surrogate='xgb+gin'")
    evaluate.add_argument("--leave-one-source-out", action="store_true", help="refit without each source in turn")
    evaluate.add_argument("--learning-curve", default=None, metavar="PNG",
                          help="refit on 10%%..100%% of the data and plot R2 and sparse Kendall tau")
    evaluate.set_defaults(handler=_evaluate_surrogate)

    card = commands.add_parser("data-card", help="numbers and analysis plots of the collected ground truth")
    card.add_argument("space", choices=["darts", "fbnet", "cityseg"])
    card.add_argument("--protocol", default=None)
    card.add_argument("--figures", default="assets/data/figures", help="folder for the analysis plots")
    card.add_argument("--compare-protocol", default=None,
                      help="also report how the noise-subset seed means agree with this protocol's")
    card.add_argument("--device-check", default=None, help="a file of the same jobs measured again on another "
                      "device (scripts/collect_gpu.sh): report the paired differences")
    card.add_argument("--incumbents", default=None, help="a list of 'nas-envs incumbents': compare what the "
                      "searches claimed with the trainings of those architectures")
    card.set_defaults(handler=_data_card)

    supernet = commands.add_parser("train-supernet", help="train the CitySeg weight-sharing supernet (resumable)")
    supernet.add_argument("--protocol", default="cityseg-scenes64-supernet-v1")
    supernet.add_argument("--seed", type=int, default=0)
    supernet.add_argument("--out", default=None, help="checkpoint (default: assets/data/<protocol>.pt)")
    supernet.set_defaults(handler=_train_supernet)

    latency = commands.add_parser("measure-latency", help="measure the CitySeg latency tables on this machine")
    latency.add_argument("--profile", default="all", choices=["all", "h1", "h2"])
    latency.add_argument("--check", type=int, default=40, help="whole networks timed to check the tables")
    latency.set_defaults(handler=_measure_latency)

    listing = commands.add_parser("list", help="list the registered environment ids")
    listing.set_defaults(handler=_list)
    return parser, commands


def dispatch(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Run the chosen command; expected failures print one clear line instead of a traceback."""
    from surrogates.manifest import AssetError

    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, FileNotFoundError, AssetError, RuntimeError) as error:
        print(f"nas-envs {args.command}: error: {error}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    return dispatch(build_parser()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
