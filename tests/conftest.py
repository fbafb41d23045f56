"""Shared fixtures: the bnlearn reference files in tests/data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

DATA = Path(__file__).parent / "data"
BNLEARN = DATA / "bnlearn"


def bnlearn_path(name: str) -> Path:
    return BNLEARN / name


def load_reference_csv(name: str) -> pd.DataFrame:
    """A bnlearn data set with bnlearn's factor level order, as Categoricals."""
    levels = json.loads((BNLEARN / f"{name}.levels.json").read_text())
    df = pd.read_csv(BNLEARN / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    for col in levels["columns"]:
        df[col] = pd.Categorical(df[col], categories=levels["levels"][col])
    return df


def load_golden(name: str) -> dict:
    """``node -> dict(parents, dims, levels, table)`` from a bnlearn JSON file."""
    raw = json.loads((BNLEARN / name).read_text())
    out = {"meta": raw["meta"], "nodes": {}}
    for node, nd in raw["nodes"].items():
        prob = np.array([np.nan if v is None else v for v in nd["prob"]], dtype=float)
        out["nodes"][node] = {
            "parents": nd["parents"],
            "children": nd["children"],
            "dims": nd["dims"],
            "levels": nd["levels"],
            "table": prob.reshape(nd["shape"], order="F"),
        }
    return out


def modelstring_of(name: str) -> str:
    return (BNLEARN / f"{name}.modelstring.txt").read_text().strip()


# Data frames shared by many tests, with a pristine copy each: after every test they must be
# unchanged (no public call may mutate the caller's data).
_SHARED: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}


def _shared(name: str) -> pd.DataFrame:
    df = load_reference_csv(name)
    _SHARED[name] = (df, df.copy(deep=True))
    return df


@pytest.fixture(autouse=True)
def _caller_data_unchanged():
    yield
    for name, (df, pristine) in _SHARED.items():
        assert df.equals(pristine) and list(df.dtypes) == list(pristine.dtypes), (
            f"a public call modified the caller's data frame {name!r}"
        )


@pytest.fixture(scope="session")
def asia() -> pd.DataFrame:
    return _shared("asia")


@pytest.fixture(scope="session")
def learning_test() -> pd.DataFrame:
    return _shared("learning_test")


@pytest.fixture(scope="session")
def alarm() -> pd.DataFrame:
    return _shared("alarm")


@pytest.fixture(scope="session")
def insurance() -> pd.DataFrame:
    return _shared("insurance")


def _flat_table(t: np.ndarray) -> np.ndarray:
    """A dense CPT (child on axis 0) as ``(configurations, levels)``, configuration-major."""
    return np.moveaxis(t, 0, -1).reshape(-1, t.shape[0])


def _row_counts(net, rows: pd.DataFrame, node: str) -> np.ndarray:
    """The rows' counts of ``node`` in the dense layout of :func:`_flat_table`."""
    cards = [len(net.levels(p)) for p in net.parents(node)]
    cfg = np.zeros(len(rows), dtype=np.int64)
    for p, c in zip(net.parents(node), cards):
        cfg = cfg * c + rows[p].cat.codes.to_numpy()
    out = np.zeros((int(np.prod(cards, dtype=np.int64)), len(net.levels(node))))
    np.add.at(out, (cfg, rows[node].cat.codes.to_numpy()), 1.0)
    return out


def _dm_log(n: np.ndarray, a: np.ndarray) -> float:
    """log Dirichlet-multinomial of the rows' counts ``n`` (one sequence) under ``a``, summed over rows."""
    from scipy.special import gammaln
    rows = n.sum(axis=1) > 0
    n, a = n[rows], a[rows]
    return float((gammaln(a.sum(1)) - gammaln(a.sum(1) + n.sum(1)) + (gammaln(a + n) - gammaln(a)).sum(1)).sum())


def _pooled_mass(net, node: str) -> np.ndarray:
    """``A_y`` of every dense configuration the population saw (others: NaN)."""
    cpd = net.cpd(node)
    tree = cpd.tree.truncate(cpd.tree.depth - 1)
    cards = tree.parent_cards
    out = np.full(int(np.prod(cards, dtype=np.int64)), np.nan)
    cfg = tree.node_configs(tree.depth)
    idx = np.zeros(len(cfg), dtype=np.int64)
    for j, c in enumerate(cards):
        idx = idx * c + cfg[:, j]
    out[idx] = cpd.estimate.info["s_domain_mass"]
    return out


