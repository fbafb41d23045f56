r"""Bayesian hierarchical linear smoothing, HLS-IG (Cooper et al. 2025, Sec. 3.2 and App. B).

The design of :mod:`pybncsmooth.estimators.hls.estimator` (a coefficient vector per tree node
below the root, the linear predictor of a configuration the sum along its path,
softmax to probabilities), with the Bayesian ridge prior of the paper's best variant:

.. math::
    \beta_{jk} \mid \sigma^2 \sim N(0, \sigma^2), \qquad
    \sigma^2 \sim \mathrm{IG}(a, b) \quad (a = b = 1/2),

and the multinomial likelihood of the leaves' counts.  Gibbs sampling with the
Polya-Gamma augmentation (Polson, Scott and Windle 2013): for each child value
``k`` in turn, with :math:`C_i = \log \sum_{j \ne k} e^{\eta_{ij}}` and
:math:`\psi_i = \eta_{ik} - C_i`,

.. math::
    \omega_i \sim \mathrm{PG}(N_i, \psi_i), \qquad
    p(\beta_k \mid \omega, \cdot) \propto N(\beta_k; 0, \sigma^2 I)
        \prod_i \exp\big(\kappa_i \psi_i - \omega_i \psi_i^2 / 2\big),
    \quad \kappa_i = n_{ik} - N_i / 2 .

Given the weights the path sums :math:`s_v = s_{\mathrm{parent}} + \beta_v` form a
Gaussian Markov tree with Gaussian evidence at the leaves, so :math:`\beta_k` is
drawn exactly in O(tree nodes) by upward information filtering and downward
sampling (no Cholesky factor of the design).  Then
:math:`\sigma^2 \sim \mathrm{IG}(a + d/2, b + \lVert B \rVert^2 / 2)`.  A binary
child has one coefficient per node (the logit of its second value, as the ridge).
Polya-Gamma draws are compiled (:mod:`pybncsmooth.estimators.hls._pg`: Devroye's exact
method, the distribution's gamma series for larger counts), and so is the whole sweep:
its cost follows the child's declared levels times the tree's nodes, with no
interpreter work per level.

The estimate is the posterior mean of every tree node's CPT column (the softmax of
its path sum) over the sweeps after burn-in, averaged over chains; posterior
standard deviations come from the same draws (``cpt(node, stat="sd")``).
``record_states`` (default 200) evenly spaced sweeps are kept for whole-table draws
(``sample_parameters``, intervals); an unseen configuration's coefficients below the
node it backs off to are drawn from their prior given the sweep's variance, so its
sd and draws are the model's predictive
(:mod:`~pybncsmooth.estimators.hls.posterior`).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping

import numpy as np
from ..._jit import njit, uint64

from ...counting.context_tree import ContextTree
from ...errors import HyperparameterError
from ._kernels import node_probs, tree_gaussian_sample
from .._mcmc import chain_seed, entropy_of, progress_bar, split_rhat
from ._pg import pg_draw_with, seed_numba
from .._rng import gamma as _gamma_draw, new_state, normal as _normal_draw, reseed, sweep_key
from ...validation import Param
from ..base import Estimator, TreeEstimate, register_estimator
from .estimator import flatten_tree, split_levels
from .posterior import HLSPosterior, learn_backoff, unseen_sd
from ..hmd.backoff import centre_sd
from .._warm import control_variate, counts_on, kept_on, kept_records, node_map, previous_tree, with_counts

#: a chain keeps at most max(STATE_VALUES, 8 x the network's entries) coefficients of its sweeps
STATE_VALUES = 1 << 21

__all__ = ["HLSBayes"]


@njit(cache=True, nogil=True)
def _logaddexp(a, b):  # pragma: no cover - compiled
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True, nogil=True)
def _suffix_lse(eta, node_off, leaf_off, n_leaf, leaf0, K_t, suf, pre):  # pragma: no cover - compiled
    """At the start of a sweep, per leaf ``g`` of a tree with ``K >= 2`` classes:
    ``suf[g, c] = log sum_{j >= c} exp(eta_gj)`` (``suf[g, K] = -inf``), and the prefix
    sums over the classes already drawn this sweep reset to ``pre[g] = -inf``."""
    for t in range(node_off.shape[0]):
        K = K_t[t]
        if K == 1:
            continue
        base = node_off[t] + leaf0[t]
        for j in range(n_leaf[t]):
            i = base + j
            g = leaf_off[t] + j
            pre[g] = -np.inf
            suf[g, K] = -np.inf
            for c in range(K - 1, -1, -1):
                suf[g, c] = _logaddexp(eta[i, c], suf[g, c + 1])


@njit(cache=True, nogil=True)
def _psi_all(eta, node_off, leaf_off, n_leaf, leaf0, K_t, k, suf, pre, psi):  # pragma: no cover - compiled
    """For every tree with a class ``k``: ``psi_i = eta_ik - log sum_{j != k} exp(eta_ij)``
    at its leaves (binary trees: ``eta_i0``), into the network-wide leaf array ``psi``.
    The sum over ``j != k`` is the prefix over the classes ``j < k`` drawn this sweep
    (``pre``) and the suffix over ``j > k``, not drawn yet (``suf``): O(1) per class and
    leaf, so a sweep is linear in the classes (it was quadratic)."""
    for t in range(node_off.shape[0]):
        K = K_t[t]
        if K <= k:
            continue
        base = node_off[t] + leaf0[t]
        for j in range(n_leaf[t]):
            i = base + j
            g = leaf_off[t] + j
            if K == 1:
                psi[g] = eta[i, 0]
                continue
            psi[g] = eta[i, k] - _logaddexp(pre[g], suf[g, k + 1])


@njit(cache=True, nogil=True)
def _prefix_add(eta, node_off, leaf_off, n_leaf, leaf0, K_t, k, pre):  # pragma: no cover - compiled
    """After class ``k`` is drawn: ``pre[g] <- log(exp(pre[g]) + exp(eta_gk))``."""
    for t in range(node_off.shape[0]):
        K = K_t[t]
        if K <= k or K == 1:
            continue
        base = node_off[t] + leaf0[t]
        for j in range(n_leaf[t]):
            pre[leaf_off[t] + j] = _logaddexp(pre[leaf_off[t] + j], eta[base + j, k])


@njit(cache=True, nogil=True)
def _sample_all(
    parent, node_off, n_nodes, leaf_off, n_leaf, leaf0, K_t, k, omega, kappa, psi, eta, B, var_t, z, work
):  # pragma: no cover - compiled
    """Given the Polya-Gamma weights, draw class ``k``'s coefficients of every tree
    (``parent``: tree-local indices, trees stored one after the other; ``work``: six
    rows of scratch, as long as the largest tree)."""
    for t in range(node_off.shape[0]):
        if K_t[t] <= k:
            continue
        no, nn, lo, m, l0 = node_off[t], n_nodes[t], leaf_off[t], n_leaf[t], leaf0[t]
        J, h, beta = work[0, :m], work[1, :m], work[2, :nn]
        for j in range(m):
            g = lo + j
            c = eta[no + l0 + j, k] - psi[g]  # log sum_{j != k} exp(eta_ij)
            J[j] = omega[g]
            h[j] = kappa[k, g] + omega[g] * c
        tree_gaussian_sample(parent[no : no + nn], l0, J, h, var_t[t], z[no : no + nn], beta, work[3], work[4],
                             work[5])
        eta[no, k] = 0.0
        B[no, k] = 0.0
        for a in range(1, nn):
            B[no + a, k] = beta[a]
            eta[no + a, k] = eta[no + parent[no + a], k] + beta[a]


@njit(cache=True, nogil=True)
def _sumsq_all(B, node_off, n_nodes, K_t, out):  # pragma: no cover - compiled
    for t in range(node_off.shape[0]):
        acc = 0.0
        for a in range(1, n_nodes[t]):
            for c in range(K_t[t]):
                v = B[node_off[t] + a, c]
                acc += v * v
        out[t] = acc


@njit(cache=True, nogil=True)
def _accumulate_all(B, parent, node_off, n_nodes, r_t, K_t, acc, acc2):  # pragma: no cover - compiled
    """Add every tree node's CPT column (softmax of its path sum) and its square."""
    for t in range(node_off.shape[0]):
        no, nn = node_off[t], n_nodes[t]
        P = node_probs(B[no : no + nn, : K_t[t]], parent[no : no + nn], r_t[t])
        for a in range(nn):
            for x in range(r_t[t]):
                acc[no + a, x] += P[a, x]
                acc2[no + a, x] += P[a, x] * P[a, x]


