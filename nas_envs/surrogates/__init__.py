"""Surrogate models: from architecture features to metrics.

Nothing here knows a search space: callers pass feature matrices (and graphs) built by the spaces' encodings.
"""
