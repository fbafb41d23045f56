"""Domain fits at the scale of users: from files, chunks and Dask like pooled fits,
rows of many domains answered by their domains' tables in one pass (added domains
included, kept beside the fitted tree), and what the fit keeps for adapt bounded."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.errors import UnseenDomainWarning
from pybncsmooth.estimators.domains.prior import MAX_ATOMS
from pybncsmooth.model.cpd import DomainLastCPD

MS = "[A][B|A][C|A:B]"


def _users(n_users: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` rows of each user on ``[A][B|A][C|A:B]`` (three levels each), every
    user's tables ``Dir(20 * common)``; text columns (a CSV reads them alike)."""
    rng = np.random.default_rng(seed)
    common = {"A": rng.dirichlet(np.full(3, 2.0), size=1), "B": rng.dirichlet(np.full(3, 2.0), size=3),
              "C": rng.dirichlet(np.full(3, 2.0), size=9)}
    n = n_users * rows
    user = np.repeat(np.arange(n_users), rows)
    cols: dict[str, np.ndarray] = {}
    for v, cfg in (("A", np.zeros(n, dtype=np.int64)), ("B", None), ("C", None)):
        if v == "B":
            cfg = cols["A"]
        elif v == "C":
            cfg = cols["A"] * 3 + cols["B"]
        tabs = np.array([[rng.dirichlet(20 * row) for row in common[v]] for _ in range(n_users)])
        cum = tabs[user, cfg].cumsum(axis=1)
        cols[v] = (cum < rng.random(n)[:, None]).sum(axis=1).clip(max=2)
    df = pd.DataFrame({v: np.array(["x", "y", "z"])[c] for v, c in cols.items()})
    df["user"] = np.array([f"u{i:04d}" for i in range(n_users)])[user]
    return df


def test_a_domain_fit_from_a_file_chunks_and_dask_equals_in_memory(tmp_path):
    df = _users(120, 12, seed=1)
    mem = bs.fit(MS, df, method="hmd", domain="user")
    path = tmp_path / "users.csv"
    df.to_csv(path, index=False)
    from_file = bs.fit(MS, str(path), method="hmd", domain="user", chunksize=500)
    chunks = bs.fit(MS, [df.iloc[i:i + 400] for i in range(0, len(df), 400)], method="hmd", domain="user")
    for other in (from_file, chunks):
        assert other.domains == mem.domains
        assert other.max_abs_diff(mem) < 1e-12
    dd = pytest.importorskip("dask.dataframe")
    on_dask = bs.fit(MS, dd.from_pandas(df, npartitions=3), method="hmd", domain="user")
    assert on_dask.max_abs_diff(mem) < 1e-12
    new = _users(1, 15, seed=9).drop(columns="user")
    assert on_dask.adapt(new, "newcomer").max_abs_diff(mem.adapt(new, "newcomer")) < 1e-12


def test_rows_of_many_domains_are_answered_by_their_domains_tables_in_one_pass(tmp_path):
    """A frame mixing rows of fitted users, users added by adapt (two new ones, one
    fitted user grown) and an unknown user: ``logpdf`` and ``predict_proba`` answer each
    row with its domain's tables, as ``for_domain`` does row by row; the added domains'
    leaves, kept beside the fitted tree, answer as the tree they make once merged (its
    dense tables, and after saving and reading back)."""
    df = _users(150, 10, seed=2)
    net = bs.fit(MS, df, method="hmd", domain="user")
    extra = _users(3, 12, seed=7).drop(columns="user")
    a = net.adapt(extra.iloc[:12], "new1").adapt(extra.iloc[12:24], "new2").adapt(extra.iloc[24:], "u0003")
    for v in a.nodes:
        cpd = a.cpd(v)
        assert isinstance(cpd, DomainLastCPD) and sorted(cpd.added) == [3, 150, 151]
        merged = DomainLastCPD(cpd.inner)  # the whole tree, no domain beside it
        np.testing.assert_allclose(cpd.table(), merged.table(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(cpd.table(stat="sd"), merged.table(stat="sd"), rtol=0, atol=1e-15)
    labels = np.array(["u0000", "new1", "u0003", "new2", "u0149", "u0077"] * 8 + ["nobody"])
    rows = df.drop(columns="user").sample(len(labels), random_state=3).reset_index(drop=True).assign(user=labels)
    with pytest.warns(UnseenDomainWarning, match="nobody"):
        lp = a.logpdf(rows)
        pp = a.predict_proba(rows, "B").to_numpy()
    for i, lab in enumerate(labels):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = a.for_domain(lab if lab != "nobody" else None)
        row = rows.iloc[[i]].drop(columns="user")
        assert lp[i] == pytest.approx(one.logpdf(row)[0], abs=1e-12)
        np.testing.assert_allclose(pp[i], one.predict_proba(row, "B").to_numpy()[0], atol=1e-12)
    a.write(tmp_path / "a.pbn")
    back = bs.read_network(tmp_path / "a.pbn")
    assert back.max_abs_diff(a) == 0.0
    np.testing.assert_allclose(back.logpdf(rows.iloc[:-1]), lp[:-1], atol=1e-12)


def test_what_a_fit_keeps_for_adapt_does_not_grow_with_the_users():
    """600 users: the fit keeps the Dirichlets of 256 of them (evenly spaced), per node
    ``256 x configurations x levels`` values; adapting a user reads those, whatever
    their number."""
    df = _users(600, 4, seed=3)
    net = bs.fit(MS, df, method="bayes", domain="user")
    for v in net.nodes:
        info = net.cpd(v).estimate.info
        codes = np.asarray(info["s_atom_codes"])
        assert len(codes) == MAX_ATOMS and codes[0] == 0 and codes[-1] == 599
        assert np.diff(codes).min() >= 2 and np.diff(codes).max() <= 3
        assert info["s_atom_alpha"].shape == (MAX_ATOMS, len(net.cpd(v).tree.levels[-2].value), 3)
    a = net.adapt(df[df.user == "u0001"].drop(columns="user"), "again")
    assert np.isfinite(a.for_domain("again").cpt("C")).all()
