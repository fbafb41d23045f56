"""numba kernel of the BIF reader's quick path: a small plain file read in one pass.

:func:`scan_bif` walks the bytes of a whole BIF file written in the plain form
bnlearn, pgmpy and the Bayesian network repository write (no quotes, comments,
``property`` or ``default`` statements; one ``type discrete`` declaration per
variable; ``probability ( node | parents )`` headers; ``(levels) numbers;`` and
``table numbers;`` rows).  It records where every name and level lies, finds each
block's node and parents and each row's configuration by comparing bytes, gathers the
rows' numbers for :func:`~pybncsmooth.interop.reading._number_kernels.parse_rows` and places them with
:func:`~pybncsmooth.interop.reading._number_kernels.place_rows`: the same number parsing, checks and
normalisation as the general reader, so the tables are the same doubles.  Anything
else (a form it does not know, any error) returns a non-zero status, and the general
reader (:mod:`~pybncsmooth.interop.bif.format`) reads the file and reports what is wrong, with its line.
"""

from __future__ import annotations

import numpy as np
from ..._jit import njit

from ..reading._number_kernels import _POW10, parse_rows, place_rows

__all__ = ["scan_bif", "QUICK_MAX_VARIABLES"]

#: most variables of a file read by the quick path (names are found by comparing bytes)
QUICK_MAX_VARIABLES = 128

_NETWORK = np.frombuffer(b"network", dtype=np.uint8)
_VARIABLE = np.frombuffer(b"variable", dtype=np.uint8)
_PROBABILITY = np.frombuffer(b"probability", dtype=np.uint8)
_TYPE = np.frombuffer(b"type", dtype=np.uint8)
_DISCRETE = np.frombuffer(b"discrete", dtype=np.uint8)
_TABLE = np.frombuffer(b"table", dtype=np.uint8)


@njit(cache=True, nogil=True, boundscheck=False)
def _space(c):  # pragma: no cover - compiled
    return c == 32 or c == 9 or c == 10 or c == 13


@njit(cache=True, nogil=True, boundscheck=False)
def _delim(c):  # pragma: no cover - compiled
    """White space or a character of BIF's syntax: the end of a word."""
    return (c <= 32 or c == 123 or c == 125 or c == 40 or c == 41 or c == 91 or c == 93 or c == 59
            or c == 44 or c == 124 or c == 61 or c == 34)


@njit(cache=True, nogil=True, boundscheck=False)
def _skip(buf, i):  # pragma: no cover - compiled
    while i < buf.shape[0] and _space(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True, boundscheck=False)
def _word(buf, i):  # pragma: no cover - compiled
    """End of the word starting at ``i`` (``i``: none there)."""
    while i < buf.shape[0] and not _delim(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True, boundscheck=False)
def _same(buf, a, b, c, d):  # pragma: no cover - compiled
    if b - a != d - c:
        return False
    for k in range(b - a):
        if buf[a + k] != buf[c + k]:
            return False
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def _is(buf, a, b, lit):  # pragma: no cover - compiled
    if b - a != lit.shape[0]:
        return False
    for k in range(b - a):
        if buf[a + k] != lit[k]:
            return False
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def _keyword(buf, i, lit):  # pragma: no cover - compiled
    """Position after keyword ``lit`` at ``i`` followed by white space, else -1."""
    e = _word(buf, i)
    if not _is(buf, i, e, lit) or e >= buf.shape[0] or not _space(buf[e]):
        return -1
    return e


@njit(cache=True, nogil=True, boundscheck=False)
def _expect(buf, i, ch):  # pragma: no cover - compiled
    """Position after ``ch`` (after white space), else -1."""
    i = _skip(buf, i)
    if i < buf.shape[0] and buf[i] == ch:
        return i + 1
    return -1


@njit(cache=True, nogil=True, boundscheck=False)
def _item(buf, i, stop):  # pragma: no cover - compiled
    """An item of a list ending at ``,`` or ``stop``: its trimmed span and the position
    of what ended it (-1 when it is empty or holds syntax it may not)."""
    i = _skip(buf, i)
    s = i
    n = buf.shape[0]
    while i < n and buf[i] != 44 and buf[i] != stop:
        c = buf[i]
        if c == 123 or c == 125 or c == 59 or c == 40 or c == 41 or c == 34:
            return s, s, -1
        i += 1
    e = i
    while e > s and _space(buf[e - 1]):
        e -= 1
    if e == s or i >= n:
        return s, s, -1
    return s, e, i


