"""Plug-in mutual information and conditional mutual information from codes.

All quantities are in nats and computed from counts:

.. math::
    I(X; Y) = \\sum_{x,y} \\frac{n_{xy}}{m} \\log \\frac{n_{xy}\\, m}{n_x n_y},\\qquad
    I(X_i; X_j \\mid C) = \\sum_{x_i,x_j,c} \\frac{n_{x_i x_j c}}{m}
        \\log \\frac{n_{x_i x_j c}\\, n_c}{n_{x_i c}\\, n_{x_j c}},

where ``m`` is the number of rows on which all the variables involved are
observed (pairwise deletion: bnlearn's ``tree.bayes`` weighs each feature pair on
the rows where both features and the class are observed).  Codes ``< 0`` mean
not observed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._kernels import cmi_from_pair_counts, pair_counts_kernel

__all__ = [
    "mutual_information",
    "conditional_mutual_information",
    "pair_counts",
    "pair_offsets",
    "cmi_from_counts",
    "mi_from_counts",
]


def _xlogx_ratio(joint: np.ndarray, expected_num: np.ndarray, expected_den: np.ndarray, m: float) -> float:
    nz = joint > 0
    if m <= 0:
        return 0.0
    j = joint[nz].astype(np.float64)
    return float(np.sum(j / m * np.log(j * expected_num[nz] / expected_den[nz])))


def mutual_information(x: np.ndarray, y: np.ndarray, rx: int, ry: int) -> float:
    """Plug-in :math:`I(X; Y)` on the rows where both are observed."""
    ok = (x >= 0) & (y >= 0)
    if not ok.all():
        x, y = x[ok], y[ok]
    m = x.shape[0]
    if m == 0:
        return 0.0
    return mi_from_counts(np.bincount(x.astype(np.int64) * ry + y, minlength=rx * ry).reshape(rx, ry))


def conditional_mutual_information(xi: np.ndarray, xj: np.ndarray, c: np.ndarray, ri: int, rj: int, rc: int) -> float:
    """Plug-in :math:`I(X_i; X_j \\mid C)` on the rows where all three are observed."""
    ok = (xi >= 0) & (xj >= 0) & (c >= 0)
    if not ok.all():
        xi, xj, c = xi[ok], xj[ok], c[ok]
    m = xi.shape[0]
    if m == 0:
        return 0.0
    code = (c.astype(np.int64) * ri + xi) * rj + xj
    n = np.bincount(code, minlength=rc * ri * rj).reshape(rc, ri, rj)
    nc = n.sum(axis=(1, 2), keepdims=True)
    nic = n.sum(axis=2, keepdims=True)
    njc = n.sum(axis=1, keepdims=True)
    num = np.broadcast_to(nc, n.shape).astype(np.float64)
    den = (nic * njc).astype(np.float64)
    return _xlogx_ratio(n, num, den, m)


def pair_offsets(cards: Sequence[int], rc: int) -> tuple[np.ndarray, int]:
    """Start of pair ``(a, b)``'s ``rc x r_a x r_b`` block (at ``a * p + b``, ``a < b``) in
    the flat array of pair counts, and the array's length."""
    p = len(cards)
    off = np.zeros(p * p, dtype=np.int64)
    total = 0
    for a in range(p):
        for b in range(a + 1, p):
            off[a * p + b] = total
            total += rc * int(cards[a]) * int(cards[b])
    return off, total


def pair_counts(
    columns: Sequence[np.ndarray], cards: Sequence[int], c: np.ndarray, rc: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """Flat counts :math:`n_{c x_a x_b}` of every feature pair (layout of :func:`pair_offsets`);
    with ``weights`` (one per row) sums of weights (float64)."""
    p = len(columns)
    off, total = pair_offsets(cards, rc)
    out = np.zeros(total, dtype=np.int64 if weights is None else np.float64)
    if p < 2:
        return out
    M = np.empty((len(c), p), dtype=np.int64)
    for j, col in enumerate(columns):
        M[:, j] = col
    cards_a, c_a = np.asarray(cards, dtype=np.int64), np.asarray(c, dtype=np.int64)
    w = np.ones(len(c), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.float64)
    pair_counts_kernel(M, cards_a, c_a, int(rc), off, w, out)
    return out


def cmi_from_counts(counts: np.ndarray, cards: Sequence[int], rc: int) -> np.ndarray:
    """Symmetric matrix of :math:`I(X_i; X_j \\mid C)` from :func:`pair_counts`."""
    off, _ = pair_offsets(cards, rc)
    dt = np.float64 if np.asarray(counts).dtype.kind == "f" else np.int64
    return cmi_from_pair_counts(np.ascontiguousarray(counts, dtype=dt), np.asarray(cards, dtype=np.int64), int(rc), off)


def mi_from_counts(n: np.ndarray) -> float:
    """Plug-in :math:`I(X; Y)` from the ``(r_x, r_y)`` table of joint counts."""
    m = int(n.sum())
    if m == 0:
        return 0.0
    nx = n.sum(axis=1, keepdims=True)
    ny = n.sum(axis=0, keepdims=True)
    return _xlogx_ratio(n, np.full(n.shape, float(m)), (nx * ny).astype(np.float64), m)
