"""The leave-one-out kernels that read a row's other classes as one vector
(``loo_attribute_losses_by_class``, taken with many classes) and that make each
distinct path's estimates once (``loo_attribute_losses_by_key``, taken when the rows
fall on few paths) give the numbers of the node-by-node kernel
(``loo_attribute_losses``) exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.classifiers import skdb as skdb_mod
from pybncsmooth.classifiers._loo import (loo_attribute_losses, loo_attribute_losses_by_class,
                                          loo_attribute_losses_by_key)


def _fixture(n: int = 400, unused_class: bool = True) -> pd.DataFrame:
    """Six classes (a seventh level without rows), five features of 2-4 levels, each
    following the class and the feature before it (the kDB trees have inner levels,
    some configurations absent)."""
    rng = np.random.default_rng(61)
    y = rng.integers(0, 6, n)
    cols = {}
    prev = y
    for i, card in enumerate([3, 4, 2, 3, 4]):
        v = np.where(rng.random(n) < 0.6, (prev + y) % card, rng.integers(0, card, n))
        cols[f"x{i}"] = pd.Categorical.from_codes(v, categories=[f"v{j}" for j in range(card)])
        prev = v
    levels = [f"c{j}" for j in range(7 if unused_class else 6)]
    cols["cls"] = pd.Categorical.from_codes(y, categories=levels)
    return pd.DataFrame(cols)


def _steps(df: pd.DataFrame, k: int, kind: int, weighted: bool | str, missing_parents: bool, m: float = 1.0,
           kernel=loo_attribute_losses_by_class):
    """Both kernels over the attributes of a learned selective kDB in its order: the
    posteriors and loss columns of each."""
    dag, info = bs.learn_skdb(df, "cls", k, return_info=True)
    full, trees = info.extra["full_kdb"], info.extra["trees"]
    codes = {c: df[c].cat.codes.to_numpy().astype(np.int64) for c in df.columns}
    yy = codes["cls"]
    K = len(df["cls"].cat.categories)
    rng = np.random.default_rng(3)
    if weighted == "integer":  # every row takes out 1 (the by-key kernel's case)
        wt = rng.integers(1, 4, len(df)).astype(np.float64)
    elif weighted == "half":  # every row takes out 0.5
        wt = np.full(len(df), 0.5)
    elif weighted:  # fractional weights: 0.5, 1 and 1.5
        wt = rng.integers(1, 4, len(df)).astype(np.float64) * 0.5
    else:
        wt = np.ones(len(df))
    d = np.minimum(wt, 1.0)
    ny = np.bincount(yy, weights=wt, minlength=K)
    prior = skdb_mod._loo_prior(ny, yy, d, float(ny.sum()), m)
    post_a = np.repeat(prior[None], k + 1, axis=0)
    post_b = post_a.copy()
    la, lb = np.zeros((k + 1, len(info.order))), np.zeros((k + 1, len(info.order)))
    used = 0
    for li, f in enumerate(info.order):
        pa = full.parents(f)
        P = np.zeros((len(df), len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
            if missing_parents:  # a parent missing ends the row's path there (the kernels' v < 0)
                P[rng.random(len(df)) < 0.15, j] = -1
        tab = skdb_mod._attribute_tables(trees[f], m)
        used += skdb_mod._by_class_table_size(tab, K) > 0
        loo_attribute_losses(codes[f], P, yy, K, *tab, m, d, post_a, kind, wt, la[:, li])
        kernel(codes[f], P, yy, K, *tab, m, d, post_b, kind, wt, lb[:, li])
    return post_a, post_b, la, lb, used, trees


@pytest.mark.parametrize("kind", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("missing_parents", [False, True])
def test_by_class_kernel_is_the_node_by_node_kernel(kind, weighted, missing_parents):
    df = _fixture()
    post_a, post_b, la, lb, used, trees = _steps(df, 3, kind, weighted, missing_parents)
    assert used == 5  # every tree has dense maps on every level
    # the seventh class has no row: its node is absent (read at the root as the other kernel)
    tab = skdb_mod._attribute_tables(trees["x0"], 1.0)
    dense, dense_offsets = tab[4], tab[5]
    assert dense[dense_offsets[1] + 6] == -1 and dense[dense_offsets[1] + 5] >= 0
    np.testing.assert_array_equal(post_b, post_a)
    np.testing.assert_array_equal(lb, la)
    assert np.isfinite(la).all() and la[:, -1].min() > 0


@pytest.mark.parametrize("m", [1.0, 0.25])
def test_by_class_kernel_every_class_present_and_k_zero(m):
    df = _fixture(unused_class=False)
    for k in (0, 4):
        post_a, post_b, la, lb, _, _ = _steps(df, k, 0, False, False, m=m)
        np.testing.assert_array_equal(post_b, post_a)
        np.testing.assert_array_equal(lb, la)


def test_table_size_and_which_kernel_the_selection_takes(monkeypatch):
    df = _fixture()
    dag, info = bs.learn_skdb(df, "cls", 2, return_info=True)
    tree = info.extra["trees"]["x2"]
    tab = skdb_mod._attribute_tables(tree, 1.0)
    # r = 2 values, K = 7 classes, levels: the class (1 configuration of parents), then
    # the two parents' cardinalities as the tree orders them
    c1 = int(tab[1][1])
    assert skdb_mod._by_class_table_size(tab, 7) == 2 * 7 * (1 + c1 + c1 * int(tab[1][2]))
    assert skdb_mod._by_class_table_size(tab, 6) == 0  # the first parent is not a 6-level class
    calls = []
    monkeypatch.setattr(skdb_mod, "loo_attribute_losses_by_class", lambda *a: calls.append("by_class"))
    monkeypatch.setattr(skdb_mod, "loo_attribute_losses", lambda *a: calls.append("nodes"))
    monkeypatch.setattr(skdb_mod, "_path_keys", lambda tables, K: 10**9)  # never by key here
    y = df["cls"].cat.codes.to_numpy().astype(np.int64)
    x = df["x2"].cat.codes.to_numpy().astype(np.int64)
    P = np.zeros((len(df), 3), dtype=np.int64)
    post = np.ones((3, len(df), 7))
    col = np.zeros(3)
    one = np.ones(len(df))
    skdb_mod._attribute_step_losses(tree, x, P, y, 7, 1.0, one, post, 0, one, col, tables=tab)
    skdb_mod._attribute_step_losses(tree, x[:5], P[:5], y[:5], 7, 1.0, one[:5], post[:, :5], 0, one[:5], col,
                                    tables=tab)  # 5 rows: the table costs more than it serves
    monkeypatch.setattr(skdb_mod, "_BY_CLASS_MIN_CLASSES", 8)
    skdb_mod._attribute_step_losses(tree, x, P, y, 7, 1.0, one, post, 0, one, col, tables=tab)
    assert calls == ["by_class", "nodes", "nodes"]


@pytest.mark.parametrize("kind", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, "integer", "half"])
@pytest.mark.parametrize("missing_parents", [False, True])
@pytest.mark.parametrize("k", [0, 2, 4])
def test_by_key_kernel_is_the_node_by_node_kernel(kind, weighted, missing_parents, k):
    df = _fixture(n=900)
    post_a, post_b, la, lb, _, trees = _steps(df, k, kind, weighted, missing_parents, kernel=loo_attribute_losses_by_key)
    np.testing.assert_array_equal(post_b, post_a)
    np.testing.assert_array_equal(lb, la)
    assert np.isfinite(la).all() and la[:, -1].min() > 0


def test_by_key_kernel_on_trees_searched_without_dense_maps(monkeypatch):
    """Levels past the dense maps' limit are searched (the keys): the same numbers."""
    monkeypatch.setattr(skdb_mod, "_DENSE_MAP_LIMIT", 7)
    df = _fixture(n=600)
    post_a, post_b, la, lb, _, trees = _steps(df, 3, 0, False, True, kernel=loo_attribute_losses_by_key)
    assert (skdb_mod._attribute_tables(trees["x4"], 1.0)[5][2:] < 0).all()
    np.testing.assert_array_equal(post_b, post_a)
    np.testing.assert_array_equal(lb, la)


