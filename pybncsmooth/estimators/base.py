"""The estimator protocol.

An estimator is a small configured object (its name, hyperparameters and
``random_state``) that maps a :class:`~pybncsmooth.counting.ContextTree` to
probability vectors at *every* node of the tree, leaves and internal nodes
alike (:class:`TreeEstimate`).  Queries for a parent configuration absent from
the tree are answered by the estimate's ``unseen`` rule: ``"backoff"`` uses the
deepest existing ancestor's vector (paper 000's back-off), ``"uniform"`` the
uniform distribution (the BDeu posterior of an empty configuration), and
``"fallback"`` a table indexed by the trailing tree variables (the
population-level CPT of a domain-pooled fit, for domains and configurations
that have no data).  Estimators that quantify uncertainty also give the
posterior standard deviation of every entry (``TreeEstimate.sd``).

The same estimator objects serve every front end; :func:`make_estimator` turns
``method="bayes", iss=10`` into one and rejects unknown hyperparameters by name.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Mapping

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import DataError, HyperparameterError
from ..validation import Param, check_params, parallel_map
from ._pooling import concentration_info, concentration_posterior, mixture_posterior

__all__ = [
    "Estimator",
    "TreeEstimate",
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
    """

    probs: tuple[np.ndarray, ...]
    unseen: UnseenRule = "backoff"
    info: dict[str, Any] = field(default_factory=dict)
    sd: tuple[np.ndarray, ...] | None = None
    fallback: np.ndarray | None = None
    fallback_sd: np.ndarray | None = None
    fallback_from: int = 0

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
        for name in ("fallback", "fallback_sd"):
            v = getattr(self, name)
            if v is not None and not _nonnegative_finite(v):
                raise FloatingPointError(f"negative or non-finite entries in the {name} table")

    @property
    def has_sd(self) -> bool:
        """Whether the estimate carries posterior standard deviations."""
        return self.sd is not None


