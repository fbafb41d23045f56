"""What the samplers' warm starts share (:meth:`Estimator.warm_started`): the previous
fit's tree of a node, where its nodes are in the updated tree, and the control variate that
corrects a short warm-started run with the kept estimate."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..counting.context_tree import ContextTree, TreeLevel

__all__ = ["control_variate", "counts_on", "kept_on", "kept_records", "node_map", "previous_tree", "with_counts"]


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


def counts_on(old: ContextTree, new: ContextTree) -> np.ndarray:
    """``old``'s counts at every node of ``new`` (flat, levels concatenated; a node
    ``old`` lacks has none): the previous rows laid out on the updated tree."""
    out = np.zeros((new.n_nodes, new.child_card), dtype=np.asarray(old.levels[0].counts).dtype)
    out[node_map(old, new)] = np.concatenate([lev.counts for lev in old.levels])
    return out


def kept_on(old: ContextTree, new: ContextTree, probs: tuple[np.ndarray, ...]) -> np.ndarray | None:
    """A previous estimate (``probs``, one array per level of ``old``) at every node of
    ``new`` (flat): a node ``old`` lacks takes its parent's row, the back-off its
    configuration got.  ``None`` when ``probs`` is not shaped like ``old``'s levels."""
    sizes = old.level_sizes()
    if len(probs) < len(sizes) or any(np.shape(p) != (m, old.child_card) for p, m in zip(probs, sizes)):
        return None
    out = np.full((new.n_nodes, new.child_card), np.nan)
    out[node_map(old, new)] = np.concatenate(probs[: len(sizes)])
    offs = new.level_offsets()
    for i in range(1, new.depth + 1):  # top-down: a parent's row is filled before its children's
        rows = np.arange(offs[i], offs[i + 1])
        miss = rows[np.isnan(out[rows, 0])]
        out[miss] = out[offs[i - 1] + new.levels[i].parent[miss - offs[i]]]
    return out


def control_variate(kept: np.ndarray, new_mean: np.ndarray, old_mean: np.ndarray, beta: float = 1.0) -> np.ndarray:
    r"""The update's estimate from the kept one and two coupled chains' averages:

    .. math:: \hat\theta_{A+B} = \bar\theta_{A+B} + \beta\,(\hat\theta_A - \bar\theta_A),

    where :math:`\hat\theta_A` is the previous fit's estimate (its long run on the old
    rows ``A``) and :math:`\bar\theta_{A+B}`, :math:`\bar\theta_A` the averages of two
    chains run together on all the rows and on ``A`` alone (common random numbers, same
    start), so that :math:`\bar\theta_{A+B} - \bar\theta_A` estimates the posterior's
    move with the Monte Carlo noise the chains share cancelled.  Written
    :math:`(\bar\theta_{A+B} - \bar\theta_A) + \beta\hat\theta_A + (1 - \beta)\bar\theta_A`,
    it moves a pooled estimate of the old posterior mean: with :math:`R` sweeps behind
    :math:`\hat\theta_A` and :math:`M` behind :math:`\bar\theta_A`, the
    precision weight :math:`\beta = R / (R + M)` pools the two (``beta = 1``: the plain
    control variate).  Unbiased for any ``beta`` when :math:`\hat\theta_A` and
    :math:`\bar\theta_A` estimate the same posterior mean.  A row with an entry at or
    below zero (a tiny probability moved by more than it holds) takes the ratio form
    :math:`\bar\theta_{A+B} (\hat\theta_A / \bar\theta_A)^\beta` instead, positive by
    construction; rows are renormalised to sum to 1; a row of ``kept`` that is NaN (no
    previous estimate there) is left as :math:`\bar\theta_{A+B}`."""
    out = new_mean + beta * (kept - old_mean)
    skip = np.isnan(kept).any(axis=1)
    out[skip] = new_mean[skip]
    bad = (out <= 0.0).any(axis=1)
    if bad.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = new_mean[bad] * (kept[bad] / old_mean[bad]) ** beta
        out[bad] = np.where(np.isfinite(ratio) & (ratio > 0.0), ratio, new_mean[bad])
    return out / out.sum(axis=1, keepdims=True)


def kept_records(info: Mapping) -> float | None:
    """The recorded sweeps behind a kept estimate (its Monte Carlo precision in sweeps):
    ``mc_records`` of an update's corrected estimate, else a fit's ``n_records``."""
    v = info.get("mc_records", info.get("n_records"))
    return float(v) if v is not None and float(v) > 0 else None


def with_counts(tree: ContextTree, flat: np.ndarray) -> ContextTree:
    """``tree``'s nodes with other counts (``flat``, levels concatenated: e.g. the old
    rows' :func:`counts_on` it), so that a sampler lays both out alike."""
    offs = tree.level_offsets()
    levels = tuple(TreeLevel(lev.parent, lev.value, flat[offs[i] : offs[i + 1]]) for i, lev in enumerate(tree.levels))
    return ContextTree(tree.child, tree.parents, tree.child_card, tree.parent_cards, levels)
