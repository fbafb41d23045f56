r"""Hierarchical Multinomial-Dirichlet estimation by variational inference
(Azzimonti, Corani and Zaffalon 2019).

**One CPT at a time** (Sec. 2.2-4).  The columns of the CPT of ``X`` (one per
observed parent configuration ``y``) share a latent Dirichlet parameter:

.. math::
    \alpha \sim s \cdot \mathrm{Dir}(\alpha_0), \qquad
    \theta_{X \mid y} \mid \alpha \sim \mathrm{Dir}(\alpha), \qquad
    X \mid y, \theta \sim \mathrm{Cat}(\theta_{X \mid y}).

The estimate is the posterior mean (eq. 8) with the variational moments,
:math:`\hat\theta_{x \mid y} = (n_{xy} + s \kappa_x) / (n_y + s)`: every column is
shrunk toward the learned pooled distribution :math:`\kappa = E_q[\alpha] / s`
and tends to the relative frequencies as its counts grow.  A parent
configuration with no data backs off to the deepest node of its context tree that
has: the root gives :math:`\kappa`, a deeper node the centre of the columns below it
(:mod:`~pybncsmooth.estimators.hmd.backoff`).  Defaults: ``s = |X|`` and
``alpha0 = 1`` per state, the paper's choice (Sec. 4.1).  Only observed parent
configurations enter the model: the exact posterior of :math:`\alpha` does not
depend on empty columns (they integrate out), so this keeps the fit independent
of how many configurations were never seen.

**Multi-domain CPTs, nested (default).**  With ``domain=`` every context tree
splits on the domain *last*: a domain's column for parent configuration ``y`` is a
leaf below ``y`` pooled over the domains.  The pooled tree (the domain split removed)
is fitted by the model above, giving :math:`m_y`, the posterior mean of ``y``'s
column; each domain's column is then :math:`\theta_{y,d} \sim \mathrm{Dir}(s_D\,m_y)`,
the same model one level down with the mean held at its estimate, and the domain
concentration :math:`s_D` (one per node) maximises the Dirichlet-multinomial marginal
likelihood of the domains' counts, integrated over (``s_domain`` fixes it).  A
domain's estimate is :math:`(n_{yxd} + s_D m_{yx}) / (n_{yd} + s_D)` (eq. 8 with
:math:`\kappa` fixed): alike domains give a large :math:`s_D` and pool, domains that
differ keep their own frequencies.  A configuration a domain never saw, and a domain
unseen in training, get :math:`m_y`.

**Domain-pooled joint tables** (Sec. 5, bnlearn's ``bn.fit(method = "hdir", group = )``:
``domain_model="joint"``, implied by ``iss=`` and ``compat="bnlearn"``).  The model is
put on the *joint* cells :math:`x' = (x, \pi)` of the node and its parents, with one
column per domain (every level of the domain variable, with or without rows), the
domain splitting the tree first: each domain's joint table is shrunk toward the
others, with the same ``alpha0`` for every cell (as bnlearn) and :math:`s = |X'|`, the
number of joint cells (the paper's convention), or bnlearn's :math:`s = \mathrm{iss} / J`
when ``iss`` is given.  A domain's CPT is its :math:`\nu` normalised over ``x`` in each
parent configuration; a domain or configuration with no data gets the
population-level CPT :math:`\kappa(x, \pi) / \sum_{x'} \kappa(x', \pi)`.  Measured on
survey data whose domains are alike, this layout loses to ignoring the domains (a
thin domain's configurations back off to its own marginal, not to the configuration
pooled over domains), which is why it is not the default.

**An expert network** (``fit(prior=P, prior_weight=w)``): the hyperprior of the shared
:math:`\alpha` becomes :math:`\alpha / s \sim \mathrm{Dir}(w P(x))`, the expert's
marginal of ``X`` with ``w`` pseudo-counts, in place of :math:`\mathrm{Dir}(\alpha_0)`
(``alpha0``): every column shrinks toward a :math:`\kappa` pulled toward the expert's
:math:`P(x)`.  (The joint domain model takes no prior.)

**Fitting.**  The variational parameters :math:`(\nu, \tau, \kappa)` of eq. (12)
maximise the bound L~ (App. B.1) by coordinate ascent (Algorithm 1): the
closed-form :math:`\nu = s\kappa + n` (eq. 14), Newton on :math:`\log\tau`
(App. B.3.1) and constrained Newton on :math:`\kappa` (App. B.3.2).  By default
it runs to the fixed point (relative change of the bound below ``tol``), the
bound never decreasing; ``compat="bnlearn"`` replays bnlearn's own iteration
(its starting values, restarts, line search and stopping rules), whose tables
stop short of the fixed point by up to about 2e-3, and reproduces them.

**The concentration ``s`` and the uncertainty.**  The paper fixes ``s = |X|``; by
default ``s`` is learned instead (the uniform prior on the intra-class correlation
:math:`1/(1 + s)`, ``s`` within :math:`[10^{-3}, 10^{7}]`, integrated out on a grid,
:math:`u` importance-sampled given each value with the variational fit as proposal:
:mod:`~pybncsmooth.estimators.hmd.posterior`).  It decides how alike the columns
are, and a wrong one makes every interval wrong: on networks whose columns are
nearly deterministic, ``s = |X|`` gives 90% intervals that cover 50-70% of the
truths (the variational approximation is a minor part of that), the learned ``s``
85-95% (``benchmarks/bench_coverage.py``).  ``s="levels"`` keeps the paper's
estimator (variational inference at ``s = |X|``, eq. (9) for the sds with
:math:`\mathrm{Cov}_q(\alpha) = s^2 (\mathrm{diag}\,\kappa - \kappa\kappa^T) / (\tau + 1)`),
as does a number.  Given ``(s, u)`` a column is exactly
:math:`\mathrm{Dir}(n_y + s u)`: means, sds and draws (``sample_parameters``) mix it
over the posterior of ``(s, u)``; an unseen configuration below the root gets the
predictive :math:`\mathrm{Dir}(s u)` mixed the same way, one below a deeper node of
its context tree the spread of the columns around that node
(:mod:`~pybncsmooth.estimators.hmd.backoff`: how much configurations differ from their
ancestors, learned per level of the tree).  The joint domain model keeps its fixed ``s`` (bnlearn's) and its variational
``q``; for a domain's CPT (a ratio of joint cells) the sd's second term uses the
delta method, and draws normalise the domain's joint Dirichlet within each
configuration (exact given ``u``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np

from ...counting.context_tree import ContextTree, config_index
from ...errors import ConvergenceWarning, DataError, DenseTableTooLargeError, HyperparameterError
from ._kernels import (
    W_INNER_CAP,
    W_KAPPA_CAP,
    W_OUTER_CAP,
    W_TAU_CAP,
    W_TAU_RESTART,
    evidence_bound_newton,
    outer_bound,
    outer_bound_sparse,
    vi_bnlearn,
    vi_converge,
    vi_converge_sparse,
)
from ...validation import Param
from ..domains.pooling import concentration_info, fixed_concentration, shrink_weight
from .backoff import backoff_concentration, log_icc_prior, node_centres
from ..posterior import predictive_sd, trapezoid_weights
from .posterior import S_MAX, S_MIN, HMDPosterior, JointHMDPosterior, SPosterior, fixed_s, learn_s, mixture_moments
from ..base import Estimator, TreeEstimate, map_trees, register_estimator

__all__ = ["HMD", "fit_hmd_matrix", "fit_hmd_sparse", "hmd_evidence", "HMDFit", "exact_alpha_moments"]

#: largest joint table (cells x domains) a domain-pooled fit builds
MAX_JOINT_CELLS = 50_000_000
_TRACE_LEN = 10_000
#: default cap of outer iterations: domain-pooled fits with many domains and few rows each
#: (tau large, kappa nearly settled) can need just over 1000 to reach tol = 1e-10
_MAX_ITER = 5000

_WARNING_TEXT = {
    W_TAU_RESTART: "the Newton iteration on tau left the positive reals and was restarted",
    W_TAU_CAP: "the Newton iteration on tau reached its cap of 200 steps",
    W_KAPPA_CAP: "the Newton iteration on kappa reached its cap of 200 steps",
    W_INNER_CAP: "the inner (tau, kappa) loop reached its cap of 200 iterations",
    W_OUTER_CAP: "the outer loop reached its iteration cap before converging",
}


class HMDFit:
    """The variational fit of one count matrix (rows: states, columns: groups).

    Attributes: ``nu`` (R x J), ``kappa`` (R), ``tau``, ``s``, ``elbo`` (the bound
    L~, constants included), ``elbo_trace`` (after each outer iteration; default
    mode only), ``iterations``, ``converged``, ``warnings`` (texts).
    """

    def __init__(self, N, alpha0, s, nu, kappa, tau, iterations, converged, flags, trace, bound=None) -> None:
        self.N = N
        self.alpha0 = alpha0
        self.s = s
        self.nu = nu
        self.kappa = kappa
        self.tau = float(tau)
        self.iterations = int(iterations)
        self.converged = bool(converged)
        self.warnings = [txt for bit, txt in _WARNING_TEXT.items() if flags & bit]
        s0 = float(alpha0.sum())
        if bound is None:
            bound = outer_bound(N, nu, kappa, tau, alpha0, s)
        self.elbo = float(bound) + math.lgamma(s0)
        self.elbo_trace = trace + math.lgamma(s0) if trace is not None else None

    @property
    def alpha_mean(self) -> np.ndarray:
        """:math:`E_q[\\alpha] = s\\kappa`."""
        return self.s * self.kappa

    @property
    def alpha_cov(self) -> np.ndarray:
        """:math:`\\mathrm{Cov}_q(\\alpha) = s^2 (\\mathrm{diag}\\,\\kappa - \\kappa\\kappa^T) / (\\tau + 1)`."""
        k = self.kappa
        return self.s**2 * (np.diag(k) - np.outer(k, k)) / (self.tau + 1.0)


def fit_hmd_matrix(
    N: np.ndarray,
    s: float,
    alpha0: float | np.ndarray = 1.0,
    *,
    compat: str | None = None,
    tol: float = 1e-10,
    max_iter: int = _MAX_ITER,
) -> HMDFit:
    """Variational fit of the hierarchical MD model to a count matrix.

    ``N[x, y]``: counts of state ``x`` under conditioning state (column) ``y``;
    ``s``: the concentration of the columns around :math:`\\alpha`; ``alpha0``:
    the Dirichlet parameter of :math:`\\alpha / s` (a scalar for every state, or a
    vector).  ``compat="bnlearn"`` runs bnlearn's ``hdir`` iteration instead of
    iterating to the fixed point.
    """
    N = np.ascontiguousarray(N, dtype=np.float64)
    if N.ndim != 2 or N.shape[0] < 1 or N.shape[1] < 1:
        raise ValueError(f"N must be a non-empty matrix, got shape {N.shape}")
    R, J = N.shape
    a0 = np.broadcast_to(np.asarray(alpha0, dtype=np.float64), (R,)).copy()
    flags = np.zeros(1, dtype=np.int64)
    if compat == "bnlearn":
        nu, kappa, tau, it = vi_bnlearn(N, a0, float(s), flags)
        return HMDFit(N, a0, s, nu, kappa, tau, it, not (flags[0] & W_OUTER_CAP), int(flags[0]), None)
    k0 = N.sum(axis=1) + a0
    k0 /= k0.sum()
    trace = np.full(min(max_iter, _TRACE_LEN), np.nan)
    nu, kappa, tau, it, conv = vi_converge(N, a0, float(s), k0, float(tol), int(max_iter), trace, flags)
    return HMDFit(N, a0, s, nu, kappa, tau, it, conv, int(flags[0]), trace[: min(it, len(trace))])


def hmd_evidence(T: np.ndarray, s: float, alpha0: float | np.ndarray = 1.0, *, tol: float = 1e-9,
                 max_iter: int = 100) -> float:
    r"""The variational lower bound of the log marginal likelihood of independent
    hierarchical Multinomial-Dirichlet problems, summed: ``T[g, y, x]`` counts state
    ``x`` in column ``y`` of problem ``g``, each problem with its own shared
    :math:`\alpha_g \sim s \cdot \mathrm{Dir}(\alpha_0)` and
    :math:`\theta_{g,y} \mid \alpha_g \sim \mathrm{Dir}(\alpha_g)`.  Each term is the
    bound :attr:`HMDFit.elbo` of :func:`fit_hmd_matrix` at its fixed point, on the
    problem's non-empty columns (an empty column integrates out of the marginal
    likelihood, and leaving it out makes the bound tighter); a problem without counts
    adds 0.  The likelihood is that of the sequence of observations (no multinomial
    coefficients), as the BDeu score's.

    The fixed point is found by Newton steps on the bound with ``nu`` in its closed
    form (``s kappa + N``), a function of ``(kappa, tau)`` alone, from the pooled
    frequencies (:func:`~pybncsmooth.estimators.hmd._kernels.vi_newton_sparse`): the
    same maximum as the fit's coordinate ascent, in a few steps; ``tol`` is the Newton
    decrement (in nats) below which one last step is taken, so each term is the
    maximum to far below ``tol``.  Every point visited is a valid lower bound."""
    T = np.ascontiguousarray(T, dtype=np.float64)
    if T.ndim != 3:
        raise ValueError(f"T must be a (groups, columns, states) array, got shape {T.shape}")
    a0 = np.broadcast_to(np.asarray(alpha0, dtype=np.float64), (T.shape[2],)).copy()
    flags = np.zeros(1, dtype=np.int64)
    return float(evidence_bound_newton(T, a0, float(s), float(tol), int(max_iter), flags))


def fit_hmd_sparse(
    rows: np.ndarray,
    cols: np.ndarray,
    counts: np.ndarray,
    R: int,
    J: int,
    s: float,
    alpha0: float | np.ndarray = 1.0,
    *,
    tol: float = 1e-10,
    max_iter: int = _MAX_ITER,
) -> HMDFit:
    """:func:`fit_hmd_matrix` (default mode) on the ``R x J`` count matrix whose non-zero
    entries are ``counts`` at ``(rows, cols)``: the same fixed point in O(R + nnz) memory
    and time per iteration (the empty cells of a column are summed in closed form).
    ``nu`` is not formed (it is ``s kappa + N``): the fit's ``nu`` is ``None``."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    vals = np.asarray(counts, dtype=np.float64)
    keep = vals > 0
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    order = np.argsort(rows, kind="stable")
    vals_sorted = np.ascontiguousarray(vals[order])
    xptr = np.zeros(R + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=R), out=xptr[1:])
    colsum = np.bincount(cols, weights=vals, minlength=J).astype(np.float64)
    rowsum = np.bincount(rows, weights=vals, minlength=R).astype(np.float64)
    a0 = np.broadcast_to(np.asarray(alpha0, dtype=np.float64), (R,)).copy()
    k0 = rowsum + a0
    k0 /= k0.sum()
    flags = np.zeros(1, dtype=np.int64)
    trace = np.full(min(max_iter, _TRACE_LEN), np.nan)
    kappa, tau, it, conv = vi_converge_sparse(
        xptr, vals_sorted, colsum, a0, float(s), k0, float(tol), int(max_iter), trace, flags
    )
    bound = outer_bound_sparse(xptr, vals_sorted, colsum, kappa, tau, a0, float(s))
    return HMDFit(None, a0, s, None, kappa, tau, it, conv, int(flags[0]), trace[: min(it, len(trace))], bound=bound)


