r"""Bayesian hierarchical linear smoothing, HLS-IG (paper 004, Sec. 3.2 and App. B).

The design of :mod:`pybncsmooth.estimators.hls` (a coefficient vector per tree node
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
Polya-Gamma draws come from the ``polyagamma`` package.

The estimate is the posterior mean of every tree node's CPT column (the softmax of
its path sum) over the sweeps after burn-in, averaged over chains; posterior
standard deviations come from the same draws (``cpt(node, stat="sd")``).
"""

from __future__ import annotations

import math
import sys
from typing import Any, Mapping

import numpy as np
from numba import njit

from ..counting.context_tree import ContextTree
from ..errors import HyperparameterError
from ._hls_kernels import node_probs, tree_gaussian_sample
from ._mcmc import chain_seed, entropy_of, split_rhat
from .base import Estimator, TreeEstimate, register_estimator
from .hls import flatten_tree, run_threads, split_levels

__all__ = ["HLSBayes"]


@njit(cache=True, nogil=True)
def _class_offsets(eta, leaf0, m, k, K, psi):  # pragma: no cover - compiled
    """``psi_i = eta_ik - log sum_{j != k} exp(eta_ij)`` at the leaves (binary: eta_i0)."""
    for j in range(m):
        i = leaf0 + j
        if K == 1:
            psi[j] = eta[i, 0]
            continue
        mx = -1e300
        for c in range(K):
            if c != k and eta[i, c] > mx:
                mx = eta[i, c]
        s = 0.0
        for c in range(K):
            if c != k:
                s += math.exp(eta[i, c] - mx)
        psi[j] = eta[i, k] - (mx + math.log(s))


@njit(cache=True, nogil=True)
def _evidence(omega, kappa_k, psi, eta, leaf0, k, J, h):  # pragma: no cover - compiled
    """Leaf evidence on eta_k: exp(-omega/2 eta^2 + (kappa + omega C) eta), C = eta - psi."""
    for j in range(omega.shape[0]):
        c = eta[leaf0 + j, k] - psi[j]
        J[j] = omega[j]
        h[j] = kappa_k[j] + omega[j] * c


@njit(cache=True, nogil=True)
def _set_class(B, beta, parent, eta, k):  # pragma: no cover - compiled
    n = B.shape[0]
    for i in range(n):
        B[i, k] = beta[i]
    eta[0, k] = 0.0
    for i in range(1, n):
        eta[i, k] = eta[parent[i], k] + B[i, k]


@njit(cache=True, nogil=True)
def _accumulate(B, parent, r, acc, acc2):  # pragma: no cover - compiled
    P = node_probs(B, parent, r)
    for i in range(P.shape[0]):
        for x in range(r):
            acc[i, x] += P[i, x]
            acc2[i, x] += P[i, x] * P[i, x]
    return P


