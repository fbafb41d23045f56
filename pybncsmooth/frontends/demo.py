"""The main job of the README: fit one network with several estimators on a
bundled real data set and compare them on held-out data."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd

from ..datasets import dataset_info, load_dataset, structure
from ..validation import check_choice, check_int, progress_bar
from .api import fit

__all__ = ["run_demo", "compare_estimators", "summarize", "leaders", "DEMO_METHODS"]

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
    progress: bool | None = False,
) -> pd.DataFrame:
    """Held-out log-likelihood per row for each estimator and training size.

    For each repeat the rows are shuffled; the last ``test_size`` rows are the
    test set and the first ``n`` rows the training set.  Returns one row per
    (repeat, train size, estimator): mean log-likelihood per test row (``-inf``
    if some test row has probability zero), the share of such rows, fit seconds.
    ``progress``: a bar over the fits on standard error (``None``: when it is a
    terminal); the fits' own bars stay off.
    """
    rng = np.random.default_rng(seed)
    rows = []
    bar = progress_bar(progress, repeats * len(train_sizes) * len(methods), "fits")
    try:
        for rep in range(repeats):
            perm = rng.permutation(len(data))
            test = data.iloc[perm[-test_size:]]
            pool = data.iloc[perm[:-test_size]]
            for n in train_sizes:
                for label, method, hyper in methods:
                    rows.append({"repeat": rep, "train_rows": n, "estimator": label,
                                 **_score(dag, pool.iloc[:n], test, method, hyper)})
                    if bar is not None:
                        bar.set_postfix_str(f"split {rep + 1}, {n} rows, {label}", refresh=False)
                        bar.update()
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows)


def _score(dag, train: pd.DataFrame, test: pd.DataFrame, method: str, hyper: dict) -> dict:
    """One fit on ``train`` scored on ``test``."""
    t0 = time.perf_counter()
    net = fit(dag, train, method=method, progress=False, **hyper)
    secs = time.perf_counter() - t0
    lp = net.logpdf(test)
    return {"loglik_per_row": float(lp.mean()), "impossible_rows": float(np.mean(np.isneginf(lp))),
            "fit_seconds": secs}


def summarize(res: pd.DataFrame, labels: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean and standard error over the splits of the held-out log-likelihood per row
    (rows: estimators in ``labels``' order, columns: training sizes).  The standard error
    is the splits' sample sd over the square root of their number (NaN with one split,
    or where a mean is ``-inf``)."""
    grouped = res.groupby(["estimator", "train_rows"])["loglik_per_row"]
    mean = grouped.mean().unstack().loc[list(labels)]
    with np.errstate(invalid="ignore"):
        se = (grouped.std(ddof=1) / np.sqrt(grouped.count())).unstack().loc[list(labels)]
    return mean, se.where(np.isfinite(mean))


def leaders(mean: pd.DataFrame, se: pd.DataFrame) -> pd.DataFrame:
    """Per training size (a column of :func:`summarize`'s tables), the estimator with the
    highest mean held-out log-likelihood, the runner-up, the gap between their means and
    the larger of their two standard errors; ``winner`` is the leader only where the gap
    exceeds that standard error, else empty.  Estimators with a ``-inf`` mean (a test
    row of probability zero) take no part; with one split there is no standard error and
    no winner.  The standard errors include how much the splits' test sets differ, which
    moves every estimator alike: the rule is conservative."""
    out = []
    for n in mean.columns:
        col = mean[n][np.isfinite(mean[n])].sort_values(ascending=False)
        if len(col) < 2:
            continue
        first, second = col.index[:2]
        gap = float(col.iloc[0] - col.iloc[1])
        err = float(max(se.at[first, n], se.at[second, n]))
        won = bool(np.isfinite(err) and gap > err)
        out.append({"train_rows": n, "leader": first, "runner_up": second, "gap": gap, "se": err,
                    "winner": first if won else ""})
    return pd.DataFrame(out).set_index("train_rows")


def _mean_se_table(mean: pd.DataFrame, se: pd.DataFrame) -> str:
    """``mean ± se`` cells, estimators as rows and training sizes as columns."""
    def cell(m: float, s: float) -> str:
        if not np.isfinite(m):
            return "-inf"
        return f"{m:.4f}" + (f" ± {s:.4f}" if np.isfinite(s) else "")

    cells = pd.DataFrame({f"{n} rows": [cell(m, s) for m, s in zip(mean[n], se[n])] for n in mean.columns},
                         index=mean.index)
    cells.index.name = None
    return cells.to_string()


def _print_leaders(lead: pd.DataFrame, repeats: int) -> None:
    if repeats < 2:
        print("\nOne split gives no standard error, so no estimator is named best (use --repeats 2 or more).")
        return
    print("\nBest estimator by training size (named only where the leader's gap to the runner-up")
    print("exceeds the standard errors of both means):")
    for n, row in lead.iterrows():
        lead_by = f"{row['leader']} ahead of {row['runner_up']} by {row['gap']:.4f}"
        if row["winner"]:
            print(f"  {n:>5} rows: {row['winner']} ({lead_by}; standard error {row['se']:.4f})")
        else:
            print(f"  {n:>5} rows: no clear winner ({lead_by}, within the standard error {row['se']:.4f})")


def run_demo(seed: int = 2024, repeats: int = 10, dataset: str = "asia", progress: bool | None = None) -> pd.DataFrame:
    """Print a comparison of the estimators on ``dataset`` and return the raw results.

    ``progress``: a bar over the fits on standard error while they run (``None``, the
    default: only when standard error is a terminal)."""
    repeats = check_int("repeats", repeats, low=1)
    progress = check_choice("progress", progress, (None, True, False))
    data = load_dataset(dataset)
    dag = structure(dataset)
    info = dataset_info(dataset)
    sizes = [50, 200, 1000, 4000]
    labels = [m[0] for m in DEMO_METHODS]
    print(f"pybncsmooth demo: {dataset} ({info['source']}), {len(data)} rows")
    print(f"structure: {dag.modelstring()}")
    print(f"{repeats} random splits; 1000 held-out rows; training sets of {', '.join(map(str, sizes))} rows")
    print(f"fitting {len(labels)} estimators x {len(sizes)} sizes x {repeats} splits ...\n", flush=True)
    res = compare_estimators(data, dag, train_sizes=sizes, test_size=1000, repeats=repeats, seed=seed,
                             progress=progress)
    mean, se = summarize(res, labels)
    print("Mean held-out log-likelihood per row ± its standard error over the splits (nats;")
    print("higher is better; -inf: some test row has probability zero under the fitted network):")
    print(_mean_se_table(mean, se))
    imp = res.pivot_table(index="train_rows", columns="estimator", values="impossible_rows", aggfunc="mean")[labels]
    print("\nShare of held-out rows with probability zero:")
    with pd.option_context("display.width", 160, "display.float_format", "{:.2%}".format):
        print(imp.to_string())
    _print_leaders(leaders(mean, se), repeats)
    t = res.groupby("estimator")["fit_seconds"].median()[labels] * 1000
    print("Median fit time (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()))
    return res
