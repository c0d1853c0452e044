"""The ``nas-envs`` command line: one parser, its commands grouped by what they work on."""

from __future__ import annotations

import argparse
import logging
import sys

from nas_envs.cli import experiments, groundtruth, surrogates


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nas-envs", description="Surrogate NAS benchmarks as Gymnasium environments.")
    parser.add_argument("--quiet", action="store_true", help="print results only: no progress, no notices")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (experiments, groundtruth, surrogates):
        group.add_commands(commands)
    for command in commands.choices.values():  # also after the command: 'nas-envs run ... --quiet'
        command.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


#: the extra that installs everything a command needs, named when one of its modules is missing
COMMAND_EXTRAS = {**dict.fromkeys(("collect", "search-round", "merge", "data-card", "train-supernet", "measure-latency",
                                   "fit", "evaluate-surrogate", "model-card", "oneshot", "oneshot-report"),
                                  "groundtruth"),
                  "moea": "moea", "plot": "plot", "curve": "plot", "dataset": "minari"}


def dispatch(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Run the chosen command; expected failures print one clear line instead of a traceback."""
    from nas_envs.assets import AssetError
    from nas_envs.extras import MissingExtraError, missing_extra

    args = parser.parse_args(argv)
    configure_output(args.quiet)
    try:
        return args.handler(args)
    except ModuleNotFoundError as error:  # an optional module of a command or option: name its extra
        extra = missing_extra(error, f"nas-envs {args.command}", COMMAND_EXTRAS.get(args.command))
        if extra is None:
            raise
        print(f"nas-envs {args.command}: error: {extra}", file=sys.stderr)
        return 2
    except (ValueError, OSError, AssetError, RuntimeError, MissingExtraError) as error:
        print(f"nas-envs {args.command}: error: {error}", file=sys.stderr)
        return 2


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record is emitted (a ``StreamHandler`` keeps the stream it was
    made with, so a caller that swaps ``sys.stderr`` between commands, as notebooks and test captures do, would
    lose the messages)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def configure_output(quiet: bool) -> None:
    """The library logs and shows tqdm progress on stderr; ``--quiet`` silences both (results still print)."""
    logger = logging.getLogger("nas_envs")
    if not any(isinstance(h, _CurrentStderr) for h in logger.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.ERROR if quiet else logging.INFO)


def main(argv: list[str] | None = None) -> int:
    return dispatch(build_parser(), argv)
