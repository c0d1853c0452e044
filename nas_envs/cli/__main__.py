"""``python -m nas_envs.cli``: the ``nas-envs`` command."""

import sys

from nas_envs.cli import main

sys.exit(main())
