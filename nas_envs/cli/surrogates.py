"""Surrogate commands: fit, evaluate-surrogate."""

from __future__ import annotations

import argparse
from pathlib import Path

from nas_envs.catalogue import FAMILIES
from nas_envs.cli.arguments import non_negative_int, positive_int


def _fit(args: argparse.Namespace) -> int:
    import json

    from nas_envs.catalogue import family, resolve

    chosen = family(args.space)
    model = args.model or chosen.models[0]
    if model not in chosen.models:
        raise ValueError(f"--model {model} does not apply to {args.space}; its models: {', '.join(chosen.models)}")
    summary = resolve(chosen.fit)(args.space, model, args.protocol, args.seed, args.out, args.features_version,
                                  args.lines)
    print(json.dumps(summary, indent=2))
    return 0


def _evaluate_surrogate(args: argparse.Namespace) -> int:
    import json

    from nas_envs.assets import DEFAULT_BUNDLES, read_verified_manifest, resolve_bundle
    from nas_envs.benchmarks import make_benchmark
    from nas_envs.fitting.surrogate_fit import assess_bundle, leave_one_source_out, quality_against_data_size

    pooled = "+" in args.model
    if pooled and (args.leave_one_source_out or args.learning_curve):
        raise ValueError(f"{args.model} pools separately fitted ensembles: it is scored as bundled; refit analyses "
                         "(--leave-one-source-out, --learning-curve) take xgb or gin")
    if not pooled:
        bench = make_benchmark(args.space, surrogate="xgb" if args.model == "runtime" else args.model,
                               bundle=args.bundle)
        entry = bench.manifest["models"][args.model]
        print(json.dumps({"bundled": {k: entry[k] for k in ("fit_records", "held_out_records", "held_out_metrics",
                                                             "noise_subset", "noise_calibration")}}, indent=2))
    print(json.dumps({"bundle_on_current_data": assess_bundle(args.space, args.model, bundle=args.bundle)}, indent=2))
    # refits read the data of the bundle's protocol
    protocol = read_verified_manifest(resolve_bundle(args.bundle or DEFAULT_BUNDLES[args.space])[0], "")["protocol"]
    if args.leave_one_source_out:
        print(json.dumps({"leave_one_source_out": leave_one_source_out(args.space, args.model, protocol)}, indent=2))
    if args.learning_curve:
        from nas_envs.fitting.plots import plot_quality_against_data_size

        curve = quality_against_data_size(args.space, args.model, protocol)
        print(json.dumps({"quality_against_data_size": curve}, indent=2))
        plot_quality_against_data_size(curve, Path(args.learning_curve), f"{args.space} {args.model}")
        print(f"wrote {args.learning_curve}")
    return 0


def _model_card(args: argparse.Namespace) -> int:
    from nas_envs.fitting.model_card import write_model_card

    card = write_model_card(args.space, bundle=args.bundle, out_dir=Path(args.out), refits=args.refits)
    print(f"wrote {card}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    fit = commands.add_parser("fit", help="fit a benchmark's surrogates on the collected data")
    fit.add_argument("space", choices=list(FAMILIES))
    fit.add_argument("--model", default=None, choices=sorted({m for f in FAMILIES.values() for m in f.models}),
                     help="default: the family's first ("
                     + "; ".join(f"{f.name}: {', '.join(f.models)}" for f in FAMILIES.values()) + ")")
    fit.add_argument("--seed", type=non_negative_int, default=0)
    fit.add_argument("--protocol", default=None)
    fit.add_argument("--out", default=None, type=Path, help="bundle folder to write (default: models/<space>-refit "
                     "beside the data). A released bundle never changes: release a refit as a new version")
    fit.add_argument("--features-version", type=positive_int, default=None, help="the version of the space's "
                     "features the model reads (default: the newest); e.g. that of the bundle's other models, which a "
                     "bundle's models share")
    fit.add_argument("--lines", type=positive_int, default=None, help="fit on the data file's first N lines "
                     "(default: all): repeat a fit on the data a bundle's manifest says it read ('data_lines')")
    fit.set_defaults(handler=_fit)

    evaluate = commands.add_parser("evaluate-surrogate", help="quality metrics of a bundled surrogate")
    evaluate.add_argument("space", choices=[f.name for f in FAMILIES.values() if f.surrogates])
    evaluate.add_argument("--model", default="xgb", choices=["xgb", "gin", "xgb+gin", "stack", "runtime"],
                          help="xgb+gin: both accuracy ensembles averaged, as the benchmark's surrogate='xgb+gin'")
    evaluate.add_argument("--bundle", default=None, help="a released bundle (e.g. darts-v0; default: the space's "
                          "newest) or a folder written by 'nas-envs fit'")
    evaluate.add_argument("--leave-one-source-out", action="store_true", help="refit without each source in turn")
    evaluate.add_argument("--learning-curve", default=None, metavar="PNG",
                          help="refit on 10%%..100%% of the data and plot R2 and sparse Kendall tau")
    evaluate.set_defaults(handler=_evaluate_surrogate)

    card = commands.add_parser("model-card", help="write a bundle's model card (Markdown and figures), generated from "
                               "its manifest and the data")
    card.add_argument("space", choices=list(FAMILIES))
    card.add_argument("--bundle", default=None, help="a release (default: the space's newest) or a bundle folder")
    card.add_argument("--out", default="docs/model-cards", help="folder to write to")
    card.add_argument("--refits", action="store_true", help="add leave-one-source-out and the learning curve "
                      "(refits the XGB ensemble: minutes)")
    card.set_defaults(handler=_model_card)

