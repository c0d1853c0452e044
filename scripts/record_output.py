"""Run a command and record what it printed, for the generated pages of docs/ that show it.

    python scripts/record_output.py NAME -- COMMAND [ARGS ...]
    python scripts/record_output.py NAME --shell "for a in rs re; do ...; done; nas-envs plot ..."

Writes ``docs/results/outputs/NAME.json``: the command as given, its standard output, the date, the commit of the
checkout (with ``+changes`` when its code, :data:`CODE`, had uncommitted changes) and the machine.
``python scripts/build_docs.py`` puts it into the pages whose templates name it (``{{output NAME}}``); a page never
shows a number that no recorded command printed. The command runs from the repository root; it must succeed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import date
from pathlib import Path

from nas_envs.files import write_atomically

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ROOT / "docs" / "results" / "outputs"
CODE = ("nas_envs", "scripts", "studies", "pyproject.toml")


def machine() -> str:
    """The CPU model and the number of cores the command could use."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores"


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    # the code that makes outputs: a figure rewritten by an earlier recording is not a change of the code
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *CODE], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
    return f"{head}+changes" if changed else head


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the recording's name, as templates refer to it")
    parser.add_argument("--shell", help="a shell command line (loops, several commands)")
    parser.add_argument("--out-dir", type=Path, default=OUTPUTS, help="where recordings go (default: %(default)s)")
    args, command = parser.parse_known_args(argv)
    command = command[1:] if command[:1] == ["--"] else command
    if bool(args.shell) == bool(command):
        parser.error("give either --shell 'COMMAND LINE' or -- COMMAND [ARGS ...]")
    shown = args.shell or shlex.join(command)
    recorded = {"command": shown, "date": date.today().isoformat(), "commit": commit(), "machine": machine()}
    done = subprocess.run(["bash", "-c", args.shell] if args.shell else command, cwd=ROOT, stdout=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"record_output: {shown!r} failed with exit status {done.returncode}; nothing recorded")
    recorded["output"] = done.stdout
    path = write_atomically(args.out_dir / f"{args.name}.json", json.dumps(recorded, indent=1) + "\n")
    print(f"recorded {path}")


if __name__ == "__main__":
    main()
