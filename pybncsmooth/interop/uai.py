"""UAI files (the format of the UAI inference competitions), type ``BAYES``.

The file lists the number of variables, their cardinalities, one function per node
(its scope: the parents, then the node itself) and each function's table.  It holds no
names and no level labels: variables read back as ``var_0, var_1, ...`` (or the names
pyAgrum writes as ``# name`` comments after each scope, which this module writes too)
with levels ``0 .. r - 1``.

The order of a table's numbers is where writers differ, so ``layout=`` says whose:

* ``"uai"`` (default): the format's own rule, the last variable of the scope
  varying fastest: the node's levels fastest, then the last parent, ..., the first
  parent slowest;
* ``"pyagrum"``: what pyAgrum 3.3 writes and reads: the node's levels fastest, then
  the *first* parent, ..., the last parent slowest (the same as ``"uai"`` for a node
  with at most one parent);
* ``"pgmpy"``: what pgmpy 1.1 writes and reads: the first variable of the scope
  fastest and the node slowest.

A file read without ``layout=`` is read as ``"uai"``, unless its tables are not
distributions over the node in that layout but are in pgmpy's (then that layout is
taken, and ``info["layout"]`` says so); pyAgrum's layout cannot be told from the
numbers (it permutes the parent configurations of nodes with two or more parents), so
a file written by pyAgrum needs ``layout="pyagrum"``.  Numbers are written with
``repr`` (read back bit for bit).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

import numpy as np

from ..data.schema import Schema
from ..errors import FileFormatError
from ..model.cpd import TableCPD
from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from ..structure.dag import DAG
from ..validation import check_choice
from .reading.numbers import BadNumber, parse_number_rows
from .io import read_text, text_writer

__all__ = ["parse_uai", "write_uai", "LAYOUTS"]

LAYOUTS = ("uai", "pyagrum", "pgmpy")
_COMMENT = re.compile(r"#([^\n]*)")


def _table(vals: np.ndarray, r: int, cards: list[int], layout: str) -> np.ndarray:
    """A function's numbers as the ``(r, c_1, ..., c_d)`` table, in ``layout``."""
    if layout == "uai":
        return np.moveaxis(vals.reshape(*cards, r), -1, 0)
    if layout == "pyagrum":
        return vals.reshape((r, *cards), order="F")
    return np.moveaxis(vals.reshape((*cards, r), order="F"), -1, 0)


def _numbers(vals: np.ndarray, r: int, cards: list[int], layout: str) -> np.ndarray:
    """The inverse of :func:`_table`: a ``(r, c_1, ..., c_d)`` table's numbers in ``layout``."""
    if layout == "uai":
        return np.moveaxis(vals, 0, -1).ravel()
    if layout == "pyagrum":
        return vals.ravel(order="F")
    return np.moveaxis(vals, 0, -1).ravel(order="F")


def parse_uai(text: str, path: str | None = None, layout: str | None = None) -> FittedNetwork:
    """A ``BAYES`` UAI file's network (see the module docstring)."""
    if layout is not None:
        layout = check_choice("layout", layout, LAYOUTS)
    names = [m.group(1).strip() for m in _COMMENT.finditer(text)]
    body = _COMMENT.sub(" ", text)
    head = body.split(None, 1)
    if not head or head[0].upper() != "BAYES":
        what = head[0] if head else "an empty file"
        raise FileFormatError(f"a UAI file of a Bayesian network starts with 'BAYES', not {what!r}", path, 1)
    try:
        nums, _ = parse_number_rows([head[1] if len(head) > 1 else ""])
    except BadNumber as e:
        raise FileFormatError(f"expected a number but found {e.token!r}", path) from None
    cards, scopes, tables = _structure(nums, path)
    n = len(cards)
    if len(names) != n or len(set(names)) != n or not all(names):
        names = [f"var_{i}" for i in range(n)]
    chosen, cpts = _cpts(cards, scopes, tables, layout, path)
    parents = {names[s[-1]]: [names[i] for i in s[:-1]] for s in scopes}
    dag = DAG(parents, nodes=names)
    schema = Schema({v: tuple(range(c)) for v, c in zip(names, cards)}, frozenset(names))
    cpds = {names[s[-1]]: TableCPD(names[s[-1]], parents[names[s[-1]]], t) for s, t in zip(scopes, cpts)}
    return FittedNetwork(dag, schema, cpds, info={"source": path, "format": "uai", "layout": chosen})


