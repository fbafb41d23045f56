"""The tables of all the probability blocks of a BIF file, built at once.

Every block's table is a slice of one flat array (configuration-major, the node's
level fastest).  Each row of a block is placed by its destination: a configuration
row ``(l_1, ..., l_d) p_1, ..., p_r;`` at its configuration's mixed-radix index, a
``table`` row (the node's level slowest, the last parent fastest) transposed, a
``default`` row wherever no row gave a configuration.  The numbers of all rows are
parsed in one compiled pass, then placed, checked (non-negative, each distribution
summing to 1 within 0.01) and renormalised in another (:mod:`~pybncsmooth.interop.reading._number_kernels`),
whatever the number of blocks: a file of many small tables costs little more than a
file of few large ones.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from ._syntax import BifText, Block, level_lookup, row_line, split_config
from ..reading.build import NetworkParts, config_label
from ..._jit import numba_loaded
from ..reading._number_kernels import place_rows
from ..reading._number_twins import place_rows_numpy
from ..reading.numbers import BadNumber, parse_number_rows

__all__ = ["build_tables"]

_CONFIG, _TABLE, _DEFAULT = 0, 1, 2


def build_tables(src: BifText, blocks: list[Block], parts: NetworkParts) -> list[tuple[Block, np.ndarray]]:
    """Each block with its ``(r, c_1, ..., c_d)`` table (columns summing to one)."""
    lay = _Layout(src, blocks, parts)
    values, counts = _numbers(lay)
    out = np.empty(lay.cells)
    rows, block_array = lay.rows(), lay.block_array()
    placed = None if numba_loaded() else place_rows_numpy(values, counts, rows, block_array, out)
    status, a, b, total = placed or place_rows(values, counts, rows, block_array, out)
    if status:
        lay.fail(int(status), int(a), int(b), float(total), values)
    tables = []
    for blk, base, r, Q, cards in zip(blocks, lay.base, lay.r, lay.Q, lay.cards):
        d = len(cards)
        tables.append((blk, out[base : base + Q * r].reshape(*cards, r).transpose(d, *range(d))))
    return tables


class _Layout:
    """Where every row of every block goes: per block its node's level count ``r``, its
    parents' ``cards``, ``Q`` configurations and ``base`` in the flat array; per row its
    kind, configuration index, the number of configurations it spans and the count of
    numbers it must hold."""

    def __init__(self, src: BifText, blocks: list[Block], parts: NetworkParts) -> None:
        self.src, self.blocks, self.parts = src, blocks, parts
        self.r: list[int] = []
        self.Q: list[int] = []
        self.base: list[int] = []
        self.cards: list[list[int]] = []
        kind: list[int] = []
        idx: list[int] = []
        span: list[int] = []
        expect: list[int] = []
        rowbase: list[int] = []
        self.first_row: list[int] = []
        cells = 0
        for b in blocks:
            r, cards = self._shape(b)
            Q = math.prod(cards)
            self.r.append(r), self.Q.append(Q), self.base.append(cells), self.cards.append(cards)
            self.first_row.append(len(kind))
            k = len(b.rows)
            if not b.keywords:
                idx += config_index(src, b, [c for c, _, _ in b.rows], cards, parts)
                kind += [_CONFIG] * k
                span += [1] * k
                expect += [r] * k
            else:
                for i, (cfg, kw, _) in enumerate(b.rows):
                    kd = _TABLE if kw == "table" else _DEFAULT if kw == "default" else _CONFIG
                    kind.append(kd)
                    idx.append(config_index(src, b, [cfg], cards, parts, first=i)[0] if kd == _CONFIG else 0)
                    span.append(Q if kd == _TABLE else 1)
                    expect.append(r * Q if kd == _TABLE else r)
            rowbase += [cells] * k
            cells += Q * r
        self.cells = cells
        self.kind, self.idx, self.span, self.expect, self.rowbase = kind, idx, span, expect, rowbase

    def rows(self) -> np.ndarray:
        """``(5, n_rows)``: first destination, span, ``r``, count and kind of every row."""
        row_r = [r for r, b in zip(self.r, self.blocks) for _ in b.rows]
        dest = [b + i * r for b, i, r in zip(self.rowbase, self.idx, row_r)]
        return np.array([dest, self.span, row_r, self.expect, self.kind], dtype=np.int64).reshape(5, -1)

    def block_array(self) -> np.ndarray:
        """``(4, n_blocks)``: base, ``Q``, ``r`` and default row (-1: none) of every block."""
        dflt = [-1] * len(self.blocks)
        for row, kd in enumerate(self.kind):
            if kd == _DEFAULT:
                dflt[self.locate(row)[0]] = row
        return np.array([self.base, self.Q, self.r, dflt], dtype=np.int64).reshape(4, -1)

    def fail(self, status: int, a: int, b: int, total: float, values: np.ndarray) -> None:
        """Raise the error :func:`place_rows` found."""
        if status == 1:
            self.count_error(a, b)
        if status == 2:
            j, i = self.locate(a)
            raise self.src.error(f"{values[b]:g} is not a probability", row_line(self.src, self.blocks[j], i))
        blk = self.blocks[a]
        label = config_label(b, blk.parents, self.parts)
        if status == 3:
            raise self.src.error(f"the table of {blk.node!r} gives no distribution for parent configuration "
                                 f"{label}", blk.line)
        rows = range(self.first_row[a], self.first_row[a] + len(blk.rows))
        giving = [row for row in rows if self.kind[row] == _TABLE or (self.kind[row] == _CONFIG and self.idx[row] == b)]
        line = row_line(self.src, blk, giving[-1] - self.first_row[a]) if giving else blk.line
        where = f" for {label}" if blk.parents else ""
        raise self.src.error(f"the distribution of {blk.node!r}{where} sums to {total:.6g}, not 1", line)

    def _shape(self, b: Block) -> tuple[int, list[int]]:
        levels = self.parts.levels
        if b.node not in levels:
            raise self.src.error(f"node {b.node!r} has a table but no declaration", b.line)
        for p in b.parents:
            if p not in levels:
                raise self.src.error(f"parent {p!r} of {b.node!r} is not declared", b.line)
        return len(levels[b.node]), [len(levels[p]) for p in b.parents]

    def locate(self, row: int) -> tuple[int, int]:
        """(block, row within it) of a row of the file."""
        j = bisect.bisect_right(self.first_row, row) - 1
        return j, row - self.first_row[j]

    def count_error(self, row: int, got: int) -> None:
        j, i = self.locate(row)
        b, kd = self.blocks[j], int(self.kind[row])
        if kd == _TABLE:
            what = f"the table of {b.node!r}"
        elif kd == _DEFAULT:
            what = f"the default distribution of {b.node!r}"
        else:
            what = f"the distribution of {b.node!r} for ({b.rows[i][0].strip()})"
        raise self.src.error(f"{what} has {got} numbers, expected {int(self.expect[row])}",
                             row_line(self.src, b, i))


def config_index(src: BifText, b: Block, cfgs: list[str], cards: list[int], parts: NetworkParts,
                 first: int = 0) -> list[int]:
    """Each configuration row's index (mixed radix, first parent most significant)."""
    d = len(b.parents)
    labels = _config_labels(cfgs, d)
    if labels is None:  # a row with the wrong number of values
        i = next(i for i, c in enumerate(cfgs) if len(split_config(c)) != d)
        got = split_config(cfgs[i])
        raise src.error(f"configuration ({', '.join(got)}) of {b.node!r} has {len(got)} values for {d} parents",
                        row_line(src, b, first + i))
    idx = [0] * len(cfgs)
    for j, (p, c) in enumerate(zip(b.parents, cards)):
        lut = level_lookup(tuple(parts.levels[p]))
        col = labels[j::d]
        try:
            codes = [lut[s] for s in col]
        except KeyError:
            i = next(i for i, s in enumerate(col) if s not in lut)
            raise src.error(f"{col[i]!r} is not a level of {p!r} (in the table of {b.node!r})",
                            row_line(src, b, first + i)) from None
        idx = [a * c + k for a, k in zip(idx, codes)] if j else codes
    return idx


def _config_labels(cfgs: list[str], d: int) -> list[str] | None:
    """The labels of every row, row after row (``None`` when a row has not ``d``)."""
    if d == 0:
        return [] if all(not c.strip() for c in cfgs) else None
    joined = ",".join(cfgs)
    if '"' in joined:
        rows = [split_config(c) for c in cfgs]
        return None if any(len(r) != d for r in rows) else [s for r in rows for s in r]
    labels = joined.split(",")
    if len(labels) != d * len(cfgs) or (d > 1 and any(c.count(",") != d - 1 for c in cfgs)):
        return None
    return [s.strip() for s in labels]


def _numbers(lay: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of every row (an error naming the line of the first that is not one)."""
    try:
        values, counts = parse_number_rows([r[2] for b in lay.blocks for r in b.rows])
    except BadNumber as e:
        j, i = lay.locate(e.row)
        raise lay.src.error(f"expected a probability but found {e.token!r}",
                            row_line(lay.src, lay.blocks[j], i)) from None
    return values, counts
