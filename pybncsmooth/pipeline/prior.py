r"""An expert network as the prior of a fit: ``fit(..., prior=P, prior_weight=w)``.

``P`` is a :class:`~pybncsmooth.FittedNetwork`, the path of a network file
(``.bif``/``.dsc``/``.net``/``.pbn``/``.rds``), a bnlearn ``bn.fit`` (an rpy2 object),
or a dict of CPTs ``{node: array}`` in bnlearn's layout (axes ``(node, *parents)``,
the parents in the fitted structure's order, the levels in the data's order; every
node of the structure given).  For every node the fit needs the *family joint*
:math:`P(x, \pi)` over the node and its parents (in the tree's branching order): where
``P`` has exactly those parents it is :math:`P(x \mid \pi) P(\pi)`, elsewhere (an
expert network with other arcs) the joint marginal, both by exact inference on ``P``.
The estimators read it as :class:`~pybncsmooth.estimators.prior.NodePrior`.

A network's levels fix the data's (as a network file given as the structure does): a
level the data have and ``P`` does not is an error naming the variable and the level,
and a level ``P`` declares that the data never show is kept (its prior mean answers).
A node of the structure that ``P`` lacks, a CPT of the wrong shape, or levels that
differ between two sources of levels are refused naming the node.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ..data.schema import Schema
from ..errors import DataError, HyperparameterError, StructureError
from ..estimators.base import Estimator
from ..estimators.prior import NetworkPrior
from ..interop.io import read_network
from ..interop.rds import from_r
from ..model.cpd import TableCPD
from ..model.network import FittedNetwork
from ..options import Options
from ..structure.dag import DAG

__all__ = ["check_prior_use", "load_prior", "prior_schema", "resolve_prior", "with_fit_prior"]


def _is_r_object(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "rpy2"


def load_prior(prior: Any) -> FittedNetwork | Mapping[str, Any] | None:
    """The prior as a network (a file read, a bnlearn object converted) or a dict of CPTs."""
    if prior is None or isinstance(prior, Mapping):
        return prior
    if isinstance(prior, FittedNetwork):
        return _one_set_of_tables(prior)
    if isinstance(prior, (str, os.PathLike)):
        if not os.path.exists(prior):
            raise FileNotFoundError(f"prior: no such network file {str(prior)!r}")
        obj = read_network(prior)
    elif _is_r_object(prior):
        obj = from_r(prior)
    else:
        raise HyperparameterError(
            f"prior must be a FittedNetwork, a network file, a bnlearn bn.fit or a dict of CPTs, not a "
            f"{type(prior).__name__}"
        )
    if not isinstance(obj, FittedNetwork):
        raise HyperparameterError(f"prior {str(prior)!r} holds a structure without tables: a prior needs its CPTs")
    return _one_set_of_tables(obj)


def _one_set_of_tables(net: FittedNetwork) -> FittedNetwork:
    """A prior is one network's tables: a multi-domain network holds one set per domain
    and its population's, and which of them the new fit should start from (the
    population for new data, or one domain's, or each domain its own in a refit) is the
    user's choice, so it is refused naming the ways to state it."""
    if net.domain is None:
        return net
    first = net.domains[0] if net.domains else "..."
    raise HyperparameterError(
        f"prior= is a multi-domain network (domain column {net.domain!r}, {len(net.domains)} domains), which holds "
        f"one set of tables per domain and its population's; a prior is one set of tables: pass "
        f"prior=net.for_domain(None) for the population's (what it answers for a domain it was not fitted with) "
        f"or prior=net.for_domain({first!r}) for one domain's"
    )


def check_prior_use(estimator: Estimator, role: Any) -> None:
    """Refuse a prior the estimator cannot take (no ``prior_role``; ``hmd``'s joint domain
    model, whose trees split on the domain first), before any data is read."""
    estimator.with_prior(None if estimator.prior_role is not None else NetworkPrior(1.0, "network"))
    if role and role.split == "first":
        raise HyperparameterError(
            f"prior= with method {estimator.name!r}'s joint domain model (its trees split on the domain "
            f"{role.column!r} first) is not supported: use the default (nested) domain model"
        )


def prior_schema(prior: Any, dag: DAG, given: Schema | None) -> Schema | None:
    """The levels the fit takes from the prior network (with those a structure file
    declares, ``given``, which must agree): every node of ``dag`` must be a variable of
    the prior."""
    if not isinstance(prior, FittedNetwork):
        return given
    missing = [n for n in dag.nodes if n not in prior.schema]
    if missing:
        raise StructureError(
            f"the prior network has no variable {missing[0]!r} (a node of the structure"
            + (f"; {len(missing) - 1} more are missing" if len(missing) > 1 else "") + ")"
        )
    out = {v: prior.schema[v] for v in dag.nodes}
    if given is not None:
        for v in given:
            if v in out and [str(x) for x in given[v]] != [str(x) for x in out[v]]:
                raise DataError(
                    f"node {v!r} has levels {list(given[v])} in the structure's file and {list(out[v])} in the "
                    "prior network"
                )
            out[v] = given[v]
    return Schema(out, frozenset(out))


