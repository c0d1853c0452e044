"""Preparing a fitted bundle folder for release.

A variant bundle (a multi-fidelity one, say) is usually its family's release plus one model. Shipping the shared
files twice would double the wheel's share of them, so the variant names the release as its ``base`` and keeps only
its own files; :func:`nas_envs.assets.read_verified_manifest` reads the others from the base's folder and checks
them against the variant's own manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

from nas_envs.assets import MANIFEST, RELEASED_BUNDLES, read_verified_manifest, resolve_bundle, sha256_file
from nas_envs.files import write_atomically


def share_files_with_base(folder: Path, base: str) -> list[str]:
    """Drop from ``folder`` every listed file that the released bundle ``base`` holds byte for byte under the same
    name, and name ``base`` in the manifest (which keeps listing every file with its sha256). Returns the names
    dropped. Refuses a base that is not released, or a folder whose files do not match its manifest."""
    if base not in RELEASED_BUNDLES:
        raise ValueError(f"base {base!r} is not a released bundle; released: {sorted(RELEASED_BUNDLES)}")
    folder = Path(folder)
    manifest = read_verified_manifest(folder, f"refit the bundle in {folder}")
    if manifest.get("base") not in (None, base):
        raise ValueError(f"{folder} already takes files from {manifest['base']!r}, not {base!r}")
    base_folder, _ = resolve_bundle(base)
    shared = [name for name, digest in manifest["files"].items()
              if (base_folder / name).is_file() and sha256_file(base_folder / name) == digest]
    # Manifest first: if a crash follows, every dropped file is still found in the base.
    write_atomically(folder / MANIFEST, json.dumps({**manifest, "base": base}, indent=2, sort_keys=True) + "\n")
    for name in shared:
        (folder / name).unlink(missing_ok=True)
    for directory in sorted({p for name in shared for p in (folder / name).parents if folder in p.parents},
                            key=lambda p: len(p.parts), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()
    read_verified_manifest(folder, f"refit the bundle in {folder}")
    return shared
