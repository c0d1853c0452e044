"""Where the surrogate bundles and the ground-truth data live.

- **Bundles** (fitted models, cost and latency tables, each folder with a ``manifest.json`` of sha256 sums) ship
  inside the package, ``nas_envs/bundles/<name>/``, and are read through :mod:`importlib.resources`, so a wheel
  works outside any checkout. Every released bundle is pinned by the sha256 of its manifest
  (:data:`RELEASED_BUNDLES`): a registered environment id always returns the numbers it returned when it was
  released, and a refit ships as a new bundle and a new id version beside the old ones.
- **Ground-truth data** (``assets/data/*.jsonl``: the real trainings the bundles were fitted on) lives in the
  repository only; commands that need it (``collect``, ``fit``, ``data-card``, ``evaluate-surrogate``) say so
  when it is absent.
- **Manifests** (``manifest.json``): every file of a bundle, and of the committed data assets that keep one, is
  listed with its sha256 and checked before it is used. A bundle may take files unchanged from an earlier release,
  its manifest's ``base`` (``darts-mf-v0`` adds a learning-curve model to ``darts-v0``'s): a listed file that its
  folder lacks is read from the base's folder, and checked against the bundle's own manifest.
- ``NAS_ENVS_ASSETS`` overrides both: a folder holding ``data/`` (for example a copy with more data) and, where
  present, ``models/<bundle name>/``. Released bundles read from there are still checked against their pins.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import zipfile
from collections.abc import Iterable
from functools import cached_property
from importlib import resources
from pathlib import Path

from nas_envs.catalogue import FamilyField
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
    base = manifest.get("base")
    if base is not None and (not isinstance(base, str) or base not in RELEASED_BUNDLES):
        raise AssetError(f"{path} names {base!r} as its base, which is not a released bundle "
                         f"({sorted(RELEASED_BUNDLES)}). {restore_hint}")
    for name, expected in manifest["files"].items():
        file = _located(folder, base, name)
        if not file.is_file():
            raise AssetError(f"missing model file {file} (listed in {path}). {restore_hint}")
        actual = sha256_file(file)
        if actual != expected:
            raise AssetError(
                f"corrupted model file {file}: sha256 {actual[:12]}... does not match the manifest's "
                f"{expected[:12]}.... {restore_hint}"
            )
    return manifest


def _located(folder: Path, base: str | None, name: str) -> Path:
    """Where the listed file ``name`` of the bundle in ``folder`` lives: there, or in its ``base`` release's folder."""
    own = folder / name
    return own if base is None or own.exists() else resolve_bundle(base)[0] / name


def bundle_file(folder: Path, name: str) -> Path:
    """The path of the file ``name`` of the bundle in ``folder`` (in its base release's folder if it takes the file
    from there; see the module docstring)."""
    own = folder / name
    if own.exists() or not (folder / MANIFEST).is_file():
        return own
    return _located(folder, json.loads((folder / MANIFEST).read_text()).get("base"), name)


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


ASSETS_VARIABLE = "NAS_ENVS_ASSETS"
REPO_ASSETS = Path(__file__).resolve().parent.parent / "assets"

#: Released bundles: name -> sha256 of its manifest.json. Never edit an entry: release a new name instead.
RELEASED_BUNDLES: dict[str, str] = {
    "darts-v0": "b9b662231ef5fac124e2efea9a476c34077f2cc89e76c99046f9771300e86e8b",
    "darts-mf-v0": "b41f7d4c93400d118ffab627de6c677cffa62c8c9ce0f69fc715d6cb4eb4f473",
    "darts-v1": "822e18f904722aca290058cb9232c68f0ebbd0308592578d13064dbb977bd378",
    "darts-mf-v1": "0aebbabbcea7e629ddc944efd6d070a9d6f7ee603a6aec4348fc84b1dab901ab",
    "fbnet-mf-v1": "bd11b4ac901fcb7ea1e5e73e029e65f8e8f5260ca8b94258a76e86e91c4844a9",
    "fbnet-v0": "271c2c1f5ba270dfb57c49472b61cca9b70b671523359277c022f4a72e4907a1",
    "fbnet-v1": "cc647543c4cc4a5f39027bcb08b5f29abdc5c77329564c3ae43c8f35f8a37112",
    "cityseg-v0": "41f6bd20d45e261a287c56f7d297a6e26644b81a84ec152a28d980c1534c6d7d",
}
#: The bundle a space's benchmark uses when none is named: its family's newest release (read from the catalogue).
DEFAULT_BUNDLES = FamilyField("default_bundle")


def _override() -> Path | None:
    value = os.environ.get(ASSETS_VARIABLE)
    if value is None:
        return None
    if not value.strip():
        raise AssetError(f"{ASSETS_VARIABLE} is set but empty; unset it, or set it to a folder holding data/ and "
                         "models/<bundle>/")
    return Path(value)


def assets_dir() -> Path:
    """The folder holding ``data/`` (and, with the override, ``models/``): ``NAS_ENVS_ASSETS`` or the checkout's
    ``assets/``."""
    return _override() or REPO_ASSETS


def data_path(protocol: str) -> Path:
    """The collection file of a ground-truth protocol (in a checkout or under ``NAS_ENVS_ASSETS``)."""
    return assets_dir() / "data" / f"{protocol}.jsonl"