class Estimator:
    """Base class of the estimators: ``estimate(tree) -> TreeEstimate``.

    Subclasses set the class attribute ``name`` (the ``method=`` string) and declare
    their hyperparameters twice over, kept equal by :func:`register_estimator`: as
    keyword arguments of ``__init__`` (with defaults, for signatures and help) and as
    :class:`~pybncsmooth.validation.Param` declarations in ``params`` (type, range,
    default, one line of doc), which :meth:`_set_params` checks.  The declarations
    serve :func:`make_estimator`'s messages, the CLI's ``methods`` listing and R's
    ``bncs.methods()``; a new estimator is one module and its registration.
    """

    name: ClassVar[str] = ""
    #: whether ``estimate`` uses random numbers (then it takes ``random_state``)
    stochastic: ClassVar[bool] = False
    #: the hyperparameters' declarations, in ``__init__``'s order
    params: ClassVar[tuple[Param, ...]] = ()

    def estimate(self, tree: ContextTree) -> TreeEstimate:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} does not define estimate()")

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
        Estimators that can work on several trees at once (e.g. in parallel
        threads) override this.
        """
        return {name: self.estimate(tree) for name, tree in trees.items()}

    def estimate_domains(self, trees: "Mapping[str, ContextTree]", domain: str) -> dict[str, TreeEstimate]:
        r"""Estimate the trees of a multi-domain network whose last split is ``domain``.

        The trees without the domain split (every configuration pooled over the
        domains) are estimated by :meth:`estimate_all`; then each domain's leaf below
        configuration ``y`` by :meth:`domain_leaves`, by default the posterior mean of
        :math:`\mathrm{Dir}(s_D\,\hat\theta_y)` around the pooled estimate
        :math:`\hat\theta_y`, with the node's domain concentration :math:`s_D`
        integrated over its posterior under the Dirichlet-multinomial marginal
        likelihood of every domain's counts (:mod:`._pooling`).  A configuration a
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
        posterior geometric mean)."""
        leaves = tree.levels[-1]
        mean = pooled.probs[-1][leaves.parent]
        counts = leaves.counts.astype(np.float64)
        log_s, weights = self.domain_concentration(counts, mean)
        p, sd = self.domain_posterior(counts, mean, log_s, weights)
        info = dict(pooled.info, **concentration_info(log_s, weights))
        sds = pooled.sd + (sd,) if pooled.sd is not None and sd is not None else None
        return replace(pooled, probs=pooled.probs + (p,), info=info, sd=sds)  # the unseen rule and its tables kept

    def domain_posterior(
        self, counts: np.ndarray, mean: np.ndarray, log_s: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        r"""A domain's leaves (``(L, r)`` counts) given their configurations' pooled
        estimates ``mean`` and the posterior of the domain concentration (``log_s``,
        ``weights``): the posterior mean and sd of each entry, :math:`\mathrm{Dir}(s_D\,m
        + n)` averaged over :math:`s_D`.  Used for the domains of a fit and for a domain
        added later (:meth:`FittedNetwork.adapt`)."""
        return mixture_posterior(counts, mean, log_s, weights)

    def domain_concentration(self, counts: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The posterior of the node's domain concentration as ``(log_s, weights)``
        (:func:`~._pooling.concentration_posterior`); estimators may fix or override it."""
        return concentration_posterior(counts, mean)

    # ------------------------------------------------------------------ params
    @classmethod
    def param_names(cls) -> list[str]:
        """The hyperparameters' names, in ``__init__``'s order."""
        return [p.name for p in cls.params]

    def _set_params(self, **values: Any) -> None:
        """Check every value against its declaration in ``params`` (converted to the
        declared type; :class:`HyperparameterError` naming the culprit and its accepted
        range) and set it as an attribute.  Rules that tie several hyperparameters
        together stay in the subclass's ``__init__``."""
        for name, value in check_params(self.params, values).items():
            setattr(self, name, value)

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, as given to ``__init__``."""
        return {p: getattr(self, p) for p in self.param_names()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
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

    ``cls.params`` must declare exactly ``__init__``'s keyword arguments, in their
    order and with their defaults (a ``TypeError`` says where they differ)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    sig = [(n, q.default) for n, q in inspect.signature(cls.__init__).parameters.items() if n != "self"]
    decl = [(p.name, p.default) for p in cls.params]
    if [n for n, _ in sig] != [n for n, _ in decl]:
        raise TypeError(
            f"{cls.__name__}.params declares {[n for n, _ in decl]}, but __init__ takes {[n for n, _ in sig]}"
        )
    for (name, default), (_, declared) in zip(sig, decl):
        if default is inspect.Parameter.empty or not _same(default, declared):
            raise TypeError(f"{cls.__name__}: {name}'s default is {default!r} in __init__ but {declared!r} in params")
    _REGISTRY[cls.name] = cls
    return cls


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


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


def with_progress(method: str | Estimator, hyper: dict[str, Any], progress: bool | None) -> dict[str, Any]:
    """``hyper`` with ``progress`` added when it was set (not ``None``) and the method's
    estimator shows a progress bar of its own (HDP's sweeps, ...), unless ``hyper``
    already sets it: a front end's ``progress=`` covers reading and estimating."""
    if progress is None or "progress" in hyper or not isinstance(method, str) or method not in _REGISTRY:
        return hyper
    if "progress" not in _REGISTRY[method].param_names():
        return hyper
    return {**hyper, "progress": progress}


def make_estimator(method: str | Estimator, random_state: Any = None, **hyper: Any) -> Estimator:
    """An estimator from a method name and hyperparameters.

    ``random_state`` is passed to stochastic estimators and ignored by the others.
    An ``Estimator`` instance is returned as is (hyperparameters must then be empty).

    Raises
    ------
    HyperparameterError
        Unknown method, or a hyperparameter the method does not take (named).
    """
    if isinstance(method, Estimator):
        if hyper:
            raise HyperparameterError(
                f"hyperparameters {sorted(hyper)} given together with an estimator object "
                f"{method!r}; set them on the object"
            )
        return method
    cls = estimator_class(method)
    names = cls.param_names()
    bad = [k for k in hyper if k not in names]
    if bad:
        ps = [p for p in cls.params if p.name != "random_state"]
        ranges = "; ".join(f"{p.name}: {p.describe()}" for p in ps)
        raise HyperparameterError(
            f"method {method!r} has no hyperparameter {bad[0]!r}; its hyperparameters are "
            f"{', '.join(p.name for p in ps) or 'none'}" + (f" ({ranges})" if ranges else "")
        )
    if cls.stochastic and "random_state" in names:
        hyper = dict(hyper, random_state=random_state)
    return cls(**hyper)
