"""bnlearn objects (``bn``, ``bn.fit``) and ``.rds`` files, through rpy2.

Needs R and rpy2 (``pip install 'pybncsmooth[r]'``); bnlearn itself is not
needed.  A ``bn.fit`` object is a named list of ``bn.fit.dnode`` objects (fields
``node``, ``parents``, ``children``, ``prob``) of class ``c("bn.fit",
"bn.fit.dnet")``; ``prob`` is a ``table`` with axes ``(node, parents...)``, its
dimnames named except for a root node's.  A ``bn`` object holds ``learning``,
``nodes`` (``mb``, ``nbr``, ``parents``, ``children``) and the ``arcs`` matrix.
The objects written here have exactly these fields and classes, so that
bnlearn's own functions accept them.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import atomic_path
from ..data.schema import Schema
from ..errors import FileFormatError
from ..validation import check_file
from ..model.cpd import TableCPD
from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from ..structure.dag import DAG

__all__ = ["read_rds", "write_rds", "from_r", "to_r_bn_fit", "to_r_bn", "r_available"]

_R_HELPERS = r"""
function() {
  list(
    make_bn_fit = function(nodes, parents, children, probs, levels) {
      out <- vector("list", length(nodes))
      names(out) <- nodes
      for (i in seq_along(nodes)) {
        node <- nodes[[i]]
        pa <- as.character(parents[[i]])
        dims <- c(node, pa)
        lv <- lapply(dims, function(d) as.character(levels[[d]]))
        prob <- array(as.numeric(probs[[i]]), dim = vapply(lv, length, 1L))
        if (length(pa) == 0) {
          dimnames(prob) <- list(lv[[1]])
        } else {
          names(lv) <- dims
          dimnames(prob) <- lv
        }
        prob <- as.table(prob)
        out[[i]] <- structure(list(node = node, parents = pa,
          children = as.character(children[[i]]), prob = prob), class = "bn.fit.dnode")
      }
      class(out) <- c("bn.fit", "bn.fit.dnet")
      out
    },
    make_bn = function(nodes, parents, children, mb, nbr, from, to) {
      nd <- vector("list", length(nodes))
      names(nd) <- nodes
      for (i in seq_along(nodes))
        nd[[i]] <- list(mb = as.character(mb[[i]]), nbr = as.character(nbr[[i]]),
                        parents = as.character(parents[[i]]),
                        children = as.character(children[[i]]))
      arcs <- matrix(c(as.character(from), as.character(to)), ncol = 2,
                     dimnames = list(NULL, c("from", "to")))
      structure(list(learning = list(whitelist = NULL, blacklist = NULL, test = "none",
          ntests = 0, algo = "empty", args = list()),
        nodes = nd, arcs = arcs), class = "bn")
    }
  )
}
"""

_helpers_cache: dict[str, Any] = {}


def r_available() -> bool:
    """Whether R and rpy2 can be used in this process."""
    try:
        _robjects()
    except ImportError:
        return False
    return True


def _robjects() -> Any:
    # rpy2's start-up prepends R's library folders to LD_LIBRARY_PATH in os.environ,
    # which breaks Python subprocesses of the caller (a shared-library Python then
    # loads the system's libpython); R is loaded by then, so the caller's value is
    # put back
    had = "LD_LIBRARY_PATH" in os.environ
    before = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as ro  # noqa: F401
    except Exception as e:  # rpy2 raises various errors when R is missing or too old
        raise ImportError(
            "bnlearn objects and .rds files need R and rpy2 (pip install 'pybncsmooth[r]'; "
            f"rpy2 3.5 works with R 4.2): {e}"
        ) from e
    finally:
        if had:
            os.environ["LD_LIBRARY_PATH"] = before  # type: ignore[assignment]
        else:
            os.environ.pop("LD_LIBRARY_PATH", None)
    return ro


def _helpers() -> Any:
    if "h" not in _helpers_cache:
        ro = _robjects()
        _helpers_cache["h"] = ro.r(_R_HELPERS)()
    return _helpers_cache["h"]


def _classes(obj: Any) -> list[str]:
    ro = _robjects()
    return list(ro.r["class"](obj))


def _chr(v: Any) -> list[str]:
    ro = _robjects()
    if v is ro.NULL or v is None:
        return []
    return [str(x) for x in v]


def from_r(obj: Any, path: str | None = None) -> "FittedNetwork | DAG":
    """Convert an R ``bn.fit`` (discrete) or ``bn`` object to a FittedNetwork or DAG."""
    ro = _robjects()
    cls = _classes(obj)
    if "bn.fit" in cls:
        if "bn.fit.dnet" not in cls and "bn.fit.onet" not in cls and "bn.fit.donet" not in cls:
            raise FileFormatError(f"only discrete bn.fit objects are supported (classes {cls})", path)
        nodes = _chr(obj.names)
        parents, tables, levels = {}, {}, {}
        for i, n in enumerate(nodes):
            nd = obj[i]
            parents[n] = _chr(nd.rx2("parents"))
            prob = nd.rx2("prob")
            dims = [int(d) for d in ro.r["dim"](prob)]
            dn = ro.r["dimnames"](prob)
            lv = [_chr(x) for x in dn]
            flat = np.array(ro.r["as.vector"](prob), dtype=np.float64)
            tables[n] = flat.reshape(dims, order="F")
            for var, lev in zip([n] + parents[n], lv):
                if var in levels and levels[var] != lev:
                    raise FileFormatError(f"variable {var!r} has different levels in two tables", path)
                levels[var] = lev
        # bnlearn's mle stores NA for parent configurations never seen; make them
        # uniform, as bnlearn's own write.bif does, and say so
        for n, t in tables.items():
            if np.isnan(t).any():
                col_nan = np.isnan(t).any(axis=0)
                if t.ndim == 1:
                    t[:] = 1.0 / t.shape[0]
                else:
                    t[:, col_nan] = 1.0 / t.shape[0]
                warnings.warn(
                    f"node {n!r}: {int(np.sum(col_nan))} parent configuration(s) are NA in the bn.fit "
                    "object (no data); they are made uniform, as bnlearn's write.bif does",
                    stacklevel=3,
                )
        dag = DAG(parents, nodes=nodes)
        schema = Schema({n: tuple(levels[n]) for n in nodes}, frozenset(nodes))
        cpds = {n: TableCPD(n, parents[n], tables[n]) for n in nodes}
        return FittedNetwork(dag, schema, cpds, info={"source": path, "format": "rds"})
    if "bn" in cls:
        nd = obj.rx2("nodes")
        nodes = _chr(nd.names)
        parents = {n: _chr(nd[i].rx2("parents")) for i, n in enumerate(nodes)}
        return DAG(parents, nodes=nodes)
    raise FileFormatError(f"not a bnlearn bn or bn.fit object (classes {cls})", path)


def read_rds(path: str | Path) -> "FittedNetwork | DAG":
    """Read a ``.rds`` file holding a bnlearn ``bn.fit`` (-> FittedNetwork) or ``bn`` (-> DAG)."""
    ro = _robjects()
    p = check_file(path, ".rds file")
    try:
        obj = ro.r["readRDS"](p)
    except Exception as e:
        raise FileFormatError(f"R could not read the file: {e}", p) from None
    return from_r(obj, p)


def to_r_bn_fit(net: "FittedNetwork") -> Any:
    """The R ``bn.fit`` object of ``net`` (node order and parent order kept)."""
    if net.domain is not None:
        raise FileFormatError("write one domain at a time: net.for_domain(level)")
    ro = _robjects()
    nodes = net.nodes
    parents = ro.ListVector.from_length(len(nodes))
    children = ro.ListVector.from_length(len(nodes))
    probs = ro.ListVector.from_length(len(nodes))
    for i, n in enumerate(nodes):
        parents[i] = ro.StrVector(net.parents(n))
        children[i] = ro.StrVector(net.children(n))
        probs[i] = ro.FloatVector(net.cpt(n).reshape(-1, order="F"))
    levels = ro.ListVector({n: ro.StrVector([str(l) for l in net.levels(n)]) for n in nodes})
    return _helpers().rx2("make_bn_fit")(ro.StrVector(nodes), parents, children, probs, levels)


def to_r_bn(dag: "DAG") -> Any:
    """The R ``bn`` object of ``dag`` (as ``model2network`` builds it; ``algo = "empty"``)."""
    ro = _robjects()
    nodes = dag.nodes
    idx = {n: i for i, n in enumerate(nodes)}

    def vec(values: list[str]) -> Any:
        return ro.StrVector(sorted(values, key=idx.__getitem__))

    L = ro.ListVector.from_length
    parents, children, mb, nbr = L(len(nodes)), L(len(nodes)), L(len(nodes)), L(len(nodes))
    for i, n in enumerate(nodes):
        parents[i] = ro.StrVector(dag.parents(n))
        children[i] = vec(dag.children(n))
        mb[i] = vec(dag.markov_blanket(n))
        nbr[i] = vec(list(set(dag.parents(n)) | set(dag.children(n))))
    arcs = dag.arcs
    return _helpers().rx2("make_bn")(
        ro.StrVector(nodes),
        parents,
        children,
        mb,
        nbr,
        ro.StrVector([a for a, _ in arcs]),
        ro.StrVector([b for _, b in arcs]),
    )


def write_rds(obj: "FittedNetwork | DAG", path: str | Path) -> None:
    """``saveRDS`` a FittedNetwork (as ``bn.fit``) or a DAG (as ``bn``)."""
    ro = _robjects()
    robj = to_r_bn(obj) if isinstance(obj, DAG) else to_r_bn_fit(obj)
    with atomic_path(path) as tmp:
        ro.r["saveRDS"](robj, tmp)


register_format(NetworkFormat("rds", (".rds",), read_rds, write_rds))
