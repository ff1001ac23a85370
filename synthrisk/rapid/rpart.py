"""A CART tree pruned the way R's rpart prunes (complexity parameter cp, default 0.01).

rpart keeps a split only if it lowers the tree's risk by at least cp times the root's risk: the
tree it returns is the minimal cost-complexity subtree at alpha = cp * R(root) (Breiman et al.
1984, ch. 3; rpart's vignette, section 4). Risk is the misclassification count for a class
(rpart's default loss; splits are still chosen by the Gini index) and the residual sum of squares
for a number. scikit-learn grows the same kind of tree, but its own `ccp_alpha` measures risk by
the splitting criterion (Gini), which keeps splits that change no prediction, so we grow the tree
with rpart's minsplit 20 / minbucket 7 / maxdepth 30 and do the weakest-link pruning here (a few
dozen lines; no maintained library does it on a scikit-learn tree).

Without pruning the tree grows to hundreds of leaves with near-0/1 class shares, and RAPID then
rewards its confidence rather than what it knows (issue #13 §4).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor


def pruned_leaves(left, right, risk, alpha: float) -> np.ndarray:
    """Boolean mask of the leaves of the smallest minimal cost-complexity subtree at `alpha`.

    `left`/`right` are the children (-1 for a leaf) and `risk` each node's risk as a leaf. Bottom
    up, a node is collapsed when R(node) + alpha is at most the best cost of keeping its split,
    cost(left) + cost(right), ties collapsed: the same subtree as CART's weakest-link pruning
    (Breiman et al. 1984, thm 3.10), in one pass instead of one pass per collapse.
    """
    n_nodes = len(left)
    cost = risk.astype(float) + alpha
    collapse = left < 0
    # Children have higher indices than their parent in scikit-learn's depth-first layout.
    for node in range(n_nodes - 1, -1, -1):
        if left[node] >= 0:
            keep = cost[left[node]] + cost[right[node]]
            collapse[node] = cost[node] <= keep + 1e-9 * max(abs(keep), 1.0)
            cost[node] = min(cost[node], keep)
    leaves = np.zeros(n_nodes, dtype=bool)
    stack = [0]
    while stack:
        node = stack.pop()
        if collapse[node]:
            leaves[node] = True
        else:
            stack += [left[node], right[node]]
    return leaves


class _RpartTree(BaseEstimator):
    def __init__(self, cp: float = 0.01, min_split: int = 20, min_bucket: int = 7, max_depth: int = 30,
                 random_state: int | None = None):
        self.cp, self.min_split, self.min_bucket = cp, min_split, min_bucket
        self.max_depth, self.random_state = max_depth, random_state

    def _grow(self, X, y):
        cls = DecisionTreeClassifier if isinstance(self, ClassifierMixin) else DecisionTreeRegressor
        self.tree_model_ = cls(min_samples_split=self.min_split, min_samples_leaf=self.min_bucket,
                               max_depth=self.max_depth, random_state=self.random_state).fit(X, y)
        tree = self.tree_model_.tree_
        risk = self._node_risk(tree)
        pruned_leaf = pruned_leaves(tree.children_left, tree.children_right, risk, self.cp * risk[0])
        # Each node of the grown tree answers with its deepest ancestor that is a pruned leaf.
        self.answer_ = np.arange(tree.node_count)
        for node in range(tree.node_count):  # parents come first
            for child in (tree.children_left[node], tree.children_right[node]):
                if child >= 0:
                    self.answer_[child] = self.answer_[node] if pruned_leaf[self.answer_[node]] else child
        self.n_leaves_ = int(pruned_leaf.sum())
        return self

    def _nodes(self, X) -> np.ndarray:
        return self.answer_[self.tree_model_.apply(X)]


class RpartClassifier(ClassifierMixin, _RpartTree):
    def _node_risk(self, tree) -> np.ndarray:
        shares = tree.value[:, 0, :]
        return tree.weighted_n_node_samples * (1.0 - shares.max(axis=1) / shares.sum(axis=1))

    def fit(self, X, y):
        self._grow(X, y)
        self.classes_ = self.tree_model_.classes_
        return self

    def predict_proba(self, X) -> np.ndarray:
        shares = self.tree_model_.tree_.value[self._nodes(X), 0, :]
        return shares / shares.sum(axis=1, keepdims=True)

    def predict(self, X) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class RpartRegressor(RegressorMixin, _RpartTree):
    def _node_risk(self, tree) -> np.ndarray:
        return tree.weighted_n_node_samples * tree.impurity  # residual sum of squares

    def fit(self, X, y):
        return self._grow(X, y)

    def predict(self, X) -> np.ndarray:
        return self.tree_model_.tree_.value[self._nodes(X), 0, 0]
