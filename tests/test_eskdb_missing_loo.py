"""ESKDB's leave-one-out passes under na="level" with sum_out_missing: a row's missing
cells summed out of its leave-one-out posterior, as the members answer a query, checked
against brute-force enumeration over the completions on data minus the row."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from pybncsmooth.classifiers._tempering import loo_posteriors
from pybncsmooth.classifiers.skdb import _loo_prior, learn_skdb_members, loo_summed_out_row
from pybncsmooth.data.encode import encode
from pybncsmooth.options import Options

M = 1.0


def _data(seed: int = 4, n: int = 40) -> pd.DataFrame:
    """Three classes; C -> A -> B -> D, C -> E; A, B, D missing at random (about 30%
    each), some rows with two or three holes."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, n)
    a = np.where(rng.random(n) < 0.7, c, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.7, a % 2, 1 - a % 2)
    d = np.where(rng.random(n) < 0.6, b, 1 - b)
    e = np.where(rng.random(n) < 0.7, c % 2, 1 - c % 2)
    df = pd.DataFrame({"C": c, "A": a, "B": b, "D": d, "E": e}).astype(str).astype(object)
    for col in ("A", "B", "D"):
        df.loc[rng.random(n) < 0.3, col] = np.nan
    return df


def _selection(df: pd.DataFrame, loss: str = "rmse", k: int = 2):
    options = Options.build("classifier", structure="eskdb", na="level")
    feats = ["A", "B", "D", "E"]
    (dag, info), = learn_skdb_members(df, "C", k, [(None, None)], options, features=feats, m=M, loss=loss,
                                      return_info=True)
    codes = encode(df, info.extra["schema"], variables=["C", *feats], **options.missing.encode_args())
    return dag, info, codes


def _reference(codes, info, i: int, kk: int, n_attr: int) -> np.ndarray:
    """Row ``i``'s class posterior under the sub-model (``kk`` parents, the first
    ``n_attr`` attributes) by enumeration: m-estimates from the other rows' counts (each
    at its deepest context, class then parents, that those rows reach; none: the
    attribute's marginal), summed over every completion of the row's missing cells in
    the prefix, the missing level included."""
    schema, full = info.extra["schema"], info.extra["full_kdb"]
    order = info.extra["selection"].order[:n_attr]
    Z = {v: np.asarray(codes[v]) for v in ["C", *order]}
    rest = np.arange(len(Z["C"])) != i
    K = len(schema.levels["C"])
    r = {f: len(schema.levels[f]) for f in order}
    N = rest.sum()
    prior = np.array([((Z["C"][rest] == c).sum() + M / K) / (N + M) for c in range(K)])
    nas = {f for f in order if schema.levels[f][Z[f][i]] == "<NA>"}
    holes = sorted(nas)

    def est(f: str, v: int, ctx: list) -> float:
        keep = rest.copy()
        best = ((Z[f][rest] == v).sum() + M / r[f]) / (N + M)
        for var, val in ctx:
            keep &= Z[var] == val
            if keep.sum() == 0:
                break
            best = ((Z[f][keep] == v).sum() + M / r[f]) / (keep.sum() + M)
        return best

    out = np.zeros(K)
    for c in range(K):
        for fill in itertools.product(*[range(r[f]) for f in holes]):
            x = {f: Z[f][i] for f in order}
            x.update(dict(zip(holes, fill)))
            p = prior[c]
            for f in order:
                pa = full.parents(f)[1:1 + kk]
                p *= est(f, x[f], [("C", c), *[(q, x[q]) for q in pa]])
            out[c] += p
    return out / out.sum()


