"""Optional dependencies: the light core runs every environment; other features name the extra they need."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


class MissingExtraError(ImportError):
    """A feature was used whose optional dependencies are not installed; the message names the extra."""


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` saying which extra of nas-envs provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(f"{feature} needs {module.split('.')[0]}, which is not installed: "
                                f"pip install 'nas-envs[{extra}]'") from error


def available(module: str) -> bool:
    """Whether an optional module is installed (for speed-ups that have a fallback); does not import it."""
    return importlib.util.find_spec(module) is not None
