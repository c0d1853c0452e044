"""Doors for the tools NAS and RL people already run: each module imports its tool only when used, from the extra
that installs it."""
