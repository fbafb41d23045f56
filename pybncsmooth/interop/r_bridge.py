"""The Python half of the R package ``bncsmooth`` (``r-wrapper/``), called through
reticulate.

R hands over data as plain vectors, so that nothing depends on how reticulate
converts factors: per column its name, its 0-based integer codes (``-1`` for
``NA``) and its levels in order.  Results come back as plain lists too: per node
its parents, children and the CPT flattened in R's column-major order (the
node's level fastest), as bnlearn stores ``prob`` tables.  Level order, missing
values and node order survive both ways.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, HyperparameterError
from ..estimators import available_methods, method_params
from ..options import option_specs
from ..estimators import describe_methods as registry_methods

__all__ = [
    "frame_from_codes",
    "frame_to_codes",
    "frame_to_columns",
    "as_strings",
    "array_to_list",
    "network_tables",
    "describe_methods",
    "method_table",
    "integer_params",
    "option_table",
    "query_for_r",
]

def frame_from_codes(names: Sequence[str], codes: Sequence[Any], levels: Sequence[Any]) -> pd.DataFrame:
    """A data frame of pandas Categoricals from R factors given as codes and levels.

    ``codes[j]``: 0-based integer codes of column ``names[j]`` (``-1`` = ``NA``);
    ``levels[j]``: its levels as strings, in the factor's order.
    """
    names = [str(n) for n in (names if isinstance(names, (list, tuple)) else [names])]
    codes = list(codes) if isinstance(codes, (list, tuple)) else [codes]
    levels = list(levels) if isinstance(levels, (list, tuple)) else [levels]
    if not (len(names) == len(codes) == len(levels)):
        raise DataError("names, codes and levels must have one entry per column")
    cols = {}
    for name, c, lev in zip(names, codes, levels):
        lev = [str(v) for v in (lev if isinstance(lev, (list, tuple, np.ndarray)) else [lev])]
        arr = np.asarray(c, dtype=np.int64).reshape(-1)
        if arr.size and (arr.min() < -1 or arr.max() >= len(lev)):
            raise DataError(f"column {name!r}: codes outside its {len(lev)} levels")
        cols[name] = pd.Categorical.from_codes(arr, categories=lev)
    return pd.DataFrame(cols)


def network_tables(net: Any) -> dict[str, Any]:
    """Every node's CPT in bnlearn's layout, for building a ``bn.fit`` in R.

    Returns ``nodes`` (node order), and per node ``parents`` (a multi-domain fit adds
    the domain last, as bnlearn's ``hdir``), ``children``, ``dims``, ``levels`` (per
    dimension) and ``prob`` (flattened column-major).
    """
    out: dict[str, Any] = {"nodes": list(net.nodes), "domain": net.domain, "tables": {}}
    for node in net.nodes:
        t = net.cpt(node)
        dims = net.table_dims(node)  # [node, *parents, domain]: cpt()'s axes
        out["tables"][node] = {
            "parents": dims[1:],
            "children": list(net.children(node)),
            "dims": dims,
            "levels": [[str(v) for v in net.levels(d)] for d in dims],
            "prob": np.asarray(t, dtype=np.float64).reshape(-1, order="F").tolist(),
        }
    if net.domain is not None:
        out["domain_levels"] = [str(v) for v in net.levels(net.domain)]
        rows = net.info.get("domain_rows", {})
        added = net.info.get("adapted", {})  # rows given later by FittedNetwork.adapt
        # rows per domain level with the domain observed (bnlearn's ML marginal of the group)
        out["domain_rows"] = [int(rows.get(v, 0)) + int(added.get(v, 0)) for v in net.levels(net.domain)]
    return out


def describe_methods() -> dict[str, dict[str, Any]]:
    """Every registered estimator with its hyperparameters' defaults (R's
    ``bncs.methods(details = FALSE)``)."""
    return registry_methods()


def method_table() -> dict[str, list]:
    """One row per estimator and hyperparameter, from their declarations (R's
    ``bncs.methods()``): columns ``method``, ``parameter``, ``default`` (as text, R's
    ``NULL`` for none), ``constraint`` (in words) and ``description``."""
    out: dict[str, list] = {k: [] for k in ("method", "parameter", "default", "constraint", "description")}
    for method, params in registry_methods(details=True).items():
        for name, d in params.items():
            out["method"].append(method)
            out["parameter"].append(name)
            out["default"].append(_r_text(d["default"]))
            out["constraint"].append(d["constraint"])
            out["description"].append(d["doc"])
    return out


def _r_text(v: Any) -> str:
    """A default as R's ``format()`` shows it (``NULL``, ``TRUE``, ``1``, ``0.001``, ``1e-09``)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return format(v, ".15g")
    return str(v)


def integer_params(method: str) -> list[str]:
    """Arguments of ``method`` and options that take whole numbers, from their
    declarations: R passes whole numbers as doubles, and the wrapper converts these."""
    own = [p.name for p in method_params(method) if p.kind in ("int", "seed")] if method in available_methods() else []
    options = [s.name for s in option_specs().values() if s.kind in ("int", "seed")]
    return own + [n for n in options if n not in own]


