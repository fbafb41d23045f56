r"""Tempering of an ESKDB ensemble: its members' posteriors raised to one exponent,
chosen by the ensemble's leave-one-out log loss.

A member of ESKDB multiplies the evidence of every attribute it keeps; attributes that
carry the same information (breast cancer's cell size and cell shape, ionosphere's
neighbouring pulses) are counted several times over, and the member's posterior is
sharper than its ranking warrants.  The mean of members with the same blind spot keeps
it: ten members rank as well as a random forest or better, but give the true class of
a few rows a probability near zero, which log loss punishes and RMSE hardly sees.

The ensemble's class probabilities are therefore

.. math::

    \hat p(c \mid x) = \frac1M \sum_{i=1}^M
        \frac{p_i(c \mid x)^\beta}{\sum_{c'} p_i(c' \mid x)^\beta},

one exponent :math:`\beta \in \{0.05, 0.10, \dots, 1\}` for all members, the one
whose ensemble has the lowest leave-one-out log loss on the training rows (ties: the
largest).  A member's leave-one-out posterior is the one its selection scored (the
selected sub-model's m-estimates with the row's own counts taken out, Petitjean et al.
2018, Sec. 6.1), computed in one more pass over the data, chunk by chunk (the sums of
the losses at every :math:`\beta` of the grid: bounded memory, and the same exponent
however the data are cut).  :math:`\beta = 1` is the plain mean of Zhang (2020),
Algorithm 15; the grid stops there, as the leave-one-out losses of a sub-model its
selection chose are optimistic: sharpening by them did not carry over to held-out rows
(``docs/guide/classifiers.md``).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.mapreduce import reduce_chunks
from ..options import NAPolicy
from ..validation import parallel_map
from ._loo import (loo_level_posterior, loo_level_posterior_by_class, loo_level_posterior_by_key,
                   tempered_log_losses)
from .skdb import (_BY_CLASS_MIN_CLASSES, _by_class_table_size, _loo_prior, _memo_tables, encoded_chunk, loo_summed_out,
                   missing_cells, sums_out_missing)

__all__ = ["EXPONENTS", "tempered", "loo_posteriors", "ensemble_losses", "best_exponent", "tempering_exponent"]

#: the exponents tried, 0.05 to 1 by 0.05
EXPONENTS = np.round(np.arange(1, 21) * 0.05, 2)
#: the step of EXPONENTS (the g-th is g steps: :func:`~._loo.tempered_log_losses`)
_STEP = 0.05
#: the floor of a leave-one-out probability before its logarithm (as the selection's log loss)
_FLOOR = 1e-300


def tempered(proba: np.ndarray, exponent: float) -> np.ndarray:
    r"""Rows of ``proba`` raised to ``exponent`` and renormalised, in log space:
    :math:`p_c^\beta / \sum_{c'} p_{c'}^\beta` (a zero stays zero; ``exponent = 1``
    returns ``proba`` itself)."""
    if exponent == 1.0:
        return proba
    with np.errstate(divide="ignore"):
        lp = exponent * np.log(proba)
    lp -= lp.max(axis=1, keepdims=True)
    q = np.exp(lp)
    return q / q.sum(axis=1, keepdims=True)


def loo_posteriors(codes: Any, y: np.ndarray, target: str, dag: Any, info: Any, m: float, d: np.ndarray,
                   tables: dict | None = None, missing: np.ndarray | None = None) -> np.ndarray:
    """Each row's leave-one-out class posterior under a member's selected sub-model
    (rows: those of ``codes``; ``d`` what each row takes out of the counts): the
    posterior the selection scored at the member's ``k*`` and attribute prefix, read
    from the full kDB's trees down to ``k*`` parents (the selected trees are their first
    levels).  ``tables``: a memo of the trees' flat tables shared by members
    (:func:`~pybncsmooth.classifiers.skdb._memo_tables`).  ``missing`` (rows x the
    attributes of the selection's order): the missing cells of a row that has some
    are summed out of its posterior, as the selection scored it
    (:func:`~pybncsmooth.classifiers.skdb.loo_summed_out`)."""
    sel = info.extra["selection"]
    trees, full = info.extra["trees"], info.extra["full_kdb"]
    ny = trees[target].levels[0].counts[0].astype(np.float64)
    K = len(ny)
    nc = len(y)
    post = _loo_prior(ny, y, d, float(info.extra["n_rows"]), m)
    by_key = nc > 0 and bool((d == d[0]).all())  # every row takes out the same: loo_level_posterior_by_key
    for f in sel.order[: sel.n_attributes]:
        pa = dag.parents(f)
        P = np.zeros((nc, len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
        # the selection's step at k* alone, renormalised after every attribute as the selection did
        tab = _memo_tables(tables, (f, tuple(full.parents(f))), trees[f], m)
        x = np.asarray(codes[f], dtype=np.int64)
        kernel = loo_level_posterior
        if nc and x.min() >= 0:  # a value's code indexes the kernels' tables
            last = sel.k + 1  # the deepest tree level the sub-model reads
            if by_key and _level_keys(tab, K, sel.k) <= nc // 2:
                kernel = loo_level_posterior_by_key
            elif K >= _BY_CLASS_MIN_CLASSES and 0 < _by_class_table_size(tab, K, last) <= nc * K * last // 2:
                kernel = loo_level_posterior_by_class
        kernel(x, P, y, K, *tab, float(m), d, sel.k, post)
    if missing is not None:
        prior = _loo_prior(ny, y, d, float(info.extra["n_rows"]), m)
        rows = np.flatnonzero(missing[:, : sel.n_attributes].any(axis=1))
        summed, ok = loo_summed_out(codes, rows, y, d, prior, sel.order, sel.n_attributes, full, trees, [sel.k], m,
                                    missing, tables)
        post[rows[ok]] = summed[ok, 0, -1]  # else the missing level, as the selection read the row
    return post


def _level_keys(tables: tuple, K: int, level: int) -> int:
    """The keys of :func:`~pybncsmooth.classifiers._loo.loo_level_posterior_by_key` at
    ``level`` extra parents on a tree's flat tables: ``K r S``, ``S`` the product of
    the cardinalities of the non-class parents the level reads."""
    r, cards = tables[0], tables[1]
    return int(K) * int(r) * int(np.prod(cards[1 : min(len(cards), level + 1)], dtype=np.float64))


def ensemble_losses(posts: Sequence[np.ndarray], y: np.ndarray, w: np.ndarray) -> np.ndarray:
    r"""The ensemble's summed log loss at every exponent of :data:`EXPONENTS`:
    :math:`\sum_i w_i \, (-\log \frac1M \sum_m \mathrm{tempered}(p_{m,i}, \beta)_{y_i})`."""
    out = np.zeros(len(EXPONENTS))
    if len(y) == 0:
        return out
    logs = np.log(np.maximum(np.stack(posts), _FLOOR))  # members x rows x classes
    tempered_log_losses(logs, np.asarray(y, dtype=np.int64), np.asarray(w, dtype=np.float64), _STEP, _FLOOR, out)
    return out


def best_exponent(losses: np.ndarray) -> float:
    """The exponent of lowest loss; ties (within ``1e-12`` relative): the largest."""
    best = float(np.min(losses))
    tol = 1e-12 * max(1.0, abs(best))
    return float(EXPONENTS[np.flatnonzero(losses <= best + tol)[-1]])


def _chunk_losses(selected: list, target: str, variables: list, schema: Any, policy: NAPolicy, m: float,
                  weights: str | None, n_jobs: int | None, memo: dict | None, df: pd.DataFrame,
                  sum_out: bool = False) -> np.ndarray:
    if len(df) == 0:
        return np.zeros(len(EXPONENTS))
    enc, y, w = encoded_chunk(memo, df, schema, variables, policy, target, weights)
    wt = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    d = np.minimum(wt, 1.0)
    tables: dict = {} if memo is None else memo  # a tree two members share, flattened once
    holes = missing_cells(df, variables[1:]) if sum_out else None
    col = {v: j for j, v in enumerate(variables[1:])}

    def member(s: tuple) -> np.ndarray:
        miss = None if holes is None else holes[:, [col[f] for f in s[1].extra["selection"].order]]
        return loo_posteriors(enc, y, target, s[0], s[1], m, d, tables, miss)

    posts = parallel_map(member, selected, n_jobs)
    return ensemble_losses(posts, y, wt)


def tempering_exponent(source: Any, target: str, features: list[str], selected: list, options: Any,
                       tables: dict | None = None) -> float:
    """The ensemble's exponent from one pass over ``source``: the members ``selected``
    (each ``(dag, info)`` of :func:`~pybncsmooth.classifiers.skdb.learn_skdb_members`,
    all on the codes of ``features``), their leave-one-out posteriors with the
    selection's ``skdb_m``, summed chunk by chunk; rows and weights as the selection
    counted them, a row's missing cells summed out as the selection did
    (:func:`~pybncsmooth.classifiers.skdb.sums_out_missing`).  ``tables``: the selection's
    memo of the trees' flat tables (with the same ``skdb_m``), read and filled (``None``:
    one memo per chunk)."""
    schema = selected[0][1].extra["schema"]
    variables = [target, *features]
    sums = reduce_chunks(
        source,
        functools.partial(_chunk_losses, list(selected), target, variables, schema, options.missing,
                          float(options.skdb_m), options.weights, options.n_jobs, tables,
                          sum_out=sums_out_missing(options)),
        np.add,
        progress=options.progress,
        desc="tempering",
    )
    return 1.0 if sums is None else best_exponent(sums)
