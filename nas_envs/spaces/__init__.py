"""Search-space definitions: a leaf package (numpy only, and the catalogue's names) that every other layer may
import."""

from __future__ import annotations

from nas_envs.spaces.base import InvalidArchitectureError, SearchSpace


def get_space(name: str) -> SearchSpace:
    """A search space by name (a family of :data:`nas_envs.catalogue.FAMILIES`)."""
    from nas_envs.catalogue import family, resolve

    return resolve(family(name).space)()


__all__ = ["InvalidArchitectureError", "SearchSpace", "get_space"]