@njit(cache=True, nogil=True)
def _sweeps(it0, n_sweeps, burn, parent, node_off, n_nodes, leaf_off, n_leaf, leaf0, K_t, r_t, act_ptr, act_idx,
            N, kappa, dims, B, eta, psi, pre, suf, omega, z, var_t, ss, acc, acc2, fixed_variance, prior_shape,
            prior_scale, rec_B, rec_var, rec_meta, key):  # pragma: no cover - compiled
    """Sweeps ``it0 .. it0 + n_sweeps - 1`` of one chain (numba's generator, seeded by the
    caller's thread): per class slot ``k``, the Polya-Gamma weights of the leaves that
    take part (``act_idx[act_ptr[k]:act_ptr[k+1]]``), then class ``k``'s coefficients of
    every tree; then the variances; after ``burn`` the CPT columns are accumulated and,
    every ``rec_meta[1]`` sweeps, the state kept (``rec_meta[0]``: states held).

    ``key != 0``: keyed draws (common random numbers for an update's coupled chains,
    :meth:`HLSBayes.estimate_all`): in each sweep (its key :func:`sweep_key`) every
    leaf's Polya-Gamma weight of class ``k``, the normals of class ``k``'s coefficients and
    each tree's variance draw from a xoshiro256** state seeded by the sweep's key and the
    decision, so two chains on networks laid out alike draw the same numbers for the
    same decision whatever their counts."""
    K_max = kappa.shape[0]
    L = N.shape[0]
    work = np.empty((6, max(n_nodes.max(), 1) if n_nodes.shape[0] else 1))
    st = np.zeros(4, dtype=np.uint64)
    none = np.zeros(0, dtype=np.uint64)  # no state: numba's generator
    for s in range(n_sweeps):
        skey = sweep_key(key, it0 + s)
        _suffix_lse(eta, node_off, leaf_off, n_leaf, leaf0, K_t, suf, pre)
        for k in range(K_max):
            _psi_all(eta, node_off, leaf_off, n_leaf, leaf0, K_t, k, suf, pre, psi)
            for a in range(act_ptr[k], act_ptr[k + 1]):
                g = act_idx[a]
                if skey != 0:
                    reseed(st, skey + uint64(k * L + g + 1) * uint64(0x9E3779B97F4A7C15))
                omega[g] = pg_draw_with(N[g], psi[g], none if skey == 0 else st)
            if skey != 0:
                reseed(st, skey + uint64(k + 1) * uint64(0xD6E8FEB86659FD93))
            for i in range(z.shape[0]):
                z[i] = np.random.standard_normal() if skey == 0 else _normal_draw(st)
            _sample_all(parent, node_off, n_nodes, leaf_off, n_leaf, leaf0, K_t, k, omega, kappa, psi, eta, B,
                        var_t, z, work)
            _prefix_add(eta, node_off, leaf_off, n_leaf, leaf0, K_t, k, pre)
        if not fixed_variance:
            _sumsq_all(B, node_off, n_nodes, K_t, ss)
            for t in range(var_t.shape[0]):
                shape, scale = prior_shape + dims[t] / 2.0, 1.0 / (prior_scale + ss[t] / 2.0)
                if skey == 0:
                    var_t[t] = 1.0 / np.random.gamma(shape, scale)
                else:
                    reseed(st, skey + uint64(t + 1) * uint64(0xA0761D6478BD642F))
                    var_t[t] = 1.0 / (_gamma_draw(st, shape) * scale)
        if it0 + s >= burn:
            _accumulate_all(B, parent, node_off, n_nodes, r_t, K_t, acc, acc2)
            # every rec_meta[1] kept sweeps, the coefficients and variances for posterior draws
            j = it0 + s - burn
            if rec_meta[0] < rec_B.shape[0] and j % rec_meta[1] == 0:
                d = rec_meta[0]
                for i in range(B.shape[0]):
                    for c in range(B.shape[1]):
                        rec_B[d, i, c] = B[i, c]
                for t in range(var_t.shape[0]):
                    rec_var[d, t] = var_t[t]
                rec_meta[0] = d + 1


