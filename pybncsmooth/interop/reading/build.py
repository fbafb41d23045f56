"""Assembling a FittedNetwork from what a file declares."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...data.schema import Schema
from ...errors import FileFormatError
from ...model.cpd import TableCPD
from ...model.network import FittedNetwork
from ...structure.dag import DAG
from .._rformat import format_probs, table_digits
from .tokens import Cursor, word_or_quoted

__all__ = ["NetworkParts", "table_columns", "write_probability_blocks", "config_label"]


@dataclass
class NetworkParts:
    """Nodes (in file order), their levels, parents and tables, as parsed."""

    path: str | None
    format: str
    levels: dict[str, list[str]] = field(default_factory=dict)
    parents: dict[str, list[str]] = field(default_factory=dict)
    tables: dict[str, np.ndarray] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)
    #: the tables were checked and normalised by the reader (none left for the CPDs)
    checked: bool = False

    def add_variable(self, node: str, levels: list[str], line: int | None) -> None:
        if node in self.levels:
            raise FileFormatError(f"variable {node!r} is declared twice", self.path, line)
        if len(set(levels)) != len(levels):
            dup = next(l for i, l in enumerate(levels) if l in levels[:i])
            raise FileFormatError(f"variable {node!r} lists level {dup!r} twice", self.path, line)
        if len(levels) < 2:
            raise FileFormatError(f"variable {node!r} has fewer than two levels", self.path, line)
        self.levels[node] = levels
        self.lines[node] = line

    def level_of(self, node: str, cur: Cursor) -> list[str]:
        if node not in self.levels:
            raise cur.error(f"node {node!r} has a table but no declaration")
        return self.levels[node]

    def add_table(self, node: str, parents: list[str], table: np.ndarray, line: int | None) -> None:
        if node in self.tables:
            raise FileFormatError(f"node {node!r} has two probability tables", self.path, line)
        if node not in self.levels:
            raise FileFormatError(f"node {node!r} has a table but no declaration", self.path, line)
        for p in parents:
            if p not in self.levels:
                raise FileFormatError(f"parent {p!r} of {node!r} is not declared", self.path, line)
        if len(set(parents)) != len(parents):
            raise FileFormatError(f"node {node!r} lists a parent twice", self.path, line)
        self.parents[node] = parents
        self.tables[node] = table

    def finish(self) -> None:
        for node in self.levels:
            if node not in self.tables:
                raise FileFormatError(f"node {node!r} has no probability table", self.path, self.lines.get(node))

    def network(self) -> "FittedNetwork":
        nodes = list(self.levels)
        parents = {n: tuple(self.parents[n]) for n in nodes}
        dag = DAG._from_checked(parents)  # add_table checked the names
        levels = {n: tuple(self.levels[n]) for n in nodes}
        info = {"source": self.path, "format": self.format}
        if self.checked:  # each table built from the declared levels, which add_variable checked (distinct text)
            cpds = {n: TableCPD._checked(n, parents[n], self.tables[n]) for n in nodes}
            return FittedNetwork.assembled(dag, Schema._checked(levels, nodes), cpds, info=info)
        cpds = {n: TableCPD(n, parents[n], self.tables[n]) for n in nodes}
        return FittedNetwork(dag, Schema(levels, frozenset(nodes)), cpds, info=info)


def table_columns(
    cols: np.ndarray,
    node: str,
    parents: list[str],
    parts: NetworkParts,
    default: np.ndarray | None,
    cur: Any,
    row_lines: Any,
    header_line: int | None,
) -> np.ndarray:
    """Check and renormalise a configuration-major ``(Q, r)`` matrix; return the
    ``(r, c_1, ..., c_d)`` table.  Rows never given take ``default`` if any.

    ``row_lines[q]`` is the file line that gave row ``q`` (for error messages).
    """
    missing = np.isnan(cols).any(axis=1)
    if missing.any():
        if default is None:
            q = int(np.flatnonzero(missing)[0])
            raise cur.error(
                f"the table of {node!r} gives no distribution for parent configuration "
                f"{config_label(q, parents, parts)}",
                header_line,
            )
        cols[missing] = default
    sums = cols.sum(axis=1)
    bad = np.abs(sums - 1.0) > 0.01
    if bad.any():
        q = int(np.flatnonzero(bad)[0])
        where = "" if not parents else f" for {config_label(q, parents, parts)}"
        raise cur.error(
            f"the distribution of {node!r}{where} sums to {sums[q]:.6g}, not 1",
            int(row_lines[q]) if row_lines[q] >= 0 else header_line,
        )
    cols = cols / sums[:, None]
    cards = [len(parts.levels[p]) for p in parents]
    return np.moveaxis(cols.reshape(*cards, cols.shape[1]), -1, 0)


def config_label(q: int, parents: list[str], parts: NetworkParts) -> str:
    """Configuration ``q`` (mixed radix, first parent most significant) as ``(P1=a, P2=b)``."""
    if not parents:
        return "(no parents)"
    cards = [len(parts.levels[p]) for p in parents]
    vals = []
    for p, c in zip(reversed(parents), reversed(cards)):
        q, k = divmod(q, c)
        vals.append(f"{p}={parts.levels[p][k]}")
    return "(" + ", ".join(reversed(vals)) + ")"


def write_probability_blocks(
    net: "FittedNetwork",
    fh: Any,
    root_prefix: str,
    row: Callable[[list[int], list[list[str]]], str],
    name: Callable[[Any], str] = lambda n: word_or_quoted(str(n)),
) -> None:
    """The ``probability ( X | P1, P2 ) { ... }`` blocks of BIF and DSC, as bnlearn writes them.

    Columns come in R's ``expand.grid`` order (the first parent varies fastest);
    ``row(codes, labels)`` gives the text before a column's numbers, and
    ``root_prefix`` the text before a root node's numbers, ``name`` a node's name as
    the format writes it.  Numbers as :func:`~._rformat.format_probs` prints them: a
    fitted network's as bnlearn writes them, a table read from a file (no ``method``)
    with the decimals that read back to it (:func:`~._rformat.table_digits`).
    """
    for node in net.nodes:
        t = net.cpt(node)
        pa = net.parents(node)
        q = name(node)
        if not pa:
            w, d = table_digits(t.reshape(-1, 1), search=net.method is None)
            fh.write(f"probability ( {q} ) {{\n{root_prefix}{', '.join(format_probs(w.ravel(), digits=int(d[0])))};\n}}\n")
            continue
        fh.write(f"probability ( {q} | {', '.join(name(p) for p in pa)} ) {{\n")
        cols, digits = table_digits(t.reshape(t.shape[0], -1, order="F"), search=net.method is None)
        digits = digits.tolist()
        labels = [[str(l) for l in net.levels(p)] for p in pa]
        for i, combo in enumerate(itertools.product(*[range(c) for c in reversed(t.shape[1:])])):
            fh.write(f"{row(list(reversed(combo)), labels)}{', '.join(format_probs(cols[:, i], digits=digits[i]))};\n")
        fh.write("}\n")
