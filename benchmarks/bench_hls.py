"""Hierarchical linear smoothing (``hls``, ``hls-bayes``) against the authors' code.

On the four Table-3 sets of the HDP reference (child ``X``, parents ``P1..P4`` of
cardinality 2 or 5, 1000 or 100000 rows) prints, measured in this one run:

* ridge ``hls``: our whole ``fit`` (encoding, counting, the solve to
  ``max |gradient| <= 1e-9``) and the solve alone, their ratios to the authors'
  recorded times (``tests/data/hls/README.md``: with counting 0.0099 / 0.295 /
  0.473 / 1.678 s, fit only 0.0057 / 0.289 / 0.077 / 1.262 s, same machine, one
  thread), the distance to the exact optimum, and a naive solver of the same
  objective (SciPy's L-BFGS with the analytic gradient on a sparse design) for scale;
* ``hls-bayes`` with the authors' 2000 burn-in + 2000 kept sweeps, against their
  recorded 28 s (card 2) and 208 s (card 5) on the 1000-row sets;
* how the ridge fit grows with tree depth: kDB-1..5 on letter recognition (20000
  rows, MDL-discretised), tree nodes against the dense design's columns.

Run: ``python benchmarks/bench_hls.py`` (``--quick`` skips the 100000-row HLS-IG runs).
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.sparse

import pybncsmooth as bs
from pybncsmooth.counting.context_tree import ContextTree
from pybncsmooth.estimators import HLS
from pybncsmooth.estimators.hls.estimator import flatten_tree
from pybncsmooth.model.cpd import TreeCPD

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
HLSREF = ROOT / "tests" / "data" / "hls"
TABLE3 = ROOT / "tests" / "data" / "hdp" / "table3"
AUTHORS_FIT = {(2, 1000): 0.0057, (5, 1000): 0.289, (2, 100000): 0.077, (5, 100000): 1.262}
AUTHORS_ALL = {(2, 1000): 0.0099, (5, 1000): 0.295, (2, 100000): 0.473, (5, 100000): 1.678}
AUTHORS_IG = {(2, 1000): 28.0, (5, 1000): 208.0}
FORMULAS = ["X ~ P1 + P2 + P3 + P4"] + [f"P{i} ~ 1" for i in range(1, 5)]


def table3(card: int, n: int) -> pd.DataFrame:
    suffix = ".gz" if n == 100000 else ""
    df = pd.read_csv(TABLE3 / f"table3_card{card}_n{n}.csv{suffix}")
    return pd.DataFrame({c: pd.Categorical(df[c], categories=list(range(card))) for c in df.columns})


def naive_lbfgs(tree: ContextTree) -> tuple[float, float]:
    """The same objective on an explicit sparse design, minimised by SciPy's L-BFGS."""
    parent, leaf0, counts, _, _ = flatten_tree(tree)
    n, (m, r) = len(parent), counts.shape
    K = r if r >= 3 else 1
    rows, cols = [], []
    for j in range(m):
        v = leaf0 + j
        while v > 0:
            rows.append(j)
            cols.append(v - 1)
            v = parent[v]
    U = scipy.sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, n - 1))
    N = counts.sum(axis=1)

    def fg(x):
        Bm = x.reshape(n - 1, K)
        E = U @ Bm
        full = E if K == r else np.column_stack([np.zeros(m), E])
        mx = full.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(full - mx).sum(axis=1))
        p = np.exp(full - lse[:, None])
        f = float((N * lse).sum() - (counts * full).sum() + 0.5 * (x @ x))
        R = N[:, None] * p - counts
        g = (U.T @ (R if K == r else R[:, 1:])).ravel() + x
        return f, g

    t0 = time.perf_counter()
    res = scipy.optimize.minimize(
        fg, np.zeros((n - 1) * K), jac=True, method="L-BFGS-B", options={"gtol": 1e-9, "maxiter": 20000}
    )
    return time.perf_counter() - t0, float(np.abs(res.jac).max())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)

    print("Ridge HLS (tau = 1), one thread; times in seconds (ours warm: best of", args.repeat,
          "after a warm-up call, in one process)")
    print(
        f"{'data set':<15}{'nodes':>6}{'fit()':>9}{'authors':>9}{'ratio':>8}{'solve':>9}{'authors':>9}{'ratio':>8}"
        f"{'|opt diff|':>11}{'L-BFGS':>8}{'its':>5}"
    )
    for card, n in [(2, 1000), (5, 1000), (2, 100000), (5, 100000)]:
        df = table3(card, n)
        t_all = best_time(lambda df=df: bs.fit(FORMULAS, df, method="hls", n_jobs=1), args.repeat)
        counts = pd.read_csv(HLSREF / f"counts_card{card}_n{n}.csv").to_numpy()
        cfg = np.array(list(itertools.product(range(card), repeat=4)))
        tree = ContextTree.from_leaves("X", ["P1", "P2", "P3", "P4"], card, [card] * 4, cfg, counts)
        t_fit = best_time(lambda tree=tree: HLS().estimate(tree), args.repeat)
        est = HLS().estimate(tree)
        opt = pd.read_csv(HLSREF / f"hls_ridge_optimum_card{card}_n{n}.csv").to_numpy()
        diff = np.abs(TreeCPD(tree, est).probs(cfg) - opt).max()
        t_naive, _ = naive_lbfgs(tree)
        key = (card, n)
        print(
            f"card{card}_n{n:<8}{tree.n_nodes:>6}{t_all:9.4f}{AUTHORS_ALL[key]:9.4f}{AUTHORS_ALL[key] / t_all:7.0f}x"
            f"{t_fit:9.4f}{AUTHORS_FIT[key]:9.4f}{AUTHORS_FIT[key] / t_fit:7.0f}x{diff:11.1e}{t_naive:8.3f}"
            f"{est.info['iterations']:>5}"
        )

    print("\nHLS-IG (hls-bayes), 2000 burn-in + 2000 kept sweeps, one chain, one thread; "
          "one run each in one process: the first row cold (it loads the sampler's compiled kernels), the others warm")
    print(f"{'data set':<15}{'ours (s)':>9}{'authors':>9}{'ratio':>8}{'us/sweep':>9}")
    sets = [(2, 1000), (5, 1000)] + ([] if args.quick else [(2, 100000), (5, 100000)])
    for card, n in sets:
        df = table3(card, n)
        t0 = time.perf_counter()
        bs.fit(FORMULAS, df, method="hls-bayes", iterations=4000, burn_in=2000, random_state=0, n_jobs=1)
        t = time.perf_counter() - t0
        ref = AUTHORS_IG.get((card, n))
        ratio = f"{ref / t:7.0f}x" if ref else "      -"
        print(f"card{card}_n{n:<8}{t:9.2f}{ref if ref else float('nan'):9.0f}{ratio}{t / 4000 * 1e6:9.0f}")

    print("\nRidge HLS on letter recognition (20000 rows, MDL; features left with one bin dropped): kDB-k, one thread; "
          "warm: one run after a warm-up call, in one process")
    letters = pd.read_csv(ROOT / "vignettes" / "data" / "uci" / "letterrecognition.csv.gz")
    target = letters.columns[0]
    X = bs.MDLDiscretizer().fit(letters.drop(columns=target), letters[target]).transform(letters.drop(columns=target))
    X = X[[c for c in X.columns if X[c].nunique() > 1]]  # MDL leaves some features one bin
    data = bs.classifiers.crossval.categorize(pd.concat([letters[[target]], X], axis=1))
    print(f"{'k':>3}{'tree nodes':>12}{'dense columns':>15}{'fit (s)':>10}{'mestimate (s)':>15}")
    for k in range(1, 6):
        dag = bs.learn_structure(data, target, kind="kdb", k=k)
        t = best_time(lambda dag=dag: bs.fit(dag, data, method="hls", n_jobs=1), 1)
        tm = best_time(lambda dag=dag: bs.fit(dag, data, method="mestimate"), 1)
        net = bs.fit(dag, data, method="mestimate")
        nodes = sum(net.tree(v).n_nodes for v in net.nodes)
        dense = 0
        for v in net.nodes:
            q = 1
            for p in net.parents(v):
                q *= len(net.levels(p))
                dense += q
        print(f"{k:>3}{nodes:>12,}{dense:>15,}{t:10.3f}{tm:15.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