def resolve_prior(prior: Any, dag: DAG, schema: Schema, options: Options) -> NetworkPrior | None:
    """The prior (loaded by :func:`load_prior`) as the estimators read it: the family
    joint of any node and ordered parents, by exact inference on the prior network, in
    the fit's levels (``schema``: a level of the prior the fit does not have is
    conditioned away, a level of the fit the prior lacks refused)."""
    if prior is None:
        return None
    weight = 1.0 if options.prior_weight is None else float(options.prior_weight)
    if isinstance(prior, Mapping):
        net, source = _dict_network(prior, dag, schema), "a dict of CPTs"
    else:
        net, source = prior, _describe(options.prior)

    def provider(child: str, parents: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray | None]:
        return _family_joint(net, child, list(parents), schema)

    return NetworkPrior(weight, options.prior_per, source, provider)


def with_fit_prior(estimator: Estimator, dag: DAG, schema: Schema, options: Options) -> Estimator:
    """``estimator`` carrying the fit's prior (``options.prior``), unless it carries one
    already."""
    if options.prior is None or estimator.network_prior is not None:
        return estimator
    return estimator.with_prior(resolve_prior(load_prior(options.prior), dag, schema, options))


def _describe(prior: Any) -> str:
    if isinstance(prior, (str, os.PathLike)):
        return os.path.basename(str(prior))
    return type(prior).__name__


def _dict_network(cpts: Mapping[str, Any], dag: DAG, schema: Schema) -> FittedNetwork:
    """A dict of CPTs as a network of the fitted structure (each table checked)."""
    unknown = [k for k in cpts if k not in dag]
    if unknown:
        raise StructureError(f"the prior gives a CPT for {unknown[0]!r}, which is not a node of the structure")
    cpds = {}
    for n in dag.nodes:
        if n not in cpts:
            raise StructureError(f"the prior (a dict of CPTs) has no CPT for node {n!r}; give every node's")
        pa = dag.parents(n)
        table = np.asarray(cpts[n], dtype=np.float64)
        shape = (schema.cardinality(n), *schema.cardinalities(pa))
        if table.shape != shape:
            raise DataError(
                f"the prior's CPT of node {n!r} has shape {table.shape}; its table has axes ({', '.join([n, *pa])}) "
                f"with {shape} levels"
            )
        try:
            cpds[n] = TableCPD(n, pa, table)
        except ValueError as e:
            raise DataError(f"the prior's CPT of node {n!r}: {e}") from None
    return FittedNetwork(dag, schema.subset(dag.nodes), cpds)


def _level_map(net: FittedNetwork, var: str, schema: Schema) -> np.ndarray:
    """For each level of ``var`` in the fit, its index among the prior's levels (matched
    as values, or by their text)."""
    theirs = list(net.schema[var])
    text = {str(v): i for i, v in enumerate(theirs)}
    out = []
    for lev in schema[var]:
        if lev in theirs:
            out.append(theirs.index(lev))
        elif str(lev) in text:
            out.append(text[str(lev)])
        else:
            raise DataError(f"node {var!r}: level {lev!r} of the data is not a level of the prior network ({theirs})")
    return np.asarray(out, dtype=np.int64)


def _family_joint(net: FittedNetwork, node: str, pa: list[str], schema: Schema
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    r""":math:`P(\pi, x)` of ``node``'s family under the prior network, axes (the parents
    ``pa`` in their order, the node), levels in the fit's order; and where ``node`` has
    exactly the parents ``pa`` in the prior network, its stated :math:`P(x \mid \pi)` on
    the same axes (``None`` elsewhere): a configuration of probability 0 keeps it."""
    missing = [v for v in (node, *pa) if v not in net.schema]
    if missing:
        raise StructureError(f"the prior network has no variable {missing[0]!r} (in the family of node {node!r})")
    if set(net.parents(node)) == set(pa):
        cpt = net.cpt(node)  # axes (node, *its parents)
        order = [net.parents(node).index(p) + 1 for p in pa]
        cond = np.moveaxis(np.transpose(cpt, [0, *order]), 0, -1)  # (pa..., x)
        weights = _marginal(net, pa)
        joint = cond * weights[..., None]
    else:
        joint, cond = _marginal(net, [*pa, node]), None
    for ax, v in enumerate([*pa, node]):
        joint = np.take(joint, _level_map(net, v, schema), axis=ax)
        cond = None if cond is None else np.take(cond, _level_map(net, v, schema), axis=ax)
    return joint, cond


def _marginal(net: FittedNetwork, variables: list[str]) -> np.ndarray:
    """The joint marginal of ``variables`` under ``net`` (exact inference), axes in that
    order; ``[]``: the scalar 1."""
    if not variables:
        return np.array(1.0)
    q = net.query(list(variables))
    cards = [net.schema.cardinality(v) for v in variables]
    return np.asarray(q.to_numpy(), dtype=np.float64).reshape(cards)