@njit(cache=True, nogil=True, boundscheck=False)
def _variable(buf, i, names, levels, n_var, n_lev):  # pragma: no cover - compiled
    """``variable name { type discrete [ n ] = { levels }; }`` from after the keyword:
    the position after the block and the new level count (-1: not this form)."""
    i = _skip(buf, i)
    e = _word(buf, i)
    if e == i or n_var >= names.shape[0]:
        return -1, n_lev
    names[n_var, 0], names[n_var, 1] = i, e
    i = _expect(buf, e, 123)
    if i < 0:
        return -1, n_lev
    i = _skip(buf, i)
    i = _keyword(buf, i, _TYPE)
    if i < 0:
        return -1, n_lev
    i = _skip(buf, i)
    e = _word(buf, i)
    if not _is(buf, i, e, _DISCRETE):
        return -1, n_lev
    i = _expect(buf, e, 91)
    if i < 0:
        return -1, n_lev
    i = _skip(buf, i)
    n = 0
    s = i
    while i < buf.shape[0] and 48 <= buf[i] <= 57 and i - s < 6:
        n = n * 10 + buf[i] - 48
        i += 1
    if i == s:
        return -1, n_lev
    i = _expect(buf, i, 93)
    if i < 0:
        return -1, n_lev
    i = _skip(buf, i)
    if i < buf.shape[0] and buf[i] == 61:
        i += 1
    i = _expect(buf, i, 123)
    if i < 0:
        return -1, n_lev
    first = n_lev
    while True:
        s, e, i = _item(buf, i, 125)
        if i < 0 or n_lev >= levels.shape[0]:
            return -1, n_lev
        levels[n_lev, 0], levels[n_lev, 1] = s, e
        n_lev += 1
        if buf[i] == 125:
            break
        i += 1
    if n_lev - first != n:
        return -1, n_lev
    names[n_var, 2], names[n_var, 3] = first, n_lev
    i = _expect(buf, i + 1, 59)
    if i < 0:
        return -1, n_lev
    return _expect(buf, i, 125), n_lev


@njit(cache=True, nogil=True, boundscheck=False)
def _name(buf, i, heads, n_head):  # pragma: no cover - compiled
    """A name (a word, white space before it) appended to ``heads``: the position of what
    follows it (after white space) and the new count (-1: no name, or no room)."""
    i = _skip(buf, i)
    e = _word(buf, i)
    if e == i or n_head >= heads.shape[0]:
        return -1, n_head
    heads[n_head, 0], heads[n_head, 1] = i, e
    return _skip(buf, e), n_head + 1


@njit(cache=True, nogil=True, boundscheck=False)
def _header(buf, i, heads, n_head):  # pragma: no cover - compiled
    """``( node | p1, p2 ) {`` from after ``probability``: spans of the names appended to
    ``heads`` from ``n_head``; the position after ``{`` and the new count (-1: not this form)."""
    i = _expect(buf, i, 40)
    if i < 0:
        return -1, n_head
    i, n_head = _name(buf, i, heads, n_head)
    if i >= 0 and i < buf.shape[0] and buf[i] == 124:
        while True:
            i, n_head = _name(buf, i + 1, heads, n_head)
            if i < 0 or i >= buf.shape[0] or (buf[i] != 44 and buf[i] != 41):
                return -1, n_head
            if buf[i] == 41:
                break
    if i < 0 or i >= buf.shape[0] or buf[i] != 41:
        return -1, n_head
    return _expect(buf, i + 1, 123), n_head


@njit(cache=True, nogil=True, boundscheck=False)
def _numbers_of_row(buf, i, scratch, n_scr):  # pragma: no cover - compiled
    """The text from ``i`` to the row's ``;`` appended to ``scratch`` (``;`` before it
    unless it is the first row); the position after ``;`` (-1: none, or a brace)."""
    if n_scr > 0:
        scratch[n_scr] = 59
        n_scr += 1
    while i < buf.shape[0] and buf[i] != 59:
        c = buf[i]
        if c == 123 or c == 125 or c == 40 or c == 41:
            return -1, n_scr
        scratch[n_scr] = c
        n_scr += 1
        i += 1
    if i >= buf.shape[0]:
        return -1, n_scr
    return i + 1, n_scr