class _Network:
    """The trees of a network laid out one after the other for the batched kernels."""

    def __init__(self, trees: list[ContextTree]) -> None:
        flats = [flatten_tree(t) for t in trees]
        self.T = len(trees)
        self.n_nodes = np.array([len(f[0]) for f in flats], dtype=np.int64)
        self.node_off = np.concatenate([[0], np.cumsum(self.n_nodes)[:-1]]).astype(np.int64)
        self.leaf0 = np.array([f[1] for f in flats], dtype=np.int64)
        self.n_leaf = np.array([f[2].shape[0] for f in flats], dtype=np.int64)
        self.leaf_off = np.concatenate([[0], np.cumsum(self.n_leaf)[:-1]]).astype(np.int64)
        self.r_t = np.array([t.child_card for t in trees], dtype=np.int64)
        self.K_t = np.where(self.r_t >= 3, self.r_t, 1).astype(np.int64)
        self.K_max = int(self.K_t.max()) if self.T else 1
        self.r_max = int(self.r_t.max()) if self.T else 1
        self.parent = np.concatenate([f[0] for f in flats]).astype(np.int64)
        self.parent[self.node_off] = 0  # roots: never read (their coefficients stay 0)
        L = int(self.n_leaf.sum())
        self.N = np.zeros(L)
        self.kappa = np.zeros((self.K_max, L))
        for t, f in enumerate(flats):
            c = f[2]
            sl = slice(self.leaf_off[t], self.leaf_off[t] + self.n_leaf[t])
            n = c.sum(axis=1)
            self.N[sl] = n
            if self.K_t[t] == 1:
                self.kappa[0, sl] = c[:, 1] - n / 2.0
            else:
                self.kappa[: self.r_t[t], sl] = (c - n[:, None] / 2.0).T
        self.dims = (self.n_nodes - 1) * self.K_t
        # per class slot, the network-wide leaves that take part (trees with that class, rows > 0)
        leaf_tree = np.repeat(np.arange(self.T), self.n_leaf)
        active = [np.flatnonzero((self.K_t[leaf_tree] > k) & (self.N > 0)) for k in range(self.K_max)]
        self.act_ptr = np.concatenate([[0], np.cumsum([len(a) for a in active])]).astype(np.int64)
        self.act_idx = np.concatenate(active).astype(np.int64) if active else np.zeros(0, dtype=np.int64)
        self.offsets = [f[3] for f in flats]
        # R-hat watches the first (up to) 100 leaves of each tree
        self.watch_n = np.minimum(self.n_leaf, 100)
        self.watch_off = np.concatenate([[0], np.cumsum(self.watch_n)]).astype(np.int64)


