"""Multi-domain fits against pooling and separate fits, on real survey data.

For each data set (``gssvocab``: 20 survey years; ``chile``: 5 regions; both bundled,
with their suggested structures) and each number of training rows per domain, every
repetition draws that many rows of each domain at random for training and holds out
the rest.  Each estimator is fitted three ways:

* ``pooled``: the domain ignored (one fit on every training row);
* ``domain``: ``fit(..., domain=)`` with the estimator's default multi-domain model;
* ``separate``: one fit per domain on its own rows.

Printed: held-out log-likelihood per row (all held-out rows; mean over repetitions),
the gap of ``domain`` to ``pooled`` (positive: the domain fit is better), the domains
where ``domain`` beats ``separate`` (per-domain held-out log-likelihood, summed over
repetitions), and the median fit seconds (warm: the median of the repetitions leaves out
the first fit's load of the compiled kernels).  A simulated data set with known domain
effects (``--simulated``) checks that the domain fit beats pooling where domains differ.

Run: ``python benchmarks/bench_domains.py [--data gssvocab chile] [--rows 30 100]
[--methods hdp hmd] [--repeats 3] [--simulated]``; ``--lodo 100 20``: leave each domain
out, fit the others (100 rows each; 0: all their rows) with ``domain=``, adapt from 20
of its rows (per domain: held-out log-likelihood per row of adapt, of the same
estimator pooled and of the separate fit, the adapted domain's learned ``s_D`` and
the times; ``--seeds 1 2 3`` other draws of the 20 rows; ``--far``: simulated domains,
five alike and one far from them, a population drawn afresh for every seed;
``--oracle``: also the best single ``s_D`` per domain chosen on its held-out rows, an
upper bound on what one concentration per domain can do).  ``--regret``: adapt's regret
per domain and draw; ``--data`` also takes ``six`` and the two-node shapes ``mixed``,
``departs`` and ``alike`` (:data:`TWO_NODE_SHAPES`); ``--regret --choices``: beside
adapt, rules chosen with hindsight on the held-out rows (one of adapt's own choices for
every node, one per node) and, on the two-node shapes, monotone node-wise count rules;
``--regret --bound``: on ``six``, pairs of draws no monotone rule keeps within 0.01, and
on the two-node shapes exact bounds on any rule that sees only the rows' counts, beside
adapt's exact expected regret (``_count_bound.py``); ``--rule kde`` adds kernel-mixture
priors for the new domain learned from the fitted domains (``_kde_rule.py``), scored the
same way.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.datasets import dataset_info, load_dataset, structure
from pybncsmooth.estimators.domains import prior as _domain_prior

ROOT = Path(__file__).resolve().parents[1]

METHODS = {
    "hdp": dict(method="hdp"),
    "hmd": dict(method="hmd"),
    "mestimate": dict(method="mestimate"),
    "hls": dict(method="hls"),
    "bayes": dict(method="bayes"),
}


def simulated(seed: int = 0, n_dom: int = 8, per: int = 400) -> tuple[pd.DataFrame, str, str]:
    """Domains that differ: ``Y | A`` has a domain-specific shift of known size."""
    rng = np.random.default_rng(seed)
    rows = []
    base = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]])
    for d in range(n_dom):
        shift = rng.dirichlet(np.ones(3), size=3)
        table = 0.4 * base + 0.6 * shift  # every domain's own table, far from the others
        a = rng.choice(3, per, p=[0.5, 0.3, 0.2])
        b = rng.choice(2, per)
        y = np.array([rng.choice(3, p=table[i]) for i in a])
        rows.append(pd.DataFrame({"dom": f"d{d}", "A": a, "B": b, "Y": y}))
    df = pd.concat(rows, ignore_index=True).astype(str)
    for c in df:
        df[c] = pd.Categorical(df[c])
    return df, "[A][B][Y|A:B]", "dom"


def split(df: pd.DataFrame, domain: str, n_per: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``n_per`` rows of each domain for training (all but one if it has fewer), the rest held out."""
    train = []
    for _, idx in df.groupby(domain, observed=True).indices.items():
        k = min(n_per, len(idx) - 1)
        train.append(rng.choice(idx, k, replace=False))
    tr = np.sort(np.concatenate(train))
    mask = np.zeros(len(df), dtype=bool)
    mask[tr] = True
    return df[mask], df[~mask]


def fit_three(ms: str, tr: pd.DataFrame, te: pd.DataFrame, domain: str, kw: dict, seed: int) -> dict:
    """Per held-out row log-likelihood of pooled, domain and separate fits, and fit seconds."""
    nodes = [c for c in tr.columns if c != domain]
    out = {}
    t0 = time.perf_counter()
    pooled = bs.fit(ms, tr[nodes], random_state=seed, **kw)
    out["pooled"] = (pooled.logpdf(te[nodes]), time.perf_counter() - t0)
    t0 = time.perf_counter()
    multi = bs.fit(ms, tr, domain=domain, random_state=seed, **kw)
    out["domain"] = (multi.logpdf(te), time.perf_counter() - t0)
    sep = np.empty(len(te))
    t0 = time.perf_counter()
    for d, idx in te.groupby(domain, observed=True).indices.items():
        net = bs.fit(ms, tr.loc[tr[domain] == d, nodes], random_state=seed, **kw)
        sep[idx] = net.logpdf(te.iloc[idx][nodes])
    out["separate"] = (sep, time.perf_counter() - t0)
    return out


