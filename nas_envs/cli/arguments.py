"""Argument types shared by the command groups."""

from __future__ import annotations

import argparse
from pathlib import Path


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0 (seeds)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text}")
    return value


def png_path(text: str) -> str:
    """An argparse type: a figure's file name, ``.png`` added where it has no suffix (matplotlib adds it anyway, and
    the command then names the file it wrote)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a file name, such as anytime.png")
    return text if Path(text).suffix else f"{text}.png"


def _digits(text: str) -> bool:
    """Only the digits 0-9 (``str.isdigit`` also takes '²', which ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def number_range(low: int, high: int, what: str):
    """An argparse type: ``"1-15"`` or ``"1,3,5"`` (or a mix, ``"1-3,7"``) of integers in ``[low, high]``, as a
    sorted list without repeats."""
    def parse(text: str) -> list[int]:
        numbers: set[int] = set()
        for part in text.split(","):
            first, dash, last = part.strip().partition("-")
            if not _digits(first) or (dash and not _digits(last)):
                raise argparse.ArgumentTypeError(f"{text!r} is not a list of {what}: write e.g. {low}-{high} or "
                                                 f"{low},{high}")
            start, stop = int(first), int(last) if dash else int(first)
            if not low <= start <= stop <= high:
                raise argparse.ArgumentTypeError(f"{part.strip()!r}: {what} run from {low} to {high}, each range "
                                                 "from low to high")
            numbers.update(range(start, stop + 1))
        return sorted(numbers)
    return parse