@njit(cache=True, nogil=True, boundscheck=False)
def _body(buf, i, rows, labels, n_row, n_lab, scratch, n_scr):  # pragma: no cover - compiled
    """The rows of a probability block, from after its ``{`` to its ``}``: each row's
    kind (0 configuration, 1 ``table``) and its labels' spans; the numbers' text to
    ``scratch``.  Returns the position after ``}`` (-1: not this form) and the counts."""
    n = buf.shape[0]
    while True:
        i = _skip(buf, i)
        if i >= n or n_row >= rows.shape[0]:
            return -1, n_row, n_lab, n_scr
        if buf[i] == 125:
            return i + 1, n_row, n_lab, n_scr
        rows[n_row, 1] = n_lab
        if buf[i] == 40:
            rows[n_row, 0] = 0
            i += 1
            while True:
                s, e, i = _item(buf, i, 41)
                if i < 0 or n_lab >= labels.shape[0]:
                    return -1, n_row, n_lab, n_scr
                labels[n_lab, 0], labels[n_lab, 1] = s, e
                n_lab += 1
                i += 1
                if buf[i - 1] == 41:
                    break
        else:
            e = _word(buf, i)
            if not _is(buf, i, e, _TABLE):
                return -1, n_row, n_lab, n_scr
            rows[n_row, 0] = 1
            i = e
        rows[n_row, 2] = n_lab
        n_row += 1
        i, n_scr = _numbers_of_row(buf, i, scratch, n_scr)
        if i < 0:
            return -1, n_row, n_lab, n_scr


@njit(cache=True, nogil=True, boundscheck=False)
def _blocks(buf, names, levels, heads, blocks, rows, labels, scratch):  # pragma: no cover - compiled
    """Every block of the file after ``network``; the counts of variables, levels,
    probability blocks, header names, rows, labels and scratch bytes (-1 first: not
    the plain form)."""
    n = buf.shape[0]
    i = _skip(buf, 0)
    e = _word(buf, i)
    if not _is(buf, i, e, _NETWORK):
        return -1, 0, 0, 0, 0, 0, 0
    i = e
    while i < n and buf[i] != 123:
        if buf[i] == 125 or buf[i] == 34:
            return -1, 0, 0, 0, 0, 0, 0
        i += 1
    i += 1
    while i < n and buf[i] != 125:
        if buf[i] == 123:
            return -1, 0, 0, 0, 0, 0, 0
        i += 1
    if i >= n:
        return -1, 0, 0, 0, 0, 0, 0
    i += 1
    n_var = n_lev = n_blk = n_head = n_row = n_lab = n_scr = 0
    while True:
        i = _skip(buf, i)
        if i >= n:
            return n_var, n_lev, n_blk, n_head, n_row, n_lab, n_scr
        if buf[i] == 59:
            i += 1
            continue
        e = _keyword(buf, i, _VARIABLE)
        if e >= 0:
            i, n_lev = _variable(buf, e, names, levels, n_var, n_lev)
            n_var += 1
        else:
            e = _keyword(buf, i, _PROBABILITY)
            if e < 0 or n_blk >= blocks.shape[0]:
                return -1, 0, 0, 0, 0, 0, 0
            blocks[n_blk, 0], blocks[n_blk, 2] = n_head, n_row
            i, n_head = _header(buf, e, heads, n_head)
            if i >= 0:
                i, n_row, n_lab, n_scr = _body(buf, i, rows, labels, n_row, n_lab, scratch, n_scr)
            blocks[n_blk, 1], blocks[n_blk, 3] = n_head, n_row
            n_blk += 1
        if i < 0:
            return -1, 0, 0, 0, 0, 0, 0


@njit(cache=True, nogil=True, boundscheck=False)
def _find(buf, names, n_var, a, b):  # pragma: no cover - compiled
    for v in range(n_var):
        if _same(buf, names[v, 0], names[v, 1], a, b):
            return v
    return -1


