"""The BIF reader's quick path: a small plain file read in one compiled pass
(:mod:`~pybncsmooth.interop.bif._quick_kernels`), Python left to cut out the names and levels and to
reshape the tables.  Python's per-statement work (regular expressions per block and
row, lists of labels) costs a small file more than its numbers do; one pass over the
bytes costs little more than reading them.  A file of another form, or with any
error, is left to the general reader, which reads or reports it."""

from __future__ import annotations

import numpy as np

from ._quick_kernels import scan_bif
from ..reading.build import NetworkParts

__all__ = ["quick_parts", "QUICK_MAX_CHARS"]

#: largest text (characters) the quick path tries (a large file's cost is its numbers,
#: which both paths parse alike)
QUICK_MAX_CHARS = 1 << 18


def quick_parts(text: str, path: str | None) -> NetworkParts | None:
    """The nodes, levels, parents and tables of a plain BIF ``text``, exactly as the
    general reader gives them; ``None`` when the text is not of the plain form (quotes,
    comments, ``default`` rows, more than
    :data:`~pybncsmooth.interop.bif._quick_kernels.QUICK_MAX_VARIABLES` variables, ...) or has an error."""
    if len(text) > QUICK_MAX_CHARS or '"' in text or "//" in text or "/*" in text or not text.isascii():
        return None
    ok, names, levels, blocks, fam, layout, tables = scan_bif(np.frombuffer(text.encode("ascii"), dtype=np.uint8))
    if not ok:
        return None
    var = [text[s:e] for s, e in names[:, :2].tolist()]
    lev = [text[s:e] for s, e in levels.tolist()]
    if len(set(var)) != len(var):
        return None
    parts = NetworkParts(path=path, format="bif", checked=True)
    for v, (a, b) in zip(var, names[:, 2:].tolist()):
        own = lev[a:b]
        if len(own) < 2 or len(set(own)) != len(own):
            return None
        parts.levels[v], parts.lines[v] = own, None
    members = fam.tolist()
    for (h0, h1), (base, Q, r) in zip(blocks[:, :2].tolist(), layout[:3].T.tolist()):
        pa = [var[k] for k in members[h0 + 1 : h1]]
        if len(set(pa)) != len(pa):
            return None
        d = len(pa)
        cards = [len(parts.levels[p]) for p in pa]
        parts.parents[var[members[h0]]] = pa
        parts.tables[var[members[h0]]] = tables[base : base + Q * r].reshape(*cards, r).transpose(d, *range(d))
    return parts
