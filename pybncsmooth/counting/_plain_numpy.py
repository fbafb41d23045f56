"""The plain counting of :func:`~pybncsmooth.counting._plain_kernels.plain_trees` in
NumPy, for a process that has not loaded the compiled kernel yet.

Loading a compiled kernel costs a fresh process numba's start (a second or more): a
script that fits one small network once would spend nearly all its time there.  This
module gives the same packed array from the same codes and plan, integer for integer
(each node's dense cells a ``bincount`` of its family's mixed-radix cell index, each
level of its tree a sum of those cells over the parents below it), at a cost that
grows with rows x family sizes; :func:`~pybncsmooth.counting._plain.count_plain`
uses it for small inputs until the kernel is loaded.
"""

from __future__ import annotations

import math

import numpy as np

from ._plain_kernels import PACKED

__all__ = ["plain_trees_numpy"]


def plain_trees_numpy(C: np.ndarray, rcard: np.ndarray, pa_ptr: np.ndarray, pa_card: np.ndarray,
                      cell_off: np.ndarray, families: list[list[int]]) -> np.ndarray:
    """:func:`~pybncsmooth.counting._plain_kernels.plain_trees`'s packed array (``[11
    offsets, the 10 arrays of leaf_levels]``) from the codes ``C`` (one variable a row),
    node ``j``'s family ``families[j]`` (rows of ``C``, the child last); an empty array
    when a code is < 0 (a missing value)."""
    if C.size and int(C.min()) < 0:
        return np.empty(0, dtype=np.int64)
    dense = []
    for j, fam in enumerate(families):
        idx = C[fam[0]].astype(np.int64)  # first parent most significant, the child last
        for k, x in enumerate(fam[1:]):
            idx *= int(pa_card[pa_ptr[j] + k + 1]) if k + 1 < len(fam) - 1 else int(rcard[j])
            idx += C[x]
        dense.append(np.bincount(idx, minlength=int(cell_off[j + 1] - cell_off[j])))
    parts = _levels(dense, rcard, pa_ptr, pa_card)
    sizes = [a.shape[0] for a in parts]
    head = np.cumsum([PACKED + 1, *sizes], dtype=np.int64)
    return np.concatenate([head, *parts]).astype(np.int64, copy=False)


def _levels(dense: list[np.ndarray], rcard: np.ndarray, pa_ptr: np.ndarray, pa_card: np.ndarray
            ) -> list[np.ndarray]:
    """The ten arrays of :func:`~pybncsmooth.counting._plain_kernels.dense_levels`: per
    node and level ``i`` (its first ``i`` parents), a row for each observed prefix in
    lexicographic order (its parent row's place in the level above, its last parent's
    code, its total, its cells: all ``r`` above the leaves, those not zero at the leaves)."""
    blk_ptr, sizes, parent, value, row_r, total, counts, nz_x, nz_n = [0], [], [], [], [], [], [], [], []
    for j, cells in enumerate(dense):
        r = int(rcard[j])
        pc = [int(c) for c in pa_card[pa_ptr[j]:pa_ptr[j + 1]]]
        d = len(pc)
        blk_ptr.append(blk_ptr[-1] + d + 1)
        table = cells.reshape(-1, r)
        above = None
        for i in range(d + 1):
            level = table.reshape(math.prod(pc[:i]), -1, r).sum(axis=1) if i < d else table
            tot = level.sum(axis=1)
            seen = np.flatnonzero(tot)
            sizes.append(seen.shape[0])
            if i == 0:
                parent.append(np.full(seen.shape[0], -1, dtype=np.int64))
                value.append(np.full(seen.shape[0], -1, dtype=np.int64))
            else:
                parent.append(np.searchsorted(above, seen // pc[i - 1]).astype(np.int64))
                value.append(seen % pc[i - 1])
            row_r.append(np.full(seen.shape[0], r, dtype=np.int64))
            total.append(tot[seen])
            rows = level[seen]
            if i < d:
                counts.append(np.full(seen.shape[0], r, dtype=np.int64))
                nz_x.append(np.tile(np.arange(r, dtype=np.int64), seen.shape[0]))
                nz_n.append(rows.reshape(-1))
            else:
                keep = rows != 0
                counts.append(keep.sum(axis=1))
                nz_x.append(np.nonzero(keep)[1].astype(np.int64))
                nz_n.append(rows[keep])
            above = seen
    i64 = np.int64
    sizes_a = np.array(sizes, dtype=i64)
    row_ptr = np.concatenate([[0], np.cumsum(sizes_a)]).astype(i64)
    count_a = np.concatenate(counts).astype(i64)
    nz_ptr = np.concatenate([[0], np.cumsum(count_a)]).astype(i64)
    return [np.array(blk_ptr, dtype=i64), row_ptr, np.concatenate(parent).astype(i64),
            np.concatenate(value).astype(i64), sizes_a, np.concatenate(row_r).astype(i64),
            np.concatenate(total).astype(i64), nz_ptr, np.concatenate(nz_x).astype(i64),
            np.concatenate(nz_n).astype(i64)]