def _domain_counts(net, node: str, label) -> np.ndarray:
    """Domain ``label``'s counts of ``node`` in the fit (dense, the layout of :func:`_flat_table`)."""
    cpd = net.cpd(node)
    cfg, cnt = cpd.tree.leaf_table()
    mine = cfg[:, -1] == net.domains.index(label)
    idx = np.zeros(int(mine.sum()), dtype=np.int64)
    for j, c in enumerate(cpd.tree.parent_cards[:-1]):
        idx = idx * c + cfg[mine, j]
    out = np.zeros((int(np.prod(cpd.tree.parent_cards[:-1], dtype=np.int64)), cpd.card))
    out[idx] = cnt[mine]
    return out


def _new_type(net, v: str, n: np.ndarray, pooled: np.ndarray, A: np.ndarray, ls: np.ndarray, w: np.ndarray):
    """A new type's log evidence in node ``v`` and its table: the nested model around
    ``pooled`` (masses ``A``, NaN: known exactly), ``s`` from ``(ls, w)``."""
    from pybncsmooth.estimators.domains.prior import nested_log_evidence
    seen = n.sum(1) > 0
    Af = np.where(np.isnan(A), np.inf, A)
    ev = nested_log_evidence(n[seen], pooled[seen], Af[seen], ls)
    lone = n[seen].sum(1) == 1
    ev = ev + (n[seen][lone] * np.log(pooled[seen][lone])).sum()
    post = w * np.exp(ev - ev.max())
    log_z = ev.max() + np.log(post.sum())
    post /= post.sum()
    tab = np.zeros_like(pooled)
    for lsk, pk in zip(ls, post):
        s = np.exp(lsk)
        sp = np.where(np.isfinite(Af), s * Af / (s + Af + 1), s)[:, None]
        tab += pk * (n + sp * pooled) / (n.sum(1, keepdims=True) + sp)
    return log_z, tab


