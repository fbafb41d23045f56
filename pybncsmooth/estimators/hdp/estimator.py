"""Hierarchical Dirichlet process smoothing of a context tree (Petitjean et al. 2018).

Model (Petitjean et al. 2018, Sec. 4.1): for child ``X`` and ordered parents, every tree node
holds a probability vector drawn around its parent's,

.. math::
    \\phi_{X} \\sim \\mathrm{Dir}(\\tfrac{1}{|X|}\\mathbf 1, \\alpha_0), \\quad
    \\phi_{X \\mid y, x_1 \\dots x_i} \\sim \\mathrm{Dir}(\\phi_{X \\mid y, x_1 \\dots x_{i-1}},
    \\alpha_{y, x_1 \\dots x_i}), \\quad
    \\theta_{X \\mid \\text{leaf}} \\sim \\mathrm{Dir}(\\phi_{\\text{parent}}, \\alpha_{\\text{leaf}}),

and the leaves' data are multinomial.  Inference is the collapsed Gibbs sampler
of Sec. 4.2-4.5: the vectors are integrated out and every count ``n[x]`` of a
node is augmented with a table count ``t[x]`` (``1 <= t <= n``) passed up to the
parent (eq. 9), sampled within a window of its current value from

.. math::
    P(t \\mid \\dots) \\propto \\alpha^{T} S^{n}_{t}\\,
    \\frac{S^{n_{\\mathrm{pa}}}_{t_{\\mathrm{pa}}}}{\\alpha_{\\mathrm{pa}}^{(N_{\\mathrm{pa}})}}

with unsigned Stirling numbers :math:`S` (Algorithms 3-4).  Tied concentrations
are resampled with the auxiliary-variable scheme of Zhang 2020 (Sec. 4.2.5,
Algorithm 14) under a Gamma(shape, rate) prior: :math:`q_j \\sim \\mathrm{Beta}(\\alpha, n_j)`,
:math:`\\alpha \\sim \\mathrm{Gamma}(\\text{shape} + \\sum_j t_j, \\text{rate} + \\sum_j \\log 1/q_j)`.
After burn-in, each sweep's estimates (eqs. 12-14)

.. math::
    \\hat\\phi_{x \\mid \\text{node}} = \\frac{n_x + \\alpha\\, \\hat\\phi_{x \\mid \\text{parent}}}{N + \\alpha}

are averaged.  Unseen parent configurations back off to the deepest existing
node, as the reference's query does.

Uncertainty (Petitjean et al. 2018, Sec. 4.1-4.2, and
:mod:`~pybncsmooth.estimators.hdp.posterior`).  Given a sweep's state the vectors are
Dirichlet top-down, :math:`\\phi_i \\mid \\phi_{pa} \\sim \\mathrm{Dir}(n_i + \\alpha\\,\\phi_{pa})`,
so each sweep contributes a node's conditional mean and second moment *with the
parent's own uncertainty* (:math:`E[a_k(a_k+1)] / (A(A+1))`,
:math:`a_k = n_k + \\alpha\\phi_{pa,k}`, computed top-down); the law of total variance
over the recorded sweeps gives the posterior sd (``cpt(node, stat="sd")``).  An
unseen configuration is a fresh node below the one it backs off to,
:math:`\\mathrm{Dir}(\\alpha_l\\,\\phi)` level after level: its sd is the hierarchy's
predictive spread (``unseen_sd``), not the node's.  ``record_states`` (default 100)
evenly spaced states of the sampler are kept (bounded memory) and drawn from by
``sample_parameters``, query intervals and ``cpt_frame(interval=)``.

Defaults are those of the authors' Java implementation except the number of sweeps:
2000 (the authors' 5000 with ``iterations=5000``; ``iterations="auto"`` stops on
R-hat and Monte-Carlo error), burn-in ``min(1000, iterations / 10)``, level tying, concentrations starting at 2 with a
Gamma(2, 1) prior, capped at 4000 and resampled every 5 sweeps, the root's kept
at its initial value, table counts moving within +-10 of their value, at most
10000, initialised by eq. 15.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...counting.context_tree import ContextTree
from ...errors import ConvergenceWarning, HyperparameterError
from ...validation import Param
from ._kernels import hdp_init, hdp_layout, hdp_schedule, hdp_sweeps, hdp_warm_init
from .._mcmc import chain_seed, entropy_of, progress_bar, split_rhat
from .._warm import control_variate, counts_on, kept_on, kept_records, node_map, previous_tree
from .._rng import new_state
from .._stirling import MAX_TABLE_N, MEMO_POOL, SHARED_RATIOS
from ..base import DeferredEstimate, Estimator, TreeEstimate, register_estimator
from .posterior import HDPPosterior, hdp_unseen_sd, unseen_weights
from ..hmd.backoff import centre_sd, learn_backoff
from ..posterior import DirichletPosterior, DirichletTablePosterior

__all__ = ["HDP", "split_rhat"]

_TYINGS = ("level", "single", "parent", "none")
_BLOCK = 250  # sweeps per compiled call when a progress bar is shown


@dataclass
class _TreeState:
    """Flat arrays of one context tree for the compiled sampler."""

    parent: np.ndarray
    lstart: np.ndarray
    leaf_counts: np.ndarray
    group: np.ndarray
    group_nodes: np.ndarray
    group_off: np.ndarray
    group_level: np.ndarray
    n_nodes: int
    r: int
    sched_i: np.ndarray
    sched_k: np.ndarray
    n_lim: int
    used: np.ndarray

    @classmethod
    def build(cls, tree: ContextTree, tying: str) -> "_TreeState":
        sizes = tree.level_sizes()
        lstart = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=lstart[1:])
        N, r, d = int(lstart[-1]), tree.child_card, tree.depth
        level_parent = (
            np.concatenate([lev.parent for lev in tree.levels[1:]]) if d else np.zeros(0, dtype=np.int64)
        )
        cards = np.asarray(tree.parent_cards, dtype=np.int64)
        parent, group, group_off, group_level, used = hdp_layout(level_parent, lstart, cards, _TYINGS.index(tying))
        leaf_counts = np.zeros((N, r), dtype=np.int64)
        leaf_counts[lstart[d] :] = tree.levels[d].counts
        group_nodes = np.arange(1, N, dtype=np.int64)  # every group is a run of consecutive nodes
        # the sweep's schedule of (node, value) pairs (see hdp_schedule), from every node's data counts
        data = np.concatenate([lev.counts for lev in tree.levels]).astype(np.int64, copy=False)
        sched_i, sched_k = hdp_schedule(data, parent, lstart)
        n_lim = _count_limit(tree)  # the exact Stirling ratios are used up to there
        return cls(
            parent, lstart, leaf_counts, group, group_nodes, group_off, group_level, N, r, sched_i, sched_k, n_lim, used
        )


def _count_limit(tree: ContextTree) -> int:
    """The extent of the exact Stirling ratio tables a tree needs: every count the
    sampler can meet below the root is at most a data count of its node (the root's own
    table count is 1, whose ratio needs no table), capped at the tables' size."""
    n_lim = 1
    for lev in tree.levels[1:]:
        if lev.counts.size:
            n_lim = max(n_lim, int(lev.counts.max()))
    return min(n_lim, MAX_TABLE_N)


