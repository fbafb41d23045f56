"""Hierarchical Dirichlet process smoothing of a context tree (Petitjean et al. 2018).

Model (paper 000, Sec. 4.1): for child ``X`` and ordered parents, every tree node
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
are resampled with the auxiliary-variable scheme of thesis 002 (Sec. 4.2.5,
Algorithm 14) under a Gamma(shape, rate) prior: :math:`q_j \\sim \\mathrm{Beta}(\\alpha, n_j)`,
:math:`\\alpha \\sim \\mathrm{Gamma}(\\text{shape} + \\sum_j t_j, \\text{rate} + \\sum_j \\log 1/q_j)`.
After burn-in, each sweep's estimates (eqs. 12-14)

.. math::
    \\hat\\phi_{x \\mid \\text{node}} = \\frac{n_x + \\alpha\\, \\hat\\phi_{x \\mid \\text{parent}}}{N + \\alpha}

are averaged.  Unseen parent configurations back off to the deepest existing
node, as the reference's query does.  Posterior standard deviations
(``cpt(node, stat="sd")``) follow from the law of total variance over the
recorded sweeps: each sweep contributes its Dirichlet second moment given the
state, :math:`\\hat\\phi^2 + \\hat\\phi(1 - \\hat\\phi) / (N + \\alpha + 1)`.

Defaults are those of the authors' Java implementation: 5000 sweeps, burn-in
``min(1000, iterations / 10)``, level tying, concentrations starting at 2 with a
Gamma(2, 1) prior, capped at 4000 and resampled every 5 sweeps, the root's kept
at its initial value, table counts moving within +-10 of their value, at most
10000, initialised by eq. 15.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import HyperparameterError
from ._hdp_kernels import hdp_init, hdp_sweeps
from ._rng import new_state
from ._stirling import MAX_TABLE_N, SHARED_RATIOS, new_memo
from ._mcmc import chain_seed, entropy_of, progress_bar, split_rhat
from .base import Estimator, TreeEstimate, register_estimator

__all__ = ["HDP", "split_rhat"]

_TYINGS = ("level", "single", "parent", "none")
_BLOCK = 250  # sweeps per compiled call when a progress bar is shown


def _interleave_parents(ii: np.ndarray, kk: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of one level, reordered round-robin over their parents: the first pair
    of every parent, then the second of every parent, ...

    Given the other levels, the table counts of children of different parents are
    conditionally independent (each conditional involves only its own node and its
    parent), so a sweep in this order has exactly the transition of the node-by-node
    order (each parent's pairs keep their order); but consecutive updates no longer
    wait for each other, and the processor overlaps them.
    """
    if ii.size == 0:
        return ii, kk
    par = parent[ii]
    first = np.r_[True, par[1:] != par[:-1]]
    starts = np.flatnonzero(first)
    rank = np.arange(ii.size) - np.repeat(starts, np.diff(np.r_[starts, ii.size]))
    order = np.lexsort((par, rank))
    return ii[order], kk[order]


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

    @classmethod
    def build(cls, tree: ContextTree, tying: str) -> "_TreeState":
        sizes = tree.level_sizes()
        lstart = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        N, r, d = int(lstart[-1]), tree.child_card, tree.depth
        parent = np.full(N, -1, dtype=np.int64)
        for i in range(1, d + 1):
            parent[lstart[i] : lstart[i + 1]] = tree.levels[i].parent + lstart[i - 1]
        leaf_counts = np.zeros((N, r), dtype=np.int64)
        leaf_counts[lstart[d] : lstart[d + 1]] = tree.levels[d].counts
        group = np.full(N, -1, dtype=np.int64)
        members: list[np.ndarray] = []
        levels: list[int] = []
        if tying == "level":
            for i in range(1, d + 1):
                members.append(np.arange(lstart[i], lstart[i + 1]))
                levels.append(i)
        elif tying == "single":
            if d >= 1:
                members.append(np.arange(lstart[1], N))
                levels.append(1)
        elif tying == "parent":
            for i in range(1, d + 1):
                par = parent[lstart[i] : lstart[i + 1]]
                bounds = np.flatnonzero(np.diff(par)) + 1
                for chunk in np.split(np.arange(lstart[i], lstart[i + 1]), bounds):
                    members.append(chunk)
                    levels.append(i)
        else:  # none
            for i in range(1, d + 1):
                for j in range(lstart[i], lstart[i + 1]):
                    members.append(np.array([j]))
                    levels.append(i)
        for g, m in enumerate(members):
            group[m] = g
        group_off = np.concatenate(([0], np.cumsum([len(m) for m in members]))).astype(np.int64)
        group_nodes = np.concatenate(members).astype(np.int64) if members else np.zeros(0, dtype=np.int64)
        # the sweep's schedule of (node, value) pairs, bottom-up: the leaf values that can
        # move (counted at least twice; a leaf's counts are data), then the values of the
        # internal nodes below the root with data below them, level by level
        sched_i_parts: list[np.ndarray] = []
        sched_k_parts: list[np.ndarray] = []
        for i in range(d, 0, -1):
            nodes = np.arange(lstart[i], lstart[i + 1])
            ii = np.repeat(nodes, r)
            kk = np.tile(np.arange(r), len(nodes))
            # a leaf value counted once or never, or an internal value with no data below,
            # has a table count fixed for good (n or 0)
            data = tree.levels[i].counts[ii - lstart[i], kk]
            keep = data >= 2 if i == d else data >= 1
            ii, kk = ii[keep], kk[keep]
            ii, kk = _interleave_parents(ii, kk, parent)
            sched_i_parts.append(ii)
            sched_k_parts.append(kk)
        if sched_i_parts:
            sched_i = np.concatenate(sched_i_parts).astype(np.int64)
            sched_k = np.concatenate(sched_k_parts).astype(np.int64)
        else:
            sched_i = sched_k = np.zeros(0, dtype=np.int64)
        # every count the sampler can meet below the root is at most a data count of its
        # node: the exact Stirling ratios are used up to there (the root's own table count
        # is 1, whose ratio needs no table)
        n_lim = 1
        for lev in tree.levels[1:]:
            if lev.counts.size:
                n_lim = max(n_lim, int(lev.counts.max()))
        return cls(
            parent,
            lstart,
            leaf_counts,
            group,
            group_nodes,
            group_off,
            np.asarray(levels, dtype=np.int64),
            N,
            r,
            sched_i,
            sched_k,
            min(n_lim, MAX_TABLE_N),
        )