def require_data(path: Path) -> Path:
    """``path`` if it exists; otherwise an error that says where the training data comes from."""
    if path.exists():
        return path
    if not REPO_ASSETS.is_dir() and _override() is None:
        raise AssetError(
            f"{path.name}: the ground-truth trainings are not part of the installed package. Clone the repository "
            f"(its assets/data/ holds them) or set {ASSETS_VARIABLE} to a folder whose data/ holds {path.name}."
        )
    raise AssetError(f"missing data file {path}")


def packaged_bundle(name: str) -> Path:
    """The folder of a bundle shipped inside the package."""
    return Path(str(resources.files("nas_envs") / "bundles" / name))


def check_bundle_argument(bundle: object) -> None:
    """Refuse a ``bundle`` that is neither a name nor a path (``""``, ``123``, a list) where it is given."""
    if isinstance(bundle, bool) or not isinstance(bundle, (str, os.PathLike)) or not str(bundle).strip():
        raise ValueError(f"bundle must be a released bundle's name ({sorted(RELEASED_BUNDLES)}) or the path of a "
                         f"bundle folder written by 'nas-envs fit'; got {bundle!r}")


def resolve_bundle(bundle: str | os.PathLike) -> tuple[Path, str | None]:
    """``(folder, pinned manifest sha256 or None)`` of a released bundle name or of a bundle folder of one's own.

    A name is looked up under ``NAS_ENVS_ASSETS/models/`` when the override holds it, in the package otherwise.
    A folder (a path, e.g. the output of ``nas-envs fit``) is used as it is, without a pin.
    """
    check_bundle_argument(bundle)
    if isinstance(bundle, str) and bundle in RELEASED_BUNDLES:
        override = _override()
        folder = override / "models" / bundle if override is not None else None
        return (folder if folder is not None and folder.is_dir() else packaged_bundle(bundle)), RELEASED_BUNDLES[bundle]
    folder = Path(bundle)
    if isinstance(bundle, str) and os.sep not in bundle and not folder.exists():
        raise ValueError(f"unknown bundle {bundle!r}; released: {sorted(RELEASED_BUNDLES)}, or the path of a "
                         "bundle folder written by 'nas-envs fit'")
    return folder, None


def check_bundle_space(folder: Path, manifest: dict, space: str) -> None:
    """Refuse a bundle fitted for another space (or another kind of benchmark) than the one opening it: its
    manifest names its space (CitySeg's, which predates the field, holds the problems' ``bounds`` instead)."""
    held = manifest.get("space") or ("cityseg" if "bounds" in manifest else None)
    if held != space:
        releases = sorted(name for name in RELEASED_BUNDLES if name.startswith(f"{space}-"))
        what = f"a {held} bundle" if held else "not a bundle nas-envs wrote (its manifest names no space)"
        raise ValueError(f"{folder} is {what}; a {space} benchmark needs a {space} bundle: {releases} or a folder "
                         f"written by 'nas-envs fit {space}'")


def read_bundle_json(folder: Path, name: str, hint: str) -> dict:
    """A JSON file of a verified bundle, or an :class:`AssetError` that names it and says what is wrong."""
    try:
        return json.loads(bundle_file(folder, name).read_text())
    except (ValueError, UnicodeDecodeError) as error:
        raise AssetError(f"{bundle_file(folder, name)} could not be read as JSON ({error}). {hint}") from None


def restore_hint(folder: Path, released: bool) -> str:
    """What to do about a missing or corrupted bundle file, for the kind of folder it is."""
    if released:
        return (f"{folder} is a released bundle: reinstall nas-envs (pip install --force-reinstall nas-envs), or "
                "restore it from version control in a checkout.")
    return f"Refit the bundle with 'nas-envs fit ... --out {folder}'."


def check_pin(folder: Path, expected: str | None) -> None:
    """Refuse a released bundle whose manifest is not the one it was released with."""
    if expected is None:
        return
    actual = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()
    if actual != expected:
        raise AssetError(
            f"{folder / MANIFEST} (sha256 {actual[:12]}...) is not the released manifest ({expected[:12]}...): a "
            "released bundle never changes. Restore it, and ship a refit as a new bundle, loaded with "
            "bundle='<folder>' or released under a new name and environment version."
        )


class Bundle:
    """A bundle opened by a benchmark of ``space``: a released name (pinned) or a folder of one's own. The manifest is
    read on first use and only after every listed file's sha256, the release pin and the manifest's space check."""

    def __init__(self, bundle: str | os.PathLike, space: str) -> None:
        self.folder, self.pin = resolve_bundle(bundle)
        self.space = space

    @property
    def hint(self) -> str:
        """What to do about one of its files that is missing or broken."""
        return restore_hint(self.folder, self.pin is not None)

    @cached_property
    def manifest(self) -> dict:
        manifest = read_verified_manifest(self.folder, self.hint)
        check_pin(self.folder, self.pin)
        check_bundle_space(self.folder, manifest, self.space)
        return manifest

    def require(self, names: Iterable[str]) -> None:
        """Refuse to go on unless the manifest lists (and so has checked) every one of ``names``."""
        require_listed(self.manifest, self.folder, list(names), self.hint)

    @property
    def manifest_sha256(self) -> str:
        """The sha256 of the verified manifest, which lists every file's sha256: what results computed on this
        bundle record, so that a rerun never mixes them with another bundle's."""
        _ = self.manifest
        return hashlib.sha256((self.folder / MANIFEST).read_bytes()).hexdigest()

    def read_json(self, name: str) -> dict:
        """A listed JSON file of the bundle."""
        self.require([name])
        return read_bundle_json(self.folder, name, self.hint)
