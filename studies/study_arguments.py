"""Command-line options shared by the surrogate study scripts (``xgb_features.py``, ``gin_settings.py``,
``data_value.py``)."""

from __future__ import annotations

import argparse


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """Which records a study fits on and which noise-subset architectures judge it."""
    parser.add_argument("--space", default="darts", choices=["darts", "fbnet"])
    parser.add_argument("--protocol", default=None,
                        help="the ground truth to study (default: the space's default protocol)")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--noise-architectures", type=int, default=None,
                        help="judge on the first N noise-subset architectures (the subset grows too)")


def add_judging_options(parser: argparse.ArgumentParser) -> None:
    """:func:`add_data_options`, and whether to judge against the noise subset instead of cross-validating."""
    add_data_options(parser)
    parser.add_argument("--noise-subset", action="store_true",
                        help="fit on all training records, score against the noise subset's seed means")


def records_to_fit(parser: argparse.ArgumentParser, requested: int | None, available: int) -> int:
    """``--records``, checked against the training records there are (all of them when not given)."""
    if requested is not None and not 1 <= requested <= available:
        parser.error(f"--records {requested}: the file holds {available} training records of this protocol; "
                     f"give 1 to {available}")
    return requested or available
