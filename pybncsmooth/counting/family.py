"""One family's table of counts, for structure searches that count many candidate
families of the same rows.

:func:`family_counts` counts ``(parent configuration, child level)`` cells of a code
matrix with the compiled dense counting (:func:`~pybncsmooth.counting._kernels.dense_counts`)
that the context trees use: a search builds the matrix once (:func:`family_matrix`)
and counts each candidate family from it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._kernels import dense_counts
from .context_tree import code_matrix

__all__ = ["family_matrix", "family_counts"]


def family_matrix(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The code columns (every code ``>= 0`` below its variable's cardinality) as one
    Fortran-ordered ``(n_rows, n_variables)`` matrix, the layout
    :func:`family_counts` reads fastest."""
    return code_matrix(list(columns))


def family_counts(M: np.ndarray, child: int, parents: Sequence[int], cards: Sequence[int]) -> np.ndarray:
    """The ``(q, r)`` int64 table of the family ``child | parents`` (columns of ``M``):
    row ``j`` the parent configuration in mixed radix (the first parent most
    significant), column ``k`` the child's level; ``cards`` the cardinality of every
    column of ``M`` (a list of ints is read fastest)."""
    pcards = [int(cards[x]) for x in parents]
    q = 1
    for c in pcards:
        q *= c
    r = int(cards[child])
    return dense_counts(M, int(child), np.array(parents, dtype=np.int64), np.array(pcards, dtype=np.int64), r,
                        q * r).reshape(q, r)
