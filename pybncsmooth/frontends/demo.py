"""The main job of the README: fit one network with several estimators on a
bundled real data set and compare them on held-out data."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd

from ..datasets import dataset_info, load_dataset, structure
from ..validation import check_int
from .api import fit

__all__ = ["run_demo", "compare_estimators", "DEMO_METHODS"]

#: (label, method, hyperparameters) compared by the demo
DEMO_METHODS: list[tuple[str, str, dict]] = [
    ("mle", "mle", {}),
    ("bayes iss=1", "bayes", {"iss": 1}),
    ("bayes iss=10", "bayes", {"iss": 10}),
    ("mestimate m=1", "mestimate", {"m": 1}),
    ("hdp", "hdp", {"iterations": 2000, "random_state": 0}),
    ("hmd", "hmd", {}),
    ("hls", "hls", {}),
]


def compare_estimators(
    data: pd.DataFrame,
    dag,
    *,
    train_sizes: Sequence[int],
    test_size: int,
    repeats: int,
    seed: int,
    methods: Sequence[tuple[str, str, dict]] = tuple(DEMO_METHODS),
) -> pd.DataFrame:
    """Held-out log-likelihood per row for each estimator and training size.

    For each repeat the rows are shuffled; the last ``test_size`` rows are the
    test set and the first ``n`` rows the training set.  Returns one row per
    (repeat, train size, estimator): mean log-likelihood per test row (``-inf``
    if some test row has probability zero), the share of such rows, fit seconds.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(repeats):
        perm = rng.permutation(len(data))
        test = data.iloc[perm[-test_size:]]
        pool = data.iloc[perm[:-test_size]]
        for n in train_sizes:
            train = pool.iloc[:n]
            for label, method, hyper in methods:
                t0 = time.perf_counter()
                net = fit(dag, train, method=method, **hyper)
                secs = time.perf_counter() - t0
                lp = net.logpdf(test)
                rows.append(
                    {
                        "repeat": rep,
                        "train_rows": n,
                        "estimator": label,
                        "loglik_per_row": float(lp.mean()),
                        "impossible_rows": float(np.mean(np.isneginf(lp))),
                        "fit_seconds": secs,
                    }
                )
    return pd.DataFrame(rows)


def run_demo(seed: int = 2024, repeats: int = 10, dataset: str = "asia") -> pd.DataFrame:
    """Print a comparison of the estimators on ``dataset`` and return the raw results."""
    repeats = check_int("repeats", repeats, low=1)
    data = load_dataset(dataset)
    dag = structure(dataset)
    info = dataset_info(dataset)
    sizes = [50, 200, 1000, 4000]
    res = compare_estimators(data, dag, train_sizes=sizes, test_size=1000, repeats=repeats, seed=seed)
    labels = [m[0] for m in DEMO_METHODS]
    print(f"pybncsmooth demo: {dataset} ({info['source']}), {len(data)} rows")
    print(f"structure: {dag.modelstring()}")
    print(f"{repeats} random splits; 1000 held-out rows; training sets of {', '.join(map(str, sizes))} rows\n")
    ll = res.pivot_table(index="train_rows", columns="estimator", values="loglik_per_row", aggfunc="mean")[labels]
    print("Mean held-out log-likelihood per row (nats; higher is better; -inf: some test row")
    print("has probability zero under the fitted network):")
    with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
        print(ll.to_string())
    imp = res.pivot_table(index="train_rows", columns="estimator", values="impossible_rows", aggfunc="mean")[labels]
    print("\nShare of held-out rows with probability zero:")
    with pd.option_context("display.width", 160, "display.float_format", "{:.2%}".format):
        print(imp.to_string())
    finite = ll.replace(-np.inf, np.nan)
    best = finite.idxmax(axis=1)
    print("\nBest estimator by training size: " + ", ".join(f"{n} rows: {b}" for n, b in best.items()))
    t = res.groupby("estimator")["fit_seconds"].median()[labels] * 1000
    print("Median fit time (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()))
    return res
