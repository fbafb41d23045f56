"""Pieces of syntax the BIF, DSC and NET readers share."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .build import NetworkParts
from .tokens import Cursor

__all__ = ["discrete_type", "node_block", "table_header", "TableQueue"]


def discrete_type(cur: Cursor, node: str) -> list[str]:
    """``type [:] discrete [ n ] [=] { l1, l2, ... } ;`` (BIF and DSC); the cursor is on 'type'."""
    tline = cur.line
    cur.expect_word("type")
    if cur.is_punct(":"):
        cur.next()
    kind = cur.name("a variable type")
    if kind != "discrete":
        raise cur.error(f"variable {node!r} is of type {kind!r}; only discrete networks are supported")
    cur.expect("[")
    n = cur.integer("the number of levels")
    cur.expect("]")
    if cur.is_punct("="):
        cur.next()
    cur.expect("{")
    levels = cur.separated(lambda: cur.name("a level"))
    cur.expect("}")
    cur.expect(";")
    if len(levels) != n:
        raise cur.error(f"variable {node!r} declares {n} levels but lists {len(levels)}", tline)
    return levels


def node_block(cur: Cursor, parts: NetworkParts, keyword: str, levels_of: Callable[[Cursor, str], list[str]]) -> None:
    """``NAME { ...; keyword ...; ... }``: a variable declaration; other statements are skipped."""
    line = cur.line
    node = cur.name("a variable name")
    cur.expect("{")
    levels: list[str] | None = None
    while not cur.is_punct("}"):
        if cur.is_word(keyword):
            levels = levels_of(cur, node)
        else:
            cur.skip_statement()
    cur.expect("}")
    if levels is None:
        raise cur.error(f"variable {node!r} has no '{keyword}' declaration", line)
    parts.add_variable(node, levels, line)


def table_header(cur: Cursor, sep: str | None) -> tuple[str, list[str], int | None]:
    """``( NODE | P1 sep P2 ... )``; ``sep=None``: parents separated by white space (NET)."""
    line = cur.line
    cur.expect("(")
    node = cur.name("a node name")
    parents: list[str] = []
    if cur.is_punct("|"):
        cur.next()
        if sep is None:
            while not cur.is_punct(")"):
                parents.append(cur.name("a parent name"))
        else:
            parents = cur.separated(lambda: cur.name("a parent name"), sep)
    cur.expect(")")
    return node, parents, line


class TableQueue:
    """Tables are parsed after every variable is declared (a table may come first)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, list[str], Cursor, int | None]] = []

    def add(self, cur: Cursor, sep: str | None) -> None:
        node, parents, line = table_header(cur, sep)
        self.items.append((node, parents, cur.sub_block(), line))

    def finish(
        self, parts: NetworkParts, body: Callable[[Cursor, str, list[str], NetworkParts, int | None], np.ndarray]
    ) -> NetworkParts:
        for node, parents, sub, line in self.items:
            parts.add_table(node, parents, body(sub, node, parents, parts, line), line)
        parts.finish()
        return parts