def run(name: str, df: pd.DataFrame, ms: str, domain: str, rows: list[int], methods: list[str], repeats: int) -> list:
    results = []
    for n_per in rows:
        for m in methods:
            ll = {k: [] for k in ("pooled", "domain", "separate")}
            secs = {k: [] for k in ll}
            per_dom = {k: {} for k in ll}
            for rep in range(repeats):
                rng = np.random.default_rng(1000 + rep)
                tr, te = split(df, domain, n_per, rng)
                te = te.reset_index(drop=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = fit_three(ms, tr, te, domain, METHODS[m], rep)
                for k, (lp, sec) in res.items():
                    ll[k].append(lp.mean())
                    secs[k].append(sec)
                    for d, idx in te.groupby(domain, observed=True).indices.items():
                        per_dom[k][d] = per_dom[k].get(d, 0.0) + lp[idx].sum()
            doms = list(per_dom["domain"])
            wins = sum(per_dom["domain"][d] > per_dom["separate"][d] for d in doms)
            row = dict(
                data=name,
                rows_per_domain=n_per,
                method=m,
                pooled=np.mean(ll["pooled"]),
                domain=np.mean(ll["domain"]),
                separate=np.mean(ll["separate"]),
                gap_to_pooled=np.mean(ll["domain"]) - np.mean(ll["pooled"]),
                beats_separate=f"{wins}/{len(doms)}",
                sec_pooled=np.median(secs["pooled"]),
                sec_domain=np.median(secs["domain"]),
            )
            results.append(row)
            print(
                f"{name:9s} {n_per:4d} {m:10s} pooled {row['pooled']:.4f}  domain {row['domain']:.4f}  "
                f"separate {row['separate']:.4f}  gap {row['gap_to_pooled']:+.4f}  beats separate "
                f"{row['beats_separate']:>6s}  fit s {row['sec_pooled']:.2f} / {row['sec_domain']:.2f}",
                flush=True,
            )
    return results


def far_domain(seed: int = 0, n_dom: int = 6, per: int = 600, far: float = 1.0, near: float = 100.0
               ) -> tuple[pd.DataFrame, str, str]:
    """Domains of known spread: every domain's table of ``Y | A`` (and of ``A``) drawn as
    ``Dir(s * population)``, ``s = near`` for all but the last domain, ``s = far`` for it
    (far from the rest); ``per`` rows each."""
    rng = np.random.default_rng(seed)
    pop_a = rng.dirichlet(np.full(4, 2.0))
    pop_y = rng.dirichlet(np.full(5, 2.0), size=4)
    rows = []
    for d in range(n_dom):
        s = far if d == n_dom - 1 else near
        pa = rng.dirichlet(s * pop_a)
        py = np.array([rng.dirichlet(s * row) for row in pop_y])
        a = rng.choice(4, per, p=pa)
        y = (py[a].cumsum(axis=1) < rng.random(per)[:, None]).sum(axis=1).clip(max=4)
        rows.append(pd.DataFrame({"dom": f"d{d}", "A": a, "Y": y}))
    df = pd.concat(rows, ignore_index=True).astype(str)
    for c in df:
        df[c] = pd.Categorical(df[c])
    return df, "[A][Y|A]", "dom"


def _own_s(net: bs.FittedNetwork, nodes: list[str]) -> float:
    """The adapted domain's concentration: the geometric mean over the nodes of each
    node's posterior geometric mean (``inf``-free: the grid stops at 1e7)."""
    vals = []
    for n in nodes:
        info = net.cpd(n).estimate.info
        vals.append(float(info["s_own_log"][-1] @ info["s_own_weights"][-1]))
    return float(np.exp(np.mean(vals)))


#: the concentrations tried with hindsight by ``--oracle``
ORACLE_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 1e5, 1e7)


