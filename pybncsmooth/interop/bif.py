"""BIF (Bayesian Interchange Format) files, as bnlearn's ``read.bif``/``write.bif``.

Reading accepts the full BIF 0.15 syntax used by bnlearn and the Bayesian network
repository: ``//`` and ``/* */`` comments, ``property`` statements (ignored),
``table`` entries (for a node with parents, the node's level varies slowest and
the last parent fastest), ``default`` entries and one ``(config) probs;`` row per
parent configuration.  Each distribution must sum to 1 within 0.01 and is
renormalised, as bnlearn does.  Writing reproduces ``write.bif`` byte for byte.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, TextIO

import numpy as np

from ._rformat import format_r
from ._tokens import Cursor, tokenize
from ._build import NetworkParts, table_columns

if TYPE_CHECKING:  # pragma: no cover
    from ..model.network import FittedNetwork

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
    pending: list[tuple[str, list[str], Cursor, int]] = []
    while not cur.at_end():
        t = cur.next()
        if t.kind == "word" and t.text == "variable":
            _variable(cur, parts)
        elif t.kind == "word" and t.text == "probability":
            node, parents, line = _probability_header(cur)
            start = cur.pos
            cur.skip_block()
            pending.append((node, parents, Cursor(cur.tokens[start : cur.pos], path), line))
        else:
            raise cur.error(f"expected 'variable' or 'probability' but found {t.text!r}", t.line)
    for node, parents, sub, line in pending:
        parts.add_table(node, parents, _probability_body(sub, node, parents, parts, line), line)
    parts.finish()
    return parts


def _variable(cur: Cursor, parts: NetworkParts) -> None:
    line = cur.line
    node = cur.name("a variable name")
    cur.expect("{")
    levels: list[str] | None = None
    while not cur.is_punct("}"):
        if cur.is_word("type"):
            tline = cur.line
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
            levels = [cur.name("a level")]
            while cur.is_punct(","):
                cur.next()
                levels.append(cur.name("a level"))
            cur.expect("}")
            cur.expect(";")
            if len(levels) != n:
                raise cur.error(f"variable {node!r} declares {n} levels but lists {len(levels)}", tline)
        else:
            cur.skip_statement()
    cur.expect("}")
    if levels is None:
        raise cur.error(f"variable {node!r} has no 'type discrete' declaration", line)
    parts.add_variable(node, levels, line)


def _probability_header(cur: Cursor) -> tuple[str, list[str], int | None]:
    line = cur.line
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
    return node, parents, line


def _numbers(cur: Cursor) -> list[float]:
    vals = [cur.number()]
    while cur.is_punct(","):
        cur.next()
        vals.append(cur.number())
    cur.expect(";")
    return vals


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
            vals = np.array(_numbers(cur))
            if len(vals) != r * Q:
                raise cur.error(f"the table of {node!r} has {len(vals)} numbers, expected {r * Q}", line)
            # node slowest, last parent fastest
            cols[:] = vals.reshape(r, Q).T
            row_lines[:] = line
        elif cur.is_word("default"):
            cur.next()
            default = np.array(_numbers(cur))
            if len(default) != r:
                raise cur.error(f"the default distribution of {node!r} has {len(default)} numbers, expected {r}", line)
        elif cur.is_word("property"):
            cur.skip_statement()
        elif cur.is_punct("("):
            cur.next()
            cfg = [cur.name("a parent level")]
            while cur.is_punct(","):
                cur.next()
                cfg.append(cur.name("a parent level"))
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
            vals = np.array(_numbers(cur))
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
    fh.write("network unknown {\n}\n")
    for node in net.nodes:
        lev = [str(l) for l in net.levels(node)]
        fh.write(f"variable {node} {{\n  type discrete [ {len(lev)} ] {{ {', '.join(lev)} }};\n}}\n")
    for node in net.nodes:
        t = net.cpt(node)
        r = t.shape[0]
        pa = net.parents(node)
        if not pa:
            fh.write(f"probability ( {node} ) {{\n")
            fh.write(f"  table {', '.join(format_r(t))};\n")
            fh.write("}\n")
            continue
        fh.write(f"probability ( {node} | {', '.join(pa)} ) {{\n")
        cols = t.reshape(r, -1, order="F")
        labels = [[str(l) for l in net.levels(p)] for p in pa]
        # expand.grid: the first parent varies fastest
        for i, combo in enumerate(itertools.product(*reversed(labels))):
            cfg = ", ".join(reversed(combo))
            fh.write(f"  ({cfg}) {', '.join(format_r(cols[:, i]))};\n")
        fh.write("}\n")
