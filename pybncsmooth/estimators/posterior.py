r"""Posterior draws of whole conditional probability tables.

An estimate that quantifies its uncertainty carries a :class:`TreePosterior`: what it
needs to draw the node's *dense* table, every parent configuration's probability
vector, jointly from the posterior.  ``draw(tree, n, rng)`` returns an
``(n, Q, r)`` array (``Q`` parent configurations, configuration-major over the tree's
variables as :class:`~pybncsmooth.model.cpd.TreeCPD` lays them out, every row summing
to 1).  Configurations absent from the data are fresh draws from the hierarchy's
predictive around the node they back off to (each one independent of the others
given that node), never a copy of the node's own draw: that is what makes an interval
of an unseen configuration a statement about its truth (DESIGN: what an uncertainty
means).

The helpers here are shared by the estimators' posteriors: :func:`dirichlet` (exact
Dirichlet draws that never underflow to an all-zero vector), :func:`backoff_index`
(which tree node answers each configuration), :class:`DirichletPosterior` (the BDeu
posterior of ``bayes``), :class:`DomainPosterior` (a domain's vectors around its
configuration pooled over the domains) and the registry that saves and reads
posteriors with a network (:func:`posterior_from_arrays`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from ..counting.context_tree import ContextTree, config_index

__all__ = [
    "TreePosterior",
    "DirichletPosterior",
    "DirichletTablePosterior",
    "MixturePosterior",
    "even_states",
    "DomainPosterior",
    "DirichletMixture",
    "dirichlet",
    "backoff_index",
    "posterior_from_arrays",
    "register_posterior",
    "predictive_sd",
    "effective_concentration",
    "pack_concentrations",
    "trapezoid_weights",
    "unpack_concentrations",
    "CHUNK_VALUES",
]

#: draws are generated in chunks of about this many values (bounded memory)
CHUNK_VALUES = 1 << 22

_KINDS: dict[str, type["TreePosterior"]] = {}


def register_posterior(cls: type["TreePosterior"]) -> type["TreePosterior"]:
    """Class decorator: posteriors of this ``kind`` can be read back (native files)."""
    _KINDS[cls.kind] = cls
    return cls


def posterior_from_arrays(kind: str, arrays: dict[str, np.ndarray]) -> "TreePosterior":
    """A posterior saved by :meth:`TreePosterior.to_arrays` (``KeyError`` for an unknown kind)."""
    return _KINDS[kind].from_arrays(arrays)


def dirichlet(alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""One Dirichlet draw per row of ``alpha`` (last axis; entries >= 0, every row with a
    positive entry).

    :math:`G_a = G_{a+1} U^{1/a}` (:math:`G_{a+1}` a Gamma(a + 1) variate, ``U``
    uniform) computed in logarithms and normalised by the row's largest: shapes of
    1e-300 give a vertex of the simplex, not the ``0 / 0`` of a gamma that underflows
    (numpy's ``dirichlet`` fails there), and a zero entry gives an exact zero.
    """
    a = np.asarray(alpha, dtype=np.float64)
    g = rng.standard_gamma(a + 1.0)
    u = rng.random(a.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logx = np.log(g) + np.where(a > 0, np.log(u) / a, -np.inf)
    logx -= logx.max(axis=-1, keepdims=True)
    x = np.exp(logx)
    return x / x.sum(axis=-1, keepdims=True)


def backoff_index(tree: ContextTree) -> tuple[np.ndarray, np.ndarray]:
    """For every parent configuration (configuration-major over ``tree.parent_cards``),
    the tree level and the node within it that answers it: the leaf for an observed
    configuration, the deepest existing ancestor otherwise."""
    lvl = np.zeros(1, dtype=np.int64)
    node = np.zeros(1, dtype=np.int64)
    cfg_idx = np.zeros(1, dtype=np.int64)
    for i in range(1, len(tree.levels)):
        c = tree.parent_cards[i - 1]
        lev = tree.levels[i]
        lvl, node = np.repeat(lvl, c), np.repeat(node, c)
        idx = cfg_idx[lev.parent] * c + lev.value
        lvl[idx] = i
        node[idx] = np.arange(len(idx))
        cfg_idx = idx
    return lvl, node


def effective_concentration(log_s: np.ndarray, mass: np.ndarray | None) -> np.ndarray:
    r"""``(K, L)``: the nested model's :math:`s' = s A / (s + A + 1)` for every value of
    ``log_s`` and every leaf of mass ``A`` (``mass`` ``None`` or infinite: ``s`` itself,
    ``(K, 1)`` for ``None``): a domain's vector :math:`\mathrm{Dir}(s\,\theta)` around a
    pooled vector known as :math:`\mathrm{Dir}(A\,m)` is, to its second moments,
    :math:`\mathrm{Dir}(s'\,m)` (:mod:`pybncsmooth.estimators.domains.prior`)."""
    s = np.exp(np.asarray(log_s, dtype=np.float64))[:, None]
    if mass is None:
        return np.broadcast_to(s, (s.shape[0], 1)).copy()
    A = np.asarray(mass, dtype=np.float64)[None, :]
    finite = np.isfinite(A)
    A1 = np.where(finite, A, 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(finite, s * A1 / (s + A1 + 1.0), s)
    return out


def trapezoid_weights(grid: np.ndarray) -> np.ndarray:
    """The trapezoidal rule's weights of the sorted points ``grid`` (unnormalised; one
    point: weight 1): a flat prior on the grid's variable, or the quadrature of a
    posterior evaluated there."""
    width = np.ones(len(grid))
    if len(grid) > 1:
        gaps = np.diff(grid)
        width[0], width[-1] = gaps[0] / 2, gaps[-1] / 2
        width[1:-1] = (gaps[:-1] + gaps[1:]) / 2
    return width


def pack_concentrations(own: dict[int, tuple[np.ndarray, np.ndarray]]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Domains' own concentration posteriors ``{code: (log_s, weights)}`` as three arrays
    (codes sorted; rows of ``log_s`` and weights padded with weight 0) that a network
    file can hold; :func:`unpack_concentrations` reads them back."""
    codes = np.array(sorted(own), dtype=np.int64)
    width = max((len(own[c][0]) for c in codes), default=0)
    ls, w = np.zeros((len(codes), width)), np.zeros((len(codes), width))
    for i, c in enumerate(codes):
        k = len(own[c][0])
        ls[i, :k], w[i, :k] = own[c]
    return codes, ls, w


def unpack_concentrations(codes: np.ndarray, log_s: np.ndarray, weights: np.ndarray
                          ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The inverse of :func:`pack_concentrations` (the padding dropped)."""
    out = {}
    for c, ls, w in zip(np.asarray(codes), np.asarray(log_s), np.asarray(weights)):
        keep = w > 0
        out[int(c)] = (ls[keep], w[keep])
    return out


def predictive_sd(mean: np.ndarray, sd: np.ndarray, w: np.ndarray | float) -> np.ndarray:
    r"""The sd of a vector drawn as :math:`\mathrm{Dir}(c\,\phi)` around a parent
    :math:`\phi` of mean ``mean`` and sd ``sd``, with ``w`` the posterior mean of
    :math:`c / (c + 1)` (or its product over several such steps): from
    :math:`E[\theta_k^2] = w E[\phi_k^2] + (1 - w) E[\phi_k]`,
    :math:`\mathrm{Var}\,\theta_k = w\,\mathrm{Var}\,\phi_k + (1 - w)\,m_k (1 - m_k)`."""
    var = w * sd * sd + (1.0 - w) * mean * (1.0 - mean)
    return np.sqrt(np.maximum(var, 0.0))


class DirichletMixture:
    r"""The posterior of one domain's vectors at ``Q`` configurations as a mixture of
    Dirichlets, :math:`\sum_c w_c \prod_q \mathrm{Dir}(\theta_q; \alpha_{c,q})`: one
    component ``c`` for all configurations at once (a domain added by
    :meth:`FittedNetwork.adapt` is a copy of one fitted domain, or a new type with one
    concentration), the configurations independent given it.  Its moments
    (:meth:`moments`) and its draws (:meth:`draw`) are the same distribution."""

    def __init__(self, weights: np.ndarray, alpha: np.ndarray) -> None:
        w = np.atleast_1d(np.asarray(weights, dtype=np.float64))
        self.alpha = np.asarray(alpha, dtype=np.float64).reshape(len(w), -1, np.shape(alpha)[-1])
        self.weights = w / w.sum()

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        r"""``(Q, r)`` posterior means and sds of every entry (the mixture's first two
        moments: :math:`E\theta = \sum_c w_c \alpha_c / |\alpha_c|`,
        :math:`E\theta^2 = \sum_c w_c \alpha_c (\alpha_c + 1) / (|\alpha_c| (|\alpha_c| + 1))`)."""
        a = self.alpha
        tot = a.sum(axis=2, keepdims=True)
        mean = np.tensordot(self.weights, a / tot, axes=1)
        second = np.tensordot(self.weights, a * (a + 1.0) / (tot * (tot + 1.0)), axes=1)
        return mean, np.sqrt(np.maximum(second - mean * mean, 0.0))

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, Q, r)`` draws: a component per draw, then every configuration's vector."""
        comp = rng.choice(len(self.weights), size=n, p=self.weights)
        out = np.empty((n,) + self.alpha.shape[1:])
        for c in np.unique(comp):
            rows = np.flatnonzero(comp == c)
            out[rows] = dirichlet(np.broadcast_to(self.alpha[c], (len(rows),) + self.alpha.shape[1:]), rng)
        return out


def _chunks(n: int, per_draw: int) -> list[tuple[int, int]]:
    """Ranges of draws holding about :data:`CHUNK_VALUES` values each."""
    k = max(1, CHUNK_VALUES // max(per_draw, 1))
    return [(a, min(a + k, n)) for a in range(0, n, k)]


class TreePosterior(ABC):
    """The posterior of the dense table of one node (see the module docstring)."""

    kind: ClassVar[str] = ""
    #: every configuration's posterior is one Dirichlet (its entries' marginals are the
    #: Beta distributions their means and sds fix): intervals need no draws
    beta_exact: ClassVar[bool] = False

    @abstractmethod
    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, Q, r)`` draws of every parent configuration's vector."""

    @abstractmethod
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The posterior as named arrays (saved with a network)."""

    @classmethod
    @abstractmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "TreePosterior":
        """The posterior saved by :meth:`to_arrays`."""

    @property
    def n_states(self) -> int:
        """How many recorded states of a sampler the posterior holds (1: none)."""
        return 1

    def thin(self, k: int) -> "TreePosterior":
        """The same posterior kept in at most ``k`` recorded states (evenly spaced) where
        it holds a sampler's states; others are returned as they are."""
        return self


def even_states(total: int, k: int) -> np.ndarray:
    """Indices of ``min(k, total)`` evenly spaced states among ``total``."""
    return np.unique(np.linspace(0, total - 1, max(1, min(k, total))).round().astype(np.int64))


@register_posterior
class MixturePosterior(TreePosterior):
    r"""An equal mixture of posteriors given different completions of the data: data
    augmentation's (Tanner and Wong 1987) :math:`p(\theta \mid x_O) \approx \frac1B
    \sum_b p(\theta \mid x_O, x_M^{(b)})`, block ``b``'s posterior ``parts[b]`` drawn on
    the tree's nodes with the block's completed leaf counts ``counts[b]``."""

    kind = "mixture"

    def __init__(self, parts: list[TreePosterior], counts: list[np.ndarray]) -> None:
        self.parts = list(parts)
        self.counts = [np.asarray(c) for c in counts]

    @property
    def calibrated(self) -> bool:
        """Whether intervals are offered: those of its blocks' posteriors (``check_calibrated``)."""
        return all(getattr(p, "calibrated", True) for p in self.parts)

    @property
    def query_calibrated(self) -> bool:
        """Whether query intervals are offered: those of its blocks' posteriors."""
        return all(getattr(p, "query_calibrated", True) for p in self.parts)

    def refusal(self, stat: str, node: str | None = None) -> Any:
        """The refusal of its blocks' posterior (see :attr:`calibrated`)."""
        return self.parts[0].refusal(stat, node)

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        block = rng.integers(len(self.parts), size=n)
        out = np.empty((n, int(np.prod(tree.parent_cards, dtype=np.int64)), tree.child_card))
        for b in np.unique(block):
            rows = np.flatnonzero(block == b)
            out[rows] = self.parts[b].draw(tree.with_leaf_counts(self.counts[b]), len(rows), rng)
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"blocks": np.array(len(self.parts))}
        for b, (p, c) in enumerate(zip(self.parts, self.counts)):
            out.update({f"b{b}.kind": np.array(p.kind), f"b{b}.counts": c})
            out.update({f"b{b}.{k}": v for k, v in p.to_arrays().items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "MixturePosterior":
        parts, counts = [], []
        for b in range(int(arrays["blocks"])):
            pre = f"b{b}."
            inner = {k[len(pre):]: v for k, v in arrays.items() if k.startswith(pre) and k not in
                     (pre + "kind", pre + "counts")}
            parts.append(posterior_from_arrays(str(arrays[pre + "kind"]), inner))
            counts.append(arrays[pre + "counts"])
        return cls(parts, counts)


def _independent_draws(tree: ContextTree, n: int, rng: np.random.Generator, base: np.ndarray,
                       anc_alpha: Any, strength: Any) -> np.ndarray:
    r"""``(n, Q, r)`` draws of independent Dirichlet posteriors: configuration ``y``
    :math:`\mathrm{Dir}(n_y + a_y)` (``base``: ``(Q, r)`` the prior's :math:`a_y`, changed
    in place); with ``strength`` (back-off), an unseen configuration instead
    :math:`\mathrm{Dir}(A_y\,\phi)` around its deepest ancestor's posterior draw
    :math:`\phi \sim \mathrm{Dir}(n_a + \text{anc_alpha}(i))`, :math:`A_y` = ``strength``
    (a number, or per configuration shaped ``(1, Q, 1)``)."""
    r, d = tree.child_card, tree.depth
    lvl, node = backoff_index(tree)
    Q = len(lvl)
    seen = lvl == d
    base[seen] += tree.levels[d].counts[node[seen]]
    out = np.empty((n, Q, r))
    for lo, hi in _chunks(n, Q * r):
        k = hi - lo
        if strength is None or seen.all():
            out[lo:hi] = dirichlet(np.broadcast_to(base, (k, Q, r)), rng)
            continue
        alpha = np.broadcast_to(base, (k, Q, r)).copy()
        for i in np.unique(lvl[~seen]):
            rows = np.flatnonzero(lvl == i)
            anc = tree.levels[i].counts + anc_alpha(i)
            used = np.unique(node[rows])
            phi = np.zeros((k, len(anc), r))
            phi[:, used] = dirichlet(np.broadcast_to(anc[used], (k, len(used), r)), rng)
            a = strength if np.ndim(strength) == 0 else strength[:, rows]
            alpha[:, rows] = a * phi[:, node[rows]]
        out[lo:hi] = dirichlet(alpha, rng)
    return out


@register_posterior
class DirichletPosterior(TreePosterior):
    r"""Independent Dirichlet posteriors: configuration ``y`` with counts :math:`n_y` has
    :math:`\theta_y \sim \mathrm{Dir}(n_y + \alpha)` (BDeu: :math:`\alpha = iss / (r q)`
    per cell, exact).  An unseen configuration has the prior,
    :math:`\mathrm{Dir}(\alpha)`, under ``unseen="uniform"``; under ``"backoff"`` its
    prior is centred on the deepest existing ancestor's estimate with the
    configuration's prior strength: :math:`\mathrm{Dir}(r\alpha\,\phi)`,
    :math:`\phi \sim \mathrm{Dir}(n_a + \alpha_a)` the ancestor's own BDeu posterior
    (``level_alpha[i]``: the cell pseudo-count of level ``i``), whose mean is the
    back-off estimate."""

    kind = "dirichlet"

    def __init__(self, level_alpha: np.ndarray, backoff: bool) -> None:
        self.level_alpha = np.asarray(level_alpha, dtype=np.float64)
        self.backoff = bool(backoff)
        self.beta_exact = not self.backoff  # type: ignore[misc]

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        r, d = tree.child_card, tree.depth
        a_leaf = self.level_alpha[d]
        Q = int(np.prod(tree.parent_cards, dtype=np.int64)) if d else 1
        return _independent_draws(tree, n, rng, np.full((Q, r), a_leaf), lambda i: self.level_alpha[i],
                                  r * a_leaf if self.backoff else None)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"level_alpha": self.level_alpha, "backoff": np.array(self.backoff)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "DirichletPosterior":
        return cls(arrays["level_alpha"], bool(arrays["backoff"]))


@register_posterior
class DirichletTablePosterior(TreePosterior):
    r"""Independent Dirichlet posteriors with a pseudo-count of their own in every cell
    (an informative prior, :mod:`~pybncsmooth.estimators.prior`): configuration ``y``
    has :math:`\theta_y \sim \mathrm{Dir}(n_y + a_y)`, ``leaf_alpha`` holding
    :math:`a_y` for every configuration (configuration-major).  An unseen configuration
    has its prior :math:`\mathrm{Dir}(a_y)`, or with ``node_alpha`` (back-off: the
    pseudo-counts of every tree node, per level) a prior of its own strength
    :math:`A_y = \sum_x a_y(x)` centred on the deepest existing ancestor's posterior,
    :math:`\mathrm{Dir}(A_y\,\phi)`, :math:`\phi \sim \mathrm{Dir}(n_a + a_a)`."""

    kind = "dirichlet_table"

    def __init__(self, leaf_alpha: np.ndarray, node_alpha: tuple[np.ndarray, ...] | None = None) -> None:
        self.leaf_alpha = np.asarray(leaf_alpha, dtype=np.float64)
        self.node_alpha = None if node_alpha is None else tuple(np.asarray(a, dtype=np.float64) for a in node_alpha)
        self.beta_exact = self.node_alpha is None  # type: ignore[misc]

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        strength = None
        if self.node_alpha is not None:
            strength = np.maximum(self.leaf_alpha.sum(axis=1), 1e-300)[None, :, None]
        return _independent_draws(tree, n, rng, self.leaf_alpha.copy(), lambda i: self.node_alpha[i], strength)

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"leaf_alpha": self.leaf_alpha}
        for i, a in enumerate(self.node_alpha or ()):
            out[f"node_alpha_{i}"] = a
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "DirichletTablePosterior":
        levels = sorted((int(k.rsplit("_", 1)[1]), v) for k, v in arrays.items() if k.startswith("node_alpha_"))
        return cls(arrays["leaf_alpha"], tuple(v for _, v in levels) if levels else None)


@register_posterior
class DomainPosterior(TreePosterior):
    r"""A multi-domain table whose tree splits on the domain last: configuration ``y``
    pooled over the domains has the pooled estimate's posterior
    (:math:`\theta_y`, drawn by ``pooled`` on ``pooled_tree``, unseen configurations
    included), and domain ``d``'s vector is
    :math:`\theta_{y,d} \sim \mathrm{Dir}(s_D\,\theta_y + n_{yd})` with the domain
    concentration :math:`s_D` drawn from its posterior on a grid (``log_s``,
    ``weights``).  A domain without rows under ``y`` gets
    :math:`\mathrm{Dir}(s_D\,\theta_y)`: the hierarchy's predictive.  (The pooled
    posterior is that of the configurations' pooled counts: the two-stage
    approximation of the nested model that :meth:`Estimator.domain_leaves` fits.)

    ``own``: domains added later (:meth:`FittedNetwork.adapt`), ``{code: (configs,
    mixture)}``: the pooled configurations' indices (configuration-major) their posterior
    covers and that posterior (:class:`DirichletMixture`, drawn as it is); at other
    configurations such a domain answers as a domain without rows there."""

    kind = "domain"

    def __init__(self, pooled: TreePosterior, pooled_tree: ContextTree, log_s: np.ndarray, weights: np.ndarray,
                 own: dict | None = None):
        self.pooled = pooled
        self.pooled_tree = pooled_tree
        self.log_s = np.atleast_1d(np.asarray(log_s, dtype=np.float64))
        self.weights = np.atleast_1d(np.asarray(weights, dtype=np.float64))
        self.own = {int(k): (np.asarray(v[0], dtype=np.int64), v[1]) for k, v in (own or {}).items()}

    @property
    def calibrated(self) -> bool:
        """Whether intervals are offered: those of the pooled posterior, which every
        domain's columns are drawn around (``bayes``' BDeu: not)."""
        return getattr(self.pooled, "calibrated", True)

    @property
    def query_calibrated(self) -> bool:
        """Whether query intervals are offered: those of the pooled posterior."""
        return getattr(self.pooled, "query_calibrated", True)

    def refusal(self, stat: str, node: str | None = None) -> Any:
        """The pooled posterior's refusal (see :attr:`calibrated`)."""
        return self.pooled.refusal(stat, node)

    def with_concentration(self, log_s: np.ndarray, weights: np.ndarray) -> "DomainPosterior":
        return DomainPosterior(self.pooled, self.pooled_tree, log_s, weights, self.own)

    def with_own(self, code: int, configs: np.ndarray, mixture: "DirichletMixture") -> "DomainPosterior":
        """The same with domain ``code``'s posterior (at the pooled ``configs``) set."""
        return DomainPosterior(self.pooled, self.pooled_tree, self.log_s, self.weights,
                               {**self.own, int(code): (configs, mixture)})

    def draw(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.draw_joint(tree, n, rng)[0]

    def draw_joint(self, tree: ContextTree, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The draws of :meth:`draw` (``(n, q * J, r)``, the domain fastest) with the pooled
        vectors they were drawn around (``(n, q, r)``)."""
        r = tree.child_card
        J = tree.parent_cards[-1]
        pooled = self.pooled.draw(self.pooled_tree, n, rng)  # (n, q, r) over the pooled configurations
        q = pooled.shape[1]
        configs, counts = tree.leaf_table()
        cnt = np.zeros((q * J, r))
        cnt[config_index(configs, tree.parent_cards)] = counts
        s = np.exp(self.log_s[rng.choice(len(self.weights), size=n, p=self.weights)])
        out = np.empty((n, q * J, r))
        for lo, hi in _chunks(n, q * J * r):
            base = np.repeat(pooled[lo:hi], J, axis=1) * s[lo:hi, None, None]
            out[lo:hi] = dirichlet(base + cnt[None], rng)
        for j in sorted(self.own):
            cfg, mix = self.own[j]
            if j < J:
                out[:, cfg * J + j] = mix.draw(n, rng)
        return out, pooled

    def draw_new_domain(self, tree: ContextTree, n: int, rng: np.random.Generator) -> np.ndarray:
        r"""``(n, q, r)`` draws of a domain unseen in training: every configuration
        :math:`\mathrm{Dir}(s_D\,\theta_y)` around the pooled draws."""
        pooled = self.pooled.draw(self.pooled_tree, n, rng)
        s = np.exp(self.log_s[rng.choice(len(self.weights), size=n, p=self.weights)])
        return dirichlet(pooled * s[:, None, None], rng)

    def to_arrays(self) -> dict[str, np.ndarray]:
        configs, counts = self.pooled_tree.leaf_table()
        inner = {f"pooled.{k}": v for k, v in self.pooled.to_arrays().items()}
        t = self.pooled_tree
        out = {
            **inner,
            "pooled_kind": np.array(self.pooled.kind),
            "tree_configs": configs,
            "tree_counts": counts,
            "tree_cards": np.asarray(t.parent_cards, dtype=np.int64),
            "tree_r": np.array(t.child_card),
            "log_s": self.log_s,
            "weights": self.weights,
        }
        if self.own:
            out.update(_pack_mixtures(self.own))
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "DomainPosterior":
        inner = {k[len("pooled."):]: v for k, v in arrays.items() if k.startswith("pooled.")}
        pooled = posterior_from_arrays(str(arrays["pooled_kind"]), inner)
        cards = tuple(int(c) for c in arrays["tree_cards"])
        names = tuple(f"_p{i}" for i in range(len(cards)))
        tree = ContextTree.from_leaves("_x", names, int(arrays["tree_r"]), cards, arrays["tree_configs"],
                                       arrays["tree_counts"])
        return cls(pooled, tree, arrays["log_s"], arrays["weights"], _unpack_mixtures(arrays))


def _pack_mixtures(own: dict) -> dict[str, np.ndarray]:
    """Adapted domains' posteriors ``{code: (configs, DirichletMixture)}`` as flat arrays."""
    codes = sorted(own)
    cfg = [own[c][0] for c in codes]
    mix = [own[c][1] for c in codes]
    r = mix[0].alpha.shape[-1]
    return {
        "mix_codes": np.array(codes, dtype=np.int64),
        "mix_q": np.array([len(x) for x in cfg], dtype=np.int64),
        "mix_c": np.array([len(m.weights) for m in mix], dtype=np.int64),
        "mix_configs": np.concatenate(cfg).astype(np.int64),
        "mix_weights": np.concatenate([m.weights for m in mix]),
        "mix_alpha": np.concatenate([m.alpha.reshape(-1, r) for m in mix]),
    }


def _unpack_mixtures(arrays: dict[str, np.ndarray]) -> dict:
    """The inverse of :func:`_pack_mixtures` (none saved: an empty dict)."""
    if "mix_codes" not in arrays:
        return {}
    out, q0, c0, a0 = {}, 0, 0, 0
    alpha = np.asarray(arrays["mix_alpha"])
    for code, q, c in zip(arrays["mix_codes"], arrays["mix_q"], arrays["mix_c"]):
        q, c = int(q), int(c)
        w = np.asarray(arrays["mix_weights"][c0:c0 + c])
        out[int(code)] = (np.asarray(arrays["mix_configs"][q0:q0 + q]),
                          DirichletMixture(w, alpha[a0:a0 + c * q].reshape(c, q, -1)))
        q0, c0, a0 = q0 + q, c0 + c, a0 + c * q
    return out