def test_which_kernel_the_selection_takes_by_keys(monkeypatch):
    df = _fixture()
    dag, info = bs.learn_skdb(df, "cls", 2, return_info=True)
    tree = info.extra["trees"]["x2"]
    tab = skdb_mod._attribute_tables(tree, 1.0)
    keys = skdb_mod._path_keys(tab, 7)
    assert keys == 7 * 2 * int(tab[1][1]) * int(tab[1][2])
    calls = []
    for name in ("loo_attribute_losses", "loo_attribute_losses_by_class", "loo_attribute_losses_by_key"):
        monkeypatch.setattr(skdb_mod, name, lambda *a, _n=name: calls.append(_n.rsplit("_", 1)[-1]))
    y = np.resize(df["cls"].cat.codes.to_numpy().astype(np.int64), 4 * keys)
    x = np.resize(df["x2"].cat.codes.to_numpy().astype(np.int64), 4 * keys)

    def step(n, d=None, xs=None):
        one = np.ones(n)
        skdb_mod._attribute_step_losses(tree, x[:n] if xs is None else xs, np.zeros((n, 3), dtype=np.int64), y[:n], 7,
                                        1.0, one if d is None else d, np.ones((3, n, 7)), 0, one, np.zeros(3),
                                        tables=tab)

    step(2 * keys)  # as many keys as half the rows: by key
    step(2 * keys - 1)  # more: by class (7 classes)
    step(4 * keys, d=np.where(np.arange(4 * keys) % 2 == 0, 1.0, 0.5))  # rows taking out different d: not by key
    neg = x.copy()
    neg[3] = -1  # a value without a code: the node-by-node kernel
    step(4 * keys, xs=neg)
    assert calls == ["key", "class", "class", "losses"]


