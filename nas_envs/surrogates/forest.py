"""Fast inference for ensembles of XGBoost regression trees, read from XGBoost's JSON model files.

Two paths give the same predictions (tested against ``xgboost.Booster.predict``):

- small batches (an environment scoring one architecture): every tree of every member is evaluated at once with
  numpy. XGBoost's own ``predict`` has a fixed cost per call and member whatever the model size, which would
  dominate an episode; this path costs about one such call for the whole ensemble (``python
  scripts/env_speed.py`` measures both).
- large batches, where XGBoost is installed (it is optional: ``pip install 'nas-envs[xgboost]'``): the members
  are merged into one multi-target XGBoost model (member ``k`` = output ``k``, via the format's ``tree_info``) and
  predicted with a single ``inplace_predict`` call, which walks trees in C++ (``python scripts/env_speed.py``
  compares both paths).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from nas_envs.extras import available

_HAVE_XGBOOST = available("xgboost")

class ForestEnsemble:
    """The members of an ensemble of XGBoost models (objective ``reg:squarederror``).

    ``predict(X)`` returns the ``(N, members)`` matrix of member predictions.
    """

    #: batches of at least this many rows go to the merged XGBoost model
    large_batch = 16

    def __init__(self, models: Sequence[dict]) -> None:
        self._models = models
        features: list[np.ndarray] = []
        thresholds: list[np.ndarray] = []
        children: list[np.ndarray] = []
        values: list[np.ndarray] = []
        roots: list[int] = []
        tree_member: list[int] = []
        self.base_scores = np.empty(len(models), dtype=np.float64)
        self.num_features = None
        depth = 0
        offset = 0
        for member, model in enumerate(models):
            learner = model["learner"]
            objective = learner["objective"]["name"]
            if objective != "reg:squarederror":
                raise ValueError(f"only reg:squarederror models are supported, got {objective!r}")
            self.base_scores[member] = float(learner["learner_model_param"]["base_score"].strip("[]"))
            self.num_features = int(learner["learner_model_param"]["num_feature"])
            if not learner["gradient_booster"]["model"]["trees"]:
                raise ValueError(f"member {member} of the ensemble has no trees")
            for tree in learner["gradient_booster"]["model"]["trees"]:
                left = np.asarray(tree["left_children"], dtype=np.int64)
                right = np.asarray(tree["right_children"], dtype=np.int64)
                leaf = left < 0
                own = np.arange(len(left))
                # Leaves point to themselves, so a fixed number of descents reaches every leaf.
                pair = np.stack([np.where(leaf, own, left), np.where(leaf, own, right)], axis=1) + offset
                children.append(pair.reshape(-1))
                features.append(np.where(leaf, 0, np.asarray(tree["split_indices"], dtype=np.int64)))
                condition = np.asarray(tree["split_conditions"], dtype=np.float32)
                thresholds.append(np.where(leaf, np.float32(np.inf), condition))
                values.append(np.where(leaf, condition, 0.0).astype(np.float64))
                roots.append(offset)
                tree_member.append(member)
                depth = max(depth, _tree_depth(left, right))
                offset += len(left)
        self._feature = np.concatenate(features)
        self._threshold = np.concatenate(thresholds).astype(np.float32)
        self._children = np.concatenate(children)
        self._value = np.concatenate(values)
        self._roots = np.asarray(roots, dtype=np.int64)
        self._depth = depth
        # a member's trees are consecutive: its sum is one segment of an add.reduceat
        self._member_starts = np.searchsorted(np.asarray(tree_member), np.arange(len(models)))
        self.num_members = len(models)

    @classmethod
    def from_files(cls, paths: Sequence[Path]) -> "ForestEnsemble":
        return cls([json.loads(Path(p).read_text()) for p in paths])

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.num_features:
            raise ValueError(f"expected features of shape (N, {self.num_features}), got {x.shape}")
        if len(x) >= self.large_batch and _HAVE_XGBOOST:
            return self.predict_merged(x)
        return self.predict_numpy(x)

    def predict_merged(self, x: np.ndarray) -> np.ndarray:
        """All members in one multi-target XGBoost model, one call."""
        out = self._merged_booster.inplace_predict(np.asarray(x, dtype=np.float32))
        return np.asarray(out, dtype=np.float64).reshape(len(x), self.num_members)

    @cached_property
    def _merged_booster(self):
        import xgboost as xgb

        merged = copy.deepcopy(self._models[0])
        trees: list[dict] = []
        tree_info: list[int] = []
        for member, model in enumerate(self._models):
            for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
                trees.append({**tree, "id": len(trees)})
                tree_info.append(member)
        booster_model = merged["learner"]["gradient_booster"]["model"]
        booster_model["trees"] = trees
        booster_model["tree_info"] = tree_info
        booster_model["gbtree_model_param"]["num_trees"] = str(len(trees))
        # member-major order: each "round" holds one tree of one member, so members may differ in tree count
        booster_model["iteration_indptr"] = list(range(len(trees) + 1))
        params = merged["learner"]["learner_model_param"]
        params["num_target"] = str(self.num_members)
        params["base_score"] = "[" + ",".join(f"{b:.9E}" for b in self.base_scores) + "]"
        booster = xgb.Booster(model_file=bytearray(json.dumps(merged).encode()))
        booster.set_param({"nthread": 1})
        return booster

    def predict_numpy(self, x: np.ndarray) -> np.ndarray:
        """Every tree of every member evaluated at once with numpy (fast for a few rows): one flat array of nodes
        over rows x trees, reading a flat copy of the rows (row ``r``'s features start at ``r * num_features``)."""
        x = np.asarray(x, dtype=np.float32)
        trees = len(self._roots)
        flat = x.reshape(-1)
        if len(x) == 1:  # an environment's evaluation: no row offsets to add
            node = self._roots
            for _ in range(self._depth):
                node = self._children[2 * node + (flat[self._feature[node]] >= self._threshold[node])]
        else:
            offset = np.repeat(np.arange(len(x)) * x.shape[1], trees)
            node = np.tile(self._roots, len(x))
            for _ in range(self._depth):
                node = self._children[2 * node + (flat[offset + self._feature[node]] >= self._threshold[node])]
        leaves = self._value[node].reshape(len(x), trees)
        return np.add.reduceat(leaves, self._member_starts, axis=1) + self.base_scores


def _tree_depth(left: np.ndarray, right: np.ndarray) -> int:
    depth = np.zeros(len(left), dtype=np.int64)
    for node in range(len(left)):  # XGBoost numbers children after their parents
        if left[node] >= 0:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    return int(depth.max())
