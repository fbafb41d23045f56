"""DSC files (Microsoft's belief network format), as bnlearn's ``read.dsc``/``write.dsc``.

Parent configurations are written as 0-based level indices, ``(0, 1) : p, q;``.
A table given as bare rows (no indices) lists configurations with the last
parent varying fastest.  Writing reproduces ``write.dsc`` byte for byte.
"""

from __future__ import annotations

from typing import TextIO

import numpy as np

from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from .reading.build import NetworkParts, table_columns, write_probability_blocks
from .reading.grammar import TableQueue, discrete_type, node_block
from .reading.tokens import Cursor, check_writable_names, tokenize, word_or_quoted
from .io import read_text, text_writer

__all__ = ["parse_dsc", "write_dsc"]


def parse_dsc(text: str, path: str | None = None) -> NetworkParts:
    """Parse DSC text (``belief network``, ``node`` and ``probability`` blocks) into its
    nodes, levels, parents and tables; errors name the file line."""
    cur = Cursor(tokenize(text, line_comments=("//",), block_comments=True, path=path), path)
    parts = NetworkParts(path=path, format="dsc")
    second = cur.peek(1)
    if not (cur.is_word("belief") and second is not None and second.text == "network"):
        raise cur.error("a DSC file starts with 'belief network'", 1)
    cur.next()
    cur.next()
    if not cur.at_end() and cur.peek().kind == "string":
        cur.next()
    tables = TableQueue()
    while not cur.at_end():
        t = cur.next()
        if t.kind == "word" and t.text == "node":
            node_block(cur, parts, "type", discrete_type)
        elif t.kind == "word" and t.text == "probability":
            tables.add(cur, ",")
        elif t.kind == "word" and t.text == "properties":
            cur.skip_block()
        else:
            raise cur.error(f"expected 'node' or 'probability' but found {t.text!r}", t.line)
    return tables.finish(parts, _body)


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
            idx_vals = cur.separated(lambda: cur.integer("a level index"))
            cur.expect(")")
            if cur.is_punct(":"):
                cur.next()
            if len(idx_vals) != len(parents):
                raise cur.error(
                    f"a configuration of {node!r} has {len(idx_vals)} indices for {len(parents)} parents", line
                )
            idx = 0
            for p, v, c in zip(parents, idx_vals, cards):
                if not 0 <= v < c:
                    raise cur.error(f"index {v} is out of range for {p!r} ({c} levels)", line)
                idx = idx * c + v
            vals = cur.numbers()
            if len(vals) != r:
                raise cur.error(f"a distribution of {node!r} has {len(vals)} numbers, expected {r}", line)
            cols[idx] = vals
            row_lines[idx] = line
        elif cur.is_word("default"):
            cur.next()
            default = np.array(cur.numbers())
        elif cur.is_word("function"):
            raise cur.error(f"the table of {node!r} is given as a function, which is not supported", line)
        else:
            vals = cur.numbers()
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
    check_writable_names(net, "DSC")
    fh.write('belief network "unknown"\n')
    for node in net.nodes:
        lev = '", "'.join(str(l) for l in net.levels(node))
        n = len(net.levels(node))
        fh.write(f'node {word_or_quoted(str(node))} {{\n  type : discrete [ {n} ] = {{ "{lev}" }};\n}}\n')
    write_probability_blocks(net, fh, "   ", lambda codes, labels: "  (" + ", ".join(str(c) for c in codes) + ") : ")


def read_dsc(path: str) -> "FittedNetwork":
    """A DSC file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_dsc(read_text(path), path).network()


register_format(NetworkFormat("dsc", (".dsc",), read_dsc, text_writer("dsc", lambda net, fh: write_dsc(net, fh))))
