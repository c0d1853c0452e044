"""Normalized scores: a result of any environment id on one scale, as offline-RL suites publish them.

Per registered id, two reference values fixed by the data its bundle was built from (D4RL's convention, with
"random" and "expert" read from measurements instead of policies):

- SurrNAS-DARTS and -FBNet ids (metric ``val_accuracy``): ``random`` is the measured mean validation accuracy of
  the uniformly random architectures trained on the CPU, ``best`` the best seed-mean validation accuracy of any
  architecture trained on the CPU, both among the lines of the collection file the bundle's default surrogate was
  fitted on. The value to normalize is an architecture's validation accuracy as a fraction: an episode's return
  with ``reward="accuracy"``, ``info["score"]``, or a search's incumbent.
- CitySeg/MOP ids (metric ``hypervolume``): ``random`` is the normalised hypervolume of the noise-free objectives of
  :data:`~nas_envs.benchmarks.base.REFERENCE_SIZE` uniformly random architectures (the fixed sample of
  :meth:`~nas_envs.benchmarks.base.Benchmark.random_reference`), ``best`` the best final hypervolume of the
  committed runs of six MOEAs with about as many evaluations (``docs/results/cityseg_moea6_31runs.jsonl``). The
  value to normalize is the hypervolume of a search's archive after about that many evaluations: the return of a
  budget's episodes with ``reward="hv"``.

``normalized_score(env_id, value) = (value - random) / (best - random)``: 0 for random, 1 for the best reference;
above 1 beats it. The values are generated into ``reference_scores.json`` beside this module (``python
scripts/reference_scores.py``), so reading them needs neither the data nor a model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

REFERENCE_FILE = "reference_scores.json"


@dataclass(frozen=True)
class ReferenceScores:
    """The two values that normalize a result of one environment id, and where they come from."""

    env_id: str
    bundle: str
    metric: str  # "val_accuracy" or "hypervolume": what the value to normalize is
    random: float
    best: float
    source: dict  # the file and lines (or runs) the two were read from, to check them against


@cache
def _references() -> dict[str, dict]:
    return json.loads((resources.files("nas_envs") / REFERENCE_FILE).read_text())["ids"]


def reference_scores(env_id: str) -> ReferenceScores:
    """The reference values of a registered environment id (see the module docstring for what they are)."""
    references = _references()
    if env_id not in references:
        raise ValueError(f"no reference scores for {env_id!r}; ids with them: {', '.join(references)}")
    return ReferenceScores(env_id=env_id, **references[env_id])


def normalized_score(env_id: str, value: "float | np.ndarray") -> "float | np.ndarray":
    """``value`` (a validation accuracy as a fraction, or a CitySeg hypervolume; one number or an array) on the
    scale where 0 is the id's random reference and 1 its best reference."""
    reference = reference_scores(env_id)
    values = np.asarray(value, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"value must be finite, got {value!r}")
    if reference.metric == "val_accuracy" and ((values < 0) | (values > 1)).any():
        raise ValueError(f"value must be a validation accuracy as a fraction in [0, 1] (as the environments' "
                         f"reward and info['score'] give it), got {value!r}")
    scores = (values - reference.random) / (reference.best - reference.random)
    return float(scores) if scores.ndim == 0 else scores
