r"""Informative priors: an expert network's probabilities as the prior of a node's table.

A prior network :math:`P` with equivalent sample size ``w`` (``fit(..., prior=P,
prior_weight=w)``) enters every estimator that takes one through a node's *family
joint* :math:`P(x, \pi)` (the node and its parents, in the tree's branching order),
computed once by the fit (exact inference on :math:`P`, whatever its arcs) and held
here as a dense table.  From it every tree node of context :math:`c` (the first ``i``
parents) gets the pseudo-counts

.. math::
    a_c(x) = w\,P(x, c) \quad (\text{``network''}), \qquad
    a_c(x) = w\,P(x \mid c) \quad (\text{``configuration''}),

the first being pyAgrum's ``useDirichletPrior(P, w)`` (``w`` rows drawn from
:math:`P`: a context's pseudo-counts add up over its sub-contexts, and ``w`` is the
prior's weight in the whole network, as BDeu's ``iss``: the uniform network gives
:math:`a = w / (r q)`, BDeu itself), the second ``w`` pseudo-counts in every parent
configuration (a uniform :math:`P` gives the K2-like :math:`a = w / r`).  Where
:math:`P(c) = 0` for a whole parent configuration the conditional is the one the expert
states (its CPT's column, when the expert's node has exactly those parents): a
configuration the expert thinks impossible still has the expert's :math:`P(x \mid c)`;
where the expert states none (other arcs, a partial context) it is uniform.  Each
estimator says in its own documentation where the pseudo-counts go (``bayes``: its
Dirichlet parameters; ``mestimate``: its prior probabilities and weight; ``hdp``,
``hmd``, ``mbranch``: the root's base measure, :math:`P(x)` with strength ``w``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import numpy as np

from ..counting.context_tree import ContextTree, config_index
from ..errors import HyperparameterError

__all__ = ["NodePrior", "NetworkPrior", "PRIOR_PER"]

PRIOR_PER = ("network", "configuration")


@dataclass(frozen=True, eq=False)
class NodePrior:
    r"""The prior of one node's table: the family joint ``joint`` (axes: the parents in
    the tree's branching order, then the child; entries summing to 1), the weight ``w``
    and how it is spread (``per``: ``"network"`` or ``"configuration"``); ``stated``
    (same axes, or ``None``): the expert's own :math:`P(x \mid \pi)`, which answers
    the configurations of probability 0 under the expert (where the joint is 0)."""

    child: str
    parents: tuple[str, ...]
    joint: np.ndarray
    weight: float
    per: str = "network"
    stated: np.ndarray | None = field(default=None, repr=False)
    _levels: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.per not in PRIOR_PER:
            raise HyperparameterError(f"prior_per must be one of {PRIOR_PER}, not {self.per!r}")
        j = np.asarray(self.joint, dtype=np.float64)
        if j.ndim != len(self.parents) + 1 or not np.isfinite(j).all() or (j < 0).any() or j.sum() <= 0:
            raise HyperparameterError(f"the prior of node {self.child!r} is not a probability table")
        object.__setattr__(self, "joint", j / j.sum())
        if self.stated is not None:
            c = np.asarray(self.stated, dtype=np.float64)
            if c.shape != j.shape or not np.isfinite(c).all() or (c < 0).any():
                raise HyperparameterError(f"the stated conditional of node {self.child!r} is not a probability table")
            object.__setattr__(self, "stated", c)

    def _uniform_or_stated(self, level: int, q: int) -> np.ndarray:
        """``(q, r)``: what a context of probability 0 takes as its conditional: the
        stated one for whole configurations (normalised; uniform where it is all 0),
        uniform for partial contexts."""
        if self.stated is None or level != len(self.parents):
            return np.full((q, self.r), 1.0 / self.r)
        c = self.stated.reshape(q, self.r)
        tot = c.sum(axis=1, keepdims=True)
        return np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 1.0 / self.r)

    @property
    def r(self) -> int:
        return self.joint.shape[-1]

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(self.joint.shape[:-1])

    def marginal(self) -> np.ndarray:
        """:math:`P(x)`, the child's marginal: the base measure at the tree's root."""
        return self.joint.reshape(-1, self.r).sum(axis=0)

    def level_table(self, level: int) -> np.ndarray:
        r"""``(q_i, r)``, configuration-major over the first ``level`` parents: the
        pseudo-counts :math:`a_c(x)` of every context of that depth (see the module)."""
        if level not in self._levels:
            q = int(np.prod(self.cards[:level], dtype=np.int64)) if level else 1
            joint = self.joint.reshape(q, -1, self.r).sum(axis=1)
            if self.per == "network":
                table = self.weight * joint
            else:
                tot = joint.sum(axis=1, keepdims=True)
                cond = np.where(tot > 0, joint / np.where(tot > 0, tot, 1.0), self._uniform_or_stated(level, q))
                table = self.weight * cond
            self._levels[level] = table
        return self._levels[level]

    def conditional(self) -> np.ndarray:
        r"""``(q, r)``: :math:`P(x \mid \pi)` of every parent configuration (where
        :math:`P(\pi) = 0` the expert's stated one, else uniform): the prior mean of a
        configuration without data."""
        a = self.level_table(len(self.parents))
        tot = a.sum(axis=1, keepdims=True)
        return np.where(tot > 0, a / np.where(tot > 0, tot, 1.0), self._uniform_or_stated(len(self.parents), len(a)))

    def tree_pseudo_counts(self, tree: ContextTree) -> tuple[np.ndarray, ...]:
        """The pseudo-counts of every node of ``tree`` (one ``(n_nodes_i, r)`` array per
        level, the tree's node order)."""
        self.check_tree(tree)
        out = []
        for i in range(tree.depth + 1):
            table = self.level_table(i)
            if i == 0:
                out.append(table.copy())
                continue
            idx = config_index(tree.node_configs(i), tree.parent_cards[:i])
            out.append(table[idx])
        return tuple(out)

    def check_tree(self, tree: ContextTree) -> None:
        if (tree.child, tuple(tree.parents), tree.child_card, tuple(tree.parent_cards)) != (
            self.child, self.parents, self.r, self.cards
        ):
            raise HyperparameterError(
                f"the prior of node {self.child!r} is over {list(self.parents)} with levels {self.cards + (self.r,)}; "
                f"its context tree splits on {list(tree.parents)} with {tuple(tree.parent_cards) + (tree.child_card,)}"
            )

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"joint": self.joint, "weight": np.array(self.weight), "per": np.array(self.per),
               "parents": np.array(list(self.parents), dtype=str)}
        if self.stated is not None:
            out["stated"] = self.stated
        return out

    @classmethod
    def from_arrays(cls, child: str, arrays: Mapping[str, np.ndarray]) -> "NodePrior":
        parents = tuple(str(p) for p in np.atleast_1d(arrays["parents"])) if arrays["parents"].size else ()
        return cls(child, parents, arrays["joint"], float(arrays["weight"]), str(arrays["per"]),
                   stated=arrays.get("stated"))


class NetworkPrior:
    """The prior network as the estimators read it: the :class:`NodePrior` of any family
    (a node and its parents in a tree's branching order), computed on first use by
    ``provider(child, parents) -> joint`` (exact inference on the expert network, set
    up by the fit) and kept; ``weight``, ``per`` and ``source`` (where the prior came
    from, for reports).  A prior read back from a network file has the families of its
    trees only (``nodes``) and no provider."""

    def __init__(self, weight: float, per: str, source: str = "",
                 provider: Callable[[str, tuple[str, ...]], np.ndarray] | None = None,
                 nodes: Iterable[NodePrior] = ()) -> None:
        self.weight = float(weight)
        self.per = per
        self.source = source
        self._provider = provider
        self._nodes: dict[tuple[str, tuple[str, ...]], NodePrior] = {(p.child, p.parents): p for p in nodes}

    def for_tree(self, tree: ContextTree) -> NodePrior:
        """The prior of ``tree``'s family, checked against the tree's levels."""
        key = (tree.child, tuple(tree.parents))
        p = self._nodes.get(key)
        if p is None:
            if self._provider is None:
                raise HyperparameterError(
                    f"the prior holds no table of node {tree.child!r} given {list(tree.parents)} (a prior read back "
                    "from a file has the tables of its fit's trees only)"
                )
            got = self._provider(*key)  # the family joint, or (joint, the expert's stated conditional)
            joint, stated = got if isinstance(got, tuple) else (got, None)
            p = NodePrior(tree.child, key[1], joint, self.weight, self.per, stated=stated)
            self._nodes[key] = p
        p.check_tree(tree)
        return p

    def families(self) -> list[NodePrior]:
        """The families' priors computed so far (what a network file keeps)."""
        return list(self._nodes.values())

    def describe(self) -> dict:
        """What a network's ``info`` keeps of it."""
        return {"source": self.source, "weight": self.weight, "per": self.per}
