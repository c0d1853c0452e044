"""Where the bundled assets live, and checked loading of them.

The assets folder is the repository's ``assets/`` (an editable install uses it in place); ``NAS_ENVS_ASSETS``
points elsewhere, for example at a copy with more data.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ASSETS = Path(__file__).resolve().parent.parent / "assets"


def assets_dir() -> Path:
    return Path(os.environ.get("NAS_ENVS_ASSETS", REPO_ASSETS))


def data_path(protocol: str) -> Path:
    """The collection file of a ground-truth protocol."""
    return assets_dir() / "data" / f"{protocol}.jsonl"
