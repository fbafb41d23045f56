"""BIF (Bayesian Interchange Format) files, as bnlearn's ``read.bif``/``write.bif``.

Reading accepts the full BIF 0.15 syntax used by bnlearn and the Bayesian network
repository: ``//`` and ``/* */`` comments, ``property`` statements (ignored),
``table`` entries (for a node with parents, the node's level varies slowest and
the last parent fastest), ``default`` entries and one ``(config) probs;`` row per
parent configuration.  Each distribution must sum to 1 within 0.01 and is
renormalised, as bnlearn does.  Writing reproduces ``write.bif`` byte for byte.
"""

from __future__ import annotations

from typing import TextIO

import numpy as np

from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from ._build import NetworkParts, table_columns, write_probability_blocks
from ._grammar import TableQueue, discrete_type, node_block
from ._tokens import Cursor, check_writable_names, tokenize, word_or_quoted
from .io import read_text, text_writer

__all__ = ["parse_bif", "write_bif"]


def parse_bif(text: str, path: str | None = None) -> NetworkParts:
    """Parse BIF text into its nodes, levels, parents and tables."""
    cur = Cursor(tokenize(text, line_comments=("//",), block_comments=True, path=path), path)
    parts = NetworkParts(path=path, format="bif")
    if not cur.is_word("network"):
        raise cur.error("a BIF file starts with 'network'", 1)
    cur.next()
    if not cur.is_punct("{"):
        cur.name("the network's name")
    cur.skip_block()
    tables = TableQueue()
    while not cur.at_end():
        t = cur.next()
        if t.kind == "word" and t.text == "variable":
            node_block(cur, parts, "type", discrete_type)
        elif t.kind == "word" and t.text == "probability":
            tables.add(cur, ",")
        else:
            raise cur.error(f"expected 'variable' or 'probability' but found {t.text!r}", t.line)
    return tables.finish(parts, _probability_body)


def _probability_body(
    cur: Cursor, node: str, parents: list[str], parts: NetworkParts, header_line: int | None
) -> np.ndarray:
    r = len(parts.level_of(node, cur))
    cards = [len(parts.level_of(p, cur)) for p in parents]
    Q = int(np.prod(cards)) if cards else 1
    cols = np.full((Q, r), np.nan)
    row_lines = np.full(Q, -1)
    default = None
    cur.expect("{")
    while not cur.is_punct("}"):
        line = cur.line
        if cur.is_word("table"):
            cur.next()
            vals = np.array(cur.numbers())
            if len(vals) != r * Q:
                raise cur.error(f"the table of {node!r} has {len(vals)} numbers, expected {r * Q}", line)
            # node slowest, last parent fastest
            cols[:] = vals.reshape(r, Q).T
            row_lines[:] = line
        elif cur.is_word("default"):
            cur.next()
            default = np.array(cur.numbers())
            if len(default) != r:
                raise cur.error(f"the default distribution of {node!r} has {len(default)} numbers, expected {r}", line)
        elif cur.is_word("property"):
            cur.skip_statement()
        elif cur.is_punct("("):
            cur.next()
            cfg = cur.separated(lambda: cur.name("a parent level"))
            cur.expect(")")
            if len(cfg) != len(parents):
                raise cur.error(
                    f"configuration ({', '.join(cfg)}) of {node!r} has {len(cfg)} values for {len(parents)} parents",
                    line,
                )
            idx = 0
            for p, v, c in zip(parents, cfg, cards):
                lev = parts.levels[p]
                if v not in lev:
                    raise cur.error(f"{v!r} is not a level of {p!r} (in the table of {node!r})", line)
                idx = idx * c + lev.index(v)
            vals = np.array(cur.numbers())
            if len(vals) != r:
                raise cur.error(
                    f"the distribution of {node!r} for ({', '.join(cfg)}) has {len(vals)} numbers, expected {r}", line
                )
            cols[idx] = vals
            row_lines[idx] = line
        else:
            t = cur.next()
            raise cur.error(f"unexpected {t.text!r} in the table of {node!r}", t.line)
    cur.expect("}")
    return table_columns(cols, node, parents, parts, default, cur, row_lines, header_line)


def write_bif(net: "FittedNetwork", fh: TextIO) -> None:
    """Write ``net`` as bnlearn's ``write.bif`` does."""
    check_writable_names(net, "BIF")
    fh.write("network unknown {\n}\n")
    for node in net.nodes:
        lev = [word_or_quoted(str(l)) for l in net.levels(node)]
        fh.write(
            f"variable {word_or_quoted(str(node))} {{\n  type discrete [ {len(lev)} ] {{ {', '.join(lev)} }};\n}}\n"
        )
    write_probability_blocks(
        net,
        fh,
        "  table ",
        lambda codes, labels: "  (" + ", ".join(word_or_quoted(str(lab[c])) for lab, c in zip(labels, codes)) + ") ",
    )


def read_bif(path: str) -> "FittedNetwork":
    """A BIF file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_bif(read_text(path), path).network()


register_format(NetworkFormat("bif", (".bif",), read_bif, text_writer("bif", lambda net, fh: write_bif(net, fh))))