def test_summed_out_loo_posteriors_equal_enumeration_over_completions():
    df = _data()
    _, info, codes = _selection(df)
    sel = info.extra["selection"]
    order = sel.order
    y = np.asarray(codes["C"], dtype=np.int64)
    missing = df[order].isna().to_numpy()
    assert (missing.sum(axis=1) >= 2).sum() >= 3  # rows with two holes or more: a table over several cells
    ny = np.bincount(y, minlength=3).astype(float)
    d = np.ones(len(y))
    prior = _loo_prior(ny, y, d, float(len(y)), M)
    for i in np.flatnonzero(missing.any(axis=1)):
        got = loo_summed_out_row(codes, i, int(y[i]), 1.0, prior[i], order, len(order), info.extra["full_kdb"],
                                 info.extra["trees"], [0, 1, 2], M, missing[i])
        for kk in range(3):
            for n_attr in range(1, len(order) + 1):
                np.testing.assert_allclose(got[kk, n_attr - 1], _reference(codes, info, i, kk, n_attr), rtol=1e-12)


@pytest.mark.parametrize("loss", ["rmse", "log_loss", "zero_one"])
def test_selection_scores_every_row_as_the_members_answer_it(loss):
    # the selection's table of leave-one-out losses, every sub-model, every row: complete
    # rows as before, incomplete rows with their missing cells summed out
    df = _data()
    _, info, codes = _selection(df, loss)
    sel = info.extra["selection"]
    y = np.asarray(codes["C"], dtype=np.int64)
    n = len(y)
    want = np.zeros((3, len(sel.order)))
    for kk in range(3):
        for n_attr in range(1, len(sel.order) + 1):
            post = np.array([_reference(codes, info, i, kk, n_attr) for i in range(n)])
            if loss == "rmse":
                want[kk, n_attr - 1] = np.sqrt(((post - np.eye(3)[y]) ** 2).sum() / n)
            elif loss == "log_loss":
                want[kk, n_attr - 1] = -np.log(post[np.arange(n), y]).mean()
            else:
                want[kk, n_attr - 1] = (post.argmax(axis=1) != y).mean()
    np.testing.assert_allclose(sel.loss, want, rtol=1e-10, atol=1e-14)


def test_tempering_posteriors_sum_the_missing_cells_out_at_the_selected_sub_model():
    df = _data()
    dag, info, codes = _selection(df)
    sel = info.extra["selection"]
    y = np.asarray(codes["C"], dtype=np.int64)
    missing = df[sel.order].isna().to_numpy()
    got = loo_posteriors(codes, y, "C", dag, info, M, np.ones(len(y)), missing=missing)
    want = np.array([_reference(codes, info, i, sel.k, sel.n_attributes) for i in range(len(y))])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    level = loo_posteriors(codes, y, "C", dag, info, M, np.ones(len(y)))  # the missing level read as evidence
    holes = missing[:, : sel.n_attributes].any(axis=1)
    np.testing.assert_allclose(level[~holes], want[~holes], rtol=1e-10)
    assert np.abs(level[holes] - want[holes]).max() > 1e-2


def test_a_row_whose_table_passes_the_limit_is_left_to_the_missing_level(monkeypatch):
    from pybncsmooth.classifiers import skdb

    df = _data()
    _, info, codes = _selection(df)
    order = info.extra["selection"].order
    y = np.asarray(codes["C"], dtype=np.int64)
    missing = df[order].isna().to_numpy()
    prior = _loo_prior(np.bincount(y, minlength=3).astype(float), y, np.ones(len(y)), float(len(y)), M)
    rows = np.flatnonzero(missing.any(axis=1))
    args = (codes, rows, y, np.ones(len(y)), prior, order, len(order), info.extra["full_kdb"], info.extra["trees"],
            [0, 1, 2], M, missing)
    full, ok = skdb.loo_summed_out(*args)
    assert ok.all()
    # three classes times a missing attribute's three or four levels pass 8 entries
    monkeypatch.setattr(skdb, "SUM_OUT_LIMIT", 8)
    small, ok8 = skdb.loo_summed_out(*args)
    assert ok8.any() and not ok8.all()
    np.testing.assert_array_equal(small[ok8], full[ok8])  # the rows within it: the same numbers