def _integers(nums: np.ndarray, pos: int, k: int, what: str, path: str | None) -> tuple[list[int], int]:
    chunk = nums[pos : pos + k]
    if len(chunk) < k or not np.all(chunk == np.floor(chunk)) or (chunk < 0).any():
        raise FileFormatError(f"expected {k} non-negative whole numbers for {what}", path)
    return [int(x) for x in chunk], pos + k


def _structure(nums: np.ndarray, path: str | None) -> tuple[list[int], list[list[int]], list[np.ndarray]]:
    """The cardinalities, the scope of every function and its numbers."""
    (n,), pos = _integers(nums, 0, 1, "the number of variables", path)
    cards, pos = _integers(nums, pos, n, "the cardinalities", path)
    (m,), pos = _integers(nums, pos, 1, "the number of functions", path)
    if m != n:
        raise FileFormatError(f"a Bayesian network has one function a variable: {m} functions for {n} variables", path)
    scopes = []
    for f in range(m):
        (k,), pos = _integers(nums, pos, 1, f"the scope size of function {f}", path)
        scope, pos = _integers(nums, pos, k, f"the scope of function {f}", path)
        if k == 0 or max(scope) >= n or len(set(scope)) != k:
            raise FileFormatError(f"function {f} has the scope {scope}: variables 0..{n - 1}, each once, at least one",
                                  path)
        scopes.append(scope)
    children = sorted(s[-1] for s in scopes)
    if children != list(range(n)):
        raise FileFormatError("every variable must be the last of exactly one function's scope (its CPT)", path)
    tables = []
    for f, scope in enumerate(scopes):
        (size,), pos = _integers(nums, pos, 1, f"the table size of function {f}", path)
        want = int(np.prod([cards[i] for i in scope]))
        if size != want or pos + size > len(nums):
            raise FileFormatError(f"the table of function {f} has {min(size, len(nums) - pos)} numbers, expected {want}",
                                  path)
        tables.append(nums[pos : pos + size])
        pos += size
    if pos != len(nums):
        raise FileFormatError(f"{len(nums) - pos} numbers after the last table", path)
    return cards, scopes, tables


def _cpts(cards: list[int], scopes: list[list[int]], tables: list[np.ndarray], layout: str | None,
          path: str | None) -> tuple[str, list[np.ndarray]]:
    """Each function's table in the layout given (or the one its numbers say, see the
    module docstring)."""
    for lay in [layout] if layout else ["uai", "pgmpy"]:
        out = [_table(t, cards[s[-1]], [cards[i] for i in s[:-1]], lay) for s, t in zip(scopes, tables)]
        bad = next((i for i, t in enumerate(out) if not np.allclose(t.sum(axis=0), 1.0, atol=0.01, rtol=0)), None)
        if bad is None:  # renormalised, as the text formats are
            return lay, [t / t.sum(axis=0) for t in out]
    raise FileFormatError(
        f"the table of variable {scopes[bad][-1]} is not a distribution over it for each configuration of its parents "
        f"in the {lay!r} layout (within 0.01)" + ("" if layout else " (nor in 'uai'); give layout='pyagrum' or 'pgmpy'"),
        path)


def write_uai(net: "FittedNetwork", fh: TextIO, layout: str = "uai") -> None:
    """Write ``net`` as a ``BAYES`` UAI file in ``layout`` (see the module docstring)."""
    layout = check_choice("layout", layout, LAYOUTS)
    nodes = net.nodes
    index = {v: i for i, v in enumerate(nodes)}
    fh.write(f"BAYES\n{len(nodes)}\n{' '.join(str(len(net.levels(v))) for v in nodes)}\n{len(nodes)}\n")
    for v in nodes:
        scope = [index[p] for p in net.parents(v)] + [index[v]]
        name = str(v).replace("\n", " ")
        fh.write(f"{len(scope)} {' '.join(map(str, scope))}   # {name}\n")
    for v in nodes:
        t = net.cpt(v)
        vals = _numbers(t, t.shape[0], list(t.shape[1:]), layout)
        fh.write(f"\n{vals.size}\n{' '.join(map(repr, vals.tolist()))}\n")


def read_uai(path: str, layout: str | None = None) -> "FittedNetwork":
    """A UAI file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_uai(read_text(path), path, layout)


def _write(net: Any, fh: TextIO, layout: str = "uai") -> None:
    write_uai(net, fh, layout)


register_format(NetworkFormat("uai", (".uai",), read_uai, text_writer("uai", _write), options=("layout",)))
