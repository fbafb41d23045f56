"""Classifier speed: TAN prediction throughput and selective kDB's selection cost.

1. ``predict_proba`` of a TAN on 20 categorical features (4 levels, 2 classes),
   trained on 20000 rows, over 1,000,000 rows: rows/s (goal >= 1M rows/s), and the
   ratio to a naive per-row Python loop over the same CPTs (timed on 2000 rows).
2. Selective kDB on letter recognition (20000 rows, 16 features discretised into
   5 equal-frequency bins, 26 classes), k = 5: the time of the leave-one-out
   selection relative to one plain kDB-5 fit, and to what refitting without each
   row would cost (estimated from one refit per sub-model, times the rows).

Run: ``python benchmarks/bench_classifiers.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]


def tan_throughput() -> None:
    rng = np.random.default_rng(0)
    n, p = 20000, 20
    cats = [str(v) for v in range(4)]
    y = rng.integers(0, 2, n)
    cols = {}
    prev = y
    for i in range(p):  # a chain of dependent features so TAN has something to find
        v = np.where(rng.random(n) < 0.6, (prev + rng.integers(0, 2, n)) % 4, rng.integers(0, 4, n))
        cols[f"f{i}"] = pd.Categorical.from_codes(v, categories=cats)
        prev = v
    X = pd.DataFrame(cols)
    clf = bs.BNClassifier(structure="tan", method="mestimate").fit(X, pd.Series(y.astype(str)))
    N = 1_000_000
    Xt = pd.DataFrame({f"f{i}": pd.Categorical.from_codes(rng.integers(0, 4, N), categories=cats) for i in range(p)})
    t = best_time(lambda: clf.predict_proba(Xt))

    # naive: one Python loop per row over the dense tables
    net, target = clf.network_, clf.target_
    tables = {f: net.cpt(f) for f in net.nodes}
    prior = tables[target]
    small = Xt.iloc[:2000]
    codes = {f: small[f].cat.codes.to_numpy() for f in small.columns}

    def naive():
        out = np.empty((len(small), 2))
        for i in range(len(small)):
            lp = np.log(prior).copy()
            for f in small.columns:
                pa = net.parents(f)
                idx = [codes[f][i]] + [slice(None) if q == target else codes[q][i] for q in pa]
                lp += np.log(tables[f][tuple(idx)])
            e = np.exp(lp - lp.max())
            out[i] = e / e.sum()
        return out

    t_naive = best_time(naive, 1) / len(small) * N
    np.testing.assert_allclose(naive(), clf.predict_proba(small), rtol=1e-10)
    print(f"TAN predict_proba, {p} features, {N:,} rows: {t:.3f} s = {N / t:,.0f} rows/s (goal >= 1,000,000; "
          "warm: best of 3 after a warm-up call, in one process)")
    print(f"  naive per-row loop (timed on 2000 rows): {N / t_naive:,.0f} rows/s; speed-up {t_naive / t:,.0f}x")


def skdb_cost() -> None:
    raw = pd.read_csv(ROOT / "vignettes" / "data" / "uci" / "letterrecognition.csv.gz")
    y = raw.iloc[:, 0].astype(str)
    X = bs.EqualFrequencyDiscretizer(n_bins=5).fit(raw.iloc[:, 1:]).transform(raw.iloc[:, 1:])
    df = X.assign(lettr=y.to_numpy())
    k = 5
    t_kdb = best_time(lambda: bs.fit("lettr ~ .", df, structure="kdb", k=k, method="mestimate", na="error"))
    t_struct = best_time(lambda: bs.learn_structure(df, "lettr", "kdb", k=k))
    t_skdb = best_time(lambda: bs.learn_skdb(df, "lettr", k, na="error"))
    dag, info = bs.learn_skdb(df, "lettr", k, na="error", return_info=True)
    sel = info.extra["selection"]
    t_one = best_time(lambda: bs.fit(info.extra["full_kdb"], df, method="mestimate"), 1)
    n_sub = (k + 1) * len(sel.order)
    print(
        f"SkDB-{k} on letter recognition ({len(df)} rows, {df.shape[1] - 1} features, 26 classes): "
        f"chose k* = {sel.k} and {sel.n_attributes} attributes; times warm: best of 3 after a warm-up "
        "call, in one process"
    )
    print(f"  one plain kDB-{k} fit (structure + CPTs): {t_kdb:.3f} s (structure learning alone {t_struct:.3f} s)")
    print(
        f"  SkDB-{k} selection (kDB structure + counts + LOO over {n_sub} sub-models): {t_skdb:.3f} s "
        f"= {t_skdb / t_kdb:.2f}x one kDB fit"
    )
    print(f"  refitting each sub-model without each row would take about {t_one * n_sub * len(df) / 3600:,.0f} hours")


def main() -> int:
    tan_throughput()
    skdb_cost()
    return 0


if __name__ == "__main__":
    sys.exit(main())
