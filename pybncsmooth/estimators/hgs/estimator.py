r"""HGS: hierarchical gradient smoothing (Zhang 2020, Ch. 5, eqs. 45-49, Algorithms 16-18).

A leaf ``l`` of the context tree (a parent configuration) is smoothed toward *all*
its ancestors at once, each ancestor ``p`` with a weight :math:`\alpha_p`:

.. math:: \hat\theta_{l,k} = \frac{n_{l,k} + \sum_{p \in anc(l)} \alpha_p \hat\theta_{p,k}}
                                  {n_{l,\cdot} + \sum_{p \in anc(l)} \alpha_p},
          \qquad \hat\theta_{p,k} = n_{p,k} / n_{p,\cdot}  \quad (45)

The weights minimise the leave-one-out loss of the training rows, which has a closed
form per leaf and class: leaving out a row of class ``k`` at leaf ``l`` removes it from
the leaf and from every ancestor,

.. math:: \theta^{LOO}_{l,k} = \frac{n_{l,k} - 1 + \sum_p \alpha_p \theta^{LOO}_{p,k}}
                                    {n_{l,\cdot} - 1 + \sum_p \alpha_p},
          \qquad \theta^{LOO}_{p,k} = \frac{n_{p,k} - 1}{n_{p,\cdot} - 1}  \quad (46)

and :math:`LOOCV(\alpha) = \frac1N \sum_{l,k} n_{l,k}\, \ell(\theta^{LOO}_{l,k})` with
:math:`\ell = -\log` (eq. 47) or :math:`(1 - \theta)^2` (the thesis's squared loss).
Its gradient (eqs. 48-49) is
:math:`\partial/\partial\alpha_p = \frac1N \sum_{l \in des(p)} \sum_k n_{l,k}\,
\ell'(\theta^{LOO}_{l,k}) (\theta^{LOO}_{p,k} - \theta^{LOO}_{l,k}) / D_l`, with
:math:`D_l` the denominator of (46).  The thesis descends it with a fixed step from
:math:`\alpha = 1`; here coordinate descent on :math:`u = \log \alpha` (the objective is
smooth there and positivity is free) takes safeguarded Newton steps one weight at a
time, compiled (:mod:`pybncsmooth.estimators.hgs._kernels`), from the same start to the
same optimum.

Details the thesis's decision trees do not meet and a CPT's context tree does:

* an ancestor whose only row is the one left out has no LOO estimate: it drops out of
  that row's sums (and a row alone in the whole tree carries no information; with
  ``pseudo_count=0`` neither does a row whose class no other row of its path shares, whose LOO
  probability is 0 for every weight);
* every node's own frequencies carry ``pseudo_count`` pseudo-counts (``c``) toward the
  uniform distribution (default 1): :math:`\hat\theta_{v,k} = (n_{v,k} + c/K) / (n_{v,\cdot}
  + c)` for the ancestors, and ``c/K`` added to the node's own counts in (45), so
  that no estimate is 0 where a level is unseen in a node (the thesis's decision-tree
  roots see every class; a CPT's contexts often do not, and a leaf pooled entirely to an
  ancestor with a zero, or kept alone, would give held-out rows probability 0).  The
  same pseudo-counts are in the leave-one-out terms (``n - 1`` for the row left out).
  ``pseudo_count=0`` is eq. (45) exactly.  The pseudo-counts are fixed, not learned:
  leave-one-out sends them to 0 whenever a level is unseen, the very case they are for;
* every internal node gets the estimate of (45) over its own ancestors (with the same
  weights), which answers parent configurations absent from the data (back-off);
* ``tying="level"`` (the default): one weight per tree depth instead of the thesis's one
  per internal node (``tying="node"``).  Measured over the ten UCI sets (5 x 2 CV,
  ``benchmarks/bench_hgs.py``, vignette 07), one weight per depth has the lower RMSE on
  9, 9, 10 and 8 of the 10 sets for TAN and kDB-1, -2, -3, the lower log loss on 8-9,
  and fits up to 12 times faster: the per-node weights overfit the leave-one-out loss
  of thin subtrees.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...counting.context_tree import ContextTree
from ...errors import ConvergenceWarning
from ...validation import Param
from ._kernels import hgs_minimize, hgs_newton_level
from ..base import Estimator, TreeEstimate, map_trees, register_estimator

__all__ = ["HGS", "HGSProblem"]


@dataclass
class HGSProblem:
    """The leave-one-out objective of one context tree, as a function of the weights.

    The weights are a flat vector: one per internal node, level by level, or one per
    internal level with ``tying="level"``; ``prior``: the pseudo-counts toward the
    uniform distribution in every node's own frequencies.
    """

    tree: ContextTree
    tying: str = "node"
    loss: str = "log"
    prior: float = 1.0

    def __post_init__(self) -> None:
        t = self.tree
        self.r = t.child_card
        self.depth = len(t.levels) - 1
        self.counts = [lev.counts.astype(np.float64) for lev in t.levels]
        self.totals = [c.sum(axis=1) for c in self.counts]
        self.N = float(self.totals[0].sum()) if self.totals else 0.0
        # ancestors of every leaf at each internal depth (indices into that level)
        anc = [np.arange(len(t.levels[-1].parent))]
        for i in range(self.depth, 0, -1):
            anc.append(t.levels[i].parent[anc[-1]])
        self.anc = anc[::-1][:-1]  # anc[j]: the leaf's ancestor at depth j, j < depth
        self.n_inner = [len(t.levels[j].parent) for j in range(self.depth)]
        self.offsets = np.concatenate([[0], np.cumsum(self.n_inner)]).astype(np.int64)
        self.size = self.depth if self.tying == "level" else int(sum(self.n_inner))
        nl = self.counts[-1]
        self.rows = nl  # n_{l,k}: the rows left out, one at a time
        self.use = nl > 0
        # LOO estimates of the ancestors for a left-out row of class k, and whether the
        # ancestor still has rows
        self.theta_p = []
        self.keep_p = []
        for j in range(self.depth):
            n_p = self.counts[j][self.anc[j]]  # (L, r)
            tot = self.totals[j][self.anc[j]][:, None] - 1.0 + self.prior
            keep = tot > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                th = np.where(keep, (n_p - 1.0 + self.prior / self.r) / np.where(keep, tot, 1.0), 0.0)
            self.theta_p.append(th)
            self.keep_p.append(np.broadcast_to(keep, th.shape))
        self.leaf_num0 = nl - 1.0 + self.prior / self.r
        self.leaf_den0 = self.totals[-1][:, None] - 1.0 + self.prior
        if self.loss == "log":
            # prior=0: a row whose class is alone in its leaf and in every ancestor has
            # leave-one-out probability 0 whatever the weights (an infinite loss that
            # tells nothing about them): such rows leave the objective
            informative = self.leaf_num0 > 0
            for th, kp in zip(self.theta_p, self.keep_p):
                informative = informative | (kp & (th > 0))
            self.rows = np.where(informative, nl, 0.0)
            self.use = self.rows > 0

    # ------------------------------------------------------------------ weights
    def expand(self, w: np.ndarray) -> list[np.ndarray]:
        """Per internal depth, the weight of every node of that level."""
        if self.tying == "level":
            return [np.full(self.n_inner[j], w[j]) for j in range(self.depth)]
        return [w[self.offsets[j] : self.offsets[j + 1]] for j in range(self.depth)]

    def weight_index(self, j: int) -> np.ndarray:
        """Index into the weights of each leaf's ancestor at depth ``j``."""
        return np.full(len(self.anc[j]), j, dtype=np.int64) if self.tying == "level" else self.offsets[j] + self.anc[j]

    # ------------------------------------------------------------------ objective
    def loo(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`\\theta^{LOO}_{l,k}` (eq. 46) and its denominator :math:`D_l` per leaf."""
        num, den = self.leaf_num0, self.leaf_den0
        for j in range(self.depth):
            aj = w[self.weight_index(j)][:, None]
            num = num + np.where(self.keep_p[j], aj * self.theta_p[j], 0.0)
            den = den + np.where(self.keep_p[j][:, :1], aj, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0 / self.r)
        return theta, den

    def value_and_grad(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """The mean LOO loss (eq. 47) and its gradient (eqs. 48-49) in the weights ``w``."""
        theta, den = self.loo(w)
        n = self.rows
        use = self.use & (den > 0)
        th = np.where(use, theta, 1.0)
        if self.loss == "log":
            terms = np.where(use, -n * np.log(th), 0.0)
            dl = np.where(use, -n / th, 0.0)  # d loss / d theta
        else:
            terms = np.where(use, n * (1.0 - th) ** 2, 0.0)
            dl = np.where(use, -2.0 * n * (1.0 - th), 0.0)
        scale = 1.0 / max(self.N, 1.0)
        wgt = dl * scale / np.where(den > 0, den, 1.0)  # d theta / d alpha_p = (theta_p - theta) / D
        grad = np.zeros(self.size)
        for j in range(self.depth):
            term = np.sum(np.where(self.keep_p[j], wgt * (self.theta_p[j] - theta), 0.0), axis=1)
            grad += np.bincount(self.weight_index(j), weights=term, minlength=self.size)
        return float(np.sum(terms)) * scale, grad

    # ------------------------------------------------------------------ estimates
    def estimates(self, w: np.ndarray) -> tuple[np.ndarray, ...]:
        """Eq. (45) at every node: each node smoothed toward all its ancestors, whose own
        frequencies (with ``prior`` pseudo-counts) are the bases."""
        a = self.expand(w)
        t = self.tree
        probs = []
        u = self.prior / self.r
        # running sums over the ancestors of each node of the current level
        num_anc = np.zeros((1, self.r))
        den_anc = np.zeros((1, 1))
        for i, lev in enumerate(t.levels):
            if i > 0:
                num_anc = num_anc[lev.parent]
                den_anc = den_anc[lev.parent]
            n = self.counts[i]
            tot = self.totals[i][:, None]
            den = tot + self.prior + den_anc
            with np.errstate(divide="ignore", invalid="ignore"):
                p = np.where(den > 0, (n + u + num_anc) / np.where(den > 0, den, 1.0), 1.0 / self.r)
            probs.append(p)
            if i < self.depth:
                ai = a[i][:, None]
                own = tot + self.prior
                with np.errstate(divide="ignore", invalid="ignore"):
                    base = np.where(own > 0, (n + u) / np.where(own > 0, own, 1.0), 0.0)
                num_anc = num_anc + np.where(own > 0, ai * base, 0.0)
                den_anc = den_anc + np.where(own > 0, ai, 0.0)
        return tuple(probs)


@register_estimator
class HGS(Estimator):
    """Hierarchical gradient smoothing (see the module documentation).  With
    ``tying="node"`` (the thesis's one weight per internal node) a fit stops when a sweep
    over the weights lowers the leave-one-out loss by less than ``tol`` (relative); with
    one weight per depth (joint Newton steps) when no weight's derivative (per row)
    exceeds ``tol``; or after ``max_iter`` sweeps or steps (a :class:`ConvergenceWarning`).
    ``pseudo_count=0`` is the thesis's eq. 45, where a level unseen in a context can get 0.
    ``n_jobs`` threads run over the nodes of a network."""

    name = "hgs"
    renamed = {"prior": "pseudo_count"}
    params = (
        Param("tying", "choice", "level", "one weight per depth, or one per internal node (the thesis's)",
              choices=("level", "node")),
        Param("loss", "choice", "log", "leave-one-out loss the weights minimise", choices=("log", "squared")),
        Param("pseudo_count", "float", 1.0,
              "pseudo-counts toward the uniform distribution in every node's frequencies"),
        Param("tol", "float", 1e-8, "stop when a sweep lowers the LOO loss by less than tol (relative)", strict=True),
        Param("max_iter", "int", 1000, "sweeps over the weights at most", low=1),
    )

    def fit_weights(self, tree: ContextTree) -> tuple[np.ndarray, HGSProblem, dict[str, Any]]:
        """The optimal weights of ``tree`` (compiled Newton steps on ``log alpha`` from the
        thesis's start ``alpha = 1``: jointly with one weight per depth, one weight at a
        time with one per node), its problem and the optimiser's report."""
        prob = HGSProblem(tree, self.tying, self.loss, self.pseudo_count)
        if prob.N <= 1 or prob.size == 0:  # a lone row, or no parent: nothing to learn
            return np.ones(prob.size), prob, {"iterations": 0, "converged": True, "loo_loss": float("nan")}
        d = prob.depth
        theta = np.ascontiguousarray(np.stack(prob.theta_p))  # (depth, L, r)
        keep = np.ascontiguousarray(np.stack([k[:, 0] for k in prob.keep_p]))  # (depth, L)
        n = np.ascontiguousarray(prob.rows)
        num0, den0 = np.ascontiguousarray(prob.leaf_num0), prob.leaf_den0[:, 0].copy()
        squared = self.loss == "squared"
        u = np.zeros(prob.size)
        if self.tying == "level":  # a few weights: Newton on all of them at once
            its, loss = hgs_newton_level(n, num0, den0, theta, keep, u, 1.0 / prob.N, squared, self.tol, self.max_iter)
            report = {"iterations": int(its), "converged": bool(its < self.max_iter), "loo_loss": float(loss)}
            return np.exp(u), prob, report
        w_depth = np.repeat(np.arange(d, dtype=np.int64), prob.n_inner)
        nodes = [np.arange(m) for m in prob.n_inner]  # the leaves below a node are contiguous
        w_lo = np.concatenate([np.searchsorted(prob.anc[j], nodes[j], "left") for j in range(d)]).astype(np.int64)
        w_hi = np.concatenate([np.searchsorted(prob.anc[j], nodes[j], "right") for j in range(d)]).astype(np.int64)
        widx = np.ascontiguousarray(np.stack([prob.weight_index(j) for j in range(d)]))
        A = num0 + (keep[:, :, None] * theta).sum(axis=0)  # alpha = 1
        D = den0 + keep.sum(axis=0)
        sweeps, loss = hgs_minimize(
            n, num0, den0, A, D, u, widx, w_depth, w_lo, w_hi, theta, keep, 1.0 / prob.N, squared, self.tol,
            self.max_iter,
        )  # fmt: skip
        report = {"iterations": int(sweeps), "converged": bool(sweeps < self.max_iter), "loo_loss": float(loss)}
        return np.exp(u), prob, report

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        w, prob, report = self.fit_weights(tree)
        info: dict[str, Any] = dict(report)
        info["alpha_levels" if self.tying == "level" else "alpha"] = w.copy()
        return TreeEstimate(prob.estimates(w), "backoff", info, posterior=self.bootstrap())

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        out = map_trees(self.estimate, trees, self.n_jobs)
        bad = [name for name, e in out.items() if not e.info.get("converged", True)]
        if bad:
            warnings.warn(
                f"HGS: the weights of {len(bad)} node(s) ({', '.join(map(repr, bad[:5]))}) reached max_iter "
                f"({self.max_iter} sweeps) before a sweep improved the loss by less than tol ({self.tol})",
                ConvergenceWarning,
                stacklevel=3,
            )
        return out