def lodo_domain(df: pd.DataFrame, ms: str, domain: str, d: Any, train: pd.DataFrame, k: int, m: str,
                rng: np.random.Generator, oracle: bool = False) -> dict:
    """One left-out domain: the population fitted on the others, ``k`` of its rows
    adapting it; held-out log-likelihood per row of adapt, of the same estimator pooled
    (the others + the k rows) and of the separate fit (the k rows, bayes iss = 1)."""
    nodes = [c for c in df if c != domain]
    others = train[train[domain] != d]
    rows = df[df[domain] == d]
    idx = rng.permutation(len(rows))
    ad, te = rows.iloc[idx[:k]][nodes], rows.iloc[idx[k:]][nodes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        pop = bs.fit(ms, others, method=m, domain=domain, random_state=0)
        t_fit = time.perf_counter() - t0
        pop.adapt(ad, d)  # warm: the first call of a process compiles
        t0 = time.perf_counter()
        one = pop.adapt(ad, d)
        t_adapt = time.perf_counter() - t0
        la = one.for_domain(d).logpdf(te).mean()
        lp = bs.fit(ms, pd.concat([others[nodes], ad]), method=m, random_state=0).logpdf(te).mean()
        ls = bs.fit(ms, ad, method="bayes", iss=1).logpdf(te).mean()
        # the best single concentration for this domain, chosen on its held-out rows (no
        # estimator can do better with one s per domain: an upper bound, not a method)
        best = np.nan
        if oracle:
            best = max(pop.adapt(ad, d, s_domain=s).for_domain(d).logpdf(te).mean() for s in ORACLE_GRID)
    return dict(domain=d, adapt=la, pooled=lp, separate=ls, s_domain=_own_s(one, nodes), t_fit=t_fit,
                t_adapt=t_adapt, oracle=best)


def lodo(name: str, df: pd.DataFrame, ms: str, domain: str, n_per: int, k: int, m: str, seed: int = 7,
         show: bool = True, oracle: bool = False) -> pd.DataFrame:
    """Leave each domain out: the others (``n_per`` rows each; 0: all) fit the population
    with ``domain=``, ``k`` rows of the left-out domain adapt it (``FittedNetwork.adapt``),
    its other rows are scored, against the same estimator pooled and the separate fit.
    Prints one row per domain and the counts the issue asks for."""
    rng = np.random.default_rng(seed)
    train = df.groupby(domain, observed=True).sample(n=n_per, random_state=7) if n_per > 0 else df
    res = pd.DataFrame([lodo_domain(df, ms, domain, d, train, k, m, rng, oracle) for d in df[domain].cat.categories])
    res["vs_pooled"], res["vs_separate"] = res.adapt - res.pooled, res.adapt - res.separate
    both = int(((res.vs_pooled > 0) & (res.vs_separate > 0)).sum())
    worst = min(res.vs_pooled.min(), res.vs_separate.min())
    ratio = res.t_adapt / res.t_fit
    budget = np.maximum(0.1 * res.t_fit, 0.02)
    if show:
        with pd.option_context("display.width", 160, "display.max_rows", 100):
            print(res[["domain", "adapt", "pooled", "separate", "vs_pooled", "vs_separate", "s_domain", "t_fit",
                       "t_adapt"]].round(4).to_string(index=False))
    print(f"{name:9s} lodo {m:5s} seed {seed}: adapt from {k} rows beats the same estimator pooled "
          f"{int((res.vs_pooled > 0).sum())}/{len(res)}, the separate fit {int((res.vs_separate > 0).sum())}/"
          f"{len(res)}, both {both}/{len(res)}; worst loss {min(worst, 0):+.4f} nats/row; adapt / fit median "
          f"{ratio.median():.3f} (adapt {1e3 * res.t_adapt.median():.1f} ms, within max(10% fit, 20 ms): "
          f"{int((res.t_adapt <= budget).sum())}/{len(res)})", flush=True)
    if oracle:
        hind = int(((res.oracle > res.pooled) & (res.oracle > res.separate)).sum())
        print(f"{name:9s} lodo {m:5s} seed {seed}: the best single s_domain per domain, chosen on its held-out rows, "
              f"beats both in {hind}/{len(res)}", flush=True)
    res["seed"], res["data"], res["method"] = seed, name, m
    return res


def six_domains(seed: int = 0) -> tuple[pd.DataFrame, str, str]:
    """Six domains shaped like the issue's hidden set: a binary outcome ``Y`` with one
    parent ``P`` whose distribution barely differs (``P(p1)`` 0.48-0.52), outcome rates
    0.64, 0.63, 0.35, 0.34, 0.25 and 0.06 by domain (log-odds +-0.3 by ``P``), 600-900
    rows each."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, p in enumerate((0.64, 0.63, 0.35, 0.34, 0.25, 0.06)):
        n = int(rng.integers(600, 901))
        share = 0.5 + rng.uniform(-0.02, 0.02)
        par = rng.random(n) < share
        logit = np.log(p / (1 - p)) + np.where(par, 0.3, -0.3)
        y = rng.random(n) < 1 / (1 + np.exp(-logit))
        rows.append(pd.DataFrame({"dom": f"d{d}", "P": np.where(par, "p1", "p0"), "Y": np.where(y, "y1", "y0")}))
    df = pd.concat(rows, ignore_index=True)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df}), "[P][Y|P]", "dom"


#: the two-node shapes of ``--regret``: per domain ``P(G = g1)`` and the outcome's rate
#: ``P(Y = y1)`` (log-odds +-0.2 by ``G``); ``mixed``: shaped like the issue's hidden
#: set, the two nodes departing independently; ``departs``: one domain far from the
#: others in both nodes, one in each alone; ``alike``: no domain departs
TWO_NODE_SHAPES = {
    "mixed": ((0.12, 0.04, 0.65, 0.47, 0.67, 0.48), (0.64, 0.63, 0.35, 0.34, 0.25, 0.06)),
    "departs": ((0.45, 0.5, 0.55, 0.5, 0.9, 0.1), (0.4, 0.45, 0.35, 0.85, 0.4, 0.05)),
    "alike": ((0.5, 0.52, 0.48, 0.5, 0.51, 0.49), (0.4, 0.42, 0.38, 0.41, 0.39, 0.4)),
}


def two_nodes(shape: str = "mixed", seed: int = 0, per: int = 400) -> tuple[pd.DataFrame, str, str]:
    """Six domains of ``per`` rows on ``[G][Y|G]`` (:data:`TWO_NODE_SHAPES`)."""
    shares, rates = TWO_NODE_SHAPES[shape]
    rng = np.random.default_rng(seed)
    rows = []
    for d, (g, p) in enumerate(zip(shares, rates)):
        grp = rng.random(per) < g
        logit = np.log(p / (1 - p)) + np.where(grp, 0.2, -0.2)
        y = rng.random(per) < 1 / (1 + np.exp(-logit))
        rows.append(pd.DataFrame({"dom": f"d{d}", "G": np.where(grp, "g1", "g0"), "Y": np.where(y, "y1", "y0")}))
    df = pd.concat(rows, ignore_index=True)
    return df.assign(**{c: pd.Categorical(df[c]) for c in df}), "[G][Y|G]", "dom"


def regret_data(name: str) -> tuple[pd.DataFrame, str, str]:
    """A data set of ``--regret``: a bundled one, or ``six`` (:func:`six_domains`)."""
    if name == "six":
        return six_domains(0)
    if name in TWO_NODE_SHAPES:
        return two_nodes(name, 0)
    return load_dataset(name), structure(name).modelstring(), dataset_info(name)["domain"]


def draw_rows(df: pd.DataFrame, domain: str, seed: int, k: int) -> dict:
    """Draw ``seed`` of every domain's ``k`` adapting rows (the rest held out): one
    permutation per domain, in the order of the levels (as ``--lodo`` draws them)."""
    rng = np.random.default_rng(seed)
    out = {}
    for d in df[domain].cat.categories:
        rows = df[df[domain] == d]
        idx = rng.permutation(len(rows))
        out[d] = (rows.iloc[idx[:k]], rows.iloc[idx[k:]])
    return out


def regret_rows(name: str, m: str, seeds: list[int], k: int, shares: list[float] | None = None) -> pd.DataFrame:
    """Leave each domain out: the others fit the population with ``domain=`` (once per
    left-out domain), and for every draw of ``k`` of its rows: held-out log-likelihood
    per row of adapt, of the same estimator pooled (the others + the ``k`` rows) and of
    the separate fit (bayes, iss = 1, on the ``k`` rows); adapt's seconds.  ``shares``:
    adapt again with each prior probability of a new type (``adapt(new_type=)``; 1: no
    copying of fitted domains), a column ``share`` telling them apart."""
    df, ms, domain = regret_data(name)
    nodes = [c for c in df if c != domain]
    cuts = {seed: draw_rows(df, domain, seed, k) for seed in seeds}
    out = []
    for d in df[domain].cat.categories:
        others = df[df[domain] != d]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pop = bs.fit(ms, others, method=m, domain=domain, random_state=0)
            for seed in seeds:
                ad, te = (x[nodes] for x in cuts[seed][d])
                pop.adapt(ad, d)  # warm (the first call of a process compiles)
                t0 = time.perf_counter()
                one = pop.adapt(ad, d)
                t_adapt = time.perf_counter() - t0
                lp = bs.fit(ms, pd.concat([others[nodes], ad]), method=m, random_state=0).logpdf(te).mean()
                ls = bs.fit(ms, ad, method="bayes", iss=1).logpdf(te).mean()
                for share in shares or [_domain_prior.NOVEL_SHARE]:
                    if shares:
                        one = pop.adapt(ad, d, new_type=share)
                    la = one.for_domain(d).logpdf(te).mean()
                    out.append(dict(data=name, method=m, domain=d, draw=seed, share=share, adapt=la, pooled=lp,
                                    separate=ls, t_adapt=t_adapt))
    res = pd.DataFrame(out)
    res["regret"] = np.maximum(res.pooled, res.separate) - res.adapt
    return res


def regret_summary(res: pd.DataFrame) -> pd.DataFrame:
    """Per data set and method: domain-draws more than 0.01 nats/row behind the better
    of pooled and separate, the worst regret, adapt's mean gain over each, adapt's time."""
    rows = []
    for (data, m, share), g in res.groupby(["data", "method", "share"], sort=False):
        rows.append(dict(data=data, method=m, share=share, over=f"{int((g.regret > 0.01).sum())}/{len(g)}",
                         worst=g.regret.max(), mean_regret=g.regret.mean(),
                         gain_pooled=(g.adapt - g.pooled).mean(), gain_separate=(g.adapt - g.separate).mean(),
                         adapt_ms=1e3 * g.t_adapt.median()))
    return pd.DataFrame(rows)


def _y_regret_surface(df: pd.DataFrame, domain: str, d: Any, ad: pd.DataFrame, te: pd.DataFrame, m: str,
                      grid: np.ndarray) -> np.ndarray:
    """The regret on ``te`` (per row, to the better of pooled and separate) of every
    outcome table ``P(Y = y1 | P) = (q0, q1)`` on ``grid`` x ``grid``, the parent's
    table the best any estimate could have (``te``'s own frequencies): ``(G, G)``."""
    others = df[df[domain] != d].drop(columns=domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pooled = bs.fit("[P][Y|P]", pd.concat([others, ad]), method=m, random_state=0).logpdf(te).mean()
    sep = bs.fit("[P][Y|P]", ad, method="bayes", iss=1).logpdf(te).mean()
    p = te["P"].cat.codes.to_numpy()
    y = te["Y"].cat.codes.to_numpy()
    f = np.array([[np.mean((p == i) & (y == j)) for j in (0, 1)] for i in (0, 1)])
    share = f.sum(axis=1)
    best_p = float(share @ np.log(share))
    ly = (f[0, 1] * np.log(grid) + f[0, 0] * np.log1p(-grid))[:, None] + \
        (f[1, 1] * np.log(grid) + f[1, 0] * np.log1p(-grid))[None, :]
    return max(pooled, sep) - best_p - ly


def regret_bound(m: str, seeds: list[int], k: int) -> None:
    """``--bound``: on the six-domain set, pairs of domain-draws whose ``k`` rows have
    the same number of rows in each parent level and the second at least as many
    positives in each, though its domain's rate is lower: any estimate that does not
    lower ``P(Y = y1 | P)`` when a row turns positive gives the second at least the
    first's, and the least worst regret of the two over all such estimates (the parent's
    table the best possible, the outcome's on a fine grid) is a bound no such estimator
    beats.  Printed: the pairs whose bound exceeds 0.01 nats/row."""
    df, _, domain = six_domains(0)
    cuts = {seed: draw_rows(df, domain, seed, k) for seed in seeds}
    grid = np.linspace(0.005, 0.995, 199)
    cases = []
    for seed in seeds:
        for d in df[domain].cat.categories:
            ad, te = (x.drop(columns=domain) for x in cuts[seed][d])
            n = pd.crosstab(ad["P"], ad["Y"]).reindex(index=["p0", "p1"], columns=["y0", "y1"], fill_value=0).to_numpy()
            rate = float((df.loc[df[domain] == d, "Y"] == "y1").mean())
            cases.append((d, seed, n, rate, ad, te))
    surf: dict = {}
    print(f"six domains, {m}: pairs no estimator monotone in the counts can keep both within 0.01 nats/row")
    found = 0
    for a in cases:
        for b in cases:
            na, nb = a[2], b[2]
            if a is b or (na.sum(axis=1) != nb.sum(axis=1)).any() or (nb[:, 1] < na[:, 1]).any() or b[3] >= a[3]:
                continue
            for c in (a, b):
                key = (c[0], c[1])
                if key not in surf:
                    surf[key] = _y_regret_surface(df, domain, c[0], c[4], c[5], m, grid)
            ra, rb = surf[(a[0], a[1])], surf[(b[0], b[1])]
            # b's estimate is at least a's in both parent levels: the least worst of the two
            rb_up = np.minimum.accumulate(np.minimum.accumulate(rb[::-1, ::-1], axis=0), axis=1)[::-1, ::-1]
            bound = float(np.maximum(ra, rb_up).min())
            if bound > 0.01:
                found += 1
                print(f"  {a[0]} draw {a[1]} (rate {a[3]:.2f}, rows {na[:, 1].tolist()} positive of "
                      f"{na.sum(axis=1).tolist()}) and {b[0]} draw {b[1]} (rate {b[3]:.2f}, rows {nb[:, 1].tolist()}): "
                      f"least worst regret {bound:.4f}", flush=True)
    print(f"  {found} such pair(s)", flush=True)


def _node_loglik(net: bs.FittedNetwork, te: pd.DataFrame, node: str) -> float:
    """Held-out log-likelihood per row of ``node``'s factor alone (``net`` one domain's)."""
    vars_ = [node] + net.parents(node)
    idx = tuple(pd.Categorical(te[v], categories=net.levels(v)).codes for v in vars_)
    return float(np.mean(np.log(net.cpt(node)[idx])))


class _Forced:
    """Inside: ``adapt`` puts every node's posterior weight on its choice ``c`` (the
    fitted domains in order, then a new type spread like them, then an unusual one),
    the hindsight analysis of ``--choices`` (a benchmark's patch, not an option)."""

    def __init__(self, c: int) -> None:
        from pybncsmooth.model.domains import _urn as _adapt_urn
        self.mod, self.c, self.orig = _adapt_urn, c, _adapt_urn.node_choice_weights

    def weights(self, atom_ev, new_ev, share=None, tied=None):
        D = np.atleast_2d(atom_ev).shape[1]
        w = np.full((np.atleast_2d(atom_ev).shape[0], D + np.atleast_2d(new_ev).shape[1]), 1e-11)
        w[:, self.c] = 1.0  # (a new type keeps a trace of weight: its grid must not be empty)
        return w[:, :D], w[:, D:], 1.0

    def __enter__(self) -> None:
        self.mod.node_choice_weights = self.weights

    def __exit__(self, *exc: object) -> None:
        self.mod.node_choice_weights = self.orig


def choice_rows(name: str, m: str, seeds: list[int], k: int) -> pd.DataFrame:
    """``--choices``: per left-out domain, draw and node, the held-out log-likelihood
    per row of that node's factor under adapt, pooled, separate and adapt forced to each
    of its choices (columns ``c0``, ``c1``, ...: the fitted domains, the spread type,
    the unusual type)."""
    df, ms, domain = regret_data(name)
    nodes = [c for c in df if c != domain]
    cuts = {seed: draw_rows(df, domain, seed, k) for seed in seeds}
    out = []
    for d in df[domain].cat.categories:
        others = df[df[domain] != d]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pop = bs.fit(ms, others, method=m, domain=domain, random_state=0)
            n_choices = len(others[domain].unique()) + 2
            for seed in seeds:
                ad, te = (x[nodes] for x in cuts[seed][d])
                nets = {"adapt": pop.adapt(ad, d).for_domain(d),
                        "pooled": bs.fit(ms, pd.concat([others[nodes], ad]), method=m, random_state=0),
                        "separate": bs.fit(ms, ad, method="bayes", iss=1)}
                for c in range(n_choices):
                    with _Forced(c):
                        nets[f"c{c}"] = pop.adapt(ad, d).for_domain(d)
                for v in nodes:
                    out.append(dict(data=name, method=m, domain=d, draw=seed, node=v,
                                    **{key: _node_loglik(net, te, v) for key, net in nets.items()}))
    return pd.DataFrame(out)


def choice_oracles(res: pd.DataFrame) -> pd.DataFrame:
    """Per domain and draw, the regret (to the better of pooled and separate, whole
    network) of adapt and of three rules chosen with hindsight on the held-out rows:
    one of adapt's choices for every node at once (``joint``), one per node
    (``per_node``), and pooled or separate per node (``pool_or_sep``)."""
    cs = [c for c in res if c[0] == "c" and c[1:].isdigit()]
    keys = ["data", "method", "domain", "draw"]
    tot = res.groupby(keys, sort=False)[["adapt", "pooled", "separate"] + cs].sum(min_count=1)
    ref = tot[["pooled", "separate"]].max(axis=1)
    per = res.assign(best=res[cs].max(axis=1), ps=res[["pooled", "separate"]].max(axis=1))
    per = per.groupby(keys, sort=False)[["best", "ps"]].sum()
    return pd.DataFrame({"adapt": ref - tot.adapt, "joint": ref - tot[cs].max(axis=1),
                         "per_node": ref - per.best, "pool_or_sep": ref - per.ps}).reset_index()


def _rule_cases(name: str, base: pd.DataFrame, seeds: list[int], k: int) -> list[dict]:
    """A two-node shape's domain-draws for :func:`count_rule_bound`: the reference (the
    better of pooled and separate, from ``base``), the counts a node-wise rule sees and
    the held-out frequencies its tables are scored on."""
    df, _, domain = regret_data(name)
    cases = []
    for seed in seeds:
        cut = draw_rows(df, domain, seed, k)
        for d in df[domain].cat.categories:
            ad, te = cut[d]
            b = base[(base.domain == d) & (base.draw == seed)].iloc[0]
            g_ad, y_ad = ad.G.eq("g1").to_numpy(), ad.Y.eq("y1").to_numpy()
            g_te, y_te = te.G.eq("g1").to_numpy(), te.Y.eq("y1").to_numpy()
            cases.append(dict(d=d, seed=seed, ref=max(b.pooled, b.separate), kG=int(g_ad.sum()),
                              kY=[(g, int((g_ad == g).sum()), int(y_ad[g_ad == g].sum())) for g in (0, 1)],
                              a=g_te.mean(), yc=[(np.mean(g_te == g), y_te[g_te == g].mean()) for g in (0, 1)]))
    return cases


def _rule_regret(rule: tuple, c: dict, k: int) -> float:
    """A case's regret under a count rule ``(G: {count: P(g1)}, Y: {(g, n, positives):
    P(y1)})``; a count the rule was not fitted on: interpolated between the nearest
    fitted ones (the same ``g`` and ``n`` for ``Y``), else the separate fit's."""
    rg, ry = rule
    ks = sorted(rg)
    q = rg.get(c["kG"], float(np.interp(c["kG"], ks, [rg[x] for x in ks])))
    s = c["a"] * np.log(q) + (1 - c["a"]) * np.log1p(-q)
    for key, (w, b) in zip(c["kY"], c["yc"]):
        same = sorted(x[2] for x in ry if x[:2] == key[:2])
        if key in ry:
            p = ry[key]
        elif same:
            p = float(np.interp(key[2], same, [ry[key[:2] + (x,)] for x in same]))
        else:
            p = (key[2] + 0.5) / (key[1] + 1.0)
        s += w * (b * np.log(p) + (1 - b) * np.log1p(-p))
    return c["ref"] - s


def _fit_rule(cases: list[dict], k: int, cap: float) -> tuple[tuple, bool]:
    """The monotone node-wise count rule minimising the largest domain mean regret of
    ``cases`` with no case over ``cap`` (convex in the tables: SLSQP), and whether it
    converged."""
    from scipy.optimize import minimize

    kG = sorted({c["kG"] for c in cases})
    kY = sorted({key for c in cases for key in c["kY"]})
    iG = {key: i for i, key in enumerate(kG)}
    iY = {key: len(kG) + i for i, key in enumerate(kY)}

    def unpack(z: np.ndarray) -> tuple:
        return {key: z[i] for key, i in iG.items()}, {key: z[i] for key, i in iY.items()}

    mono = [(iG[a], iG[b]) for a, b in zip(kG, kG[1:])]
    for g in (0, 1):
        for n in range(k + 1):
            same = [key for key in kY if key[:2] == (g, n)]
            mono += [(iY[a], iY[b]) for a, b in zip(same, same[1:])]
    doms = sorted({c["d"] for c in cases})
    cons = [{"type": "ineq", "fun": (lambda z, a=a, b=b: z[b] - z[a])} for a, b in mono]
    cons += [{"type": "ineq", "fun": (lambda z, d=d: z[-1] - np.mean(
        [_rule_regret(unpack(z), c, k) for c in cases if c["d"] == d]))} for d in doms]
    cons += [{"type": "ineq", "fun": (lambda z, c=c: cap - _rule_regret(unpack(z), c, k))} for c in cases]
    x0 = np.r_[[(key + 0.5) / (k + 1) for key in kG], [(key[2] + 0.5) / (key[1] + 1) for key in kY], 1.0]
    fit = minimize(lambda z: z[-1], x0, bounds=[(1e-4, 1 - 1e-4)] * (len(x0) - 1) + [(None, None)],
                   constraints=cons, method="SLSQP", options=dict(maxiter=2000, ftol=1e-12))
    return unpack(fit.x), bool(fit.success)


def count_rule_bound(name: str, base: pd.DataFrame, seeds: list[int], k: int, cap: float = 0.05) -> dict:
    """A two-node shape: rules that set ``G``'s table from its count among the ``k``
    rows and ``Y | g``'s from ``(g, rows with g, positives among them)``, monotone in
    the positives, one rule for every left-out domain.  ``hindsight``: the rule fitted
    on every domain-draw's held-out rows (minimising the largest domain mean regret, no
    draw over ``cap``) and scored on them, what such a rule can do at best;
    ``out_of_draw``: for each draw, the rule fitted on the other draws and scored on
    it, what such a rule learned from data does on draws it has not seen.  ``base``:
    the pooled and separate log-likelihoods of the same draws."""
    cases = _rule_cases(name, base, seeds, k)
    out = {"data": name}
    rule, ok = _fit_rule(cases, k, cap)
    parts = {"hindsight": ([_rule_regret(rule, c, k) for c in cases], ok)}
    regs, oks = [], True
    for seed in seeds:
        fitted, ok = _fit_rule([c for c in cases if c["seed"] != seed], k, cap)
        oks &= ok
        regs += [(c, _rule_regret(fitted, c, k)) for c in cases if c["seed"] == seed]
    order = {id(c): i for i, c in enumerate(cases)}
    regs.sort(key=lambda t: order[id(t[0])])
    parts["out_of_draw"] = ([r for _, r in regs], oks)
    for key, (r, ok) in parts.items():
        means = pd.Series(r).groupby([c["d"] for c in cases]).mean()
        out[key] = dict(converged=ok, max_domain_mean=round(float(means.max()), 4),
                        worst_draw=round(float(max(r)), 4), domain=str(means.idxmax()))
    out["G_rule"] = {key: round(float(v), 3) for key, v in rule[0].items()}
    return out


def choices_main(names: list[str], methods: list[str], seeds: list[int], k: int, csv: str | None) -> None:
    """``--choices``: per data set and method, the largest domain mean regret and the
    worst draw of adapt and of the hindsight rules of :func:`choice_oracles`; for the
    two-node shapes also :func:`count_rule_bound`."""
    rows = pd.concat([choice_rows(n, m, seeds, k) for n in names for m in methods], ignore_index=True)
    orc = choice_oracles(rows)
    tab = []
    for (data, m), g in orc.groupby(["data", "method"], sort=False):
        by = g.groupby("domain")
        row = dict(data=data, method=m)
        for col in ("adapt", "joint", "per_node", "pool_or_sep"):
            row[f"{col}_mean"] = by[col].mean().max()
            row[f"{col}_worst"] = g[col].max()
        tab.append(row)
    with pd.option_context("display.width", 200, "display.max_rows", 2000):
        print(orc.groupby(["data", "method", "domain"], sort=False)[["adapt", "joint", "per_node", "pool_or_sep"]]
              .agg(["mean", "max"]).round(4).to_string())
        print()
        print("largest domain mean regret and worst draw: adapt, and rules chosen with hindsight")
        print(pd.DataFrame(tab).round(4).to_string(index=False), flush=True)
    for name in names:
        if name in TWO_NODE_SHAPES:
            for m in methods:
                base = rows[(rows.data == name) & (rows.method == m)].groupby(["domain", "draw"])[
                    ["pooled", "separate"]].sum().reset_index()
                print(f"{name} {m}: monotone node-wise count rules (fitted with hindsight; fitted on the other draws):",
                      count_rule_bound(name, base, seeds, k), flush=True)
    if csv:
        rows.to_csv(csv, index=False)


def _draw_table(ad: pd.DataFrame) -> np.ndarray:
    """A two-node shape's draw as its 2x2 table (``[g, y]``, ``g1`` and ``y1`` second)."""
    return np.array([[int(((ad.G == g) & (ad.Y == y)).sum()) for y in ("y0", "y1")] for g in ("g0", "g1")])


def kde_rule_main(name: str, c: Any, m: str, seeds: list[int]) -> None:
    """``--bound --rule kde`` on a two-node shape: the kernel-mixture priors learned from
    the fitted domains (:mod:`_kde_rule`), every variant's exact expected regret per
    domain (E) and probability of a draw over 0.05 (P), and the prior each left-out domain
    got (its ``fitted-domain regret``: the largest expected regret among the fitted domains
    that chose it, for the variants tuned on it)."""
    import _kde_rule as kr

    df, ms, domain = regret_data(name)
    rows, chosen = [], []
    for variant, (r, priors) in kr.kde_regrets(c, df, ms, domain, m).items():
        s = kr.summary(c, r, 0.05, len(seeds))
        rows.append({"variant": variant, **{f"{d} E / P": f"{e:.4f} / {pr:.3f}" for d, e, pr in zip(c.doms, s["E"], s["P"])},
                     "largest E": round(s["largest_E"], 4), "largest P>0.05": round(s["largest_P"], 3),
                     f"draws of {len(seeds) * len(c.doms)} over 0.05": round(s["over"], 2)})
        for d, (pr, note) in priors.items():
            chosen.append({"variant": variant, "left out": d, "bandwidth": np.round(pr.bw, 3).tolist(), "a": pr.a,
                           "b": pr.b, "mode": pr.mode, "fitted-domain regret": None if note is None else round(note, 4)})
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 30):
        print(f"\n{name}, {m}: kernel-mixture priors from the {len(c.doms) - 1} fitted domains (exact over every draw)")
        print(pd.DataFrame(rows).to_string(index=False))
        print(pd.DataFrame(chosen).to_string(index=False), flush=True)


def count_bound_main(name: str, m: str, res: pd.DataFrame, seeds: list[int], k: int,
                     rules: list[str] | None = None) -> None:
    """``--regret --bound`` on a two-node shape: what any count rule can do, exactly
    (:mod:`_count_bound`), beside adapt's exact expected regret; then every draw of the
    run over 0.05 with the domains that could have drawn its table (``rules``:
    ``["kde"]`` adds :func:`kde_rule_main`)."""
    import _count_bound as cb

    df, ms, domain = regret_data(name)
    c = cb.Cases(df, ms, domain, m, k)
    V, lam, rule = cb.mean_bound(c)
    every = np.arange(len(c.t))
    r_rule = c.regret(every, rule[c.t])
    r_adapt = cb.adapt_regrets(c, df, ms, domain, m)
    n05, per05 = cb.over_bound(c, 0.05, len(seeds))
    n01, per01 = cb.over_bound(c, 0.01, len(seeds))
    D = len(c.doms)
    r_five = np.zeros(len(c.t))
    for j in range(D):  # the Bayes rule over the five domains the population holds
        lam5 = np.where(np.arange(D) == j, 0.0, 1.0 / (D - 1))
        idx = np.flatnonzero(c.d == j)
        W = np.bincount(c.t, lam5[c.d] * c.p, c.n_tables)[c.t[idx]]
        sep = np.array([cb._separate(c.table[t]) for t in c.t[idx]])
        r_five[idx] = np.where(W > 0, c.regret(idx, c.bayes_rule(lam5)[c.t[idx]]), c.regret(idx, sep))

    def by_domain(r: np.ndarray, cap: float | None = None) -> list[float]:
        x = r if cap is None else (r > cap).astype(float)
        return [round(float(c.p[c.d == j] @ x[c.d == j] / c.p[c.d == j].sum()), 4) for j in range(D)]

    tab = pd.DataFrame({"domain": c.doms, "adapt E": by_domain(r_adapt), "adapt P>0.05": by_domain(r_adapt, 0.05),
                        "five E": by_domain(r_five), "five P>0.05": by_domain(r_five, 0.05),
                        "minimax E": by_domain(r_rule), "minimax P>0.05": by_domain(r_rule, 0.05),
                        "least P>0.05": per05.round(4), "least P>0.01": per01.round(4), "lambda": lam.round(3)})
    print(f"\n{name}, {m}: every table of {k} rows of every domain (exact; probability mass left out "
          f"{max(c.dropped.values()):.1e}); expected regret (E) and probability of a draw over 0.05")
    print(tab.to_string(index=False))
    print(f"  least largest expected domain regret of any count rule: {V:.4f} (the minimax rule above); "
          f"least expected draws of {len(seeds)} per domain over 0.05: {n05:.3f} of {len(seeds) * D}, "
          f"over 0.01: {n01:.3f}", flush=True)
    cuts = {seed: draw_rows(df, domain, seed, k) for seed in seeds}
    bad = res[(res.data == name) & (res.method == m) & (res.regret > 0.05)]
    for _, row in bad.iterrows():
        rep = cb.draw_report(c, _draw_table(cuts[row.draw][row.domain][0]))
        print(f"  {row.domain} draw {row.draw}: adapt's regret {row.regret:.4f}; table {rep['table']} drawn by "
              + ", ".join(f"{d} ({p:.1e})" for d, p in rep["p"].items())
              + f"; least worst regret over {'/'.join(rep['considered'])} (odds >= 1/100): "
              f"{rep['least_worst']:.4f} at {rep['answer']}", flush=True)
    if rules and "kde" in rules:
        kde_rule_main(name, c, m, seeds)


def regret_main(names: list[str], methods: list[str], seeds: list[int], k: int, csv: str | None,
                shares: list[float] | None = None) -> pd.DataFrame:
    """``--regret``: the done-when table of adapt's regret, every domain and draw
    (``shares``: the same for several prior probabilities of a new type)."""
    res = pd.concat([regret_rows(n, m, seeds, k, shares) for n in names for m in methods], ignore_index=True)
    with pd.option_context("display.width", 160, "display.max_rows", 2000):
        cols = ["data", "method", "domain", "draw"] + (["share"] if shares else []) + [
            "adapt", "pooled", "separate", "regret"]
        print(res[cols].round(4).to_string(index=False))
        print()
        print(regret_summary(res).round(4).to_string(index=False), flush=True)
    if csv:
        res.to_csv(csv, index=False)
    return res


# ----------------------------------------------------------------------------- --scale: many users

SCALE_SHARPNESS = 50.0  # every user's tables Dir(50 * asia's)


def users_data(n_users: int, rows: int, seed: int = 0) -> tuple[pd.DataFrame, str]:
    """``rows`` rows of each of ``n_users`` users on the asia network, every user's
    tables drawn as ``Dir(50 * asia's table)`` (bnlearn's asia, from the test data):
    the data and asia's model string."""
    net = bs.read_network(ROOT / "tests" / "data" / "bnlearn" / "asia.bif")
    rng = np.random.default_rng(seed)
    n = n_users * rows
    user = np.repeat(np.arange(n_users), rows)
    cols: dict[str, np.ndarray] = {}
    for v in net.dag.topological_order():
        t = net.cpt(v)
        r = t.shape[0]
        base = np.clip(np.moveaxis(t.reshape(r, -1), 0, -1), 1e-3, None)
        base /= base.sum(axis=1, keepdims=True)
        cfg = np.zeros(n, dtype=np.int64)
        for p in net.parents(v):
            cfg = cfg * len(net.levels(p)) + cols[p]
        g = rng.standard_gamma(np.broadcast_to(SCALE_SHARPNESS * base, (n_users,) + base.shape))
        cum = (g / g.sum(axis=2, keepdims=True))[user, cfg].cumsum(axis=1)  # each row's user's table
        cols[v] = (cum < rng.random(n)[:, None]).sum(axis=1).clip(max=r - 1)
    df = pd.DataFrame({v: pd.Categorical.from_codes(cols[v], net.levels(v)) for v in cols})
    df["user"] = pd.Categorical.from_codes(user, [f"u{i}" for i in range(n_users)])
    return df, net.modelstring()


def _rss_mb() -> float:
    """This process's peak resident memory so far (MB; Linux reports KB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def scale_worker(kind: str, n_users: int, rows: int, rounds: int) -> dict:
    """One measurement in a process of its own (``--scale-worker``): ``fit`` times the
    pooled and the domain fit side by side (``rounds`` alternating rounds, the best of
    each) and adapt (the median of seven calls after a warm one, a new user of 20
    rows: elapsed and this process's CPU time, which a machine shared with other work
    inflates less); ``memory`` the domain fit's seconds and this process's peak memory."""
    df, ms = users_data(n_users, rows)
    nodes = [c for c in df if c != "user"]
    out: dict = {"users": n_users, "rows": rows, "rss_data_mb": _rss_mb()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "memory":
            t0 = time.perf_counter()
            bs.fit(ms, df, method="hmd", domain="user")
            out.update(domain_s=time.perf_counter() - t0, rss_mb=_rss_mb())
            return out
        bs.fit(ms, df.iloc[:2000], method="hmd", domain="user")  # compile, warm caches
        pooled, domain = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            bs.fit(ms, df[nodes], method="hmd")
            pooled.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            net = bs.fit(ms, df, method="hmd", domain="user")
            domain.append(time.perf_counter() - t0)
        new = users_data(1, 20, seed=1)[0].drop(columns="user")
        net.adapt(new, "newcomer")
        ts, cpu = [], []
        for _ in range(7):
            t0, c0 = time.perf_counter(), time.process_time()
            net.adapt(new, "newcomer")
            ts.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    out.update(pooled_s=min(pooled), domain_s=min(domain), adapt_ms=1e3 * float(np.median(ts)),
               adapt_cpu_ms=1e3 * float(np.median(cpu)))
    return out


def _in_process(*args: object) -> dict:
    """:func:`scale_worker` in a fresh Python process (its own peak memory)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--scale-worker", *map(str, args)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


HDIR_R = """
suppressMessages(library(bnlearn))
args <- commandArgs(TRUE)
d <- read.csv(args[1], colClasses = "factor")
dag <- model2network(args[2])
t <- system.time(fit <- bn.fit(dag, d, method = "hdir", group = "user"))
cat(t[["elapsed"]], "\n")
"""


def hdir_side_by_side(n_users: int, rows: int) -> dict:
    """bnlearn's ``bn.fit(method = "hdir", group = "user")`` (Rscript, the fit alone,
    timed by R) beside ours on the same data: the default domain fit and the replay
    of bnlearn's scheme (``compat="bnlearn"``), best of two each."""
    df, ms = users_data(n_users, rows)
    grouped = "[user]" + "".join(
        f"[{v}|{':'.join([*bs.DAG.from_modelstring(ms).parents(v), 'user'])}]" for v in bs.DAG.from_modelstring(ms).nodes)
    out = {"users": n_users, "rows": rows}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in (("ours_s", {}), ("ours_bnlearn_s", {"compat": "bnlearn"})):
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                bs.fit(ms, df, method="hmd", domain="user", **kw)
                times.append(time.perf_counter() - t0)
            out[name] = min(times)
    if shutil.which("Rscript") is None:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "users.csv", Path(tmp) / "hdir.R"
        df.to_csv(csv, index=False)
        script.write_text(HDIR_R)
        times = []
        for _ in range(2):
            res = subprocess.run(["Rscript", str(script), str(csv), grouped], capture_output=True, text=True)
            if res.returncode != 0:
                out["bnlearn_error"] = res.stderr.strip().splitlines()[-1:]
                return out
            times.append(float(res.stdout.split()[-1]))
        out["bnlearn_s"] = min(times)
    return out


def scale_main(sizes: list[int], rows: int, memory_users: int, memory_rows: int, hdir_users: int, rounds: int) -> None:
    """``--scale``: the done-when table of the many-user fits (every measurement in a
    process of its own, one after the other on this machine)."""
    print(f"asia, {rows} rows a user, every user's tables Dir({SCALE_SHARPNESS:g} * asia's); hmd", flush=True)
    print(f"{'users':>8s} {'pooled s':>9s} {'domain s':>9s} {'ratio':>6s} {'adapt ms':>9s} {'(cpu ms)':>9s}",
          flush=True)
    for n in sizes:
        r = _in_process("fit", n, rows, rounds)
        print(f"{n:8d} {r['pooled_s']:9.3f} {r['domain_s']:9.3f} {r['domain_s'] / r['pooled_s']:6.2f} "
              f"{r['adapt_ms']:9.2f} {r['adapt_cpu_ms']:9.2f}", flush=True)
    if memory_users:
        r = _in_process("memory", memory_users, memory_rows, 1)
        print(f"{memory_users} users x {memory_rows} rows: domain fit {r['domain_s']:.2f} s, peak memory "
              f"{r['rss_mb']:.0f} MB (the data alone {r['rss_data_mb']:.0f} MB)", flush=True)
    if hdir_users:
        r = hdir_side_by_side(hdir_users, rows)
        line = (f"{hdir_users} users x {rows} rows: ours {r['ours_s']:.2f} s (compat='bnlearn' "
                f"{r['ours_bnlearn_s']:.2f} s)")
        if "bnlearn_s" in r:
            line += (f", bnlearn hdir {r['bnlearn_s']:.2f} s: {r['bnlearn_s'] / r['ours_s']:.1f}x "
                     f"({r['bnlearn_s'] / r['ours_bnlearn_s']:.1f}x for the replay)")
        else:
            line += f", bnlearn not run ({r.get('bnlearn_error', 'Rscript not found')})"
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["gssvocab", "chile"])
    ap.add_argument("--rows", nargs="+", type=int, default=[30, 100])
    ap.add_argument("--methods", nargs="+", default=["hdp", "hmd"], choices=list(METHODS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--simulated", action="store_true", help="add the simulated data with known domain effects")
    ap.add_argument("--csv", help="write the table here")
    ap.add_argument("--lodo", type=int, nargs=2, metavar=("ROWS", "K"),
                    help="leave one domain out: ROWS per other domain (0: all), adapt from K rows")
    ap.add_argument("--seeds", type=int, nargs="+", default=[7], help="draws of the K rows (--lodo)")
    ap.add_argument("--far", action="store_true", help="--lodo on simulated domains, the last far from the rest")
    ap.add_argument("--oracle", action="store_true",
                    help="--lodo: also the best single s_domain per domain chosen with hindsight (an upper bound)")
    ap.add_argument("--regret", action="store_true",
                    help="adapt's regret to the better of pooled and separate: every domain left out, every draw "
                         "(--seeds) of --k rows, on --data (and 'six', the simulated six-domain set)")
    ap.add_argument("--k", type=int, default=20, help="--regret: rows adapting the left-out domain")
    ap.add_argument("--share", type=float, nargs="+",
                    help="--regret: prior probabilities of a new type to compare (default: the package's, 1/2; "
                         "1: never a copy of a fitted domain)")
    ap.add_argument("--bound", action="store_true",
                    help="--regret: also the least worst regret of pairs of draws on the six-domain set that no "
                         "estimator monotone in the counts can keep both within 0.01; on the two-node shapes, "
                         "exact bounds on any rule that sees only the rows' counts (_count_bound.py)")
    ap.add_argument("--rule", nargs="+", choices=["kde"],
                    help="--regret --bound on the two-node shapes: also score these rules exactly (kde: kernel-mixture "
                         "priors for the new domain learned from the fitted domains, _kde_rule.py)")
    ap.add_argument("--choices", action="store_true",
                    help="--regret: also rules chosen with hindsight on the held-out rows (one of adapt's choices "
                         "for every node, one per node, pooled or separate per node) and, on the two-node shapes, "
                         "the best monotone node-wise count rule")
    ap.add_argument("--scale", action="store_true",
                    help="many users on asia: pooled and domain fits, adapt's time, peak memory, bnlearn's hdir")
    ap.add_argument("--users", type=int, nargs="+", default=[1000, 10000], help="--scale: numbers of users")
    ap.add_argument("--user-rows", type=int, default=20, help="--scale: rows a user")
    ap.add_argument("--memory", type=int, nargs=2, default=[100000, 10], metavar=("USERS", "ROWS"),
                    help="--scale: the peak-memory fit (0 0: none)")
    ap.add_argument("--hdir-users", type=int, default=1000, help="--scale: users of the bnlearn hdir run (0: none)")
    ap.add_argument("--rounds", type=int, default=3, help="--scale: alternating timing rounds")
    ap.add_argument("--scale-worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scale_worker:
        kind, n, rows, rounds = args.scale_worker
        print(json.dumps(scale_worker(kind, int(n), int(rows), int(rounds))))
        return
    if args.scale:
        scale_main(args.users, args.user_rows, *args.memory, args.hdir_users, args.rounds)
        return
    if args.regret:
        names = args.data if args.data != ["gssvocab", "chile"] else ["gssvocab", "chile", "six"]
        seeds = args.seeds if args.seeds != [7] else [7, 1, 2, 3]
        if args.choices:
            choices_main(names, args.methods, seeds, args.k, args.csv)
            return
        res = regret_main(names, args.methods, seeds, args.k, args.csv, args.share)
        if args.bound:
            if "six" in names:
                regret_bound(args.methods[0], seeds, args.k)
            for name in names:
                if name in TWO_NODE_SHAPES:
                    count_bound_main(name, args.methods[0], res, seeds, args.k, args.rule)
        return
    if args.lodo:
        def data_for(name: str, seed: int) -> tuple:
            if name == "far":  # simulated: a population of its own for every seed
                return far_domain(seed)
            return load_dataset(name), structure(name).modelstring(), dataset_info(name)["domain"]

        names = ["far"] if args.far else args.data
        out = [lodo(name, *data_for(name, seed), args.lodo[0], args.lodo[1], m, seed, show=len(args.seeds) == 1,
                    oracle=args.oracle)
               for name in names for m in args.methods for seed in args.seeds]
        if args.csv:
            pd.concat(out).to_csv(args.csv, index=False)
        return
    out = []
    for name in args.data:
        rows = [r for r in args.rows if not (name == "chile" and r > 60)]  # region M has 75 rows
        out += run(name, load_dataset(name), structure(name).modelstring(), dataset_info(name)["domain"], rows,
                   args.methods, args.repeats)
    if args.simulated:
        df, ms, dom = simulated()
        out += run("simulated", df, ms, dom, [20, 50], args.methods, args.repeats)
    if args.csv:
        pd.DataFrame(out).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