def option_table() -> dict[str, list]:
    """One row per option, from its declaration (R's ``bncs.options()``): ``name``,
    ``kind``, ``entries`` (the entry points that take it, comma-separated), ``doc``,
    ``example`` and ``needs`` (the other settings the example shows its effect under)."""
    out: dict[str, list] = {k: [] for k in ("name", "kind", "entries", "doc", "example", "needs")}
    for name, spec in option_specs().items():
        out["name"].append(name)
        out["kind"].append(spec.kind)
        out["entries"].append(",".join(spec.entries))
        out["doc"].append(spec.doc)
        out["example"].append(spec.example)
        out["needs"].append(dict(spec.needs))
    return out


def frame_to_codes(df: pd.DataFrame) -> dict[str, Any]:
    """The inverse of :func:`frame_from_codes`: column names, 0-based codes (-1 = NA) and
    levels as strings (non-categorical columns are encoded with their sorted values)."""
    names, codes, levels = [], [], []
    for c in df.columns:
        s = df[c]
        if not isinstance(s.dtype, pd.CategoricalDtype):
            s = pd.Categorical(s)
        else:
            s = s.array
        names.append(str(c))
        codes.append(np.asarray(s.codes, dtype=np.int64).tolist())
        levels.append([str(v) for v in s.categories])
    return {"names": names, "codes": codes, "levels": levels}


def frame_to_columns(df: pd.DataFrame) -> dict[str, list]:
    """A results table as plain columns (numbers stay numbers, the rest becomes text)."""
    out = {}
    for c in df.columns:
        s = df[c]
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
            out[str(c)] = [None if pd.isna(v) else v for v in s.tolist()]
        else:
            out[str(c)] = [None if pd.isna(v) else str(v) for v in s.tolist()]
    return out


def as_strings(values: Any) -> list[str]:
    """Any sequence (e.g. a classifier's ``classes_``) as a list of strings."""
    return [str(v) for v in values]


def array_to_list(a: Any) -> dict[str, list]:
    """A numpy array as ``shape`` and its values in row-major order (plain lists: the
    reticulate shipped by Debian does not convert NumPy 2 arrays)."""
    arr = np.asarray(a, dtype=np.float64)
    return {"shape": list(arr.shape), "values": arr.ravel().tolist()}


def _state_codes(index: pd.Index, targets: Sequence[str]) -> list[list[int]]:
    """Per target, the 0-based level code of each state of a query's index."""
    if isinstance(index, pd.MultiIndex):
        return [np.asarray(index.codes[j], dtype=np.int64).tolist() for j in range(len(targets))]
    return [np.asarray(index.codes, dtype=np.int64).tolist()]


def query_for_r(
    net: Any,
    targets: Sequence[str],
    evidence: Any = None,
    interval: float | None = None,
    draws: int = 1000,
    random_state: Any = None,
    domain: Any = None,
    map_state: bool = False,
) -> dict[str, Any]:
    """``net.query`` / ``net.map_query`` for ``bncs.query()``, as plain lists.

    ``evidence``: a dict of levels (one query) or a data frame (one query a row).
    Returns ``levels`` (per target) and, for one query, ``codes`` (per target, the
    level code of each joint state) with ``stats`` (``prob`` and, with ``interval``,
    ``lower`` and ``upper``: one value per state); for a frame, ``stats`` holds each
    statistic's values row by row, ``n`` rows and ``codes`` the states of the columns.
    A MAP query gives ``codes`` (per target, the code of the state of each query) and
    ``stats = {"prob": ...}``."""
    targets = [str(t) for t in (targets if isinstance(targets, (list, tuple)) else [targets])]
    if isinstance(evidence, dict):
        evidence = {str(k): v for k, v in evidence.items()}
    kw = {"domain": domain} if domain is not None else {}
    levels = [[str(v) for v in net.levels(t)] for t in targets]
    if map_state:
        if interval is not None or random_state is not None:
            raise HyperparameterError("map = TRUE gives the most probable state only: interval and random_state apply "
                                      "to the posterior (query without map)")
        res = net.map_query(targets, evidence, **kw)
        if isinstance(res, pd.DataFrame):
            codes = [np.asarray(res[t].cat.codes, dtype=np.int64).tolist() for t in targets]
            return {"levels": levels, "codes": codes, "stats": {"prob": res["prob"].tolist()}, "n": len(res)}
        codes = [[net.levels(t).index(res.state[t])] for t in targets]
        return {"levels": levels, "codes": codes, "stats": {"prob": [res.prob]}, "n": 1}
    res = net.query(
        targets, evidence, interval=interval, draws=int(draws), random_state=random_state, **kw
    )
    if not isinstance(evidence, pd.DataFrame):
        frame = res.to_frame() if isinstance(res, pd.Series) else res
        stats = {str(c): frame[c].tolist() for c in frame.columns}
        return {"levels": levels, "codes": _state_codes(frame.index, targets), "stats": stats, "n": 1}
    parts = {"prob": res} if interval is None else {k: res[k] for k in ("prob", "lower", "upper")}
    stats = {k: np.asarray(v, dtype=np.float64).ravel().tolist() for k, v in parts.items()}
    return {"levels": levels, "codes": _state_codes(parts["prob"].columns, targets), "stats": stats, "n": len(res)}
