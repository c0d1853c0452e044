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

#: the deepest trees read: a tree's complete layout takes 2 ** depth slots
MAX_DEPTH = 10


class ForestEnsemble:
    """The members of an ensemble of XGBoost models (objective ``reg:squarederror``).

    ``predict(X)`` returns the ``(N, members)`` matrix of member predictions.
    """

    #: batches of at least this many rows go to the merged XGBoost model
    large_batch = 16

    def __init__(self, models: Sequence[dict]) -> None:
        self._models = models
        features: list[np.ndarray] = []
        conditions: list[np.ndarray] = []
        lefts: list[np.ndarray] = []
        rights: list[np.ndarray] = []
        roots: list[int] = []
        tree_member: list[int] = []
        self.base_scores = np.empty(len(models), dtype=np.float64)
        self.num_features = None
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
                lefts.append(np.where(left < 0, -1, left + offset))
                right = np.asarray(tree["right_children"], dtype=np.int64)
                rights.append(np.where(right < 0, -1, right + offset))
                features.append(np.asarray(tree["split_indices"], dtype=np.int64))
                conditions.append(np.asarray(tree["split_conditions"], dtype=np.float32))
                roots.append(offset)
                tree_member.append(member)
                offset += len(left)
        left, right = np.concatenate(lefts), np.concatenate(rights)
        feature, condition = np.concatenate(features), np.concatenate(conditions)
        position, depth = _heap_positions(left, right, np.asarray(roots, dtype=np.int64))
        self._depth = int(depth.max())
        # The trees are laid out complete, together as one heap: level L of every tree is one block of T * 2 ** L
        # slots (T trees, tree t's from t * 2 ** L on, its roots the block [T, 2T)), so that the children of slot g
        # are 2g and 2g + 1 whatever the tree. A prediction walks slots without reading child links, one level of
        # every tree at a time, over two narrow arrays that stay in cache (a one-row prediction reads scattered
        # slots). A leaf above the last level fills its leftmost slot below, and the slots on the way test nothing.
        trees, last = len(roots), self._depth
        tree = np.repeat(np.arange(trees), np.diff([*roots, len(left)]))
        internal = left >= 0
        # The trees share few distinct tests (feature, threshold): each row evaluates every distinct test once and
        # a slot reads its test's outcome. Test 0 is always false (NaN threshold).
        tests, test_of_node = np.unique(np.stack([feature[internal].astype(np.float64),
                                                  condition[internal].astype(np.float64)], axis=1),
                                        axis=0, return_inverse=True)
        self._test_feature = np.concatenate([[0], tests[:, 0]]).astype(np.int64)
        self._test_threshold = np.concatenate([[np.nan], tests[:, 1]]).astype(np.float32)
        slot = (trees + tree - 1) * 2**depth + position  # a node's slot at its own level
        self._tests = np.zeros(trees * 2**last, dtype=np.min_scalar_type(len(self._test_feature)))
        self._tests[slot[internal]] = test_of_node.reshape(-1) + 1
        leaf = ~internal
        self._leaf_value = np.zeros(trees * 2**last, dtype=np.float32)  # XGBoost stores float32 leaves
        # a leaf's leftmost slot on the last level, counted from that level's first
        self._leaf_value[(slot[leaf] << (last - depth[leaf])) - trees * 2**last] = condition[leaf]
        self._roots = np.arange(trees, 2 * trees)
        self._root_tests = self._tests[self._roots] if last else None
        self._leaf_start = trees * 2**last
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
        """Every tree of every member evaluated at once with numpy (fast for a few rows): the distinct tests of
        every row first, then every tree of every row descends the heap one level at a time, reading row ``r``'s
        outcomes from ``r * tests`` on."""
        x = np.asarray(x, dtype=np.float32)
        trees = len(self._roots)
        outcomes = (x[:, self._test_feature] >= self._test_threshold).reshape(-1)
        if len(x) == 1:  # an environment's evaluation: no row offsets to add
            slot = self._roots
            if self._depth:
                slot = 2 * slot + outcomes[self._root_tests]
            for _ in range(self._depth - 1):
                slot = 2 * slot + outcomes[self._tests[slot]]
        else:
            slot = np.tile(self._roots, len(x))
            offset = np.repeat(np.arange(len(x)) * len(self._test_feature), trees)
            for _ in range(self._depth):
                slot = 2 * slot + outcomes[offset + self._tests[slot]]
        leaves = self._leaf_value[slot - self._leaf_start].astype(np.float64).reshape(len(x), trees)
        return np.add.reduceat(leaves, self._member_starts, axis=1) + self.base_scores


def _heap_positions(left: np.ndarray, right: np.ndarray, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every node's slot in its tree's complete layout (root 1, children of p at 2p and 2p + 1) and its depth,
    one level of all trees at a time (``left``/``right``: global child numbers, -1 at leaves). Trees deeper than
    :data:`MAX_DEPTH` are refused."""
    position = np.zeros(len(left), dtype=np.int64)
    depth = np.zeros(len(left), dtype=np.int64)
    position[roots] = 1
    level, frontier = 0, roots
    while len(frontier):
        parents = frontier[left[frontier] >= 0]
        level += 1
        if len(parents) and level > MAX_DEPTH:
            raise ValueError(f"trees of depth at most {MAX_DEPTH} are supported (a tree takes 2 ** depth slots of "
                             f"the complete layout), got depth {level}: fit with a smaller max_depth")
        for child, turn in ((left[parents], 0), (right[parents], 1)):
            position[child] = 2 * position[parents] + turn
            depth[child] = level
        frontier = np.concatenate([left[parents], right[parents]])
    return position, depth
