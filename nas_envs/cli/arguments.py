"""Argument types shared by the command groups."""

from __future__ import annotations

import argparse
from pathlib import Path


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0 (seeds)."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text}")
    return value


def png_path(text: str) -> str:
    """An argparse type: a figure's file name, ``.png`` added where it has no suffix (matplotlib adds it anyway, and
    the command then names the file it wrote)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a file name, such as anytime.png")
    return text if Path(text).suffix else f"{text}.png"
