"""NET files (Hugin), as bnlearn's ``read.net``/``write.net``.

``potential ( X | A B ) { data = ((( ... ))) ; }``: the numbers are nested with
the first parent outermost and the node's own level innermost (the last parent
varies fastest among the parents).  ``%`` starts a comment.  Node attributes
other than ``states`` (labels, positions, ...) are ignored.  Writing reproduces
``write.net`` byte for byte.
"""

from __future__ import annotations

import itertools
from typing import TextIO

import numpy as np

from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from .reading.build import NetworkParts, table_columns
from .reading.grammar import TableQueue, node_block
from ._rformat import format_probs, table_digits
from .reading.tokens import Cursor, check_writable_names, tokenize, word_or_quoted
from .io import read_text, text_writer

__all__ = ["parse_net", "write_net"]


def parse_net(text: str, path: str | None = None) -> NetworkParts:
    """Parse Hugin NET text (``net``, ``node`` and ``potential`` blocks) into its nodes,
    levels, parents and tables; errors name the file line."""
    cur = Cursor(tokenize(text, line_comments=("%",), block_comments=False, path=path), path)
    parts = NetworkParts(path=path, format="net")
    if not cur.is_word("net"):
        raise cur.error("a NET file starts with 'net'", 1)
    cur.next()
    cur.skip_block()
    tables = TableQueue()
    while not cur.at_end():
        t = cur.next()
        if t.kind == "word" and t.text in ("continuous", "decision", "utility"):
            raise cur.error(f"{t.text} nodes are not supported (only discrete chance nodes)", t.line)
        if t.kind == "word" and t.text == "discrete":
            t = cur.next()
        if t.kind == "word" and t.text == "node":
            node_block(cur, parts, "states", _states)
        elif t.kind == "word" and t.text == "potential":
            tables.add(cur, None)
        else:
            raise cur.error(f"expected 'node' or 'potential' but found {t.text!r}", t.line)
    return tables.finish(parts, _body)


def _states(cur: Cursor, node: str) -> list[str]:
    """``states = ( "a" "b" ... ) ;``"""
    cur.expect_word("states")
    cur.expect("=")
    cur.expect("(")
    levels = []
    while not cur.is_punct(")"):
        levels.append(cur.name("a state"))
    cur.expect(")")
    cur.expect(";")
    return levels


def _body(cur: Cursor, node: str, parents: list[str], parts: NetworkParts, header_line: int | None) -> np.ndarray:
    r = len(parts.level_of(node, cur))
    cards = [len(parts.level_of(p, cur)) for p in parents]
    Q = int(np.prod(cards)) if cards else 1
    cur.expect("{")
    cols = None
    data_line = header_line
    while not cur.is_punct("}"):
        line = cur.line
        if cur.is_word("data"):
            cur.next()
            cur.expect("=")
            vals: list[float] = []
            depth = 0
            while True:
                if cur.is_punct("("):
                    cur.next()
                    depth += 1
                elif cur.is_punct(")"):
                    cur.next()
                    depth -= 1
                    if depth < 0:
                        raise cur.error(f"unbalanced ')' in the data of {node!r}")
                elif cur.is_punct(";"):
                    break
                else:
                    vals.append(cur.number())
            cur.expect(";")
            if depth != 0:
                raise cur.error(f"unbalanced '(' in the data of {node!r}", line)
            if len(vals) != r * Q:
                raise cur.error(f"the data of {node!r} has {len(vals)} numbers, expected {r * Q}", line)
            cols = np.array(vals).reshape(Q, r)
            data_line = line
        elif cur.is_word("model_data", "model_nodes"):
            raise cur.error(f"the potential of {node!r} uses {cur.peek().text!r}, which is not supported", line)
        else:
            cur.skip_statement()
    cur.expect("}")
    if cols is None:
        raise cur.error(f"the potential of {node!r} has no data")
    return table_columns(cols, node, parents, parts, None, cur, np.full(Q, data_line if data_line else -1), header_line)


def write_net(net: "FittedNetwork", fh: TextIO) -> None:
    """Write ``net`` as bnlearn's ``write.net`` does."""
    check_writable_names(net, "NET")
    fh.write("net \n{ \n}\n")
    for node in net.nodes:
        states = '" "'.join(str(l) for l in net.levels(node))
        fh.write(f'node {word_or_quoted(str(node))} \n{{\n  states = ( "{states}" );\n}}\n')
    for node in net.nodes:
        t = net.cpt(node)
        pa = [word_or_quoted(str(p)) for p in net.parents(node)]
        q = word_or_quoted(str(node))
        if not pa:
            fh.write(f"potential ( {q} ) \n{{\n")
            w, d = table_digits(t.reshape(-1, 1), search=net.method is None)
            fh.write(f"  data = ( {' '.join(format_probs(w.ravel(), digits=int(d[0])))} );\n}}\n")
            continue
        fh.write(f"potential ( {q} | {' '.join(pa)} ) \n{{\n  data = ")
        cards = t.shape[1:]
        t, digits = table_digits(t, search=net.method is None)
        # configurations with the last parent varying fastest
        items = []
        for combo in itertools.product(*[range(c) for c in cards]):
            items.append("(" + " ".join(format_probs(t[(slice(None),) + combo], digits=int(digits[combo]))) + ")")
        for c in reversed(cards):
            items = ["(" + "".join(items[k : k + c]) + ")" for k in range(0, len(items), c)]
        fh.write(f"{items[0]} ;\n}}\n")


def read_net(path: str) -> "FittedNetwork":
    """A NET file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_net(read_text(path), path).network()


register_format(NetworkFormat("net", (".net",), read_net, text_writer("net", lambda net, fh: write_net(net, fh))))
