"""Domain-pooled hierarchical Multinomial-Dirichlet (``hmd``) against bnlearn's ``hdir``.

Fits ``alarm_grouped`` (20000 rows, 37 nodes, 10 groups) and ``asia_grouped``
(5000 rows, 8 nodes, 8 groups) with ``method="hmd", compat="bnlearn"`` and prints,
measured in this one run:

* our time (whole ``fit``: encoding, counting, the variational fit of every node)
  on one thread and on all cores, and the converged (default) mode;
* the ratio to bnlearn's ``bn.fit(dag, data, method = "hdir", group = "group")``
  CPU time recorded in ``tests/data/bnlearn/bnlearn_run_info.json`` (0.648 s for
  alarm, 0.0165 s per call for asia, on the project's 2-core machine; this script
  does not run R, so the bnlearn figure is always the recorded one);
* the ratio to a naive NumPy/SciPy version of the same iteration (vectorised over
  the cells of a node, SciPy's digamma), which must give the same tables;
* the largest difference to bnlearn's golden tables.

Run: ``python benchmarks/bench_hmd.py`` (``--repeat N`` for more timing runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import digamma, gammaln, polygamma

import pybncsmooth as bs

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "data" / "bnlearn"
EPS = np.sqrt(np.finfo(float).eps)


def load(name: str) -> tuple[pd.DataFrame, str]:
    levels = json.loads((REF / f"{name}.levels.json").read_text())
    df = pd.read_csv(REF / f"{name}.csv.gz", dtype=str, keep_default_na=False, na_values=[""])
    for c in levels["columns"]:
        df[c] = pd.Categorical(df[c], categories=levels["levels"][c])
    return df, (REF / f"{name}.modelstring.txt").read_text().strip()


def golden(name: str) -> dict[str, np.ndarray]:
    raw = json.loads((REF / f"{name}.hdir_default.json").read_text())
    return {
        n: np.reshape(np.array(nd["prob"], dtype=float), nd["shape"], order="F")
        for n, nd in raw["nodes"].items()
        if n != "group"
    }


# ----------------------------------------------------------------------------- the naive version
def _bkt(k, tau, D, a0, s, J):
    A = a0 - tau * k + J * (1 - s * k)
    R = len(k)
    return (
        np.sum((digamma(tau * k) - digamma(tau)) * A + gammaln(tau * k) - J * gammaln(s * k))
        + np.sum(J * (s * k - 1) * np.log(k) + s * k * D)
        - gammaln(tau)
        - s * J * (R - 1) / tau
    )


def _bound(N, nu, k, tau, a0, s):
    R, J = N.shape
    col = nu.sum(axis=0)
    t = np.sum((N + s * k[:, None] - nu) * (digamma(nu) - digamma(col)) + gammaln(nu)) - gammaln(col).sum()
    tk = tau * k
    t += np.sum(-J * gammaln(s * k) + J * (s * k - 1) * (np.log(k) - digamma(tk) + digamma(tau)))
    t += np.sum(-gammaln(a0) + gammaln(tk) + (a0 - tk) * (digamma(tk) - digamma(tau)))
    return t + J * gammaln(s) - s / tau * J * (R - 1) - gammaln(tau)


def naive_hdir(N: np.ndarray, s: float, alpha0: float = 1.0) -> np.ndarray:
    """bnlearn's hdir iteration (the reference README's description) in NumPy."""
    R, J = N.shape
    a0 = np.full(R, alpha0)
    nu = np.full((R, J), 1.0 / R)
    k = np.full(R, 1.0 / R)
    b_prev = 0.0
    for _ in range(200):
        D = digamma(nu).sum(axis=1)
        bkt_prev = 0.0
        for inner in range(200):
            start = tau = 100.0
            for _ in range(200):
                A = a0 - tau * k + J * (1 - s * k)
                q1 = polygamma(1, tau * k)
                g = np.sum((q1 * k - polygamma(1, tau)) * A) + s * J * (R - 1) / tau**2
                h = np.sum((polygamma(2, tau * k) * k**2 - polygamma(2, tau)) * A - (q1 * k - polygamma(1, tau)) * k)
                h -= 2 * s * J * (R - 1) / tau**3
                new = np.exp(np.log(tau) - g / (h * tau + g))
                if new < EPS or np.isnan(new):
                    start *= 10
                    tau = start
                else:
                    tau = new
                if abs(g) < EPS:
                    break
            k = np.full(R, 1.0 / R)
            L = _bkt(k, tau, D, a0, s, J)
            for _ in range(200):
                L_old = L
                tk = tau * k
                A = a0 - tk + J * (1 - s * k)
                q1 = polygamma(1, tk)
                g = tau * q1 * A - s * J * (digamma(tk) + digamma(s * k) - np.log(k) - 1) - J / k + s * D
                h = tau**2 * polygamma(2, tk) * A - tau * q1 * (tau + 2 * s * J) - s * s * J * polygamma(1, s * k)
                h += s * J / k + J / k**2
                d = (np.sum(g / h) / np.sum(1 / h) - g) / h
                dec, inc = -np.sum(h * d * d), np.sum(g * d)
                t = min(1.0, np.min((k[d < 0] - 1e-10) / -d[d < 0], initial=1.0))
                knew = k
                while L < L_old + 0.4 * t * inc and t > EPS:
                    knew = k + t * d
                    L = _bkt(knew, tau, D, a0, s, J)
                    t *= 0.9
                k = knew
                if dec < 2 * EPS or t < EPS:
                    break
            b = _bkt(k, tau, D, a0, s, J)
            if inner > 0 and abs(b - bkt_prev) < EPS * abs(bkt_prev):
                break
            bkt_prev = b
        k = np.maximum(k, EPS)
        nu = s * k[:, None] + N
        b = _bound(N, nu, k, tau, a0, s)
        b_prev = b_prev or 1e-10
        if abs(b - b_prev) < EPS * abs(b_prev):
            break
        b_prev = b
    return nu


def naive_fit(df: pd.DataFrame, net: bs.FittedNetwork, iss: float = 1.0) -> dict[str, np.ndarray]:
    """Counts by pandas, then the NumPy iteration, node by node."""
    J = len(df["group"].cat.categories)
    out = {}
    for node in net.nodes:
        dims = [node, *net.parents(node), "group"]
        shape = [len(df[d].cat.categories) for d in dims]
        counts = df.groupby(dims, observed=False).size().to_numpy(dtype=float).reshape(shape)
        N = counts.reshape(-1, J, order="F")  # rows (x, pa) with x fastest, one column per group
        nu = naive_hdir(N, iss / J)
        t = nu.reshape(shape, order="F")
        out[node] = t / t.sum(axis=0, keepdims=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    info = json.loads((REF / "bnlearn_run_info.json").read_text())["cpu_timings_s"]
    ref = {"alarm_grouped": info["alarm_grouped_hdir"], "asia_grouped": info["asia_grouped_hdir_per_call_batch20"]}
    cores = os.cpu_count() or 1
    print(f"hmd (compat='bnlearn') vs bnlearn hdir CPU time (recorded, not timed in this run: "
          f"tests/data/bnlearn/bnlearn_run_info.json); {cores} core(s); "
          f"ours warm: best of {args.repeat} after a warm-up call, in one process")
    print(
        f"{'data set':<15} {'1 thread':>9} {'all cores':>9} {'converged':>9} {'bnlearn':>8} "
        f"{'ratio 1t':>8} {'ratio all':>9} {'naive':>8} {'vs naive':>8} {'max |diff| bnlearn':>18}"
    )
    for name in ("alarm_grouped", "asia_grouped"):
        df, ms = load(name)

        def run(ms=ms, df=df, **kw):
            return bs.fit(ms, df, method="hmd", group="group", **kw)

        t1 = best_time(lambda: run(compat="bnlearn", n_jobs=1), args.repeat, label="hmd, bnlearn-compatible, 1 thread")
        tall = best_time(lambda: run(compat="bnlearn", n_jobs=cores), args.repeat, label="hmd, bnlearn-compatible, all cores")
        tconv = best_time(lambda: run(n_jobs=cores), args.repeat, label="hmd, converged, all cores")
        net = run(compat="bnlearn")
        gold = golden(name)
        diff = max(float(np.abs(net.cpt(n) - gold[n]).max()) for n in net.nodes)
        tn = best_time(lambda df=df, net=net: naive_fit(df, net), 1)
        naive = naive_fit(df, net)
        ndiff = max(float(np.abs(net.cpt(n) - naive[n]).max()) for n in net.nodes)
        if ndiff > 1e-6:
            print(f"  naive version differs by {ndiff:.2e}", file=sys.stderr)
        print(
            f"{name:<15} {t1:9.4f} {tall:9.4f} {tconv:9.4f} {ref[name]:8.4f} {ref[name] / t1:7.2f}x "
            f"{ref[name] / tall:8.2f}x {tn:8.3f} {tn / t1:7.1f}x {diff:18.1e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
