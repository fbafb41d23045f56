"""The data a structure search scores, and its cache of family scores.

:class:`FamilyScorer` holds the rows once, as the compiled counting's code matrix, and
the score with its hyperparameters; :meth:`FamilyScorer.family` counts a family with
:func:`~pybncsmooth.counting.family.family_counts` and scores its table.  A family's
score depends only on the child and the *set* of its parents (every score here is
invariant to the parents' order), so the cache key is ``(child, sorted parents)``; the
rows, the score and its hyperparameters are fixed for the scorer's life, so the key
holds everything the value depends on.

A scorer with ``twins`` set counts and scores with the NumPy twins of the kernels
(:mod:`._twins`), which give the same tables and terms (the same doubles):
:func:`use_twins` sets it for small work in a process that has not loaded a compiled
kernel yet, which would otherwise pay numba's start.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .._jit import numba_loaded
from ..counting.family import family_counts, family_matrix
from ..data.encode import encode
from ..errors import DataError, HyperparameterError, MissingColumnError
from ..validation import check_number
from . import _kernels as K
from ._twins import family_counts_numpy, int64_columns, table_score_numpy

__all__ = ["FamilyScorer", "SCORES", "score_hyperparameters", "use_twins"]

#: the most work (rows x families a first step scores) the NumPy twins take on, in a
#: process without numba loaded: hc with BDeu on alarm's 10,000 rows (37 nodes, 1.3e7)
#: runs on them in half the time of numba's start and the compiled search together; on
#: hailfinder's (56 nodes, 3.1e7) the two are even, and the compiled kernels serve the
#: calls after it better
TWIN_WORK = 2e7
#: the most work (rows x families scored) the twins do in a process: past it a search
#: loads the compiled kernels, faster from then on.  The twins' extra time over the
#: compiled kernels' on this much work is about numba's start (two hc runs on alarm's
#: 10,000 rows): the rent-or-buy rule, so a process never pays
#: much more than twice the better of the two choices
TWIN_BUDGET = 5e7
#: the work the twins did in this process
_TWIN_DONE = [0.0]

#: score name -> kernel code (``bhd`` is scored by :mod:`pybncsmooth.learning.bhd`)
SCORES = {"loglik": K.LOGLIK, "aic": K.AIC, "bic": K.BIC, "bde": K.BDE, "bds": K.BDS, "k2": K.K2, "bhd": -1}
#: the hyperparameters each score takes
_HYPER = {"loglik": (), "aic": ("k",), "bic": ("k",), "bde": ("iss",), "bds": ("iss",), "k2": (),
          "bhd": ("domain", "s", "alpha0")}


def score_hyperparameters(type: str, hyper: dict[str, Any], n_rows: int) -> float:
    """The one number a classical score takes (AIC/BIC's penalty coefficient ``k``,
    BDe/BDs's imaginary sample size ``iss``), checked; an unknown score or a
    hyperparameter the score does not take raises :class:`HyperparameterError`."""
    if type not in SCORES:
        raise HyperparameterError(f"type must be one of {tuple(SCORES)}, not {type!r}")
    extra = sorted(set(hyper) - set(_HYPER[type]))
    if extra:
        takes = ", ".join(_HYPER[type]) or "no hyperparameter"
        raise HyperparameterError(f"the {type} score does not take {extra[0]!r} (it takes {takes})")
    if type in ("aic", "bic"):
        default = 1.0 if type == "aic" else math.log(n_rows) / 2 if n_rows > 0 else 0.0
        k = hyper.get("k")
        return default if k is None else float(check_number("k", k, strict=False))
    if type in ("bde", "bds"):
        return float(check_number("iss", hyper.get("iss", 1.0)))
    return 0.0


def encode_nodes(data: Any, nodes: Sequence[str], what: str = "node") -> tuple[np.ndarray, np.ndarray, list]:
    """``(code matrix, cardinalities, levels)`` of the columns ``nodes`` of a data frame
    of categorical columns (a Categorical keeps its categories, every one a level;
    other columns their sorted values); a missing value raises, naming the column."""
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"structure learning takes a pandas DataFrame, not a {type(data).__name__}")
    cols = [str(c) for c in data.columns]
    for v in nodes:
        if v not in cols:
            raise MissingColumnError(v, what, cols)
    if len(data) == 0:
        raise DataError("the data has no row")
    enc = encode(data, variables=list(nodes), na="error")
    levels = [enc.schema.levels[v] for v in nodes]
    cards = np.array([len(lv) for lv in levels], dtype=np.int64)
    return family_matrix([enc[v] for v in nodes]), cards, levels


class FamilyScorer:
    """Scores of families of the columns of one code matrix, cached per family.

    ``table``: an optional scorer of a family's counts (BHD) replacing the classical
    scores' kernel; it receives ``(child, parent columns)`` and returns the score."""

    def __init__(self, M: np.ndarray, cards: np.ndarray, type: str, a: float,
                 table: Callable[[int, tuple[int, ...]], float] | None = None) -> None:
        self.M = M
        self.cards = cards
        self._cards = [int(c) for c in cards]
        self.n_rows = M.shape[0]
        self.type = type
        self.kind = SCORES[type]
        self.a = float(a)
        self._table = table
        self.cache: dict[tuple[int, tuple[int, ...]], float] = {}
        self.n_scored = 0
        self.twins = False
        self._cols: list[np.ndarray] | None = None

    def counts(self, child: int, parents: Sequence[int]) -> np.ndarray:
        """The ``(q, r)`` counts of ``child | parents``."""
        if self.twins:
            if self._cols is None:
                self._cols = int64_columns(self.M)
            return family_counts_numpy(self._cols, child, list(parents), self._cards)
        return family_counts(self.M, child, parents, self._cards)

    def family(self, child: int, parents: Sequence[int]) -> float:
        """The score of ``child | parents`` (parents as column indices, any order)."""
        key = (child, tuple(sorted(parents)))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if self._table is not None:
            value = float(self._table(child, key[1]))
        elif self.twins:
            value = table_score_numpy(self.counts(child, key[1]), self.kind, self.a, self.n_rows)
            _TWIN_DONE[0] += self.n_rows
        else:
            value = float(K.table_score(self.counts(child, key[1]), self.kind, self.a, self.n_rows))
        self.cache[key] = value
        self.n_scored += 1
        return value


def use_twins(scorer: FamilyScorer, families: float) -> bool:
    """Set (and return) whether ``scorer`` uses the NumPy twins of the kernels: a
    classical score (BHD's solver is compiled anyway), no compiled kernel called in this
    process yet, the work (rows x ``families``) at most :data:`TWIN_WORK` and the
    twins' work in this process so far at most :data:`TWIN_BUDGET`.  Either way the
    family terms are the same doubles and a search takes the same steps."""
    scorer.twins = (scorer._table is None and not numba_loaded()
                    and scorer.n_rows * families <= TWIN_WORK and _TWIN_DONE[0] <= TWIN_BUDGET)
    return scorer.twins
