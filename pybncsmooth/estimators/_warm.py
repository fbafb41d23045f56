"""What the samplers' warm starts share (:meth:`Estimator.warm_started`): the previous
fit's tree of a node, and where its nodes are in the updated tree."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..counting.context_tree import ContextTree

__all__ = ["node_map", "previous_tree"]


def node_map(old: ContextTree, new: ContextTree) -> np.ndarray:
    """The flat index (levels concatenated) in ``new`` of every node of ``old``, in
    ``old``'s flat order (``new`` has every node ``old`` has: a merge only adds)."""
    sizes = new.level_sizes()
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    out = [np.zeros(1, dtype=np.int64)]
    here = np.zeros(1, dtype=np.int64)
    for i in range(1, old.depth + 1):
        lev = old.levels[i]
        q = here[lev.parent] * old.parent_cards[i - 1] + lev.value
        pos = np.searchsorted(new.keys[i], q)
        if len(q) and (pos.max() >= sizes[i] or not np.array_equal(new.keys[i][pos], q)):
            raise ValueError("the updated tree lacks a node of the previous one")
        out.append(offs[i] + pos)
        here = pos
    return np.concatenate(out)


def previous_tree(previous: Mapping[str, tuple] | None, name: str, tree: ContextTree, key: str) -> tuple | None:
    """The previous fit's tree of ``name`` cut to ``tree``'s parents (a multi-domain fit's
    pooled tree) and its estimate's ``info``, when that estimate kept ``key`` and the
    tree's parents and levels did not change (a new level: ``None``, a fresh start)."""
    prev = (previous or {}).get(name)
    if prev is None:
        return None
    old_tree, est = prev
    if key not in est.info or old_tree.depth < tree.depth:
        return None
    old_tree = old_tree.truncate(tree.depth)
    if (old_tree.parents, old_tree.parent_cards, old_tree.child_card) != (tree.parents, tree.parent_cards,
                                                                          tree.child_card):
        return None
    return old_tree, est.info