def _trace_rows(events: int, every: int, thin: int) -> int:
    """Rows of a chain's trace of leaf draws (one every ``thin`` recorded sweeps; none
    with ``thin = 0``), for ``events`` concentration draws ``every`` sweeps apart."""
    return events * every // thin + 1 if thin else 0


#: a tree keeps at most max(STATE_VALUES, 2 x its entries) counts of recorded states
STATE_VALUES = 1 << 16


def _state_buffer(est: "HDP", st: _TreeState, burn: int, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The buffers of one chain's recorded states: ``record_states`` (shared among the
    chains, an even number per chain) of the internal nodes' counts and the
    concentrations, evenly spaced over the recorded sweeps (a fixed run's spacing is
    known; ``iterations="auto"`` starts at every sweep and doubles the spacing when the
    buffer fills).  Memory stays bounded: at most ``max(STATE_VALUES, 2 N r)`` counts
    per tree (``N r`` its entries; 32-bit: the states then take at most a third of the
    memory of the tree's estimate), whatever the run's length.  ``meta``: states held,
    spacing."""
    L = len(st.lstart) - 1
    leaf0 = int(st.lstart[L - 1]) if L >= 2 else 0
    per = leaf0 * st.r
    cap = 0
    if est.record_states and per:
        budget = max(STATE_VALUES, 2 * st.n_nodes * st.r)
        cap = max(2, est.record_states // est.n_chains)
        cap = min(cap, max(2, budget // (per * est.n_chains)))
        cap -= cap % 2
    spacing = 1
    if cap and not est.auto:
        spacing = max(1, -(-(int(est.iterations) - burn) // cap))
    dtype = np.int32 if int(st.leaf_counts.sum()) < 2**31 else np.int64
    return np.zeros((cap, leaf0, st.r), dtype=dtype), np.zeros((cap, G)), np.array([0, spacing], dtype=np.int64)


class _Chain:
    """One chain of the sampler on one tree: its state and accumulators, advanced by
    the compiled kernel a block of sweeps at a time."""

    def __init__(self, est: "HDP", st: _TreeState, seed: int, name: str, burn: int, events: int, thin: int,
                 root: tuple[float, np.ndarray, np.ndarray] | None = None) -> None:
        N, r = st.n_nodes, st.r
        #: the root's concentration, base measure and their product (an expert's, or c0 and 1 / r)
        self.c_root, self.root_h, self.root_ch = root if root is not None else est.root_base(None, r)
        self.est, self.st, self.name, self.burn, self.thin = est, st, name, burn, thin
        self.n = st.leaf_counts.copy()
        self.t = np.zeros((N, r), dtype=np.int64)
        self.nsum = np.zeros(N, dtype=np.int64)
        self.tsum = np.zeros(N, dtype=np.int64)
        self.rng = new_state(seed)
        hdp_init(self.n, self.t, self.nsum, self.tsum, st.parent, st.lstart, est.initial_concentration)
        G = len(st.group_off) - 1
        self.conc = np.full(G, est.initial_concentration)
        self.logc = np.log(self.conc)
        self.rtab, self.pcol, self.n_tab = SHARED_RATIOS.ensure(st.n_lim)
        self.ckeys, self.cvals = MEMO_POOL.acquire()  # a pure cache: given back by release() when done
        # per-node running sums; the parents' current estimates (pk) and the leaves' sums
        # through their parents (b1, b2) are indexed by internal nodes only, and the sums
        # of squares for the batch statistics (accsq) are kept with iterations="auto" only
        L = len(st.lstart) - 1
        inner = max(int(st.lstart[L - 1]) if L >= 2 else N, 1)
        self.acc, self.acc2 = np.zeros((N, r)), np.zeros((N, r))
        self.accsq = np.zeros((N, r) if est.auto else (1, r))
        self.pk, self.b1, self.b2 = np.zeros((inner, r)), np.zeros((inner, r)), np.zeros((inner, r))
        self.pk2, self.b3 = np.zeros((inner, r)), np.zeros((inner, r))
        # the states kept for posterior draws (see _state_buffer)
        self.state_n, self.state_c, self.state_meta = _state_buffer(est, st, burn, G)
        self.conc_trace = np.full((events, len(st.lstart) - 1), np.nan)
        n_leaf = int(st.lstart[-1] - st.lstart[-2])
        self.leaf_trace = np.zeros((_trace_rows(events, est.concentration_every, thin), n_leaf * r))
        self.it = self.n_rec = self.n_ev = self.n_draws = 0
        # a table count never exceeds the rows, so a wider window draws the same (and the
        # kernel's work arrays, 2 * window + 2 long, stay bounded)
        self.window = min(est.window, int(st.leaf_counts.sum()) + 1)
        #: 0: the draws come from ``rng`` in turn; else keyed by it (see :func:`hdp_sweeps`)
        self.key = np.uint64(0)
        #: the chain on the previous fit's rows of an update's control variate, and the
        #: previous estimate at every node (see HDP._old_chains)
        self.old = False
        self.kept: np.ndarray | None = None
        self.kept_records: float | None = None

    def resume(self, tree: ContextTree, old_tree: ContextTree, t_prev: np.ndarray, conc_prev: np.ndarray,
               c: int, maps: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start from the state a previous fit's chain ended in (its chain ``c``, or the
        last it had): the table counts of every node the previous tree had, kept where
        still valid (:func:`hdp_warm_init`), new nodes initialised by eq. 15; every
        concentration group takes the previous concentration of its first member the
        previous tree had (else ``initial_concentration``).  ``maps``: where the old
        nodes are and their old concentration groups, as a previous call returned them."""
        st, est = self.st, self.est
        k = min(c, t_prev.shape[0] - 1)
        idx, old_group = maps if maps is not None else _resume_maps(old_tree, tree, est.tying)
        prev = np.zeros((st.n_nodes, st.r), dtype=np.int64)
        has = np.zeros(st.n_nodes, dtype=np.bool_)
        prev[idx] = t_prev[k]
        has[idx] = True
        self.n[:] = st.leaf_counts
        self.t[:] = 0
        hdp_warm_init(self.n, self.t, self.nsum, self.tsum, st.parent, st.lstart, est.initial_concentration, prev, has)
        node_conc = np.full(st.n_nodes, np.nan)
        ok = old_group >= 0
        node_conc[idx[ok]] = np.asarray(conc_prev[k])[old_group[ok]]
        self.conc[:] = _first_per_group(node_conc, st.group_off, est.initial_concentration)
        self.logc[:] = np.log(self.conc)
        return idx, old_group

    def release(self) -> None:
        """Give the memo back to the pool (the chain runs no more sweeps)."""
        if self.ckeys is not None:
            MEMO_POOL.release((self.ckeys, self.cvals))
            self.ckeys = self.cvals = None

    def _grow_trace(self, sweeps: int) -> None:
        """Room in the concentrations' trace for the events of ``sweeps`` more sweeps."""
        need = self.n_ev + sweeps // self.est.concentration_every + 2
        if need > self.conc_trace.shape[0]:
            grow = np.full((need, self.conc_trace.shape[1]), np.nan)
            grow[: self.conc_trace.shape[0]] = self.conc_trace
            self.conc_trace = grow

    def advance(self, sweeps: int) -> None:
        """Run ``sweeps`` sweeps of the compiled sampler on this chain's state."""
        est, st = self.est, self.st
        self._grow_trace(sweeps)
        root_a = est.initial_concentration / st.r if est.root_tables == "integrated" else 0.0
        rec, ev, dr, bad = hdp_sweeps(
            self.rng, self.n, self.t, self.nsum, self.tsum, st.parent, st.lstart, st.group, self.conc, self.logc,
            self.c_root, st.group_nodes, st.group_off, st.group_level, st.sched_i, st.sched_k,
            self.it, sweeps, self.burn, est.concentration_every, self.window, est.max_tables, est.prior_shape,
            est.prior_rate, est.max_concentration, self.n_ev, self.rtab, self.pcol, self.n_tab, st.n_lim,
            self.ckeys, self.cvals, self.pk, self.pk2, self.acc, self.acc2, self.accsq, est.auto, self.b1,
            self.b2, self.b3, self.state_n, self.state_c, self.state_meta, self.conc_trace, self.leaf_trace,
            self.thin, est.debug, root_a, self.root_h, self.root_ch, self.key,
        )
        if bad >= 0:
            raise RuntimeError(
                f"HDP invariant violated at node {bad} of the context tree of {self.name!r} "
                f"after sweep {self.it + rec} (0 <= t <= n, t >= 1 where n >= 1, n = sum of children's t)"
            )
        self.n_rec += rec
        self.n_ev += ev
        self.n_draws += dr
        self.it += sweeps


def _resume_maps(old_tree: ContextTree, tree: ContextTree, tying: str) -> tuple[np.ndarray, np.ndarray]:
    """Where ``old_tree``'s nodes are in ``tree`` (flat) and their concentration groups
    in ``old_tree``'s layout (what :meth:`_Chain.resume` maps)."""
    level_parent = (np.concatenate([lev.parent for lev in old_tree.levels[1:]]) if old_tree.depth
                    else np.zeros(0, np.int64))
    old_lstart = old_tree.level_offsets()
    old_group = hdp_layout(level_parent, old_lstart, np.asarray(old_tree.parent_cards, dtype=np.int64),
                           _TYINGS.index(tying))[1]
    return node_map(old_tree, tree), old_group


def _first_per_group(node_values: np.ndarray, group_off: np.ndarray, default: float) -> np.ndarray:
    """Per concentration group (members: nodes ``group_off[g] + 1 .. group_off[g + 1]``),
    the value of its first member that has one (not NaN), else ``default``."""
    vals = node_values[1:]
    G = len(group_off) - 1
    out = np.full(G, float(default))
    if not G or not len(vals):
        return out
    pos = np.where(np.isfinite(vals), np.arange(len(vals)), len(vals))
    starts = group_off[:-1]
    nonempty = group_off[1:] > starts
    first = np.minimum.reduceat(np.append(pos, len(vals)), np.minimum(starts, len(vals)))[: G]
    hit = nonempty & (first < group_off[1:]) & (first < len(vals))
    out[hit] = vals[first[hit]]
    return out


class _Batches:
    """Batch sums of one chain's per-sweep estimates (every entry of every tree node):
    sums of ``v`` and ``v^2`` over batches of equal length, at most ``2 * keep`` of them
    (then neighbours merge and the length doubles), stored as float32 (the sums of a
    batch are accumulated in float64 by the kernel)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.s1: list[np.ndarray] = []
        self.s2: list[np.ndarray] = []
        self.length = 0  # sweeps per batch

    def add(self, d1: np.ndarray, d2: np.ndarray, length: int) -> None:
        self.length = length
        self.s1.append(d1.astype(np.float32))
        self.s2.append(d2.astype(np.float32))
        if len(self.s1) >= 2 * self.keep:
            self.s1 = [self.s1[i] + self.s1[i + 1] for i in range(0, len(self.s1), 2)]
            self.s2 = [self.s2[i] + self.s2[i + 1] for i in range(0, len(self.s2), 2)]
            self.length *= 2


def _auto_diagnostics(batches: list[_Batches]) -> tuple[np.ndarray, np.ndarray]:
    """Split-R-hat and Monte-Carlo standard error of every entry's posterior mean from
    the chains' batch sums (equal batches in every chain).

    R-hat (Gelman et al., split chains): each chain's batches are cut in two halves;
    with the halves' means :math:`\\mu_s` and within-half variances :math:`W_s` of the
    per-sweep estimates (from the sums of ``v`` and ``v^2``),
    :math:`\\hat R = \\sqrt{((n - 1)/n\\, W + B/n) / W}`, ``W`` the mean of :math:`W_s` and
    ``B/n`` the variance of :math:`\\mu_s`.  MCSE by batch means: with ``B`` batch means per
    chain of variance :math:`s_c^2`, :math:`\\mathrm{MCSE} = \\sqrt{\\sum_c s_c^2 / B} / m`.
    """
    m = len(batches)
    B = min(len(b.s1) for b in batches) // 2 * 2
    L = batches[0].length
    s1 = np.stack([np.stack(b.s1[-B:]) for b in batches]).astype(np.float64)  # (m, B, entries)
    s2 = np.stack([np.stack(b.s2[-B:]) for b in batches]).astype(np.float64)
    half = B // 2
    n = half * L
    h1 = np.concatenate([s1[:, :half].sum(axis=1), s1[:, half:].sum(axis=1)])  # (2m, entries)
    h2 = np.concatenate([s2[:, :half].sum(axis=1), s2[:, half:].sum(axis=1)])
    mu = h1 / n
    W = np.maximum((h2 - n * mu * mu) / (n - 1), 0.0).mean(axis=0)
    Bn = mu.var(axis=0, ddof=1)
    var_plus = (n - 1) / n * W + Bn
    with np.errstate(divide="ignore", invalid="ignore"):
        rhat = np.where(W > 1e-300, np.sqrt(var_plus / W), 1.0)
    bm = s1 / L  # batch means
    sc2 = bm.var(axis=1, ddof=1)  # (m, entries)
    mcse = np.sqrt(sc2.sum(axis=0) / B) / m
    return rhat, mcse


@register_estimator
class HDP(Estimator):
    """HDP estimates of every context-tree node by a collapsed Gibbs sampler (see the
    module docstring for the model and the defaults).

    ``iterations`` is 2000 by default; the authors used 5000: on their four reference
    sets 2000 sweeps land within 0.0015 of their 50000-sweep estimates.  With
    ``iterations="auto"``, ``n_chains`` chains (default 2) run in blocks and stop when
    every entry of every table (every tree node's estimate) has split-R-hat below
    ``rhat`` and a Monte-Carlo standard error below ``tol``, or after
    ``max_iterations`` sweeps per chain; the sweeps used, the largest R-hat and MCSE
    are reported in ``summary()`` and the estimate's ``info``.  Chains' estimates are
    averaged and, with two or more, a split-R-hat is reported (``info["rhat"]``).

    ``tying``: ``"level"`` (one concentration per tree level, default), ``"single"``
    (one for the whole tree), ``"parent"`` (siblings share one), ``"none"``.
    ``prior_shape = prior_rate = 0`` is the improper prior of Petitjean et al. (2018).
    ``root_tables="one"`` (the authors'): the root keeps one table per observed value,
    so a child's conditional sees the root's count ``q`` through :math:`S(q, 1)`;
    ``"integrated"``: the root's table counts are summed out, the exact HDP with
    :math:`\\phi_{root} \\sim \\mathrm{Dir}(c_0 / r)` (its factor
    :math:`\\Gamma(c_0/r + q)`), which simulation-based calibration confirms (the
    authors' choice shifts the posterior of the first level's concentration).

    Trees (and chains) are sampled in ``n_jobs`` threads; each tree and chain gets its
    own random stream derived from ``random_state`` and from the node name, so the
    result does not depend on the number of threads.  ``progress`` shows a bar over
    sweeps (default: when standard error is a terminal).
    """

    name = "hdp"
    prior_role = "the root's base distribution P(x), of concentration w, in place of the uniform and initial_concentration"
    stochastic = True
    whole_counts = True
    params = (
        Param("iterations", "int", 2000, "Gibbs sweeps per chain, or 'auto' (R-hat and MCSE)", low=1, also=("auto",)),
        Param("burn_in", "int", None, "sweeps discarded first (default min(1000, iterations // 10); 500 with 'auto')",
              low=0, optional=True),
        Param("tying", "choice", "level", "which tree nodes share a concentration", choices=_TYINGS),
        Param("window", "int", 10, "table counts move within +-window per sweep", low=1),
        Param("concentration_every", "int", 5, "sweeps between resamplings of the concentrations", low=1),
        Param("prior_shape", "float", 2.0, "shape of the concentrations' Gamma prior (0: improper)"),
        Param("prior_rate", "float", 1.0, "rate of the concentrations' Gamma prior (0: improper)"),
        Param("initial_concentration", "float", 2.0, "starting concentration (and the root's)", strict=True),
        Param("max_concentration", "float", 4000.0, "cap of the concentrations", strict=True),
        Param("max_tables", "int", 10000, "cap of a table count", low=1),
        Param("n_chains", "int", None, "independent chains per tree (default 1; 2 with 'auto')", low=1,
              optional=True),
        Param("debug", "bool", False, "check the tree invariants after every sweep (slower)"),
        Param("tol", "float", 1e-3, "'auto': largest Monte-Carlo standard error", strict=True),
        Param("rhat", "float", 1.01, "'auto': largest split-R-hat", low=1.0, strict=True),
        Param("max_iterations", "int", 50000, "'auto': cap of sweeps per chain", low=100),
        Param("root_tables", "choice", "one", "the root's tables: the authors' one per value, or integrated out",
              choices=("one", "integrated")),
        Param("record_states", "int", 100, "sweep states kept (evenly spaced) for posterior draws; 0: none", low=0),
        Param("update_iterations", "int", None, "sweeps per chain of net.update, resumed from the fit's last state "
              "(default iterations // 15 with update_control, else // 5; at least 50; the first tenth discarded)",
              low=2, optional=True),
        Param("update_control", "bool", True, "net.update corrects its short run by the fit's estimate (a control "
              "variate: coupled chains on all the rows and on the old ones)"),
    )

    def _check(self) -> None:
        self.auto = self.iterations == "auto"
        limit = self.max_iterations if self.auto else self.iterations
        if self.burn_in is not None and self.burn_in >= limit:
            what = "max_iterations" if self.auto else "iterations"
            raise HyperparameterError(f"burn_in ({self.burn_in}) must be smaller than {what} ({limit})")
        if self.auto and self.burn_in is None and self.effective_burn_in >= limit:
            raise HyperparameterError(
                f"max_iterations ({limit}) must be larger than the burn-in of iterations='auto' "
                f"({self.effective_burn_in} sweeps); raise max_iterations or set burn_in below it"
            )
        if self.max_concentration < self.initial_concentration:
            raise HyperparameterError(
                f"max_concentration ({self.max_concentration}) must be >= initial_concentration "
                f"({self.initial_concentration})"
            )
        if self.n_chains is None:
            self.n_chains = 2 if self.auto else 1
        elif self.auto and self.n_chains < 2:
            raise HyperparameterError("iterations='auto' needs n_chains >= 2 (its stopping rule compares chains)")

    @property
    def effective_burn_in(self) -> int:
        if self.burn_in is not None:
            return self.burn_in
        return 500 if self.auto else min(1000, int(self.iterations) // 10)

    # ------------------------------------------------------------------ estimation
    def estimate(self, tree: ContextTree) -> TreeEstimate:
        return self.estimate_all({tree.child: tree})[tree.child]

    def _entropy(self) -> int | None:
        return entropy_of(self.random_state)

    def _seed(self, entropy: int | None, name: str, chain: int) -> int:
        return chain_seed(entropy, name, chain)

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        r"""Estimate several trees (the CPTs of a network) in parallel threads (a
        domain is the first split of every tree, like any other).  In an update
        (:meth:`~pybncsmooth.estimators.base.Estimator.warm_started`) a tree whose levels
        did not change resumes from the state its fit kept (:meth:`_warm_state`) and runs
        :attr:`update_sweeps` sweeps per chain, the first tenth discarded; the others
        start afresh.

        With ``update_control`` (default; not with ``iterations="auto"``) each such chain
        has a twin on the old rows ``A`` laid out on the updated tree
        (:meth:`_old_chains`), started from the same kept state and drawing the same keyed
        random numbers (:func:`hdp_sweeps`), and the estimate is the control variate
        (:func:`~pybncsmooth.estimators._warm.control_variate`)

        .. math:: \hat\theta_{A+B} = \bar\theta_{A+B} + \beta\,(\hat\theta_A - \bar\theta_A),
                  \qquad \beta = R / (R + M),

        :math:`\hat\theta_A` the kept estimate (a node it lacks: its back-off),
        :math:`R` its recorded sweeps (``mc_records``, else ``n_records``), :math:`M` the
        twins'.  The sd, the unseen sd and the posterior states are the chains' on all
        the rows."""
        trees = {n: t.whole("hdp") for n, t in trees.items()}
        if self.previous is None:
            return self._estimate_trees(trees, {})
        warm = {n: w for n, w in ((n, self._warm_state(n, t)) for n, t in trees.items()) if w is not None}
        cold = {n: t for n, t in trees.items() if n not in warm}
        out = self.warm_started(None)._estimate_trees(cold, {}) if cold else {}
        if warm:
            out.update(self._estimate_trees({n: trees[n] for n in warm}, warm))
        return {n: out[n] for n in trees}

    @property
    def update_sweeps(self) -> int:
        """Sweeps per chain of an update's warm-started run: ``update_iterations``, by
        default a fifteenth of ``iterations`` with ``update_control`` (two runs of that
        length: on all the rows and on the old ones; 13% of a fit's sweeps), else a fifth
        (with ``"auto"``: of ``max_iterations``, which runs without the control variate),
        at least 50."""
        if self.update_iterations is not None:
            return int(self.update_iterations)
        if self.auto:
            return max(50, self.max_iterations // 5)
        return max(50, int(self.iterations) // (15 if self.update_control else 5))

    def _warm_state(self, name: str, tree: ContextTree) -> tuple | None:
        """What a chain of ``tree`` resumes from: the previous fit's tree (cut to this
        tree's parents: a multi-domain fit's pooled tree) and the table counts and
        concentrations its chains ended with; ``None`` where there is none or the
        tree's levels changed (a new level: a fresh start)."""
        prev = previous_tree(self.previous, name, tree, "warm_t")
        if prev is None or tree.depth == 0:
            return None
        old_tree, info = prev
        t_prev = np.asarray(info["warm_t"])
        if t_prev.shape[1:] != (old_tree.n_nodes, tree.child_card):
            return None
        return old_tree, t_prev, np.asarray(info["warm_conc"])

    def _estimate_trees(self, trees: Mapping[str, ContextTree], warm: Mapping[str, tuple]) -> dict[str, TreeEstimate]:
        """The sampler on ``trees``: fresh chains, or (``warm`` given for every tree)
        chains resuming from a previous fit's state for :attr:`update_sweeps` sweeps."""
        total = self.max_iterations if self.auto else int(self.iterations)
        burn = self.effective_burn_in
        if warm:
            total = self.update_sweeps if not self.auto else self.max_iterations
            burn = max(1, self.update_sweeps // 10)
        thin = 0 if self.auto or self.n_chains == 1 else max(1, (total - burn) // 500)
        events = total // self.concentration_every + 2 if not self.auto else 64
        control = bool(warm) and self.update_control and not self.auto  # the coupled chains on the old rows
        if not self.auto:  # nodes without parents: nothing moves, the estimate is in closed form
            lone = {n: self._lone_root(t, total, burn, thin, events) for n, t in trees.items() if t.depth == 0}
            if lone:  # the others sampled as before (their streams do not depend on the lone roots)
                others = {n: t for n, t in trees.items() if n not in lone}
                rest = self._estimate_trees(others, warm) if others else {}
                return {name: lone[name] if name in lone else rest[name] for name in trees}
        entropy = self._entropy()
        if entropy is None:
            entropy = int(np.random.SeedSequence().entropy % (2**63))
        workers = self.n_jobs or os.cpu_count() or 1
        SHARED_RATIOS.ensure(max(_count_limit(t) for t in trees.values()))  # before the threads start

        def chains_of(name: str, st: _TreeState) -> list[_Chain]:
            root = self.root_base(trees[name], st.r)
            chs = [_Chain(self, st, self._seed(entropy, name, c), name, burn, events, thin, root)
                   for c in range(self.n_chains)]
            if name in warm:
                maps = None
                for c, ch in enumerate(chs):
                    maps = ch.resume(trees[name], *warm[name], c, maps)
                if control:
                    chs += self._old_chains(name, trees[name], st, chs, warm[name], maps)
            return chs

        bar = self._progress_bar(len(trees) * self.n_chains * total * (2 if control else 1), trees)
        if bar is not None and self.auto:
            bar.total = None  # the stopping rule decides how many sweeps
        try:
            if not self.auto and len(trees) >= min(workers, 2):
                return self._tree_tasks(trees, chains_of, total, bar, workers)
            states = {name: _TreeState.build(tree, self.tying) for name, tree in trees.items()}
            chains = {name: chains_of(name, states[name]) for name in trees}
            if self.auto:
                diag = self._run_auto(chains, workers, bar, burn)
                self._warn_unconverged(diag)
            else:  # fewer trees than threads: the chains are the tasks
                diag = {}
                tasks = [ch for name in trees for ch in chains[name]]
                self._map(lambda ch: self._advance(ch, total, bar), tasks, workers)
        finally:
            if bar is not None:
                bar.close()
        return {name: self._finish(trees[name], states[name], chains[name], diag.get(name)) for name in trees}

    def _tree_tasks(self, trees: Mapping[str, ContextTree], chains_of: Any, total: int, bar: Any, workers: int
                    ) -> dict[str, TreeEstimate]:
        """One task per tree: its state and chains live while it runs, so the memory
        held at once is that of the trees in flight (plus every tree's estimates), not
        that of the whole network (many domains: millions of tree nodes)."""
        out: dict[str, TreeEstimate] = {}

        def run_tree(name: str) -> None:
            st = _TreeState.build(trees[name], self.tying)
            chs = chains_of(name, st)
            for ch in chs:
                self._advance(ch, total, bar)
            out[name] = self._finish(trees[name], st, chs, None)
            for ch in chs:
                ch.release()

        self._map(run_tree, list(trees), workers)
        return {name: out[name] for name in trees}

    def _lone_root(self, tree: ContextTree, total: int, burn: int, thin: int, events: int) -> TreeEstimate:
        """The estimate of a tree that is its root alone (a node without parents), in
        closed form: its counts are data and its concentration :math:`c_0` is fixed, so
        every recorded sweep of every chain gives the same
        :math:`v = (n + c_0 h) / (N + c_0)` (:math:`h = 1 / r`, or with an expert network
        :math:`c_0 = w`, :math:`h = P(x)`), with the Dirichlet's second moment
        :math:`v^2 + v (1 - v) / (N + c_0 + 1)`: what the sampler would record, without its
        state.  The draws for R-hat (several chains) are constant, which
        :func:`split_rhat` counts as converged (1.0)."""
        n = tree.levels[0].counts[0].astype(np.float64)
        c0, _, ch = self.root_base(tree, n.shape[0])
        v = (n + ch) / (n.sum() + c0)
        sd = np.sqrt(np.maximum(v * (1.0 - v) / (n.sum() + c0 + 1.0), 0.0))
        info = self._info(np.full((0, 1), np.nan), max(total - burn, 0) * self.n_chains, c0)
        if self.n_chains > 1 and thin > 0:  # as many draws as the chains' traces would hold
            if min(len(range(burn, total, thin)), _trace_rows(events, self.concentration_every, thin)) >= 4:
                info["rhat"] = 1.0
        if self.node_prior(tree) is None:
            post = DirichletPosterior(np.array([ch[0]]), backoff=False)  # exact: Dir(n + c0 / r)
        else:
            post = DirichletTablePosterior(ch[None, :])  # exact: Dir(n + w P)
        return TreeEstimate(((v / v.sum())[None, :],), "backoff", info, sd=(sd[None, :],), posterior=post)

    @staticmethod
    def _advance(ch: "_Chain", total: int, bar: Any) -> None:
        """Run a chain to ``total`` sweeps (in blocks when a progress bar is shown)."""
        block = _BLOCK if bar is not None else total
        while ch.it < total:
            todo = min(block, total - ch.it)
            ch.advance(todo)
            if bar is not None:
                bar.update(todo)

    @staticmethod
    def _map(fn: Any, items: list, workers: int, pool: ThreadPoolExecutor | None = None) -> None:
        if workers == 1 or len(items) == 1:
            for it in items:
                fn(it)
        elif pool is not None:
            for f in [pool.submit(fn, it) for it in items]:
                f.result()
        else:
            with ThreadPoolExecutor(max_workers=min(workers, len(items))) as new_pool:
                for f in [new_pool.submit(fn, it) for it in items]:
                    f.result()

    def _run_auto(self, chains: dict[str, list[_Chain]], workers: int, bar: Any, burn: int) -> dict[str, dict]:
        """``iterations="auto"``: burn-in, then batches of sweeps until every entry of a
        table has split-R-hat below ``rhat`` and MCSE below ``tol`` (checked once every
        chain holds at least 16 batches), or ``max_iterations`` sweeps per chain.  The
        entries are the estimates of the tree nodes the table uses: the leaves, and the
        inner nodes that answer unseen parent configurations."""
        burn = int(burn)
        batch = 25
        keep = 16
        active = dict(chains)
        batches = {name: [_Batches(keep) for _ in chs] for name, chs in chains.items()}
        diag: dict[str, dict] = {}

        def step(ch: _Chain, n: int) -> tuple[np.ndarray, np.ndarray] | None:
            if n <= 0:
                return None
            a1, a2 = ch.acc.copy(), ch.accsq.copy()
            ch.advance(n)
            if bar is not None:
                bar.update(n)
            return ch.acc - a1, ch.accsq - a2

        all_chains = [ch for chs in chains.values() for ch in chs]
        pool = ThreadPoolExecutor(max_workers=min(workers, len(all_chains))) if workers > 1 else None
        try:
            self._auto_rounds(chains, active, batches, diag, step, burn, batch, keep, workers, pool)
        finally:
            if pool is not None:
                pool.shutdown()
        return diag

    def _warn_unconverged(self, diag: dict[str, dict]) -> None:
        """A :class:`ConvergenceWarning` naming the trees that reached ``max_iterations``
        before the stopping rule held (as hmd's and hls's warnings)."""
        bad = [name for name, d in diag.items() if not d["converged"]]
        if not bad:
            return
        worst = max(bad, key=lambda n: -1.0 if np.isnan(diag[n]["rhat"]) else diag[n]["rhat"])
        d = diag[worst]
        what = (
            f"largest R-hat {d['rhat']:.4g}, MCSE {d['mcse']:.3g}"
            if not np.isnan(d["rhat"])
            else "too few sweeps after burn-in for the diagnostics"
        )
        warnings.warn(
            f"HDP iterations='auto' stopped at max_iterations ({self.max_iterations} sweeps) before R-hat < "
            f"{self.rhat} and MCSE < {self.tol} held for {len(bad)} of {len(diag)} nodes "
            f"({', '.join(map(repr, bad[:5]))}{', ...' if len(bad) > 5 else ''}; at {worst!r}: {what})",
            ConvergenceWarning,
            stacklevel=3,
        )

    def _auto_rounds(
        self,
        chains: dict[str, list[_Chain]],
        active: dict[str, list[_Chain]],
        batches: dict[str, list[_Batches]],
        diag: dict[str, dict],
        step: Any,
        burn: int,
        batch: int,
        keep: int,
        workers: int,
        pool: ThreadPoolExecutor | None,
    ) -> None:
        # burn-in
        self._map(lambda ch: step(ch, burn), [ch for chs in chains.values() for ch in chs], workers, pool)
        while active:
            todo = []
            for name, chs in active.items():
                length = max(batches[name][0].length, batch)
                left = self.max_iterations - chs[0].it
                todo += [(name, c, ch, min(length, left)) for c, ch in enumerate(chs)]
            results: dict[tuple[str, int], Any] = {}

            def run(item: tuple, out: dict = results) -> None:
                name, c, ch, n = item
                out[(name, c)] = (step(ch, n), n)

            self._map(run, todo, workers, pool)
            for name in list(active):
                chs = active[name]
                for c in range(len(chs)):
                    res, n = results[(name, c)]
                    if res is not None:
                        u = chs[c].st.used
                        batches[name][c].add(res[0][u].ravel(), res[1][u].ravel(), n)
                done = chs[0].it >= self.max_iterations
                if min(len(b.s1) for b in batches[name]) >= keep:
                    rhat, mcse = _auto_diagnostics(batches[name])
                    ok = bool(rhat.max() < self.rhat and mcse.max() < self.tol)
                    diag[name] = {"rhat": float(rhat.max()), "mcse": float(mcse.max()), "converged": ok}
                    done = done or ok
                if done:
                    diag.setdefault(name, {"rhat": float("nan"), "mcse": float("nan"), "converged": False})
                    del active[name]

    def _progress_bar(self, total: int, trees: Mapping[str, ContextTree]) -> Any:
        return progress_bar(self.progress, total, trees, "HDP sweeps")

    def _info(self, conc: np.ndarray, n_rec: int, c_root: float) -> dict[str, Any]:
        """The diagnostics every tree's estimate carries: the concentration draws (one
        column per tree level), the root's fixed concentration, the recorded sweeps."""
        return {
            "concentrations": conc,
            "concentration_levels": np.arange(conc.shape[1] if conc.ndim == 2 else 0),
            "root_concentration": c_root,
            "n_records": n_rec,
            "n_chains": self.n_chains,
        }

    def _old_chains(self, name: str, tree: ContextTree, st: _TreeState, chains: list[_Chain], warm: tuple,
                    maps: tuple) -> list[_Chain]:
        """The control variate's chains (:meth:`estimate_all`): one per chain of
        ``chains``, on the previous fit's rows laid out on ``tree``'s nodes (a node they
        lack has no count), resumed from the same kept state with the same window, both
        drawing keyed by the same number (common random numbers, :func:`hdp_sweeps`).
        None when the previous estimate does not fit its tree (no correction)."""
        old_tree = warm[0]
        kept = kept_on(old_tree, tree, self.previous[name][1].probs)
        if kept is None:
            return []
        leaf = st.leaf_counts.copy()
        d0 = int(st.lstart[-2])
        leaf[d0:] = counts_on(old_tree, tree)[d0:]
        st_old = dataclasses.replace(st, leaf_counts=leaf)
        out = []
        for c, ch in enumerate(chains):
            old = _Chain(self, st_old, 0, name, ch.burn, ch.conc_trace.shape[0], ch.thin,
                         (ch.c_root, ch.root_h, ch.root_ch))
            old.resume(tree, *warm, c, maps)
            old.state_n, old.state_c = old.state_n[:0], old.state_c[:0]  # no posterior states kept
            ch.key = old.key = np.uint64(int(ch.rng[0]) | 1)  # a function of the chain's seed
            old.rng = ch.rng.copy()
            old.window, old.old, old.kept = ch.window, True, kept
            old.kept_records = kept_records(self.previous[name][1].info)
            out.append(old)
        return out

    def _finish(self, tree: ContextTree, st: _TreeState, chains: list[_Chain], diag: dict | None) -> TreeEstimate:
        """The estimate of a tree from its chains; with an update's chains on the old
        rows, corrected by the control variate (:func:`control_variate`)."""
        new = [ch for ch in chains if not ch.old]
        old = [ch for ch in chains if ch.old]
        return self._combine(tree, st, new, diag, (old[0].kept, old) if old else None)

    def _combine(self, tree: ContextTree, st: _TreeState, chains: list[_Chain], diag: dict | None,
                 control: tuple[np.ndarray, list[_Chain]] | None = None) -> TreeEstimate:
        """The estimate from the chains' averages (``control``: the kept estimate and
        the chains on the old rows, see :func:`control_variate`)."""
        n_rec = sum(ch.n_rec for ch in chains)
        mean = sum(ch.acc for ch in chains) / max(n_rec, 1)
        # posterior sd by the law of total variance over the recorded sweeps (and chains):
        # E[theta^2] averages each sweep's second moment given its state, the parents'
        # uncertainty included (see _record_internal)
        second = sum(ch.acc2 for ch in chains) / max(n_rec, 1)
        sd_all = np.sqrt(np.maximum(second - mean * mean, 0.0))
        est = mean / mean.sum(axis=1, keepdims=True)
        if control is not None:  # beta = R / (R + M): the kept estimate's sweeps against the old chains'
            old = control[1]
            m_old = sum(ch.acc for ch in old) / max(sum(ch.n_rec for ch in old), 1)
            R, M = old[0].kept_records, float(sum(ch.n_rec for ch in old))
            est = control_variate(control[0], est, m_old / m_old.sum(axis=1, keepdims=True),
                                  1.0 if R is None else R / (R + M))
        probs = tuple(est[st.lstart[i] : st.lstart[i + 1]] for i in range(len(st.lstart) - 1))
        sds = tuple(sd_all[st.lstart[i] : st.lstart[i + 1]] for i in range(len(st.lstart) - 1))
        conc = chains[0].conc_trace[: chains[0].n_ev]
        if self.tying == "single" and conc.size:
            conc = np.repeat(conc[:, 1:2], conc.shape[1], axis=1)
            conc[:, 0] = np.nan
        info = self._info(conc, int(n_rec), chains[0].c_root)
        info["control_variate"] = control is not None
        if control is not None and control[1][0].kept_records is not None:
            info["mc_records"] = control[1][0].kept_records + n_rec
        tmax = max(int(ch.t.max()) for ch in chains) if st.n_nodes else 0
        info["warm_t"] = np.stack([ch.t for ch in chains]).astype(np.int32 if tmax < 2**31 else np.int64)
        info["warm_conc"] = np.stack([ch.conc for ch in chains])
        if diag is not None:
            info.update(diag)
            info["iterations"] = int(chains[0].it)
        elif self.n_chains > 1:
            draws = [ch.leaf_trace[: ch.n_draws] for ch in chains]
            m = min(d.shape[0] for d in draws)
            if m >= 4 and draws[0].shape[1] > 0:
                info["rhat"] = split_rhat(np.stack([d[:m] for d in draws]))
        states = None
        if all(ch.state_meta[0] > 0 for ch in chains):
            states = (np.concatenate([ch.state_n[: ch.state_meta[0]] for ch in chains]),
                      np.concatenate([ch.state_c[: ch.state_meta[0]] for ch in chains]),
                      st.group, st.group_level, chains[0].c_root, self.tying, self._prior(),
                      None if self.node_prior(tree) is None else chains[0].root_h)
        later = _HDPUnseen(tree, probs, sds, self._kept_concentrations(chains), self.tying, self._prior(), states)
        est = TreeEstimate(probs, "backoff", info, sd=sds)  # the checks of the probabilities and sds
        return DeferredEstimate.deferred(est.probs, est.unseen, {"unseen_sd": (_HDPUnseen.unseen_sd, later),
                                                                 "posterior": (_HDPUnseen.posterior, later)},
                                         info=est.info, sd=est.sd)

    def _prior(self) -> tuple[float, float, float]:
        return (self.prior_shape, self.prior_rate, self.max_concentration)

    def root_base(self, tree: ContextTree | None, r: int) -> tuple[float, np.ndarray, np.ndarray]:
        """The root's concentration :math:`c_0`, base measure :math:`h` and :math:`c_0 h`:
        ``initial_concentration`` and :math:`1 / r`, or with an expert network the prior
        weight ``w`` and the expert's :math:`P(x)`."""
        prior = self.node_prior(tree) if tree is not None else None
        if prior is None:
            c0 = float(self.initial_concentration)
            return c0, np.full(r, 1.0 / r), np.full(r, c0 / r)
        h = prior.marginal()
        return prior.weight, h, prior.weight * h

    def with_prior(self, prior: Any, *, check: bool = True) -> "HDP":
        """See :meth:`Estimator.with_prior`; ``root_tables="integrated"`` takes no prior."""
        if prior is not None and self.root_tables == "integrated":
            raise HyperparameterError(
                "hdp with root_tables='integrated' takes no prior network (its root's tables are summed out under "
                "a uniform base measure): use the default root_tables='one'"
            )
        return super().with_prior(prior, check=check)

    def _kept_concentrations(self, chains: list[_Chain]) -> np.ndarray:
        """Every chain's concentration draws after burn-in (events x levels, the levels'
        means; single tying: the one concentration at every level)."""
        every = self.concentration_every
        burn = chains[0].burn
        first = int(np.count_nonzero((np.arange(burn) + every // 2) % every == 0))
        conc = np.concatenate([ch.conc_trace[first : ch.n_ev] for ch in chains])
        if not len(conc):  # no draw after burn-in: the concentrations as they stand
            st = chains[0].st
            conc = np.full((1, len(st.lstart) - 1), np.nan)
            for lev in range(1, conc.shape[1]):
                sel = st.group_level == lev
                if sel.any():
                    conc[0, lev] = chains[0].conc[sel].mean()
        if self.tying == "single" and conc.size:
            conc = np.repeat(conc[:, 1:2], conc.shape[1], axis=1)
        return conc


class _HDPUnseen:
    """What a tree's HDP estimate answers for configurations absent from the tree, and
    its posterior draws: its ``unseen_sd`` (the fresh nodes' spread of
    :func:`hdp_unseen_sd` at the root's level, hmd's back-off below deeper nodes,
    :func:`~pybncsmooth.estimators.hmd.backoff.centre_sd`) and its :class:`HDPPosterior`, both from the
    back-off concentrations :func:`~pybncsmooth.estimators.hmd.backoff.learn_backoff` learns from the
    tree's counts.  None of them is random: :class:`DeferredEstimate` computes them
    when first read (a classifier's probabilities read neither: an ESKDB fit learned
    the back-off of every tree of its ten members, 20% of its time on letter), with
    the values an eager computation gives.  ``states``: the recorded states and the
    rest of :class:`HDPPosterior`'s arguments, or ``None`` (no posterior)."""

    def __init__(self, tree: ContextTree, probs: tuple, sds: tuple, conc: np.ndarray, tying: str,
                 prior: tuple[float, float, float], states: tuple | None) -> None:
        self.tree, self.probs, self.sds, self.conc, self.tying, self.prior = tree, probs, sds, conc, tying, prior
        self.states = states
        self._backoff: list | None = None

    def backoff(self) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """The back-off concentrations' posteriors (``None``: a tree of depth below 2)."""
        if self._backoff is None and self.tree.depth >= 2:
            self._backoff = learn_backoff(self.tree)
        return self._backoff

    def unseen_sd(self) -> tuple[np.ndarray, ...]:
        tree, probs = self.tree, self.probs
        out = hdp_unseen_sd(probs, self.sds, unseen_weights(self.conc, self.tying, self.prior))
        backoff = self.backoff()
        if backoff is not None:  # below a node of level 1 or deeper: hmd's back-off (hdp_posterior)
            out = (out[0], *centre_sd(tree, probs[-1], np.full(tree.child_card, 1.0 / tree.child_card), backoff))
        if out and not all(np.isfinite(a).all() and (a >= 0).all() for a in out):
            raise FloatingPointError("negative or non-finite standard deviations of unseen configurations")
        return out

    def posterior(self) -> HDPPosterior | None:
        if self.states is None:
            return None
        *args, base = self.states
        return HDPPosterior(*args, base=base, backoff=self.backoff())

