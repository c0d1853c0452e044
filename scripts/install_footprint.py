"""Size and time of installing the wheel into fresh virtual environments: the core alone, and with extras.

    python scripts/install_footprint.py                 # core and [all]
    python scripts/install_footprint.py --extras plot rl

Prints one row per install: the seconds ``pip install`` took (with pip's cache as it is: run twice to compare warm
installs) and the size of the environment's site-packages. ``torch==2.13.0`` is named with any extra that pulls
torch, so that pip takes the CPU build.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH_EXTRAS = {"gin", "rl", "groundtruth", "all", "test"}


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extras", nargs="*", default=["all"], help="extras to measure beside the core")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(scratch), str(ROOT)], check=True)
        wheel = next(scratch.glob("nas_envs-*.whl"))
        print(f"wheel {wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB")
        print(f"{'install':<24} {'seconds':>8} {'site-packages (MiB)':>20}")
        for extra in [None, *args.extras]:
            venv = scratch / f"venv-{extra or 'core'}"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            requirement = str(wheel) if extra is None else f"{wheel}[{extra}]"
            command = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement]
            if extra in TORCH_EXTRAS:
                command.append("torch==2.13.0")
            started = time.perf_counter()
            subprocess.run(command, check=True)
            seconds = time.perf_counter() - started
            site = next((venv / "lib").glob("python*/site-packages"))
            print(f"{'nas-envs' if extra is None else f'nas-envs[{extra}]':<24} {seconds:>8.1f} "
                  f"{folder_bytes(site) / 2**20:>20.0f}")


if __name__ == "__main__":
    main()