@register_estimator
class HDP(Estimator):
    """HDP estimates of every context-tree node by a collapsed Gibbs sampler (see the
    module docstring for the model and the defaults).

    Parameters
    ----------
    iterations:
        Gibbs sweeps per chain.
    burn_in:
        Sweeps discarded before averaging (default ``min(1000, iterations // 10)``).
    tying:
        Concentration tying: ``"level"`` (one per tree level, default), ``"single"``
        (one for the whole tree), ``"parent"`` (siblings share one), ``"none"``.
    window:
        Table counts move within ``+-window`` of their current value per sweep.
    concentration_every:
        Concentrations are resampled every that many sweeps.
    prior_shape, prior_rate:
        Gamma(shape, rate) prior of the concentrations; ``0, 0`` is the improper
        prior of paper 000.
    initial_concentration, max_concentration, max_tables:
        Starting value (also the fixed root concentration), cap of the
        concentrations, cap of a table count.
    n_chains:
        Independent chains per tree; their estimates are averaged and, with two or
        more, a split-R-hat over the leaf estimates is reported (``info["rhat"]``).
    n_jobs:
        Threads sampling trees (and chains) in parallel (default: all cores).
    progress:
        Progress bar over sweeps (default: when standard error is a terminal).
    debug:
        Check the tree invariants after every sweep (slower).
    random_state:
        Seed (int), ``numpy.random.Generator`` or ``None``.  Each tree and chain
        gets its own stream derived from it and from the node name, so the result
        does not depend on the number of threads.
    """

    name = "hdp"
    stochastic = True

    def __init__(
        self,
        iterations: int = 5000,
        burn_in: int | None = None,
        tying: str = "level",
        window: int = 10,
        concentration_every: int = 5,
        prior_shape: float = 2.0,
        prior_rate: float = 1.0,
        initial_concentration: float = 2.0,
        max_concentration: float = 4000.0,
        max_tables: int = 10000,
        n_chains: int = 1,
        n_jobs: int | None = None,
        progress: bool | None = None,
        debug: bool = False,
        random_state: Any = None,
    ) -> None:
        def pos_int(name: str, v: Any, minimum: int = 1) -> int:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
                raise HyperparameterError(f"{name} must be an integer >= {minimum}, not {v!r}")
            return int(v)

        self.iterations = pos_int("iterations", iterations)
        if burn_in is not None:
            burn_in = pos_int("burn_in", burn_in, 0)
            if burn_in >= self.iterations:
                raise HyperparameterError(f"burn_in ({burn_in}) must be smaller than iterations ({iterations})")
        self.burn_in = burn_in
        if tying not in _TYINGS:
            raise HyperparameterError(f"tying must be one of {_TYINGS}, not {tying!r}")
        self.tying = tying
        self.window = pos_int("window", window)
        self.concentration_every = pos_int("concentration_every", concentration_every)
        for name, v in (("prior_shape", prior_shape), ("prior_rate", prior_rate)):
            if not np.isfinite(v) or v < 0:
                raise HyperparameterError(f"{name} must be >= 0, not {v!r}")
        self.prior_shape = float(prior_shape)
        self.prior_rate = float(prior_rate)
        if not initial_concentration > 0 or not max_concentration >= initial_concentration:
            raise HyperparameterError("need 0 < initial_concentration <= max_concentration")
        self.initial_concentration = float(initial_concentration)
        self.max_concentration = float(max_concentration)
        self.max_tables = pos_int("max_tables", max_tables)
        self.n_chains = pos_int("n_chains", n_chains)
        self.n_jobs = None if n_jobs is None else pos_int("n_jobs", n_jobs)
        self.progress = progress
        self.debug = bool(debug)
        self.random_state = random_state

    @property
    def effective_burn_in(self) -> int:
        return self.burn_in if self.burn_in is not None else min(1000, self.iterations // 10)

    # ------------------------------------------------------------------ estimation
    def estimate(self, tree: ContextTree) -> TreeEstimate:
        return self.estimate_all({tree.child: tree})[tree.child]

    def _entropy(self) -> int | None:
        return entropy_of(self.random_state)

    def _seed(self, entropy: int | None, name: str, chain: int) -> int:
        return chain_seed(entropy, name, chain)

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Estimate several trees (the CPTs of a network) in parallel threads (a
        domain is the first split of every tree, like any other)."""
        entropy = self._entropy()
        if entropy is None:
            entropy = int(np.random.SeedSequence().entropy % (2**63))
        states = {name: _TreeState.build(tree, self.tying) for name, tree in trees.items()}
        SHARED_RATIOS.ensure(max(st.n_lim for st in states.values()))  # before the threads start
        tasks = [(name, c) for name in trees for c in range(self.n_chains)]
        bar = self._progress_bar(len(tasks) * self.iterations, trees)
        workers = self.n_jobs or os.cpu_count() or 1
        try:
            if workers == 1 or len(tasks) == 1:
                results = [self._run_chain(states[nm], self._seed(entropy, nm, c), nm, bar) for nm, c in tasks]
            else:
                with ThreadPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
                    futs = [
                        pool.submit(self._run_chain, states[nm], self._seed(entropy, nm, c), nm, bar) for nm, c in tasks
                    ]
                    results = [f.result() for f in futs]
        finally:
            if bar is not None:
                bar.close()
        by_tree: dict[str, list] = {name: [] for name in trees}
        for (name, _), res in zip(tasks, results):
            by_tree[name].append(res)
        return {name: self._combine(trees[name], states[name], by_tree[name]) for name in trees}

    def _progress_bar(self, total: int, trees: Mapping[str, ContextTree]) -> Any:
        return progress_bar(self.progress, total, trees, "HDP sweeps")

    def _run_chain(self, st: _TreeState, seed: int, name: str, bar: Any) -> tuple:
        N, r = st.n_nodes, st.r
        n = st.leaf_counts.copy()
        t = np.zeros((N, r), dtype=np.int64)
        nsum = np.zeros(N, dtype=np.int64)
        tsum = np.zeros(N, dtype=np.int64)
        rng = new_state(seed)
        hdp_init(n, t, nsum, tsum, st.parent, st.lstart, self.initial_concentration)
        G = len(st.group_off) - 1
        conc = np.full(G, self.initial_concentration)
        logc = np.log(conc)
        rtab, pcol, n_tab = SHARED_RATIOS.ensure(st.n_lim)
        ckeys, cvals = new_memo(16)
        pk = np.zeros((N, r))
        acc = np.zeros((N, r))
        acc2 = np.zeros((N, r))
        b1 = np.zeros((N, r))
        b2 = np.zeros((N, r))
        n_levels = len(st.lstart) - 1
        events = self.iterations // self.concentration_every + 2
        conc_trace = np.full((events, n_levels), np.nan)
        burn = self.effective_burn_in
        kept = self.iterations - burn
        thin = 0
        n_leaf = int(st.lstart[-1] - st.lstart[-2])
        leaf_trace = np.zeros((0, n_leaf * r))
        if self.n_chains > 1:
            thin = max(1, kept // 500)
            leaf_trace = np.zeros((kept // thin + 1, n_leaf * r))
        n_rec = n_ev = n_draws = 0
        it = 0
        block = _BLOCK if bar is not None else self.iterations
        while it < self.iterations:
            todo = min(block, self.iterations - it)
            rec, ev, dr, bad = hdp_sweeps(
                rng,
                n,
                t,
                nsum,
                tsum,
                st.parent,
                st.lstart,
                st.group,
                conc,
                logc,
                self.initial_concentration,
                st.group_nodes,
                st.group_off,
                st.group_level,
                st.sched_i,
                st.sched_k,
                it,
                todo,
                burn,
                self.concentration_every,
                self.window,
                self.max_tables,
                self.prior_shape,
                self.prior_rate,
                self.max_concentration,
                n_ev,
                rtab,
                pcol,
                n_tab,
                st.n_lim,
                ckeys,
                cvals,
                pk,
                acc,
                acc2,
                b1,
                b2,
                conc_trace,
                leaf_trace,
                thin,
                self.debug,
            )
            if bad >= 0:
                raise RuntimeError(
                    f"HDP invariant violated at node {bad} of the context tree of {name!r} "
                    f"after sweep {it + rec} (0 <= t <= n, t >= 1 where n >= 1, n = sum of children's t)"
                )
            n_rec += rec
            n_ev += ev
            n_draws += dr
            it += todo
            if bar is not None:
                bar.update(todo)
        est = acc / max(n_rec, 1)
        second = acc2 / max(n_rec, 1)
        return est, conc_trace[:n_ev], leaf_trace[:n_draws], n_rec, second

    def _combine(self, tree: ContextTree, st: _TreeState, results: list) -> TreeEstimate:
        mean = np.mean([res[0] for res in results], axis=0)
        # posterior sd by the law of total variance over the recorded sweeps (and chains):
        # E[theta^2] averages each sweep's Dirichlet second moment given its state
        sd_all = np.sqrt(np.maximum(np.mean([res[4] for res in results], axis=0) - mean * mean, 0.0))
        est = mean / mean.sum(axis=1, keepdims=True)
        probs = tuple(est[st.lstart[i] : st.lstart[i + 1]] for i in range(len(st.lstart) - 1))
        sds = tuple(sd_all[st.lstart[i] : st.lstart[i + 1]] for i in range(len(st.lstart) - 1))
        conc = results[0][1]
        if self.tying == "single" and conc.size:
            conc = np.repeat(conc[:, 1:2], conc.shape[1], axis=1)
            conc[:, 0] = np.nan
        info: dict[str, Any] = {
            "concentrations": conc,
            "concentration_levels": np.arange(conc.shape[1] if conc.ndim == 2 else 0),
            "root_concentration": self.initial_concentration,
            "n_records": int(sum(res[3] for res in results)),
            "n_chains": self.n_chains,
        }
        if self.n_chains > 1:
            draws = [res[2] for res in results]
            m = min(d.shape[0] for d in draws)
            if m >= 4 and draws[0].shape[1] > 0:
                info["rhat"] = split_rhat(np.stack([d[:m] for d in draws]))
        return TreeEstimate(probs, "backoff", info, sd=sds)
