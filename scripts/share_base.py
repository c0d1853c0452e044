"""Make a fitted variant bundle take the files it shares with a release from that release (its manifest's ``base``)
instead of shipping them twice.

    python scripts/share_base.py nas_envs/bundles/fbnet-mf-v1 --base fbnet-v1

Run it after the last ``nas-envs fit`` into the folder and before pinning the manifest's sha256.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nas_envs.fitting.release import share_files_with_base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the fitted bundle folder")
    parser.add_argument("--base", required=True, help="the released bundle it extends")
    args = parser.parse_args()
    shared = share_files_with_base(args.folder, args.base)
    print(f"{args.folder}: {len(shared)} files now read from {args.base}")


if __name__ == "__main__":
    main()
