"""Search-space definitions: a leaf package (numpy only) that every other layer may import."""

from __future__ import annotations

from nas_envs.spaces.base import InvalidArchitectureError, SearchSpace


def get_space(name: str) -> SearchSpace:
    """A search space by name."""
    if name == "darts":
        from nas_envs.spaces.darts import DartsSpace

        return DartsSpace()
    if name == "fbnet":
        from nas_envs.spaces.fbnet import FBNetSpace

        return FBNetSpace()
    if name == "cityseg":
        from nas_envs.spaces.cityseg import CitySegSpace

        return CitySegSpace()
    raise ValueError(f"unknown search space {name!r}; allowed: darts, fbnet, cityseg")


__all__ = ["InvalidArchitectureError", "SearchSpace", "get_space"]