@register_estimator
class HLSBayes(Estimator):
    """HLS-IG: Bayesian ridge HLS by Polya-Gamma Gibbs sampling (see the module doc).

    Parameters
    ----------
    iterations:
        Sweeps per chain, burn-in included (default 4000: the authors' 2000 + 2000).
    burn_in:
        Sweeps discarded first (default ``iterations // 2``).
    n_chains:
        Independent chains (averaged; with two or more, ``summary()`` shows the split
        R-hat of the leaf estimates).
    prior_shape, prior_scale:
        The inverse-gamma prior of the global variance, ``IG(1/2, 1/2)`` by default.
    variance:
        Fix the prior variance of the coefficients instead of sampling it.
    random_state, progress, n_jobs:
        Seed (an int or a numpy Generator), progress bar (default: on for long fits
        at a terminal), threads over the nodes of a network.
    """

    name = "hls-bayes"
    stochastic = True

    def __init__(
        self,
        iterations: int = 4000,
        burn_in: int | None = None,
        n_chains: int = 1,
        prior_shape: float = 0.5,
        prior_scale: float = 0.5,
        variance: float | None = None,
        random_state: Any = None,
        progress: bool | None = None,
        n_jobs: int | None = None,
    ) -> None:
        def posint(name: str, v: Any, low: int) -> int:
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low:
                raise HyperparameterError(f"{name} must be an integer >= {low}, not {v!r}")
            return int(v)

        self.iterations = posint("iterations", iterations, 2)
        self.burn_in = None if burn_in is None else posint("burn_in", burn_in, 0)
        if self.burn_in is not None and self.burn_in >= self.iterations:
            raise HyperparameterError(f"burn_in ({burn_in}) must be smaller than iterations ({iterations})")
        self.n_chains = posint("n_chains", n_chains, 1)
        for name, v in (("prior_shape", prior_shape), ("prior_scale", prior_scale)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise HyperparameterError(f"{name} must be positive and finite, not {v!r}")
        self.prior_shape = float(prior_shape)
        self.prior_scale = float(prior_scale)
        ok = isinstance(variance, (int, float)) and math.isfinite(variance) and variance > 0
        if variance is not None and not ok:
            raise HyperparameterError(f"variance must be positive and finite, not {variance!r}")
        self.variance = None if variance is None else float(variance)
        entropy_of(random_state)  # validates
        self.random_state = random_state
        self.progress = progress
        self.n_jobs = n_jobs

    @property
    def effective_burn_in(self) -> int:
        return self.burn_in if self.burn_in is not None else self.iterations // 2

    # ------------------------------------------------------------------ sampling
    def _chain(self, tree: ContextTree, seed: int, bar: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        from polyagamma import random_polyagamma

        parent, leaf0, counts, _, _ = flatten_tree(tree)
        n = len(parent)
        m, r = counts.shape
        K = r if r >= 3 else 1
        N = counts.sum(axis=1)
        kappa = (counts - N[:, None] / 2.0) if K == r else (counts[:, 1:2] - N[:, None] / 2.0)
        kappa = np.ascontiguousarray(kappa.T)  # (K, m)
        rng = np.random.default_rng(seed)
        B = np.zeros((n, K))
        eta = np.zeros((n, K))
        psi = np.empty(m)
        Jl = np.empty(m)
        hl = np.empty(m)
        beta = np.empty(n)
        acc = np.zeros((n, r))
        acc2 = np.zeros((n, r))
        var = self.variance if self.variance is not None else 1.0
        d = (n - 1) * K
        burn = self.effective_burn_in
        thin = max(1, (self.iterations - burn) // 500)
        trace = []
        has_rows = N > 0  # PG(0, .) is 0: leaves without rows (a parentless node with no data)
        all_rows = bool(has_rows.all())
        for it in range(self.iterations):
            for k in range(K):
                _class_offsets(eta, leaf0, m, k, K, psi)
                if all_rows:
                    omega = random_polyagamma(N, psi, random_state=rng)
                else:
                    omega = np.zeros(m)
                    omega[has_rows] = random_polyagamma(N[has_rows], psi[has_rows], random_state=rng)
                _evidence(omega, kappa[k], psi, eta, leaf0, k, Jl, hl)
                tree_gaussian_sample(parent, leaf0, Jl, hl, var, rng.standard_normal(n), beta)
                _set_class(B, beta, parent, eta, k)
            if self.variance is None:
                ss = float((B[1:] ** 2).sum())
                var = 1.0 / rng.gamma(self.prior_shape + d / 2.0, 1.0 / (self.prior_scale + ss / 2.0))
            if it >= burn:
                P = _accumulate(B, parent, r, acc, acc2)
                if self.n_chains > 1 and (it - burn) % thin == 0:
                    trace.append(P[leaf0:].ravel().copy())
            if bar is not None and (it + 1) % 100 == 0:
                bar.update(100)
        kept = self.iterations - burn
        draws = np.array(trace) if trace else np.zeros((0, (n - leaf0) * r))
        return acc / kept, acc2 / kept, draws, kept

    def _progress_bar(self, total: int, trees: Mapping[str, ContextTree]) -> Any:
        show = self.progress
        if show is None:
            work = total * sum(t.n_nodes for t in trees.values()) / max(len(trees), 1)
            show = sys.stderr.isatty() and work > 5e6
        if not show:
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover
            return None
        return tqdm(total=total, desc="HLS-bayes sweeps", unit="sweep", leave=False)

    def _estimate_tree(self, tree: ContextTree, entropy: int | None, name: str, bar: Any) -> TreeEstimate:
        results = [self._chain(tree, chain_seed(entropy, name, c), bar) for c in range(self.n_chains)]
        mean = np.mean([res[0] for res in results], axis=0)
        second = np.mean([res[1] for res in results], axis=0)
        sd = np.sqrt(np.maximum(second - mean * mean, 0.0))
        mean = mean / mean.sum(axis=1, keepdims=True)
        _, _, _, offsets, virtual = flatten_tree(tree)
        if virtual:
            mean, sd, offsets = mean[1:], sd[1:], [0, 1]
        info: dict[str, Any] = {"n_records": int(sum(res[3] for res in results)), "n_chains": self.n_chains}
        if self.n_chains > 1:
            draws = [res[2] for res in results]
            k = min(d.shape[0] for d in draws)
            if k >= 4:
                info["rhat"] = split_rhat(np.stack([d[:k] for d in draws]))
        return TreeEstimate(split_levels(mean, offsets), "backoff", info, sd=split_levels(sd, offsets))

    def estimate(self, tree: ContextTree) -> TreeEstimate:
        return self.estimate_all({tree.child: tree})[tree.child]

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Sample every node's tree (each tree and chain its own stream from
        ``random_state``, so threads do not change the answer)."""
        entropy = entropy_of(self.random_state)
        if entropy is None:
            entropy = int(np.random.SeedSequence().entropy % (2**63))
        bar = self._progress_bar(len(trees) * self.n_chains * self.iterations, trees)
        try:
            return run_threads(lambda t: self._estimate_tree(t, entropy, t.child, bar), trees, self.n_jobs)
        finally:
            if bar is not None:
                bar.close()
