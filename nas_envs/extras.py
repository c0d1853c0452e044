"""Optional dependencies: the light core runs every environment; other features name the extra they need."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


class MissingExtraError(ImportError):
    """A feature was used whose optional dependencies are not installed; the message names the extra."""


#: the extra that installs each optional module the library imports (the first of them, where several do)
EXTRA_OF_MODULE = {"xgboost": "xgboost", "torch": "gin", "torch_geometric": "gin", "stable_baselines3": "rl",
                   "sb3_contrib": "rl", "optuna": "tpe", "pymoo": "moea", "matplotlib": "plot", "scipy": "groundtruth",
                   "filelock": "groundtruth",
                   "ray": "ray", "minari": "minari", "h5py": "minari", "syne_tune": "synetune", "mkdocs": "docs",
                   "ConfigSpace": "configspace"}


def missing_extra(error: ModuleNotFoundError, feature: str, extra: str | None = None) -> MissingExtraError | None:
    """The :class:`MissingExtraError` that an import failure of an optional module stands for (``None`` for a
    module no extra provides: a real bug, to be raised as it is). ``extra``: the one that installs everything the
    feature needs, named instead of the module's own (a command's extra rather than that of one side package)."""
    module = (error.name or "").split(".")[0]
    if module not in EXTRA_OF_MODULE:
        return None
    return MissingExtraError(f"{feature} needs {module}, which is not installed: "
                             f"pip install 'nas-envs[{extra or EXTRA_OF_MODULE[module]}]'")


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` saying which extra of nas-envs provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(f"{feature} needs {module.split('.')[0]}, which is not installed: "
                                f"pip install 'nas-envs[{extra}]'") from error


def require_installed(module: str, extra: str, feature: str) -> None:
    """Raise :class:`MissingExtraError` now if ``module`` is not installed, without importing it (for options
    checked where they are given, long before the module is first used)."""
    if not available(module):
        raise MissingExtraError(f"{feature} needs {module.split('.')[0]}, which is not installed: "
                                f"pip install 'nas-envs[{extra}]'")


def available(module: str) -> bool:
    """Whether an optional module is installed (for speed-ups that have a fallback); does not import it."""
    return importlib.util.find_spec(module) is not None
