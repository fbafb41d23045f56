"""DSC files (Microsoft's belief network format), as bnlearn's ``read.dsc``/``write.dsc``.

Parent configurations are written as 0-based level indices, ``(0, 1) : p, q;``.
A table given as bare rows (no indices) lists configurations with the last
parent varying fastest.  Writing reproduces ``write.dsc`` byte for byte.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, TextIO

import numpy as np

from ._build import NetworkParts, table_columns
from ._rformat import format_r
from ._tokens import Cursor, tokenize

if TYPE_CHECKING:  # pragma: no cover
    from ..model.network import FittedNetwork

__all__ = ["parse_dsc", "write_dsc"]


def parse_dsc(text: str, path: str | None = None) -> NetworkParts:
    cur = Cursor(tokenize(text, line_comments=("//",), block_comments=True, path=path), path)
    parts = NetworkParts(path=path, format="dsc")
    if not (cur.is_word("belief") and (cur.peek(1) is not None and cur.peek(1).text == "network")):
        raise cur.error("a DSC file starts with 'belief network'", 1)
    cur.next()
    cur.next()
    if not cur.at_end() and cur.peek().kind == "string":
        cur.next()
    pending = []
    while not cur.at_end():
        t = cur.next()
        if t.kind == "word" and t.text == "node":
            _node(cur, parts)
        elif t.kind == "word" and t.text == "probability":
            line = t.line
            cur.expect("(")
            node = cur.name("a node name")
            parents: list[str] = []
            if cur.is_punct("|"):
                cur.next()
                parents.append(cur.name("a parent name"))
                while cur.is_punct(","):
                    cur.next()
                    parents.append(cur.name("a parent name"))
            cur.expect(")")
            start = cur.pos
            cur.skip_block()
            pending.append((node, parents, Cursor(cur.tokens[start : cur.pos], path), line))
        elif t.kind == "word" and t.text == "properties":
            cur.skip_block()
        else:
            raise cur.error(f"expected 'node' or 'probability' but found {t.text!r}", t.line)
    for node, parents, sub, line in pending:
        parts.add_table(node, parents, _body(sub, node, parents, parts, line), line)
    parts.finish()
    return parts


def _node(cur: Cursor, parts: NetworkParts) -> None:
    line = cur.line
    node = cur.name("a node name")
    cur.expect("{")
    levels = None
    while not cur.is_punct("}"):
        if cur.is_word("type"):
            tline = cur.line
            cur.next()
            if cur.is_punct(":"):
                cur.next()
            kind = cur.name("a node type")
            if kind != "discrete":
                raise cur.error(f"node {node!r} is of type {kind!r}; only discrete networks are supported")
            cur.expect("[")
            n = cur.integer("the number of levels")
            cur.expect("]")
            if cur.is_punct("="):
                cur.next()
            cur.expect("{")
            levels = [cur.name("a level")]
            while cur.is_punct(","):
                cur.next()
                levels.append(cur.name("a level"))
            cur.expect("}")
            cur.expect(";")
            if len(levels) != n:
                raise cur.error(f"node {node!r} declares {n} levels but lists {len(levels)}", tline)
        else:
            cur.skip_statement()
    cur.expect("}")
    if levels is None:
        raise cur.error(f"node {node!r} has no 'type : discrete' declaration", line)
    parts.add_variable(node, levels, line)


def _numbers(cur: Cursor) -> list[float]:
    vals = [cur.number()]
    while cur.is_punct(","):
        cur.next()
        vals.append(cur.number())
    cur.expect(";")
    return vals


def _body(cur: Cursor, node: str, parents: list[str], parts: NetworkParts, header_line: int | None) -> np.ndarray:
    r = len(parts.level_of(node, cur))
    cards = [len(parts.level_of(p, cur)) for p in parents]
    Q = int(np.prod(cards)) if cards else 1
    cols = np.full((Q, r), np.nan)
    row_lines = np.full(Q, -1)
    default = None
    bare = 0
    cur.expect("{")
    while not cur.is_punct("}"):
        line = cur.line
        if cur.is_punct("("):
            cur.next()
            idx_vals = [cur.integer("a level index")]
            while cur.is_punct(","):
                cur.next()
                idx_vals.append(cur.integer("a level index"))
            cur.expect(")")
            if cur.is_punct(":"):
                cur.next()
            if len(idx_vals) != len(parents):
                raise cur.error(f"a configuration of {node!r} has {len(idx_vals)} indices for {len(parents)} parents", line)
            idx = 0
            for p, v, c in zip(parents, idx_vals, cards):
                if not 0 <= v < c:
                    raise cur.error(f"index {v} is out of range for {p!r} ({c} levels)", line)
                idx = idx * c + v
            vals = _numbers(cur)
            if len(vals) != r:
                raise cur.error(f"a distribution of {node!r} has {len(vals)} numbers, expected {r}", line)
            cols[idx] = vals
            row_lines[idx] = line
        elif cur.is_word("default"):
            cur.next()
            default = np.array(_numbers(cur))
        elif cur.is_word("function"):
            raise cur.error(f"the table of {node!r} is given as a function, which is not supported", line)
        else:
            vals = _numbers(cur)
            if len(vals) == r * Q and bare == 0 and Q > 1:
                cols[:] = np.array(vals).reshape(Q, r)
                row_lines[:] = line
                bare = Q
            elif len(vals) == r and bare < Q:
                cols[bare] = vals
                row_lines[bare] = line
                bare += 1
            else:
                raise cur.error(f"a distribution of {node!r} has {len(vals)} numbers, expected {r}", line)
    cur.expect("}")
    # Genie writes all-zero distributions for impossible configurations; bnlearn
    # makes them uniform
    zero = ~np.isnan(cols).any(axis=1) & (cols.sum(axis=1) == 0)
    cols[zero] = 1.0 / r
    return table_columns(cols, node, parents, parts, default, cur, row_lines, header_line)


def write_dsc(net: "FittedNetwork", fh: TextIO) -> None:
    """Write ``net`` as bnlearn's ``write.dsc`` does."""
    fh.write('belief network "unknown"\n')
    for node in net.nodes:
        lev = '", "'.join(str(l) for l in net.levels(node))
        n = len(net.levels(node))
        fh.write(f'node {node} {{\n  type : discrete [ {n} ] = {{ "{lev}" }};\n}}\n')
    for node in net.nodes:
        t = net.cpt(node)
        r = t.shape[0]
        pa = net.parents(node)
        if not pa:
            fh.write(f"probability ( {node} ) {{\n")
            fh.write(f"   {', '.join(format_r(t))};\n")
            fh.write("}\n")
            continue
        fh.write(f"probability ( {node} | {', '.join(pa)} ) {{\n")
        cols = t.reshape(r, -1, order="F")
        ranges = [range(c) for c in t.shape[1:]]
        for i, combo in enumerate(itertools.product(*reversed(ranges))):
            cfg = ", ".join(str(v) for v in reversed(combo))
            fh.write(f"  ({cfg}) : {', '.join(format_r(cols[:, i]))};\n")
        fh.write("}\n")