@njit(cache=True, nogil=True, boundscheck=False)
def _resolve(buf, names, n_var, levels, heads, blocks, n_blk, rows, labels, layout, placed, fam):
    # pragma: no cover - compiled
    """Each block's node and parents (``fam``: variable indices, header order), its
    base, ``Q`` and ``r`` (``layout``) and each row's destination, span, ``r``, count of
    numbers and kind (``placed``, as :func:`place_rows` takes them); False when a name or
    a configuration's level is not declared, a node has no table or two, or a table is
    too large for this path."""
    has = np.zeros(n_var, dtype=np.bool_)
    base = 0
    for j in range(n_blk):
        h0, h1, r0, r1 = blocks[j, 0], blocks[j, 1], blocks[j, 2], blocks[j, 3]
        for h in range(h0, h1):
            fam[h] = _find(buf, names, n_var, heads[h, 0], heads[h, 1])
            if fam[h] < 0:
                return False
        node = fam[h0]
        if has[node]:
            return False
        has[node] = True
        r = names[node, 3] - names[node, 2]
        Q = 1
        for h in range(h0 + 1, h1):
            Q *= names[fam[h], 3] - names[fam[h], 2]
            if Q > (1 << 22):
                return False
        layout[0, j], layout[1, j], layout[2, j], layout[3, j] = base, Q, r, -1
        d = h1 - h0 - 1
        for k in range(r0, r1):
            if rows[k, 0] == 1:
                placed[0, k], placed[1, k], placed[3, k] = base, Q, r * Q
            else:
                if rows[k, 2] - rows[k, 1] != d or d == 0:
                    return False
                idx = 0
                for t in range(d):
                    p = fam[h0 + 1 + t]
                    a, b = labels[rows[k, 1] + t, 0], labels[rows[k, 1] + t, 1]
                    code = -1
                    for lv in range(names[p, 2], names[p, 3]):
                        if _same(buf, levels[lv, 0], levels[lv, 1], a, b):
                            code = lv - names[p, 2]
                            break
                    if code < 0:
                        return False
                    idx = idx * (names[p, 3] - names[p, 2]) + code
                placed[0, k], placed[1, k], placed[3, k] = base + idx * r, 1, r
            placed[2, k], placed[4, k] = r, rows[k, 0]
        base += Q * r
    for v in range(n_var):
        if not has[v]:
            return False
    layout[4, 0] = base
    return True


@njit(cache=True, nogil=True, boundscheck=False)
def scan_bif(buf):  # pragma: no cover - compiled
    """Read a plain BIF file (``buf``: its ASCII bytes).  Returns ``(ok, names, levels,
    blocks, fam, layout, tables)``: ``names[v]`` the byte span of variable ``v``'s name
    and its levels' range in ``levels`` (byte spans); ``blocks[j, :2]`` the range of
    block ``j``'s node and parents in ``fam`` (variable indices); ``layout`` the base,
    ``Q`` and ``r`` of each block's configuration-major table in ``tables``.  ``ok`` is
    False for a file not of the plain form or with any error (the general reader then
    reads it)."""
    n = buf.shape[0]
    for i in range(n):
        c = buf[i]
        if (c < 32 and c != 9 and c != 10 and c != 13) or c > 126:
            return False, np.zeros((0, 4), np.int64), np.zeros((0, 2), np.int64), np.zeros((0, 4), np.int64), \
                np.zeros(0, np.int64), np.zeros((5, 0), np.int64), np.zeros(0)
    m = n // 2 + 2
    names = np.empty((min(m, QUICK_MAX_VARIABLES + 1), 4), np.int64)
    levels = np.empty((m, 2), np.int64)
    heads = np.empty((m, 2), np.int64)
    blocks = np.empty((m, 4), np.int64)
    rows = np.empty((m, 3), np.int64)
    labels = np.empty((m, 2), np.int64)
    scratch = np.empty(n + m, np.uint8)
    n_var, n_lev, n_blk, n_head, n_row, n_lab, n_scr = _blocks(buf, names, levels, heads, blocks, rows, labels,
                                                               scratch)
    layout = np.empty((5, max(n_blk, 1)), np.int64)
    placed = np.empty((5, max(n_row, 0)), np.int64)
    fam = np.empty(max(n_head, 0), np.int64)
    ok = (0 < n_var <= QUICK_MAX_VARIABLES and n_row > 0
          and _resolve(buf, names, n_var, levels, heads, blocks, n_blk, rows, labels, layout, placed, fam))
    tables = np.empty(layout[4, 0] if ok else 0)
    if ok:
        text = scratch[:n_scr]
        values = np.empty(n_scr // 2 + 1)
        counts = np.empty(n_row, np.int64)
        slow = np.empty((2, 16 + n_scr // 256), np.int64)
        status, k, n_slow, _ = parse_rows(text, _POW10, values, counts, slow[0], slow[1])
        ok = status == 0 and n_slow == 0
        if ok:
            ok = place_rows(values[:k], counts, placed, layout[:4, :n_blk].copy(), tables)[0] == 0
    return ok, names[:max(n_var, 0)], levels[:n_lev], blocks[:max(n_blk, 0)], fam, layout[:, :n_blk], tables