def _level_posteriors_agree(df, K, ny, d, level, rng, missing_parents, plain, other, check=None):
    """Run the one-level posterior kernel ``plain`` and its stand-in ``other`` over every
    attribute of a learned selective kDB (parents masked missing at random when asked) and
    assert they give the same posteriors, bit for bit."""
    dag, info = bs.learn_skdb(df, "cls", 4, return_info=True)
    full, trees = info.extra["full_kdb"], info.extra["trees"]
    codes = {c: df[c].cat.codes.to_numpy().astype(np.int64) for c in df.columns}
    yy = codes["cls"]
    post_a = skdb_mod._loo_prior(ny, yy, d, float(ny.sum()), 1.0)
    post_b = post_a.copy()
    for f in info.order:
        pa = full.parents(f)
        P = np.zeros((len(df), len(pa)), dtype=np.int64)
        for j, p in enumerate(pa[1:], start=1):
            P[:, j] = codes[p]
            if missing_parents:
                P[rng.random(len(df)) < 0.15, j] = -1
        tab = skdb_mod._attribute_tables(trees[f], 1.0)
        if check is not None:
            check(tab)
        plain(codes[f], P, yy, K, *tab, 1.0, d, level, post_a)
        other(codes[f], P, yy, K, *tab, 1.0, d, level, post_b)
    np.testing.assert_array_equal(post_b, post_a)
    assert np.isfinite(post_a).all() and np.allclose(post_a.sum(axis=1), 1.0)


@pytest.mark.parametrize("weighted", [False, "half"])
@pytest.mark.parametrize("missing_parents", [False, True])
@pytest.mark.parametrize("level", [0, 1, 2, 3, 4])
def test_level_posterior_by_key_is_the_node_by_node_kernel(weighted, missing_parents, level):
    from pybncsmooth.classifiers._loo import loo_level_posterior, loo_level_posterior_by_key

    df = _fixture(n=900)
    yy = df["cls"].cat.codes.to_numpy().astype(np.int64)
    d = np.full(len(df), 0.5 if weighted else 1.0)
    ny = np.bincount(yy, weights=d, minlength=7)
    _level_posteriors_agree(df, 7, ny, d, level, np.random.default_rng(5), missing_parents,
                            loo_level_posterior, loo_level_posterior_by_key)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("missing_parents", [False, True])
@pytest.mark.parametrize("level", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("unused_class", [True, False])
def test_level_posterior_by_class_is_the_node_by_node_kernel(weighted, missing_parents, level, unused_class):
    from pybncsmooth.classifiers._loo import loo_level_posterior, loo_level_posterior_by_class

    df = _fixture(n=500, unused_class=unused_class)
    yy = df["cls"].cat.codes.to_numpy().astype(np.int64)
    K = len(df["cls"].cat.categories)
    rng = np.random.default_rng(8)
    d = np.minimum(rng.integers(1, 4, len(df)) * 0.5, 1.0) if weighted else np.ones(len(df))
    ny = np.bincount(yy, minlength=K).astype(np.float64)

    def by_class_table_fits(tab):
        assert skdb_mod._by_class_table_size(tab, K, level + 1) > 0

    _level_posteriors_agree(df, K, ny, d, level, rng, missing_parents,
                            loo_level_posterior, loo_level_posterior_by_class, check=by_class_table_fits)


def test_table_size_of_the_first_levels():
    df = _fixture()
    dag, info = bs.learn_skdb(df, "cls", 3, return_info=True)
    tab = skdb_mod._attribute_tables(info.extra["trees"][info.order[-1]], 1.0)  # the class and 3 parents
    cards = [int(c) for c in tab[1]]
    assert len(cards) == 4
    r = int(tab[0])
    assert skdb_mod._by_class_table_size(tab, 7, 1) == r * 7
    assert skdb_mod._by_class_table_size(tab, 7, 2) == r * 7 * (1 + cards[1])
    assert skdb_mod._by_class_table_size(tab, 7, 9) == skdb_mod._by_class_table_size(tab, 7)