def _population_marginal(kap: np.ndarray, s: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """A domain-pooled fit's population marginal of the node (``kappa`` summed over the
    parent configurations) and its sd: the root of the domain's tree."""
    kx = kap.sum(axis=0, keepdims=True)
    return kx / kx.sum(), _entry_sd(np.zeros((1, kap.shape[1])), kx, s, tau)


def _domain_estimate(probs: list, sds: list, kap: np.ndarray, s: float, tau: float, info: dict) -> TreeEstimate:
    """The estimate of a domain-pooled tree: its levels, and the population CPT
    (``kappa`` normalised per parent configuration) for a domain or configuration
    without data."""
    fallback = kap / kap.sum(axis=1, keepdims=True)
    fallback_sd = _entry_sd(np.zeros(kap.shape), kap, s, tau)
    post = JointHMDPosterior(s, kap.reshape(-1), tau, kap.shape[1])
    return TreeEstimate(
        tuple(probs), "fallback", info, sd=tuple(sds), fallback=fallback, fallback_sd=fallback_sd, fallback_from=1,
        posterior=post,
    )


def _entry_sd(n: np.ndarray, k: np.ndarray, s: float, tau: float) -> np.ndarray:
    """Posterior sd of the entries of columns with counts ``n`` (m, r) whose
    pooled parameters are ``s * k`` (m, r), ``alpha ~ s Dir(tau kappa)``.

    With :math:`m = (n_x + s k_x)/(n + sK)`, :math:`K = \\sum_x k_x`:
    :math:`\\mathrm{Var} = m(1-m)/(sK + n + 1) + V_\\alpha (sK + n)/(sK + n + 1)`, where
    :math:`V_\\alpha` is the variance of :math:`m` due to :math:`\\alpha`.  For one CPT
    (``K = 1``) this is eq. (9) exactly; for a sub-table of a joint (a domain's CPT)
    :math:`V_\\alpha` is the delta-method variance of the ratio.
    """
    K = k.sum(axis=1, keepdims=True)
    nt = n.sum(axis=1, keepdims=True)
    denom = s * K + nt
    m = (n + s * k) / denom
    quad = k - 2.0 * m * k + m * m * K - (k - m * K) ** 2
    v_alpha = s * s / ((tau + 1.0) * denom * denom) * np.maximum(quad, 0.0)
    var = m * (1.0 - m) / (denom + 1.0) + v_alpha * denom / (denom + 1.0)
    return np.sqrt(np.maximum(var, 0.0))


def _prior_s(r: int, a0: np.ndarray, s: float | None) -> SPosterior:
    """The prior as a posterior without data: ``u ~ Dir(alpha0)`` (``kappa`` its mean,
    ``tau`` its total) and ``s`` fixed or under its prior (a grid a decade apart)."""
    kappa = a0 / a0.sum()
    if s is not None:
        return fixed_s(s, kappa, float(a0.sum()))
    log_grid = np.arange(np.log(S_MIN), np.log(S_MAX) + 1e-9, np.log(10.0))
    grid = np.exp(log_grid)
    w = (np.exp(log_icc_prior(log_grid)) * trapezoid_weights(log_grid))[:, None]
    K = len(grid)
    return SPosterior(grid, np.tile(kappa, (K, 1, 1)), w / w.sum(),
                      q=(np.tile(kappa, (K, 1)), np.full(K, float(a0.sum()))))


def _one_column(n: np.ndarray, a0: np.ndarray) -> SPosterior:
    r"""The posterior of a table with one column (a node without parents) when ``s`` is
    learned: with a single column there is nothing to pool and ``s`` (how alike the
    columns are) is not identified, while integrating it over its prior makes the
    column's marginal prior a spike at the simplex's vertices (``s`` near 0 puts
    :math:`\mathrm{Dir}(s u)` at a vertex), so a level seen in none of 200 rows gets an
    upper bound near 1e-4 whatever its truth.  The column is the pooled vector itself,
    :math:`\theta = u \sim \mathrm{Dir}(\alpha_0)` (the limit :math:`s \to \infty` of
    Azzimonti et al. 2019, Sec. 2.2), whose posterior is exactly
    :math:`\mathrm{Dir}(n + \alpha_0)`: ``q(u)`` with :math:`\tau\kappa = n + \alpha_0`
    at ``s =`` :data:`S_MAX`."""
    a = np.asarray(n, dtype=np.float64) + a0
    return fixed_s(S_MAX, a / a.sum(), float(a.sum()))


def _tree_levels(tree: ContextTree, leaves: np.ndarray, post: SPosterior, a0: np.ndarray
                 ) -> tuple[list, list, list, list]:
    """Means and sds of every level of ``tree``, the sds of a configuration backing off to
    each node above the leaves, and each inner level's back-off concentration
    (:mod:`~pybncsmooth.estimators.hmd.backoff`): the leaves their columns' posteriors; the root the pooled
    ``kappa`` with the predictive :math:`\\mathrm{Dir}(s u)`; a node of level ``i >= 1``
    the centre :math:`\\phi_a` of the leaves below it, and around it
    :math:`\\mathrm{Dir}(t_i \\phi_a)`."""
    r = tree.child_card
    leaf_p, leaf_sd = mixture_moments(leaves, post)
    if tree.depth == 0:
        return [leaf_p], [leaf_sd], [], []
    kappa, prior_sd = mixture_moments(np.zeros((1, r)), post)
    probs, sds, unseen_sd, backoff = [kappa], [prior_sd], [prior_sd], []
    for i in range(1, tree.depth):
        log_t, w = backoff_concentration(tree, i, leaf_p, a0)
        p, sd = node_centres(tree, i, leaf_p, a0, float(np.exp(w @ log_t)))
        probs.append(p)
        sds.append(sd)
        backoff.append((log_t, w))
        unseen_sd.append(predictive_sd(p, sd, shrink_weight(log_t, w)))
    return probs + [leaf_p], sds + [leaf_sd], unseen_sd, backoff


def _s_info(post: SPosterior) -> dict[str, Any]:
    """What a fit reports of its ``s``: the posterior geometric mean (the value when
    fixed), the grid and its weights, ``kappa`` (the posterior mean of ``u``) and, for a
    variational fit (fixed ``s``), ``tau``."""
    info = {"s": post.s_center, "s_grid": post.s, "s_weights": post.s_weights, "kappa": post.kappa_mean}
    if post.q is not None:
        info["tau"] = float(post.s_weights @ post.q[1])
    return info


@register_estimator
class HMD(Estimator):
    r"""Hierarchical Multinomial-Dirichlet CPTs by variational inference (Azzimonti et al. 2019).

    See the module documentation for the model.  One CPT at a time, ``s`` is learned by
    default (integrated over its posterior: see the module documentation);
    ``s="levels"`` is the paper's :math:`s = |X|`, the number of states that share
    :math:`\alpha` (the node's levels), and a number fixes it.  A domain-pooled joint fit
    keeps a fixed ``s``: by default the paper's, the joint states ``r * q`` of node and
    parents; with ``iss`` (or ``compat="bnlearn"``) bnlearn's ``iss / J`` with ``J``
    domains (bnlearn's default ``iss`` is 1); give ``iss`` or ``s``, not both.
    ``compat="bnlearn"`` reproduces ``bn.fit(method = "hdir")`` exactly (domain-pooled
    fits only; ``s``, ``tol`` and ``max_iter`` are then bnlearn's and cannot be set).
    Multi-domain fits: ``domain_model="nested"`` (the default) splits on the domain last
    and learns how much each node pools (``s_domain`` fixes it); ``"joint"`` is
    Azzimonti, Corani & Zaffalon (2019), Sec. 5 on the joint cells (bnlearn's ``hdir``;
    implied by ``iss`` and ``compat``).  A fit stops when the relative change of the
    bound is below ``tol`` (default 1e-10) and ``kappa`` has settled, or after
    ``max_iter`` outer iterations (default 5000; a :class:`ConvergenceWarning` says so;
    with ``s`` learned the fits only propose, at most 200 iterations each);
    ``n_jobs`` threads run over the nodes of a network.
    """

    name = "hmd"
    prior_role = "the base measure of the columns' shared alpha: alpha / s ~ Dir(w P(x)) in place of Dir(alpha0)"
    prior_replaces = ("alpha0",)
    # s, alpha0, iss: outside [1e-10, 1e10] the variational updates under- or overflow
    # (s = 1e154 divides by zero, 1e308 never converges); the estimates at the bounds are
    # already those of no pooling and of complete pooling
    params = (
        Param("s", "float", None, "concentration of the columns around the pooled alpha (default: learned, "
              "integrated over its posterior; 'levels': the paper's, the node's number of levels)", low=1e-10,
              high=1e10, optional=True, also=("levels",)),
        Param("alpha0", "float", 1.0, "Dirichlet parameter of alpha / s, the same for every state", low=1e-10,
              high=1e10),
        Param("iss", "float", None, "bnlearn's imaginary sample size of a domain-pooled fit: s = iss / J",
              low=1e-10, high=1e10, optional=True),
        Param("compat", "choice", None, "'bnlearn' replays bn.fit(method = 'hdir') exactly", choices=("bnlearn",),
              optional=True),
        Param("domain_model", "choice", None, "multi-domain fits: 'nested' (default; the domain split last, its "
              "concentration learned) or 'joint' (paper Sec. 5 / bnlearn's hdir)", choices=("nested", "joint"),
              optional=True),
        Param("s_domain", "float", None, "nested multi-domain fits: concentration of a domain's columns around the "
              "pooled ones (default: learned by marginal likelihood)", low=1e-10, high=1e10, optional=True),
        Param("tol", "float", None, "relative change of the bound to stop at (default 1e-10)", strict=True,
              optional=True),
        Param("max_iter", "int", None, "outer iterations at most (default 5000)", low=1, optional=True),
    )

    def _check(self) -> None:
        s, iss, compat, domain_model = self.s, self.iss, self.compat, self.domain_model
        s_domain, tol, max_iter = self.s_domain, self.tol, self.max_iter
        if domain_model == "nested" and (compat == "bnlearn" or iss is not None):
            raise HyperparameterError(
                "domain_model='nested' does not take " + ("compat='bnlearn'" if compat else "iss=")
                + " (bnlearn's hdir is the joint model: domain_model='joint')"
            )
        if s_domain is not None and self.domain_split == "first":
            raise HyperparameterError("s_domain= applies to domain_model='nested' (the joint model has s or iss)")
        if compat == "bnlearn":
            for name, val, why in (
                ("s", s, "it sets s = iss / number of groups; give iss"),
                ("tol", tol, "its stopping rule is fixed (relative change below 1.49e-8)"),
                ("max_iter", max_iter, "its iteration caps are fixed (200)"),
            ):
                if val is not None:
                    raise HyperparameterError(
                        f"compat='bnlearn' does not take {name}= (bnlearn's hdir has no such option: {why})"
                    )
        if s is not None and iss is not None:
            raise HyperparameterError("give iss (s = iss / number of domains) or s, not both")

    @property
    def domain_split(self) -> str:
        """``"first"`` for the joint model (bnlearn's layout), else ``"last"``."""
        joint = self.domain_model == "joint" or self.compat == "bnlearn" or self.iss is not None
        return "first" if joint else "last"

    # ------------------------------------------------------------------ helpers
    def _run(self, N: np.ndarray, s: float, a0: np.ndarray | None = None) -> HMDFit:
        return fit_hmd_matrix(
            N,
            s,
            self.alpha0 if a0 is None else a0,
            compat=self.compat,
            tol=self.tol if self.tol is not None else 1e-10,
            max_iter=self.max_iter if self.max_iter is not None else _MAX_ITER,
        )

    @staticmethod
    def _info(fit: HMDFit) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kappa": fit.kappa,
            "tau": fit.tau,
            "s": float(fit.s),
            "elbo": fit.elbo,
            "iterations": fit.iterations,
            "converged": fit.converged,
        }
        if fit.elbo_trace is not None:
            info["elbo_trace"] = fit.elbo_trace
        if fit.warnings:
            info["warnings"] = "; ".join(fit.warnings)
        return info

    @staticmethod
    def _warn(results: Mapping[str, TreeEstimate]) -> None:
        for node, est in results.items():
            if est.info.get("warnings"):
                warnings.warn(f"hmd, node {node!r}: {est.info['warnings']}", ConvergenceWarning, stacklevel=3)

    # ------------------------------------------------------------------ one CPT
    def estimate(self, tree: ContextTree) -> TreeEstimate:
        """Hierarchical MD over the observed parent configurations of one tree."""
        out = self._estimate_one(tree)
        self._warn({tree.child: out})
        return out

    def _estimate_one(self, tree: ContextTree) -> TreeEstimate:
        if self.compat == "bnlearn":
            raise HyperparameterError(
                "compat='bnlearn' reproduces bnlearn's hdir, which pools domains: pass domain= "
                "(bnlearn's group=) or drop compat"
            )
        if self.iss is not None:
            raise HyperparameterError(
                "iss= applies to domain-pooled fits (bnlearn's hdir: s = iss / number of domains); "
                "for one CPT at a time set s="
            )
        r = tree.child_card
        leaves = tree.levels[-1].counts.astype(np.float64)
        prior = self.node_prior(tree)
        # an expert network: alpha / s ~ Dir(w P(x)), its mean the expert's marginal
        a0 = np.full(r, float(self.alpha0)) if prior is None else np.maximum(prior.weight * prior.marginal(), 1e-10)
        tol = self.tol if self.tol is not None else 1e-10
        max_iter = self.max_iter if self.max_iter is not None else _MAX_ITER
        if leaves.shape[0] == 0:  # no data at all: the prior
            post = _prior_s(r, a0, None if self.s is None else (float(r) if self.s == "levels" else self.s))
            info: dict[str, Any] = {"iterations": 0, "converged": True}
        elif self.s is None and tree.depth == 0:  # one column: nothing to pool, the column is u
            post = _one_column(leaves[0], a0)
            info = {"iterations": 0, "converged": True}
        elif self.s is None:
            post = learn_s(leaves.T, a0, tol, max_iter)
            info = {"iterations": post.iterations, "converged": True}
        else:
            s = float(r) if self.s == "levels" else float(self.s)
            fit = self._run(leaves.T, s, a0)
            post = fixed_s(s, fit.kappa, fit.tau, fit.iterations, fit.converged)
            info = self._info(fit)
        info.update(_s_info(post))
        probs, sds, unseen_sd, backoff = _tree_levels(tree, leaves, post, a0 / r)
        if backoff:
            info["backoff_t"] = np.array([concentration_info(*b)["s_domain"] for b in backoff])
        return TreeEstimate(tuple(probs), "backoff", info, sd=tuple(sds), unseen_sd=tuple(unseen_sd),
                            posterior=HMDPosterior(post, backoff, a0 / r))

    # ------------------------------------------------------------------ domains
    def domain_concentration(
        self, counts: np.ndarray, mean: np.ndarray, prior: np.ndarray | None = None, groups: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``s_domain`` if given, else the posterior of the base class."""
        if self.s_domain is not None:
            return fixed_concentration(self.s_domain)
        return super().domain_concentration(counts, mean, prior, groups)

    def new_domain_prior(self, tree: ContextTree, pooled: TreeEstimate, prior: np.ndarray | None,
                         log_s: np.ndarray, weights: np.ndarray, leaves_est: tuple) -> dict:
        """Nothing with ``s_domain`` given (a new domain takes it too), else the base class's."""
        if self.s_domain is not None:
            return {}
        return super().new_domain_prior(tree, pooled, prior, log_s, weights, leaves_est)

    def _estimate_domain(self, tree: ContextTree) -> TreeEstimate:
        """Domain-pooled joint tables (Azzimonti et al. 2019, Sec. 5, bnlearn's hdir): the first
        split of ``tree`` is the domain."""
        r = tree.child_card
        J = tree.parent_cards[0]
        pcards = tree.parent_cards[1:]
        q = int(np.prod(pcards, dtype=np.int64)) if pcards else 1
        R = r * q
        dense = self.compat == "bnlearn"  # bnlearn's iteration is replayed on the dense table
        if (R * J if dense else R) > MAX_JOINT_CELLS:
            raise DenseTableTooLargeError(
                tree.child,
                R * J if dense else R,
                MAX_JOINT_CELLS,
                what=f"the domain-pooled hmd model of node {tree.child!r} ({R:,} joint states"
                + (f" x {J:,} domains)" if dense else ")"),
                hint="the model covers every configuration of the node and its parents"
                + (" in every domain" if dense else "")
                + "; use fewer parents, or method='hdp' / 'mestimate' with domain=, which stay sparse",
            )
        if self.s is not None and self.s != "levels":
            s = self.s
        elif self.iss is not None or self.compat == "bnlearn":
            s = (self.iss if self.iss is not None else 1.0) / J  # bnlearn: s = iss / J, iss = 1
        else:
            s = float(R)  # the paper's s = |X'|, the number of joint states
        if not dense:
            return self._estimate_domain_sparse(tree, s, q, R, J)
        configs, counts = tree.leaf_table()
        N = np.zeros((q, r, J))
        if len(counts):
            cfg = config_index(configs[:, 1:], pcards)
            N[cfg, :, configs[:, 0]] = counts
        fit = self._run(N.reshape(R, J), s)
        info = self._info(fit)
        nu = fit.nu.reshape(q, r, J)
        kap = fit.kappa.reshape(q, r)
        tau = fit.tau
        probs, sds = [], []
        for i in range(len(tree.levels)):
            if i == 0:  # the population marginal of the node
                p0, sd0 = _population_marginal(kap, s, tau)
                probs.append(p0)
                sds.append(sd0)
                continue
            # nodes (domain, p1..p_{i-1}): aggregate the deeper parents
            node_cfg = tree.node_configs(i)
            dom = node_cfg[:, 0]
            head = pcards[: i - 1]
            tail = int(np.prod(pcards[i - 1 :], dtype=np.int64)) if pcards[i - 1 :] else 1
            qh = int(np.prod(head, dtype=np.int64)) if head else 1
            hcfg = config_index(node_cfg[:, 1:i], head)
            nu_h = nu.reshape(qh, tail, r, J).sum(axis=1)
            k_h = kap.reshape(qh, tail, r).sum(axis=1)
            n_h = N.reshape(qh, tail, r, J).sum(axis=1)
            v = nu_h[hcfg, :, dom]
            probs.append(v / v.sum(axis=1, keepdims=True))
            sds.append(_entry_sd(n_h[hcfg, :, dom], k_h[hcfg], s, tau))
        info["domain_counts"] = N.sum(axis=(0, 1))
        return _domain_estimate(probs, sds, kap, s, tau, info)

    def _estimate_domain_sparse(self, tree: ContextTree, s: float, q: int, R: int, J: int) -> TreeEstimate:
        r"""The domain-pooled fit from the tree's non-zero counts (joint cell
        ``cfg * r + x``, column = domain): memory and time follow the observed
        branches, not domains x joint states.  A node ``(domain, p_1..p_{i-1})`` of the
        tree gets :math:`\nu` summed over the deeper parents, i.e. ``s`` times the
        summed :math:`\kappa` plus the node's own counts."""
        r = tree.child_card
        pcards = tree.parent_cards[1:]
        configs, counts = tree.leaf_table()
        counts = np.asarray(counts, dtype=np.float64)
        cfg = config_index(configs[:, 1:], pcards) if len(counts) else np.zeros(0, dtype=np.int64)
        rows = (cfg[:, None] * r + np.arange(r)[None, :]).ravel()
        cols = np.repeat(configs[:, 0] if len(counts) else np.zeros(0, dtype=np.int64), r)
        fit = fit_hmd_sparse(
            rows,
            cols,
            counts.ravel(),
            R,
            J,
            s,
            self.alpha0,
            tol=self.tol if self.tol is not None else 1e-10,
            max_iter=self.max_iter if self.max_iter is not None else _MAX_ITER,
        )
        info = self._info(fit)
        kap = fit.kappa.reshape(q, r)
        tau = fit.tau
        probs, sds = [], []
        for i, lev in enumerate(tree.levels):
            if i == 0:  # the population marginal of the node
                p0, sd0 = _population_marginal(kap, s, tau)
                probs.append(p0)
                sds.append(sd0)
                continue
            node_cfg = tree.node_configs(i)
            head = pcards[: i - 1]
            tail = int(np.prod(pcards[i - 1 :], dtype=np.int64)) if pcards[i - 1 :] else 1
            qh = int(np.prod(head, dtype=np.int64)) if head else 1
            hcfg = config_index(node_cfg[:, 1:i], head)
            k_h = kap.reshape(qh, tail, r).sum(axis=1)[hcfg]
            n_h = lev.counts.astype(np.float64)
            v = s * k_h + n_h
            probs.append(v / v.sum(axis=1, keepdims=True))
            sds.append(_entry_sd(n_h, k_h, s, tau))
        dom_counts = np.zeros(J)
        if tree.depth:
            np.add.at(dom_counts, tree.levels[1].value, tree.levels[1].counts.sum(axis=1))
        info["domain_counts"] = dom_counts
        return _domain_estimate(probs, sds, kap, s, tau, info)

    def estimate_all(self, trees: Mapping[str, ContextTree], *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Estimate the CPTs of a network (independent problems, in threads)."""
        if domain is not None:
            for name, t in trees.items():
                if not t.parents or t.parents[0] != domain:
                    raise DataError(f"the context tree of {name!r} does not split on the domain {domain!r} first")
            fn = self._estimate_domain
        else:
            fn = self._estimate_one
        out = map_trees(fn, trees, self.n_jobs)
        self._warn(out)
        return out


def exact_alpha_moments(N: np.ndarray, s: float, alpha0: float | np.ndarray = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact posterior mean and covariance of :math:`\alpha` for small problems.

    The posterior (Azzimonti et al. 2019, eq. A.3) of :math:`u = \alpha / s` on the simplex,

    .. math:: p(u \mid D) \propto \prod_{x, y} \frac{\Gamma(s u_x + n_{xy})}{\Gamma(s u_x)}
              \prod_x u_x^{[\alpha_0]_x - 1},

    integrated by adaptive quadrature (relative tolerance 1e-10) instead of the
    paper's symbolic polynomial integration (App. A.3, Algorithm 2): the same
    integrals, for two or three states.  Used to check the variational moments.
    """
    from scipy import integrate
    from scipy.special import gammaln

    N = np.asarray(N, dtype=np.float64)
    R = N.shape[0]
    a0 = np.broadcast_to(np.asarray(alpha0, dtype=np.float64), (R,))
    if R not in (2, 3):
        raise ValueError(f"exact integration is implemented for 2 or 3 states, not {R}")

    def logp(u: np.ndarray) -> float:
        a = s * u
        return float((gammaln(a[:, None] + N) - gammaln(a[:, None])).sum() + ((a0 - 1.0) * np.log(u)).sum())

    def point(*v: float) -> np.ndarray:
        return np.array([*v, 1.0 - sum(v)])

    if R == 2:
        grid = [point(u) for u in np.linspace(1e-6, 1 - 1e-6, 2001)]
    else:
        grid = [
            point(a, b) for a in np.linspace(1e-3, 0.998, 80) for b in np.linspace(1e-3, 0.998, 80) if a + b < 0.999
        ]
    c = max(logp(u) for u in grid)  # scale: keeps the integrand near 1 at its peak

    def integral(f) -> float:
        if R == 2:
            return integrate.quad(
                lambda a: math.exp(logp(point(a)) - c) * f(point(a)), 0, 1, epsabs=0, epsrel=1e-10, limit=200
            )[0]
        return integrate.dblquad(
            lambda b, a: math.exp(logp(point(a, b)) - c) * f(point(a, b)),
            0,
            1,
            0,
            lambda a: 1 - a,
            epsabs=0,
            epsrel=1e-10,
        )[0]

    Z = integral(lambda u: 1.0)
    m = np.array([integral(lambda u, i=i: u[i]) / Z for i in range(R)])
    m2 = np.empty((R, R))
    for i in range(R):
        for j in range(i, R):
            m2[i, j] = m2[j, i] = integral(lambda u, i=i, j=j: u[i] * u[j]) / Z
    return s * m, s * s * (m2 - np.outer(m, m))