def adapted_by_hand(net, rows: pd.DataFrame, label, share: float = 0.5, masses: dict | None = None) -> tuple:
    """The tables of the domain ``label`` adapted from ``rows`` (every parent
    configuration of the rows seen by the population), by hand from the population's
    dense tables.  Each node chooses: a copy of fitted domain ``e``'s table (prior
    ``(1 - share) / D``; at configuration ``y`` the Dirichlet of ``e``'s table there
    whose sd is ``e``'s sd) or a new type (prior ``share``), spread like the fitted
    domains (half of it: ``s`` from the fit's mixing distribution ``s_new_G``, without
    the domain's own evidence when it is a fitted one) or unusual (half: ``s = 1``),
    both the nested model's ``s' = s A / (s + A + 1)`` around the pooled table; with
    probability 0.99 every node makes the same choice (tied), else each its own.  The
    tables are the posterior means.  ``masses``: ``A_y`` of some nodes' dense
    configurations (default: the fit's, for the configurations it saw).  Returns
    ``({node: (configurations, levels)}, {node: posterior probability of a new type})``,
    the layout of :func:`_flat_table`."""
    from pybncsmooth.estimators.domains.prior import UNUSUAL_GRID
    fitted = [e for e in net.domains if e != label and net.info["domain_rows"].get(e, 0) > 0]
    D = len(fitted)
    pooled = {v: _flat_table(net.for_domain(None).cpt(v)) for v in net.nodes}
    n = {v: _row_counts(net, rows, v) for v in net.nodes}
    atoms = {}
    for e in fitted:
        one = net.for_domain(e)
        atoms[e] = {}
        for v in net.nodes:
            p = _flat_table(one.cpt(v))
            if net.cpd(v).has_sd:  # the Dirichlet with the leaf's mean and sd
                sd = _flat_table(one.cpd(v).table(stat="sd"))  # held (bayes' BDeu sds: refused by cpt)
                M = (p * (1 - p)).sum(1) / (sd * sd).sum(1) - 1.0
            else:  # its rows plus the shared concentration (nested where it has none)
                info = net.cpd(v).estimate.info
                s_bar = np.exp(np.asarray(info["s_domain_weights"]) @ np.asarray(info["s_domain_log"]))
                A = _pooled_mass(net, v)
                N = _domain_counts(net, v, e).sum(1)
                M = np.where(N > 0, N + s_bar, s_bar * A / (s_bar + A + 1))
            atoms[e][v] = M[:, None] * p
    # per node: the log evidence of each choice (the fitted domains, then the two kinds of new type)
    L = {v: [_dm_log(n[v], atoms[e][v]) for e in fitted] for v in net.nodes}
    tabs = {v: [] for v in net.nodes}
    for v in net.nodes:
        info = net.cpd(v).estimate.info
        A = (masses or {}).get(v, _pooled_mass(net, v))
        G = np.asarray(info["s_new_G"])
        codes = list(np.asarray(info["s_atom_codes"]))
        if label in net.domains and net.domains.index(label) in codes:  # its own evidence out of the spread
            j = codes.index(net.domains.index(label))
            r = G * np.exp(info["s_atom_curves"][j] - info["s_atom_curves"][j].max())
            G = np.maximum(len(codes) * G - r / r.sum(), 0.0)
            G /= G.sum()
        for ls, w in [(UNUSUAL_GRID, G), (np.zeros(1), np.ones(1))]:  # unusual: s = 1
            ev, tab = _new_type(net, v, n[v], pooled[v], A, ls, w)
            L[v].append(ev)
            tabs[v].append(tab)
    with np.errstate(divide="ignore"):  # share 1: no copy
        prior = np.log(np.r_[np.full(D, (1 - share) / D), share / 2, share / 2])
    Lm = np.array([L[v] for v in net.nodes])  # (nodes, choices)
    # tied (prior 0.99): one choice for every node; untied (0.01): a choice per node
    joint = prior + Lm.sum(axis=0)
    per = prior[None] + Lm
    T = np.log(np.exp(joint - joint.max()).sum()) + joint.max()
    U = sum(np.log(np.exp(p - p.max()).sum()) + p.max() for p in per)
    p_tied = 1.0 / (1.0 + np.exp(np.log(0.01) + U - np.log(0.99) - T))
    out, p_new = {}, {}
    for i, v in enumerate(net.nodes):
        wts = p_tied * np.exp(joint - T) + (1 - p_tied) * np.exp(per[i] - per[i].max()) / np.exp(
            per[i] - per[i].max()).sum()
        tab = sum(wk * t for wk, t in zip(wts[D:], tabs[v]))
        for e, we in zip(fitted, wts[:D]):
            a = atoms[e][v] + n[v]
            tab = tab + we * a / a.sum(1, keepdims=True)
        out[v] = tab
        p_new[v] = float(wts[D:].sum())
    return out, p_new


def shrunk_by_hand(counts, pooled, info) -> np.ndarray:
    """A domain's table by hand from its counts and the pooled table (the same layout, the
    child on axis 0): the posterior means (n + s m) / (N + s) averaged over the fit's
    posterior of the domain concentration s (``info["s_domain_log"]``, ``["s_domain_weights"]``)."""
    n = np.asarray(counts, dtype=float)
    m = np.asarray(pooled, dtype=float)
    out = np.zeros_like(n)
    for log_s, w in zip(info["s_domain_log"], info["s_domain_weights"]):
        s = np.exp(log_s)
        out += w * (n + s * m) / (n.sum(axis=0) + s)
    return out


def _sites(seed: int, spreads: dict, n: int) -> pd.DataFrame:
    """``B | A`` in sites whose tables sit ``spreads[site]`` away from a common one."""
    rng = np.random.default_rng(seed)
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]])
    rows = []
    for site, s in spreads.items():
        tab = np.array([rng.dirichlet(s * b) for b in base])
        a = rng.choice(2, n, p=[0.6, 0.4])
        b = (tab[a].cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(max=2)
        rows.append(pd.DataFrame({"site": site, "A": a, "B": b}))
    df = pd.concat(rows, ignore_index=True).astype(str)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df})
