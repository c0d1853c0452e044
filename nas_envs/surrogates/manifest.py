"""sha256 manifests: every model file is listed with its checksum and checked before it is used."""

from __future__ import annotations

import hashlib
import json
import pickle
import zipfile
from pathlib import Path

from nas_envs.files import write_atomically

MANIFEST = "manifest.json"
#: what reading a model file whose checksum matches but whose content is broken raises (numpy, torch, json, xgboost)
UNREADABLE = (ValueError, KeyError, IndexError, TypeError, OSError, RuntimeError, EOFError, zipfile.BadZipFile,
              pickle.UnpicklingError)


class AssetError(RuntimeError):
    """A bundled asset is missing or does not match its manifest."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(folder: Path, files: list[Path], **fields: object) -> Path:
    """Write ``folder/manifest.json`` with the sha256 of ``files`` (paths stored relative to ``folder``)."""
    entries = {str(Path(f).relative_to(folder)): sha256_file(Path(f)) for f in sorted(files)}
    text = json.dumps({**fields, "files": entries}, indent=2, sort_keys=True) + "\n"
    return write_atomically(folder / MANIFEST, text)


def read_verified_manifest(folder: Path, restore_hint: str) -> dict:
    """The manifest of ``folder`` after checking every listed file; raise :class:`AssetError` otherwise."""
    path = folder / MANIFEST
    if not path.is_file():
        raise AssetError(f"missing {path}. {restore_hint}")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise AssetError(f"corrupted {path} ({error.msg}). {restore_hint}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise AssetError(f"corrupted {path}: it lists no files with their sha256. {restore_hint}")
    for name, expected in manifest["files"].items():
        file = folder / name
        if not file.is_file():
            raise AssetError(f"missing model file {file} (listed in {path}). {restore_hint}")
        actual = sha256_file(file)
        if actual != expected:
            raise AssetError(
                f"corrupted model file {file}: sha256 {actual[:12]}... does not match the manifest's "
                f"{expected[:12]}.... {restore_hint}"
            )
    return manifest


def require_listed(manifest: dict, folder: Path, names: "list[str]", restore_hint: str) -> None:
    """Refuse to load a file of ``folder`` that its manifest does not list (and so did not check)."""
    unlisted = sorted(set(names) - set(manifest["files"]))
    if unlisted:
        raise AssetError(f"{folder}: {', '.join(unlisted)} not listed in {folder / MANIFEST}, so the sha256 "
                         f"cannot be checked. {restore_hint}")


def checked_file(path: Path) -> Path:
    """``path`` after checking it against the ``manifest.json`` of its folder, when that manifest lists it (the
    committed data assets: the CitySeg supernet checkpoint and latency tables). A listed file that changed is
    refused; files of folders without a manifest (one's own runs) are used as they are."""
    manifest = path.parent / MANIFEST
    if manifest.is_file():
        expected = json.loads(manifest.read_text()).get("files", {}).get(path.name)
        if expected is not None and path.is_file() and sha256_file(path) != expected:
            raise AssetError(f"{path} does not match the sha256 in {manifest}: it is not the committed file. "
                             "Restore it from version control, or rebuild it with the command that writes it "
                             "(which records its new checksum).")
    return path


def record_file(path: Path) -> None:
    """Record ``path``'s sha256 in its folder's ``manifest.json``, if that folder keeps one (after a command
    rewrote a committed asset on purpose)."""
    manifest = path.parent / MANIFEST
    if manifest.is_file():
        entries = json.loads(manifest.read_text())
        entries.setdefault("files", {})[path.name] = sha256_file(path)
        write_atomically(manifest, json.dumps(entries, indent=2, sort_keys=True) + "\n")
