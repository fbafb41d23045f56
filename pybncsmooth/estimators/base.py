"""The estimator protocol.

An estimator is a small configured object (its name, hyperparameters and
``random_state``) that maps a :class:`~pybncsmooth.counting.ContextTree` to
probability vectors at *every* node of the tree, leaves and internal nodes
alike (:class:`TreeEstimate`).  Queries for a parent configuration absent from
the tree are answered by the estimate's ``unseen`` rule: ``"backoff"`` uses the
deepest existing ancestor's vector (Petitjean et al.'s (2018) back-off), ``"uniform"`` the
uniform distribution (the BDeu posterior of an empty configuration), and
``"fallback"`` a table indexed by the trailing tree variables (the
population-level CPT of a domain-pooled fit, for domains and configurations
that have no data).  Estimators that quantify uncertainty also give the
posterior standard deviation of every entry (``TreeEstimate.sd``).

The same estimator objects serve every front end; :func:`make_estimator` turns
``method="bayes", iss=10`` into one and rejects unknown hyperparameters by name.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Mapping

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import DataError, HyperparameterError
from ..options import RUN_SETTINGS, Options, option_names, run_check
from ..validation import Param, parallel_map
from .domains.prior import atom_table, effective_mass, moment_mass, spread_of_concentrations
from .domains.pooling import concentration_info, concentration_posterior, mixture_posterior, shrink_weight
from . import bootstrap as _bootstrap
from .bootstrap import BootstrapPosterior
from .posterior import DomainPosterior, predictive_sd
from .prior import NetworkPrior, NodePrior

__all__ = [
    "Estimator",
    "TreeEstimate",
    "DeferredEstimate",
    "make_estimator",
    "register_estimator",
    "available_methods",
    "map_trees",
    "estimator_class",
    "hyperparameter_names",
    "describe_methods",
    "method_params",
]

UnseenRule = Literal["backoff", "uniform", "fallback"]


def _flat(arrays: tuple[np.ndarray, ...]) -> np.ndarray:
    """The entries of ``arrays`` as one vector (the array itself when there is one)."""
    if len(arrays) == 1:
        return arrays[0]
    return np.concatenate([a.reshape(-1) for a in arrays])


def _nonnegative_finite(v: np.ndarray) -> bool:
    # min >= 0 fails on NaN; max < inf rules out infinities
    return not v.size or bool(v.min() >= 0 and v.max() < math.inf)


_TREE_ESTIMATE_FIELDS = ("probs", "unseen", "info", "sd", "fallback", "fallback_sd", "fallback_from", "unseen_sd",
                         "posterior")


@dataclass(frozen=True, eq=False)
class TreeEstimate:
    """Probabilities at every node of one context tree.

    Attributes
    ----------
    probs:
        One ``(n_nodes_i, r)`` float64 array per tree level (same node order as the
        tree's levels); every row sums to 1.
    unseen:
        How a configuration that is not in the tree is answered (see module doc).
    info:
        Estimator-specific diagnostics (e.g. sampled concentrations).
    sd:
        Optional posterior standard deviations, shaped like ``probs``.
    fallback:
        For ``unseen="fallback"``: an ``(q, r)`` table indexed (configuration-major)
        by the tree variables from ``fallback_from`` on.  A query that does not reach
        a leaf but whose codes from ``fallback_from`` on are all known gets its row;
        one with an unknown code there backs off to the deepest ancestor.
    fallback_sd:
        Standard deviations of ``fallback`` (with ``unseen="uniform"``: one row, the
        prior's).
    fallback_from:
        Index of the first tree variable the fallback table is indexed by.
    unseen_sd:
        Per level above the leaves (``depth`` arrays, shaped like ``probs[:-1]``), the
        posterior sd of a configuration that is absent below the node and backs off to
        it: the spread of the hierarchy's predictive around the node (wider than the
        node's own ``sd``).  ``None``: the node's own ``sd`` answers.
    posterior:
        A :class:`~pybncsmooth.estimators.posterior.TreePosterior` that draws the
        node's dense table from the posterior, or ``None`` (no draws).
    """

    probs: tuple[np.ndarray, ...]
    unseen: UnseenRule = "backoff"
    info: dict[str, Any] = field(default_factory=dict)
    sd: tuple[np.ndarray, ...] | None = None
    fallback: np.ndarray | None = None
    fallback_sd: np.ndarray | None = None
    fallback_from: int = 0
    unseen_sd: tuple[np.ndarray, ...] | None = None
    posterior: Any = None

    def __post_init__(self) -> None:
        # probabilities are bounded, so their sum is finite iff every entry is; the levels
        # are checked together (one reduction, not one a level) and searched only on failure
        if not math.isfinite(_flat(self.probs).sum()):
            bad = next(i for i, p in enumerate(self.probs) if not math.isfinite(p.sum()))
            raise FloatingPointError(f"non-finite probabilities at tree level {bad}")
        if self.unseen == "fallback" and self.fallback is None:
            raise ValueError("unseen='fallback' needs a fallback table")
        if self.sd is not None:
            if len(self.sd) != len(self.probs) or any(a.shape != b.shape for a, b in zip(self.sd, self.probs)):
                raise ValueError("sd must have the shapes of probs")
            if not _nonnegative_finite(_flat(self.sd)):
                bad = next(i for i, v in enumerate(self.sd) if not _nonnegative_finite(v))
                raise FloatingPointError(f"negative or non-finite standard deviations at tree level {bad}")
        if self.unseen_sd is not None:
            if len(self.unseen_sd) != len(self.probs) - 1 or any(
                a.shape != b.shape for a, b in zip(self.unseen_sd, self.probs)
            ):
                raise ValueError("unseen_sd must have the shapes of probs above the leaves")
            if self.unseen_sd and not _nonnegative_finite(_flat(self.unseen_sd)):
                raise FloatingPointError("negative or non-finite standard deviations of unseen configurations")
        for name in ("fallback", "fallback_sd"):
            v = getattr(self, name)
            if v is not None and not _nonnegative_finite(v):
                raise FloatingPointError(f"negative or non-finite entries in the {name} table")

    @property
    def has_sd(self) -> bool:
        """Whether the estimate carries posterior standard deviations."""
        return self.sd is not None

    @classmethod
    def _closed_form(cls, probs: tuple[np.ndarray, ...], unseen: UnseenRule, **fields: Any) -> "TreeEstimate":
        """An estimate whose arrays a closed form computed from checked counts (finite,
        rows summing to one by construction): built without :meth:`__post_init__`'s
        checks, which cost more than the arithmetic for a network of small trees."""
        out = object.__new__(cls)
        values = dict.fromkeys(_TREE_ESTIMATE_FIELDS)
        values.update(probs=probs, unseen=unseen, info={}, fallback_from=0)
        values.update((f, fields[f]) for f in _TREE_ESTIMATE_FIELDS if f in fields)
        out.__dict__.update(values)  # (a frozen dataclass: its fields set once, here)
        return out


if set(_TREE_ESTIMATE_FIELDS) != {f.name for f in dataclasses.fields(TreeEstimate)}:  # pragma: no cover
    raise ImportError("_TREE_ESTIMATE_FIELDS must list the fields of TreeEstimate")


def _deferred_field(name: str) -> property:
    """A field of :class:`DeferredEstimate` computed on first read (then kept), or set."""

    def get(self: "DeferredEstimate") -> Any:
        d = self.__dict__
        if name not in d:
            fn, arg = d["_deferred"][name]
            d[name] = fn(arg)
        return d[name]

    def put(self: "DeferredEstimate", value: Any) -> None:  # the dataclass constructor (``replace``)
        self.__dict__[name] = value

    return property(get, put, doc=f"``{name}``, computed when first read")


class DeferredEstimate(TreeEstimate):
    """A closed form's :class:`TreeEstimate` whose ``sd``, ``unseen_sd`` and
    ``posterior`` are computed when first read, by ``(function, argument)`` pairs given
    to :meth:`deferred` (a fit of a thousand nodes reads its tables; the standard
    deviations, for every tree of a network at once, when a query asks).  The values
    are those the function returns, whenever it runs; copies and pickles carry them
    computed."""

    sd = _deferred_field("sd")
    unseen_sd = _deferred_field("unseen_sd")
    posterior = _deferred_field("posterior")

    @classmethod
    def deferred(cls, probs: tuple[np.ndarray, ...], unseen: UnseenRule, later: dict[str, tuple[Any, Any]],
                 **fields: Any) -> "DeferredEstimate":
        """:meth:`TreeEstimate._closed_form` with the fields of ``later`` (a subset of
        ``sd``, ``unseen_sd``, ``posterior``) computed when first read."""
        out = cls._closed_form(probs, unseen, **fields)
        for name in later:
            del out.__dict__[name]
        out.__dict__["_deferred"] = later
        return out

    def __getstate__(self) -> dict[str, Any]:
        for name in self.__dict__.get("_deferred", ()):
            getattr(self, name)
        return {k: v for k, v in self.__dict__.items() if k != "_deferred"}


class Estimator:
    """Base class of the estimators: ``estimate(tree) -> TreeEstimate``.

    Subclasses set the class attribute ``name`` (the ``method=`` string) and declare
    their hyperparameters once, in ``params``
    (:class:`~pybncsmooth.validation.Param`: name, type, range, default, doc).  The
    declaration drives everything else: the constructor (keyword arguments, checked
    and converted; no subclass writes ``__init__``), :meth:`get_params`, the class's
    documented signature and its "Hyperparameters" section, :func:`make_estimator`'s
    messages, the CLI's ``methods`` listing and R's ``bncs.methods()``.  Rules that tie
    several hyperparameters together go in :meth:`_check`.

    Besides its hyperparameters every estimator takes the three settings of a run,
    declared as options (:mod:`pybncsmooth.options`): ``random_state`` (used by the
    stochastic ones), ``n_jobs`` (threads over the trees of a network, and the
    samplers' chains) and ``progress`` (a bar where the estimator shows one).
    """

    name: ClassVar[str] = ""
    #: whether ``estimate`` uses random numbers (``random_state`` seeds them)
    stochastic: ClassVar[bool] = False
    #: whether the estimator needs whole counts (a sampler of table counts): ``na="em"``
    #: then runs as data augmentation, and row weights must be integers
    whole_counts: ClassVar[bool] = False
    #: whether a domain's leaves are a Dirichlet pooled toward their configuration
    #: (:meth:`domain_posterior`); ``False``: they keep their own frequencies (``mle``)
    pools_domains: ClassVar[bool] = True
    #: the hyperparameters' declarations, in the constructor's order
    params: ClassVar[tuple[Param, ...]] = ()
    #: the settings of a run that every estimator takes (declared as options)
    RUN: ClassVar[tuple[str, ...]] = RUN_SETTINGS
    #: where an informative prior (``fit(prior=)``) enters, in words; ``None``: the
    #: estimator takes none (:meth:`with_prior` refuses it)
    prior_role: ClassVar[str | None] = None
    #: the hyperparameters a prior network takes the place of (given together: refused)
    prior_replaces: ClassVar[tuple[str, ...]] = ()
    #: hyperparameters renamed: old name -> new name (named when the old one is given)
    renamed: ClassVar[Mapping[str, str]] = {}
    #: the prior network this estimator carries (:meth:`with_prior`), or ``None``
    network_prior: NetworkPrior | None = None
    #: the trees and estimates of the network an update starts from (:meth:`warm_started`), or ``None``
    previous: Mapping[str, tuple[ContextTree, TreeEstimate]] | None = None

    def __init__(self, **values: Any) -> None:
        decl = {p.name: p for p in self.params}
        for name in values:
            if name not in decl and name not in self.RUN:
                raise HyperparameterError(_unknown_message(type(self), name))
        for p in self.params:
            setattr(self, p.name, p.check(values[p.name]) if p.name in values else p.default)
        for name in self.RUN:
            setattr(self, name, run_check(name, values.get(name)))
        #: the hyperparameters given to the constructor (the others have their defaults)
        self.given: frozenset[str] = frozenset(n for n in values if n in decl)
        self._check()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} defines __init__: declare its hyperparameters in params (they drive the "
                "constructor) and put rules that tie them together in _check()"
            )
        cls.__signature__ = _signature(cls.params)  # type: ignore[attr-defined]
        if cls.__doc__ and cls.params and "Hyperparameters\n" not in cls.__doc__:
            cls.__doc__ = _with_params_section(cls.__doc__, cls.params)

    def _check(self) -> None:
        """Rules that tie several hyperparameters together (raise
        :class:`HyperparameterError`); derived settings.  Called by the constructor."""

    def with_settings(self, **changes: Any) -> "Estimator":
        """A copy with some hyperparameters or run settings changed (checked again); the
        prior and the warm start it carries, if any, are kept."""
        out = type(self)(**{**self.get_params(), **changes})
        out.network_prior, out.previous = self.network_prior, self.previous
        return out

    def with_prior(self, prior: NetworkPrior | None, *, check: bool = True) -> "Estimator":
        """A copy carrying the prior network ``prior`` (every node's
        :class:`~pybncsmooth.estimators.prior.NodePrior`), which :meth:`estimate` reads
        through :meth:`node_prior`; an estimator without a ``prior_role`` refuses it, and
        one given a hyperparameter the prior takes the place of too (``check``: a network
        read back from a file gives every hyperparameter)."""
        if prior is not None and self.prior_role is None:
            takes = ", ".join(sorted(n for n, c in _REGISTRY.items() if c.prior_role is not None))
            raise HyperparameterError(
                f"method {self.name!r} takes no prior network (prior=); the methods that do: {takes}"
            )
        both = [n for n in self.prior_replaces if n in self.given]
        if prior is not None and both and check:
            raise HyperparameterError(
                f"prior= (with prior_weight=) takes the place of {self.name}'s {both[0]}=: give one of them"
            )
        out = copy.copy(self)
        out.network_prior = prior
        return out

    def node_prior(self, tree: ContextTree) -> NodePrior | None:
        """The prior of ``tree``'s node (checked against the tree's parents and levels), or
        ``None``: the estimator's own prior."""
        return None if self.network_prior is None else self.network_prior.for_tree(tree)

    def warm_started(self, previous: Mapping[str, tuple[ContextTree, TreeEstimate]] | None) -> "Estimator":
        """A copy that starts from ``previous`` (the context tree and estimate of every
        node of the network being updated): samplers resume from the state their
        estimates kept; closed forms ignore it."""
        out = copy.copy(self)
        out.previous = previous
        return out

    def estimate(self, tree: ContextTree) -> TreeEstimate:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} does not define estimate()")

    def batch_probs(self, tree: ContextTree, counts: list[np.ndarray]) -> list[np.ndarray] | None:
        """The estimate's probabilities at every node of ``tree`` for stacked counts
        (``counts[i]``: ``(k, m_i, r)``, level ``i``'s counts in ``k`` bootstrap
        replicates; a node may be empty in some), as ``(k, m_i, r)`` arrays (an empty
        node's rows are then replaced by what the estimator answers for an absent
        configuration), or ``None`` when the estimator has no closed form (the bootstrap
        then fits each replicate: :mod:`~pybncsmooth.estimators.bootstrap`)."""
        return None

    def bootstrap(self, unseen: str = "backoff") -> BootstrapPosterior:
        """The bootstrap over rows of this estimator's estimates (its uncertainty when
        it has no posterior)."""
        return BootstrapPosterior(self.name, self.hyperparameters(), unseen, self)

    @property
    def domain_split(self) -> Literal["first", "last"]:
        """Where the domain of a multi-domain fit splits the context trees.

        ``"last"`` (the default): below the node's parents, so that a domain's
        distribution for a parent configuration is a leaf under that configuration
        pooled over the domains and shrinks toward it, as much as the estimator's
        hierarchy learns (DESIGN: multi-domain).  ``"first"``: above them, bnlearn's
        ``hdir`` layout (``hmd`` with ``compat="bnlearn"`` or ``domain_model="joint"``).
        """
        return "last"

    def estimate_all(self, trees: "Mapping[str, ContextTree]", *, domain: str | None = None) -> dict[str, TreeEstimate]:
        """Estimate the trees of every node of a network.

        ``domain`` names the variable of a multi-domain fit split *first* (see
        :attr:`domain_split`; a domain split last goes through
        :meth:`estimate_domains`): estimators with a model of their own for it
        (``hmd``'s joint model) use it, the others treat it as any other split.
        The trees run in ``n_jobs`` threads when it is set (closed forms are cheap:
        by default they run in the calling thread); estimators with a model across
        trees or their own scheduling override this.
        """
        if self.n_jobs is None or self.n_jobs == 1:
            return {name: self.estimate(tree) for name, tree in trees.items()}
        return map_trees(self.estimate, trees, self.n_jobs)

    def estimate_flat(self, flat: Any) -> Any:
        """:meth:`estimate_all` of every tree of a
        :class:`~pybncsmooth.counting.flat.FlatTrees` (no domain, no prior network) in one
        pass over its flat arrays, each tree's estimate made when first read
        (:class:`~pybncsmooth.estimators.closed.flat.FlatEstimates`), or ``None`` where the
        estimator has no such pass (then :meth:`estimate_all` runs on the trees).  The
        closed forms have one; the values are those of :meth:`estimate_all`, bit for bit."""
        return None

    def estimate_domains(self, trees: "Mapping[str, ContextTree]", domain: str) -> dict[str, TreeEstimate]:
        r"""Estimate the trees of a multi-domain network whose last split is ``domain``.

        The trees without the domain split (every configuration pooled over the
        domains) are estimated by :meth:`estimate_all`; then each domain's leaf below
        configuration ``y`` by :meth:`domain_leaves`, by default the posterior mean of
        :math:`\mathrm{Dir}(s_D\,\hat\theta_y)` around the pooled estimate
        :math:`\hat\theta_y`, with the node's domain concentration :math:`s_D`
        integrated over its posterior under the Dirichlet-multinomial marginal
        likelihood of every domain's counts (:mod:`~pybncsmooth.estimators.domains.pooling`).  A configuration a
        domain never saw, or a domain unseen in training, gets :math:`\hat\theta_y`.
        """
        for name, t in trees.items():
            if not t.parents or t.parents[-1] != domain:
                raise DataError(f"the context tree of {name!r} does not split on the domain {domain!r} last")
        pooled = self.estimate_all({n: t.truncate(t.depth - 1) for n, t in trees.items()})
        return {n: self.domain_leaves(t, pooled[n]) for n, t in trees.items()}

    def domain_leaves(self, tree: ContextTree, pooled: TreeEstimate) -> TreeEstimate:
        """The estimate of a domain-last ``tree`` from the estimate of its pooled tree
        (``tree`` without the domain split): every level of ``pooled`` and, below it,
        the domains' leaves shrunk toward their configuration (see
        :meth:`estimate_domains`).  ``info`` gains the posterior of the concentration:
        ``s_domain_log`` and ``s_domain_weights`` (grid and weights), ``s_domain`` (its
        posterior geometric mean), and what a new domain's concentration is learned from
        (:meth:`new_domain_prior`)."""
        leaves = tree.levels[-1]
        mean = pooled.probs[-1][leaves.parent]
        mean_sd = pooled.sd[-1][leaves.parent] if pooled.sd is not None else None
        counts = leaves.counts.astype(np.float64)
        prior = self.fresh_prior(tree.truncate(tree.depth - 1), pooled) if pooled.sd is not None else None
        log_s, weights = self.domain_concentration(counts, mean, prior, leaves.parent)
        p, sd = self.domain_posterior(counts, mean, log_s, weights, mean_sd=mean_sd)
        info = dict(pooled.info, **concentration_info(log_s, weights))
        w = shrink_weight(log_s, weights)
        has_sd = pooled.sd is not None and sd is not None
        fresh_sd = predictive_sd(pooled.probs[-1], pooled.sd[-1], w) if has_sd else None
        info.update(self.new_domain_prior(tree, pooled, prior, log_s, weights, (p, sd if has_sd else None, fresh_sd)))
        if not has_sd:
            return replace(pooled, probs=pooled.probs + (p,), info=info, sd=None, unseen_sd=None, posterior=None)
        # a configuration a domain never saw: Dir(s_D theta) around the pooled vector
        above = pooled.unseen_sd if pooled.unseen_sd is not None else pooled.sd[:-1]
        unseen_sd = tuple(predictive_sd(m, v, w) for m, v in zip(pooled.probs, tuple(above) + (pooled.sd[-1],)))
        fb_sd = pooled.fallback_sd
        if fb_sd is not None and pooled.unseen == "uniform":
            fb_sd = predictive_sd(np.full(fb_sd.shape, 1.0 / fb_sd.shape[-1]), fb_sd, w)
        post = None
        if pooled.posterior is not None:
            post = DomainPosterior(pooled.posterior, tree.truncate(tree.depth - 1), log_s, weights)
        return replace(pooled, probs=pooled.probs + (p,), info=info, sd=pooled.sd + (sd,), unseen_sd=unseen_sd,
                       fallback_sd=fb_sd, posterior=post)  # the unseen rule and its tables kept

    def new_domain_prior(self, tree: ContextTree, pooled: TreeEstimate, prior: np.ndarray | None,
                         log_s: np.ndarray, weights: np.ndarray, leaves_est: tuple) -> dict[str, np.ndarray]:
        r"""What the fit keeps for a domain added later (:meth:`FittedNetwork.adapt`,
        :mod:`~pybncsmooth.estimators.domains.prior`) besides the posterior of the concentration, in arrays
        whose size does not grow with the number of domains: the mass :math:`A_y` each
        pooled configuration is known with (``s_domain_mass``), the fitted domains'
        Dirichlets at every pooled configuration (``s_atom_codes``, ``s_atom_alpha``:
        :func:`~pybncsmooth.estimators.domains.prior.atom_table`) and how a domain's concentration is spread
        among them (``s_atom_curves``, ``s_new_G``:
        :func:`~pybncsmooth.estimators.domains.prior.spread_of_concentrations`).  ``prior``: the
        configurations' Dirichlet
        priors (:meth:`fresh_prior`; ``None``: :math:`\mathrm{Dir}(1, \dots, 1)`);
        ``leaves_est``: the leaves' posterior means and sds and a fresh domain's sd at
        each pooled configuration (``None`` without sds).  Estimators that fix the
        concentration keep nothing (a new domain takes theirs)."""
        leaves = tree.levels[-1]
        r, n_pooled = tree.child_card, len(tree.levels[-2].value)
        beta = prior if prior is not None else np.ones((n_pooled, r))
        e, post = effective_mass(leaves.counts, leaves.parent, beta, log_s, weights)
        mass = post.sum(axis=1)
        p, sd, fresh_sd = leaves_est
        s_bar = float(np.exp(weights @ log_s)) if np.isfinite(log_s).all() else 0.0
        if fresh_sd is not None:
            fresh = moment_mass(pooled.probs[-1], fresh_sd)
        else:
            fresh = s_bar * mass / (s_bar + mass + 1.0)
        atoms = atom_table(leaves.parent, leaves.value, leaves.counts, p, sd, tree.parent_cards[-1], pooled.probs[-1],
                           fresh, s_bar)
        spread = spread_of_concentrations(leaves.counts, leaves.parent, leaves.value, atoms["s_atom_codes"], e, post)
        return {"s_domain_mass": mass, **atoms, **spread}

    def domain_posterior(
        self, counts: np.ndarray, mean: np.ndarray, log_s: np.ndarray, weights: np.ndarray,
        mean_sd: np.ndarray | None = None, mass: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        r"""A domain's leaves (``(L, r)`` counts) given their configurations' pooled
        estimates ``mean`` (and their sds ``mean_sd``) and the posterior of the domain
        concentration (``log_s``, ``weights``): the posterior mean and sd of each entry,
        :math:`\mathrm{Dir}(s_D\,\theta_y + n)` averaged over :math:`s_D` and the pooled
        :math:`\theta_y`.  Used for the domains of a fit and for a domain added later
        (:meth:`FittedNetwork.adapt`, with ``mass``: the nested model's
        :math:`s' = s A_y / (s + A_y + 1)` in place of ``s``)."""
        return mixture_posterior(counts, mean, log_s, weights, mean_sd, mass)

    def domain_concentration(
        self, counts: np.ndarray, mean: np.ndarray, prior: np.ndarray | None = None, groups: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The posterior of the node's domain concentration as ``(log_s, weights)``
        (:func:`~pybncsmooth.estimators.domains.pooling.concentration_posterior`: with ``prior`` and ``groups``, the
        nested model's exact evidence); estimators may fix or override it."""
        return concentration_posterior(counts, mean, prior, groups)

    def fresh_prior(self, tree: ContextTree, est: TreeEstimate) -> np.ndarray:
        r"""Dirichlet parameters ``(L, r)`` of the prior of each leaf's vector of ``tree``
        given the rest of the hierarchy, for the nested model of a multi-domain fit: the
        predictive of a fresh configuration under the leaf's parent (its mean and, from
        the parent's ``unseen_sd``, its spread), matched by a Dirichlet
        (:math:`A + 1 = \sum_k m_k (1 - m_k) / \sum_k v_k`); a tree without parents,
        :math:`\mathrm{Dir}(1, \dots, 1)`.  Estimators whose prior is a Dirichlet
        (``bayes``) give it exactly."""
        r = tree.child_card
        L = tree.n_leaves
        if tree.depth == 0 or est.sd is None:
            return np.ones((L, r))
        par = tree.levels[-1].parent
        m = est.probs[-2][par]
        above = est.unseen_sd[-1] if est.unseen_sd is not None else est.sd[-2]
        v = above[par] ** 2
        A = (m * (1 - m)).sum(axis=1) / np.maximum(v.sum(axis=1), 1e-300) - 1.0
        return np.maximum(A, 1e-6)[:, None] * np.maximum(m, 1e-300)

    # ------------------------------------------------------------------ params
    @classmethod
    def param_names(cls) -> list[str]:
        """The hyperparameters' names, in declaration order."""
        return [p.name for p in cls.params]

    def hyperparameters(self) -> dict[str, Any]:
        """The hyperparameters (without the run settings)."""
        return {p: getattr(self, p) for p in self.param_names()}

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters and the run settings: ``type(e)(**e.get_params())`` is ``e``."""
        return {**self.hyperparameters(), **{n: getattr(self, n) for n in self.RUN}}

    def __repr__(self) -> str:
        run = {n: getattr(self, n) for n in self.RUN if getattr(self, n) is not None}
        args = ", ".join(f"{k}={v!r}" for k, v in {**self.hyperparameters(), **run}.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted((k, repr(v)) for k, v in self.get_params().items()))))


def map_trees(fn: Any, trees: "Mapping[str, ContextTree]", n_jobs: int | None) -> dict[str, Any]:
    """``fn`` applied to every tree of a network, in up to ``n_jobs`` threads (default:
    all cores; the compiled kernels release the GIL).  Results keep the trees' order."""
    names = list(trees)
    return dict(zip(names, parallel_map(lambda n: fn(trees[n]), names, n_jobs)))


_REGISTRY: dict[str, type[Estimator]] = {}


def register_estimator(cls: type[Estimator]) -> type[Estimator]:
    """Class decorator: make ``cls`` available as ``method=cls.name``.

    A hyperparameter may not take the name of an option (:mod:`pybncsmooth.options`:
    ``na``, ``domain``, ``random_state``, ...), which front ends would route to the
    options instead (a ``TypeError`` names it)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    clash = [p.name for p in cls.params if p.name in option_names()]
    if clash:
        raise TypeError(f"{cls.__name__} declares {clash[0]!r}, which is an option of every fit, not a hyperparameter")
    _REGISTRY[cls.name] = cls
    return cls


def _unknown_message(cls: type[Estimator], name: str) -> str:
    ps = cls.params
    ranges = "; ".join(f"{p.name}: {p.describe()}" for p in ps)
    return (
        f"method {cls.name!r} has no hyperparameter {name!r}; its hyperparameters are "
        f"{', '.join(p.name for p in ps) or 'none'}" + (f" ({ranges})" if ranges else "")
        + (f"; {name} is now {cls.renamed[name]}" if name in cls.renamed else "")
    )


def _signature(params: tuple[Param, ...]) -> inspect.Signature:
    """The constructor's signature, from the declarations (keyword-only, with defaults)."""
    kw = inspect.Parameter.KEYWORD_ONLY
    own = [inspect.Parameter(p.name, kw, default=p.default) for p in params]
    run = [inspect.Parameter(n, kw, default=None) for n in RUN_SETTINGS]
    return inspect.Signature([*own, *run])


def _with_params_section(doc: str, params: tuple[Param, ...]) -> str:
    """``doc`` with a numpydoc "Hyperparameters" section generated from ``params``."""
    lines = ["", "    Hyperparameters", "    ---------------"]
    for p in params:
        lines.append(f"    {p.name}: {p.describe()} (default {p.default!r})")
        doc = p.doc.replace("|", "\\|")  # reST would read |X| as a substitution
        lines.append(f"        {doc[:1].upper()}{doc[1:]}.")
    lines += [
        "    random_state, n_jobs, progress:",
        "        The settings of a run, options of every fit (see :class:`pybncsmooth.options.Options`).",
    ]
    return doc.rstrip() + "\n" + "\n".join(lines) + "\n"


def available_methods() -> list[str]:
    """Names accepted by ``method=``."""
    return sorted(_REGISTRY)


def estimator_class(method: str) -> type[Estimator]:
    """The estimator class registered as ``method`` (:class:`HyperparameterError` if none)."""
    if not isinstance(method, str) or method not in _REGISTRY:
        raise HyperparameterError(f"unknown method {method!r}; available: {', '.join(available_methods())}")
    return _REGISTRY[method]


def hyperparameter_names() -> set[str]:
    """Every hyperparameter name of every registered estimator (``random_state`` aside):
    what a front end may pass through to an estimator."""
    names: set[str] = set()
    for cls in _REGISTRY.values():
        names.update(n for n in cls.param_names() if n != "random_state")
    return names


def method_params(method: str) -> tuple[Param, ...]:
    """The declared hyperparameters of ``method`` (:class:`~pybncsmooth.validation.Param`:
    name, kind, range, default, doc); :class:`HyperparameterError` for an unknown method."""
    return estimator_class(method).params


def describe_methods(details: bool = False) -> dict[str, dict[str, Any]]:
    """Every registered estimator and its hyperparameters, from their declarations.

    ``details=False``: ``{method: {name: default}}``; ``details=True``:
    ``{method: {name: {"default", "kind", "constraint", "doc"}}}`` (``constraint`` in
    words, as the error messages state it).  Defaults are plain values (or their
    ``repr``)."""
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(_REGISTRY):
        ps = _REGISTRY[name].params
        if details:
            out[name] = {
                p.name: {"default": _plain_default(p.default), "kind": p.kind, "constraint": p.describe(), "doc": p.doc}
                for p in ps
            }
        else:
            out[name] = {p.name: _plain_default(p.default) for p in ps}
    return out


def _plain_default(v: Any) -> Any:
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return repr(v)


def make_estimator(method: str | Estimator, *, options: Options | None = None, **settings: Any) -> Estimator:
    """An estimator from a method name and its hyperparameters.

    ``settings`` are hyperparameters and, optionally, run settings (``random_state``,
    ``n_jobs``, ``progress``); ``options`` (an :class:`~pybncsmooth.options.Options`)
    supplies the run settings ``settings`` leaves out.  An ``Estimator`` instance is
    returned as is, or a copy with the run settings the options set (not ``None``);
    hyperparameters must then be empty.

    Raises
    ------
    HyperparameterError
        Unknown method, or a hyperparameter the method does not take (named).
    """
    run = options.run_settings() if options is not None else {}
    if isinstance(method, Estimator):
        if any(k not in RUN_SETTINGS for k in settings):
            raise HyperparameterError(
                f"hyperparameters {sorted(k for k in settings if k not in RUN_SETTINGS)} given together with an "
                f"estimator object {method!r}; set them on the object"
            )
        changes = {k: v for k, v in {**run, **settings}.items() if v is not None}
        return method.with_settings(**changes) if changes else method
    cls = estimator_class(method)
    return cls(**{**run, **settings})


_bootstrap.ESTIMATOR_FACTORY[:] = [make_estimator]