@register_estimator
class HLSBayes(Estimator):
    """HLS-IG: Bayesian ridge HLS by Polya-Gamma Gibbs sampling (see the module doc).

    ``iterations`` defaults to 4000, the authors' 2000 + 2000; ``prior_shape`` and
    ``prior_scale`` give the global variance an ``IG(1/2, 1/2)`` prior by default.  With
    two chains or more, ``summary()`` shows the split R-hat of the leaf estimates.
    ``random_state`` seeds the chains, ``progress`` shows a bar (default: on for long
    fits at a terminal), ``n_jobs`` threads run over the nodes of a network.
    """

    name = "hls-bayes"
    stochastic = True
    whole_counts = True
    params = (
        Param("iterations", "int", 4000, "sweeps per chain, burn-in included", low=2),
        Param("burn_in", "int", None, "sweeps discarded first (default iterations // 2)", low=0, optional=True),
        Param("n_chains", "int", 1, "independent chains (averaged; R-hat with two or more)", low=1),
        # bounded where the sampler's arithmetic holds: a subnormal variance never ends,
        # a shape of 1e308 divides by zero
        Param("prior_shape", "float", 0.5, "shape of the global variance's inverse-gamma prior", low=1e-10,
              high=1e10),
        Param("prior_scale", "float", 0.5, "scale of the global variance's inverse-gamma prior", low=1e-10,
              high=1e10),
        Param("variance", "float", None, "fix the coefficients' prior variance instead of sampling it", low=1e-10,
              high=1e10, optional=True),
        Param("record_states", "int", 200, "sweeps kept (evenly spaced) for posterior draws; 0: none", low=0),
        Param("update_iterations", "int", None, "sweeps per chain of net.update, resumed from the fit's last "
              "coefficients (default iterations // 10 with update_control, else // 6; at least 50; the first "
              "tenth discarded)", low=2, optional=True),
        Param("update_control", "bool", True, "net.update corrects its short run by the fit's estimate (a control "
              "variate: coupled chains on all the rows and on the old ones)"),
    )

    def _check(self) -> None:
        if self.burn_in is not None and self.burn_in >= self.iterations:
            raise HyperparameterError(f"burn_in ({self.burn_in}) must be smaller than iterations ({self.iterations})")

    @property
    def effective_burn_in(self) -> int:
        return self.burn_in if self.burn_in is not None else self.iterations // 2

    @property
    def update_sweeps(self) -> int:
        """Sweeps per chain of an update's warm-started run: ``update_iterations``, by
        default a tenth of ``iterations`` with ``update_control`` (two runs of that
        length, on all the rows and on the old ones: a fifth of a fit's sweeps), else a
        sixth, at least 50 (a fit spends half its sweeps on burn-in, an update a tenth of
        its own)."""
        if self.update_iterations is not None:
            return int(self.update_iterations)
        return max(50, self.iterations // (10 if self.update_control else 6))

    # ------------------------------------------------------------------ sampling
    def _record_buffers(self, net: _Network, kept: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One chain's buffers of kept sweeps: ``record_states`` shared among the chains,
        evenly spaced after burn-in, at most ``max(STATE_VALUES, 8 x the network's
        entries)`` coefficients per chain (every draw is a whole sweep: their number is
        the resolution of the intervals)."""
        n_all = int(net.n_nodes.sum())
        per = max(n_all * net.K_max, 1)
        budget = max(STATE_VALUES, 8 * n_all * net.r_max)  # float32: about the estimates' own memory
        cap = 0
        if self.record_states:
            cap = max(1, min(self.record_states // self.n_chains, budget // per))
        spacing = max(1, -(-kept // cap)) if cap else 1
        return (np.zeros((cap, n_all, net.K_max), dtype=np.float32), np.zeros((cap, net.T)),
                np.array([0, spacing], dtype=np.int64))

    def _chain(self, net: _Network, seed: int, bar: Any, start: tuple | None, iterations: int, burn: int,
               key: int = 0) -> tuple:
        """One chain over every tree of the network, compiled (:func:`_sweeps`), run in
        blocks of at most 100 sweeps (the progress bar's step; with several chains, up
        to each sweep whose CPT columns are kept for R-hat); ``start``: the coefficients
        and variances it resumes from (an update), else zeros and 1; ``key``: keyed
        draws (an update's coupled chains), else numba's generator seeded by ``seed``."""
        seed_numba(seed % (2**32))
        n_all = int(net.n_nodes.sum())
        L = int(net.n_leaf.sum())
        B = np.zeros((n_all, net.K_max))
        var_t = np.full(net.T, self.variance if self.variance is not None else 1.0)
        if start is not None:
            B[:] = start[0]
            if self.variance is None:
                var_t[:] = start[1]
        eta = _path_sums(B, net.parent, net.node_off, net.n_nodes)
        psi, pre, omega = np.zeros(L), np.zeros(L), np.zeros(L)
        suf = np.zeros((L, net.K_max + 1))
        acc = np.zeros((n_all, net.r_max))
        acc2 = np.zeros((n_all, net.r_max))
        ss = np.zeros(net.T)
        z = np.zeros(n_all)
        dims = net.dims.astype(np.float64)
        thin = max(1, (iterations - burn) // 200)
        rec_B, rec_var, rec_meta = self._record_buffers(net, iterations - burn)
        trace = []
        it = 0
        while it < iterations:
            stop = min(iterations, it + 100)
            if self.n_chains > 1:
                nxt = burn if it <= burn else burn + -(-(it - burn) // thin) * thin
                stop = min(stop, nxt + 1)
            _sweeps(
                it, stop - it, burn, net.parent, net.node_off, net.n_nodes, net.leaf_off, net.n_leaf, net.leaf0,
                net.K_t, net.r_t, net.act_ptr, net.act_idx, net.N, net.kappa, dims, B, eta, psi, pre, suf, omega, z,
                var_t, ss, acc, acc2, self.variance is not None, float(self.prior_shape), float(self.prior_scale),
                rec_B, rec_var, rec_meta, np.uint64(key),
            )
            last = stop - 1
            if self.n_chains > 1 and last >= burn and (last - burn) % thin == 0:
                trace.append(node_probs_rows(B, net))
            if bar is not None:
                bar.update(stop - it)
            it = stop
        kept = iterations - burn
        draws = np.array(trace) if trace else np.zeros((0, 0))
        held = int(rec_meta[0])
        return acc / kept, acc2 / kept, draws, kept, rec_B[:held], rec_var[:held], B, var_t

    def _progress_bar(self, total: int, trees: Mapping[str, ContextTree]) -> Any:
        return progress_bar(self.progress, total, trees, "HLS-bayes sweeps")

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        return self.estimate_all({tree.child: tree})[tree.child]

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        r"""Sample the CPTs of a network together (chains in parallel threads); the
        draws depend on ``random_state`` and on the set of trees, not on the threads.
        In an update (:meth:`~pybncsmooth.estimators.base.Estimator.warm_started`) the
        trees whose levels did not change resume from the coefficients and variances
        their fit's chains ended with (new nodes at 0) for :attr:`update_sweeps` sweeps,
        the first tenth discarded; the others start afresh.

        With ``update_control`` (default) every chain has a twin on the old rows ``A``
        laid out on the updated trees (:func:`_control`), started from the same kept
        coefficients and variances and drawing the same keyed random numbers
        (:func:`_sweeps`), run in its own thread; the estimate moves the kept one by the
        twins' difference, :math:`\bar\theta_{A+B} + \beta(\hat\theta_A - \bar\theta_A)`
        with :math:`\beta = R / (R + M)` (:func:`~pybncsmooth.estimators._warm.control_variate`;
        the kept sweeps ``mc_records`` or ``n_records`` against the twins'; a node the kept
        estimate lacks takes its back-off).  The sd, the unseen sd and the posterior draws
        are the chains' on all the rows."""
        trees = {n: t.whole("hls-bayes") for n, t in trees.items()}
        if self.previous is None:
            return self._sample(trees, None)
        warm = {n: w for n, w in ((n, previous_tree(self.previous, n, t, "warm_B")) for n, t in trees.items())
                if w is not None}
        cold = {n: t for n, t in trees.items() if n not in warm}
        out = self.warm_started(None)._sample(cold, None) if cold else {}
        if warm:
            out.update(self._sample({n: trees[n] for n in warm}, warm))
        return {n: out[n] for n in trees}

    def _sample(self, trees: Mapping[str, ContextTree], warm: Mapping[str, tuple] | None) -> dict[str, TreeEstimate]:
        names = list(trees)
        net = _Network([trees[n] for n in names])
        entropy = entropy_of(self.random_state)
        if entropy is None:
            entropy = int(np.random.SeedSequence().entropy % (2**63))
        iterations, burn = self.iterations, self.effective_burn_in
        if warm is not None:
            iterations = self.update_sweeps
            burn = max(1, iterations // 10)
        control = _control(names, trees, warm, self.previous) if warm is not None and self.update_control else None
        seeds = [chain_seed(entropy, "hls-bayes", c) for c in range(self.n_chains)]
        starts = [_start(net, names, trees, warm, c) if warm is not None else None for c in range(self.n_chains)]
        # (network, chain, key): the chains, and with the control variate the same chains on the old rows,
        # both keyed by a function of the chain's seed (common random numbers)
        jobs = [(net, c, 0) for c in range(self.n_chains)]
        if control is not None:
            keys = [int(new_state(sd)[0]) | 1 for sd in seeds]
            jobs = [(net, c, keys[c]) for c in range(self.n_chains)] + [(control[0], c, keys[c])
                                                                          for c in range(self.n_chains)]
        bar = self._progress_bar(len(jobs) * iterations, trees)
        try:
            workers = min(self.n_jobs or os.cpu_count() or 1, len(jobs))
            run = lambda job: self._chain(job[0], seeds[job[1]], bar, starts[job[1]], iterations, burn,  # noqa: E731
                                          job[2])
            if workers <= 1:
                results = [run(job) for job in jobs]
            else:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    results = list(pool.map(run, jobs))
        finally:
            if bar is not None:
                bar.close()
        old = None if control is None else (results[self.n_chains:], control[1])
        return self._estimates(results[: self.n_chains], net, [trees[n] for n in names], names, entropy, old)

    def _estimates(self, results: list, net: _Network, trees: list[ContextTree], names: list[str], entropy: int,
                   control: tuple[list, list] | None = None) -> dict[str, TreeEstimate]:
        """Every tree's estimate from the chains' results, with the coefficients and
        variances the chains ended with (``warm_B``, ``warm_var``: what an update resumes
        from); ``control``: the results of the chains on the old rows and every tree's
        kept estimate (flat, ``None``: uncorrected), for :func:`control_variate`."""
        mean = np.mean([res[0] for res in results], axis=0)
        second = np.mean([res[1] for res in results], axis=0)
        sd_all = np.sqrt(np.maximum(second - mean * mean, 0.0))
        old_mean = None if control is None else np.mean([res[0] for res in control[0]], axis=0)
        out = {}
        for t, name in enumerate(names):
            no, nn, r, K = int(net.node_off[t]), int(net.n_nodes[t]), int(net.r_t[t]), int(net.K_t[t])
            m = mean[no : no + nn, :r]
            m = m / m.sum(axis=1, keepdims=True)
            kept, R = (None, None) if control is None else control[1][t]
            M = float(sum(res[3] for res in results))
            if kept is not None:  # beta = R / (R + M): the kept estimate's sweeps against the old chains'
                m_old = old_mean[no : no + nn, :r]
                beta = 1.0 if R is None else R / (R + M)
                m = control_variate(kept, m, m_old / m_old.sum(axis=1, keepdims=True), beta)
            sd = sd_all[no : no + nn, :r]
            offsets = net.offsets[t]  # a virtual root's row 0 falls outside them
            info: dict[str, Any] = {"n_records": int(M), "n_chains": self.n_chains, "control_variate": kept is not None}
            if kept is not None and R is not None:
                info["mc_records"] = R + M
            if self.n_chains > 1:
                info["rhat"] = _tree_rhat(results, net, t)
            info["warm_B"] = np.stack([res[6][no : no + nn, :K] for res in results])
            info["warm_var"] = np.array([res[7][t] for res in results])
            probs, sds = split_levels(m, offsets), split_levels(sd, offsets)
            post, u_sd = self._posterior(results, net, t, offsets, entropy, name, trees[t], (probs, sds))
            out[name] = TreeEstimate(probs, "backoff", info, sd=sds, unseen_sd=u_sd, posterior=post)
        return out

    def _posterior(self, results: list, net: _Network, t: int, offsets: list[int], entropy: int,
                   name: str, tree: ContextTree, moments: tuple) -> tuple[HLSPosterior | None, tuple | None]:
        """Tree ``t``'s kept sweeps as its posterior with the back-off concentrations of
        its inner levels (:func:`~pybncsmooth.estimators.hls.posterior.learn_backoff`, from the tree's leaves),
        and the sd of an unseen configuration below each node (``moments``: the levels'
        posterior means and sds): below the root the missing coefficients drawn from
        their prior (its Monte Carlo seeded from the fit's entropy and the node's name),
        below a deeper node the back-off's (:func:`~pybncsmooth.estimators.hmd.backoff.centre_sd`)."""
        no, nn, r, K = int(net.node_off[t]), int(net.n_nodes[t]), int(net.r_t[t]), int(net.K_t[t])
        B = np.concatenate([res[4][:, no : no + nn, :K] for res in results])
        var = np.concatenate([res[5][:, t] for res in results])
        parent = net.parent[no : no + nn]
        if not len(B):
            return None, None
        backoff = learn_backoff(tree) if tree.depth >= 2 else None
        post = HLSPosterior(B, var, parent, offsets, r, backoff)
        rng = np.random.default_rng(chain_seed(entropy, name, 1 << 20))
        if len(offsets) <= 2:
            return post, None
        u_sd = unseen_sd(B, var, parent, offsets, r, rng)
        if not backoff:
            return post, u_sd
        return post, (u_sd[0], *centre_sd(tree, moments[0][-1], np.full(r, 1.0 / r), backoff))


def _control(names: list[str], trees: Mapping[str, ContextTree], warm: Mapping[str, tuple],
             previous: Mapping[str, tuple]) -> tuple[_Network, list] | None:
    """The control variate's network and kept estimates (:meth:`HLSBayes.estimate_all`):
    the old rows laid out on the updated trees (a node they lack has no count), and
    every tree's previous estimate at its flat rows (a tree without parents: its
    virtual root's row 0 left uncorrected; ``None`` where the estimate does not fit)
    with the sweeps behind it (:func:`kept_records`)."""
    kept: list = []
    for name in names:
        tree, old_tree = trees[name], warm[name][0]
        k = kept_on(old_tree, tree, previous[name][1].probs)
        if k is not None and tree.depth == 0:  # rows: the virtual root (left as sampled), the root
            k = np.vstack([np.full((1, tree.child_card), np.nan), k])
        kept.append((k, kept_records(previous[name][1].info)))
    if all(k[0] is None for k in kept):
        return None
    old = [with_counts(trees[n], counts_on(warm[n][0], trees[n])) for n in names]
    return _Network(old), kept


def _start(net: _Network, names: list[str], trees: Mapping[str, ContextTree], warm: Mapping[str, tuple],
           c: int) -> tuple[np.ndarray, np.ndarray]:
    """Chain ``c``'s starting coefficients (``(nodes, K_max)``, every tree's previous
    coefficients at its nodes' new places, new nodes at 0) and variances."""
    B = np.zeros((int(net.n_nodes.sum()), net.K_max))
    var = np.ones(net.T)
    for t, name in enumerate(names):
        old_tree, info = warm[name]
        prev = np.asarray(info["warm_B"])
        k = min(c, prev.shape[0] - 1)
        no, K = int(net.node_off[t]), int(net.K_t[t])
        if trees[name].depth == 0:  # a virtual root and the root: the same two rows
            idx = np.arange(2)
        else:
            idx = node_map(old_tree, trees[name])
        if prev.shape[1:] == (len(idx), K):
            B[no + idx, :K] = prev[k]
            var[t] = float(np.asarray(info["warm_var"])[k])
    return B, var


@njit(cache=True, nogil=True)
def _path_sums(B, parent, node_off, n_nodes):  # pragma: no cover - compiled
    """Every node's linear predictor: the sum of the coefficients along its path (a
    node's parent comes before it; each tree's first row is its root)."""
    eta = B.copy()
    for t in range(node_off.shape[0]):
        no = node_off[t]
        for i in range(1, n_nodes[t]):
            for k in range(B.shape[1]):
                eta[no + i, k] += eta[no + parent[no + i], k]
    return eta


def node_probs_rows(B: np.ndarray, net: _Network) -> np.ndarray:
    """The CPT columns of the watched leaves (for R-hat), one row per leaf, padded to r_max."""
    out = np.zeros((int(net.watch_off[-1]), net.r_max))
    for t in range(net.T):
        no, nn, r = int(net.node_off[t]), int(net.n_nodes[t]), int(net.r_t[t])
        P = node_probs(np.ascontiguousarray(B[no : no + nn, : net.K_t[t]]), net.parent[no : no + nn], r)
        out[net.watch_off[t] : net.watch_off[t + 1], :r] = P[net.leaf0[t] : net.leaf0[t] + net.watch_n[t]]
    return out


def _tree_rhat(results: list, net: _Network, t: int) -> float:
    a, b = int(net.watch_off[t]), int(net.watch_off[t + 1])
    draws = [res[2][:, a:b, : net.r_t[t]].reshape(res[2].shape[0], -1) for res in results]
    k = min(d.shape[0] for d in draws)
    if k < 4:
        return float("nan")
    return split_rhat(np.stack([d[:k] for d in draws]))
