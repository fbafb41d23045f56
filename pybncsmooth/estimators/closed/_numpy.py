""":func:`~pybncsmooth.estimators.closed._kernels.bayes_cells` in NumPy, for a process
that has not loaded the compiled kernel yet (its first load costs numba's start, a
second or more, where a small network's posterior means cost NumPy a millisecond).
Each value is the same IEEE operation on the same operands as the kernel's (an
integer converted to a double first), so the arrays are equal bit for bit."""

from __future__ import annotations

import numpy as np

__all__ = ["bayes_cells_numpy"]


def bayes_cells_numpy(iss: float, rcard: np.ndarray, pa_ptr: np.ndarray, pa_card: np.ndarray, blk_ptr: np.ndarray,
                      row_ptr: np.ndarray, nz_ptr: np.ndarray, nz_n: np.ndarray, row_total: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(alpha_blk, tot, base, stored)`` as the kernel gives them: per block (level
    ``i`` of node ``j``) :math:`\\alpha = iss / (r q_i)`, per row :math:`n(\\pi) + r\\alpha`
    and :math:`(0 + \\alpha) / (n(\\pi) + r\\alpha)`, per stored cell
    :math:`(n(x, \\pi) + \\alpha) / (n(\\pi) + r\\alpha)`."""
    alpha, r_alpha = [], []
    for j in range(rcard.shape[0]):
        r = int(rcard[j])
        q = 1
        for b in range(int(blk_ptr[j]), int(blk_ptr[j + 1])):
            if b > blk_ptr[j]:  # the configurations of the parents above this level
                q *= int(pa_card[pa_ptr[j] + b - blk_ptr[j] - 1])
            a = iss / (r * q)
            alpha.append(a)
            r_alpha.append(r * a)
    alpha_blk = np.array(alpha, dtype=np.float64)
    per_block = np.diff(row_ptr)
    a_row = np.repeat(alpha_blk, per_block)
    tot = row_total.astype(np.float64) + np.repeat(np.array(r_alpha, dtype=np.float64), per_block)
    base = (np.float64(0) + a_row) / tot
    row_of = np.repeat(np.arange(tot.shape[0]), np.diff(nz_ptr))
    stored = (nz_n.astype(np.float64) + a_row[row_of]) / tot[row_of]
    return alpha_blk, tot, base, stored
