"""pgmpy and pyAgrum model objects, both ways: the Python neighbours without a file.

* pgmpy: a ``DiscreteBayesianNetwork`` (pgmpy >= 1.0; ``BayesianNetwork`` before)
  with one ``TabularCPD`` a node.  A ``TabularCPD``'s values are ``(r, q)``, the
  parent configurations in C order over its evidence (the last parent fastest), which
  is :meth:`FittedNetwork.cpt`'s layout flattened; state names carry the levels.
* pyAgrum: a ``BayesNet`` whose CPT of ``X`` is a tensor over ``X`` and its parents in
  the order their arcs were added; its array (``toarray()``) has these axes reversed.
  Levels that are all integers become an ``IntegerVariable`` (and come back as
  integers), others a ``LabelizedVariable`` with the levels as text.  pyAgrum keeps an
  integer variable's values sorted, so levels ``[5, 1, 3]`` are ``1, 3, 5`` there: the
  tables are written in its order (``P(A=5)`` is the same number on both sides) and
  come back with the levels ascending.  A ``RangeVariable`` (``X[3]``) comes back with
  integer levels too.
* pgmpy names nodes by any hashable (``1``, ``"1"``): a node is named by its text here,
  its state names looked up by pgmpy's own object.

Both conversions keep the nodes, their order, each node's parent order, the levels
and the tables, bit for bit, so a round trip gives the same network (with integer
levels not in ascending order, through pyAgrum, the same network up to their order).  The libraries
are optional: converting without one raises ``ImportError`` naming the package to
install.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ..data.schema import Schema
from ..errors import DataError
from ..validation import require_package
from ..model.cpd import TableCPD
from ..model.formats import ObjectConverter, register_converter
from ..model.network import FittedNetwork
from ..structure.dag import DAG

__all__ = ["to_pgmpy", "from_pgmpy", "to_pyagrum", "from_pyagrum"]


def _single_domain(net: FittedNetwork, lib: str) -> None:
    if not isinstance(net, FittedNetwork):
        raise TypeError(f"expected a FittedNetwork, not {type(net).__name__}")
    if net.domain is not None:
        raise DataError(f"a multi-domain network converts to {lib} one domain at a time: "
                        f"net.for_domain(level).to_{lib.lower()}()")


def _network(nodes: list[str], parents: dict[str, list[str]], levels: dict[str, tuple], tables: dict[str, Any],
             source: str) -> FittedNetwork:
    dag = DAG(parents, nodes=nodes)
    schema = Schema({v: levels[v] for v in nodes}, frozenset(nodes))
    cpds = {v: TableCPD(v, parents[v], _distributions(v, tables[v], source), normalize=False) for v in nodes}
    return FittedNetwork(dag, schema, cpds, info={"source": source})


def _distributions(node: str, table: Any, source: str) -> np.ndarray:
    """The table bit for bit when its columns sum to one (a round trip is exact), else
    renormalised as a file's tables are (a model read from a rounded file by the other
    library: within 0.01 of one)."""
    t = np.asarray(table, dtype=np.float64)
    s = t.sum(axis=0)
    if np.all(np.abs(s - 1.0) <= 1e-12):
        return t
    if not (np.all(np.isfinite(t)) and (t >= 0).all() and np.all(np.abs(s - 1.0) <= 0.01)):
        raise DataError(f"the {source} table of {node!r} is not a distribution over it for each configuration of "
                        "its parents (negative entries, or columns summing to more than 0.01 from one)")
    return t / s


# ----------------------------------------------------------------------------- pgmpy


def to_pgmpy(net: FittedNetwork) -> Any:
    """See :meth:`FittedNetwork.to_pgmpy`."""
    _single_domain(net, "pgmpy")
    models = require_package("pgmpy.models", "pgmpy", "to_pgmpy()")
    discrete = require_package("pgmpy.factors.discrete", "pgmpy", "to_pgmpy()")
    cls = getattr(models, "DiscreteBayesianNetwork", None) or models.BayesianNetwork
    model = cls()
    model.add_nodes_from(net.nodes)
    model.add_edges_from([(p, v) for v in net.nodes for p in net.parents(v)])
    cpds = []
    for v in net.nodes:
        t, pa = net.cpt(v), net.parents(v)
        names = {u: list(net.levels(u)) for u in [v, *pa]}
        cpds.append(discrete.TabularCPD(v, t.shape[0], t.reshape(t.shape[0], -1), evidence=pa or None,
                                        evidence_card=list(t.shape[1:]) or None, state_names=names))
    model.add_cpds(*cpds)
    return model


def from_pgmpy(model: Any) -> FittedNetwork:
    """A pgmpy ``DiscreteBayesianNetwork`` (or ``BayesianNetwork``) with a
    ``TabularCPD`` for every node as a :class:`FittedNetwork`: the model's node order,
    each CPD's evidence order as the parent order, its state names as levels, its
    values as tables (exactly)."""
    if not (hasattr(model, "get_cpds") and hasattr(model, "nodes")):
        raise TypeError(f"expected a pgmpy Bayesian network, not {type(model).__name__}")
    keys = list(model.nodes())  # pgmpy's own node objects (an integer node is named by its text here)
    nodes = [str(v) for v in keys]
    if len(set(nodes)) < len(nodes):
        dup = next(v for v in nodes if nodes.count(v) > 1)
        raise DataError(f"the pgmpy model has two nodes written {dup!r} (e.g. 1 and '1'): rename one")
    cpds = {str(c.variable): c for c in model.get_cpds()}
    levels: dict[str, tuple] = {}
    parents: dict[str, list[str]] = {}
    tables: dict[str, Any] = {}
    for key, v in zip(keys, nodes):
        c = cpds.get(v)
        if c is None or not hasattr(c, "get_values"):
            raise DataError(f"node {v!r} of the pgmpy model has no TabularCPD (add one with model.add_cpds)")
        pa = [str(p) for p in c.variables[1:]]
        cards = [int(k) for k in c.cardinality]
        levels[v] = _pgmpy_states(c, c.variable, cards[0])
        parents[v] = pa
        tables[v] = np.asarray(c.get_values(), dtype=np.float64).reshape(cards)
    for v in nodes:  # a parent's levels as its own CPD names them
        c = cpds[v]
        for p, card in zip(c.variables[1:], c.cardinality[1:]):
            given = _pgmpy_states(c, p, int(card))
            if given != levels[str(p)]:
                raise DataError(f"the CPD of {v!r} names the levels of {str(p)!r} {list(given)}, its own CPD "
                                f"{list(levels[str(p)])}")
    return _network(nodes, parents, levels, tables, "pgmpy")


def _pgmpy_states(cpd: Any, var: Any, card: int) -> tuple:
    """The state names a pgmpy CPD gives the variable ``var`` (looked up by pgmpy's own
    node object, an integer for a node named by a number), numpy scalars as Python's;
    ``0 .. card - 1`` where it gives none."""
    names = (getattr(cpd, "state_names", None) or {}).get(var)
    if names is None:
        return tuple(range(card))
    return tuple(x.item() if isinstance(x, np.generic) else x for x in names)


# ----------------------------------------------------------------------------- pyAgrum


def _gum() -> Any:
    try:
        return importlib.import_module("pyagrum")
    except ImportError:
        return require_package("pyAgrum", "pyagrum", "to_pyagrum()")


def to_pyagrum(net: FittedNetwork) -> Any:
    """See :meth:`FittedNetwork.to_pyagrum`."""
    _single_domain(net, "pyAgrum")
    gum = _gum()
    bn = gum.BayesNet("pybncsmooth")
    for v in net.nodes:
        lev = net.levels(v)
        if all(isinstance(x, int) and not isinstance(x, bool) for x in lev):
            bn.add(gum.IntegerVariable(str(v), str(v), [int(x) for x in lev]))
        else:
            bn.add(gum.LabelizedVariable(str(v), str(v), [str(x) for x in lev]))
    for v in net.nodes:
        for p in net.parents(v):
            bn.addArc(str(p), str(v))
    order = {v: _pyagrum_order(bn.variable(str(v)), net.levels(v)) for v in net.nodes}
    for v in net.nodes:
        cpt = bn.cpt(str(v))
        axes = [str(v), *map(str, net.parents(v))]
        table = net.cpt(v)
        for ax, u in enumerate([v, *net.parents(v)]):  # each variable's levels in pyAgrum's order
            if order[u] is not None:
                table = table.take(order[u], axis=ax)
        table = np.transpose(table, [axes.index(n) for n in cpt.names])  # pyAgrum's variable order
        cpt.fillWith(table.ravel(order="F").tolist())  # its first variable fastest
    return bn


def _pyagrum_order(var: Any, levels: tuple) -> np.ndarray | None:
    """Our code of each of a pyAgrum variable's labels, in its order (an
    ``IntegerVariable`` keeps its values sorted: ``[5, 1, 3]`` becomes ``1, 3, 5``);
    ``None`` where the orders agree."""
    code = {str(x): i for i, x in enumerate(levels)}
    order = np.array([code[var.label(k)] for k in range(var.domainSize())], dtype=np.intp)
    return None if (order == np.arange(len(levels))).all() else order


def from_pyagrum(bn: Any) -> FittedNetwork:
    """A pyAgrum ``BayesNet`` as a :class:`FittedNetwork`: nodes in id order, each
    CPT's variable order (after the node) as the parent order, labels as levels
    (integers for an ``IntegerVariable``), tables exactly."""
    if not (hasattr(bn, "cpt") and hasattr(bn, "nodes") and hasattr(bn, "variable")):
        raise TypeError(f"expected a pyAgrum BayesNet, not {type(bn).__name__}")
    gum = _gum()
    ids = sorted(bn.nodes())
    nodes = [bn.variable(i).name() for i in ids]
    levels, parents, tables = {}, {}, {}
    for i, v in zip(ids, nodes):
        var = bn.variable(i)
        labels = [var.label(k) for k in range(var.domainSize())]
        levels[v] = tuple(int(x) for x in labels) if _integer_variable(gum, var) else tuple(labels)
        cpt = bn.cpt(i)
        names = list(cpt.names)
        parents[v] = names[1:]
        tables[v] = np.transpose(np.asarray(cpt.toarray(), dtype=np.float64))  # axes (v, *parents)
    return _network(nodes, parents, levels, tables, "pyagrum")


def _integer_variable(gum: Any, var: Any) -> bool:
    """Whether a pyAgrum variable's values are integers: an ``IntegerVariable`` or a
    ``RangeVariable`` (``X[3]``, ``X[1,4]``).  ``bn.variable(i)`` gives the base class,
    whose ``varType()`` tells the kind."""
    kinds = tuple(getattr(gum, k) for k in ("VarType_INTEGER", "VarType_RANGE") if hasattr(gum, k))
    if hasattr(var, "varType") and kinds:
        return var.varType() in kinds
    return isinstance(var, tuple(getattr(gum, k) for k in ("IntegerVariable", "RangeVariable") if hasattr(gum, k)))


register_converter(ObjectConverter("pgmpy", to_pgmpy, from_pgmpy))
register_converter(ObjectConverter("pyagrum", to_pyagrum, from_pyagrum))
