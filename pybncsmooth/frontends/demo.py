"""The main job of the README: fit one network with several estimators on a
bundled real data set and compare them on held-out data."""

from __future__ import annotations

import sys
import time
from typing import Sequence

import numpy as np
import pandas as pd

from ..datasets import dataset_info, load_dataset, structure
from ..validation import check_choice, check_int, progress_bar
from .api import fit

__all__ = ["run_demo", "compare_estimators", "summarize", "paired_difference", "leaders", "DEMO_METHODS"]

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
    stages: bool = False,
) -> pd.DataFrame:
    """Held-out log-likelihood per row for each estimator and training size.

    For each repeat the rows are shuffled; the last ``test_size`` rows are the
    test set and the first ``n`` rows the training set.  Returns one row per
    (repeat, train size, estimator): mean log-likelihood per test row (``-inf``
    if some test row has probability zero), the share of such rows, fit seconds.
    ``progress``: a bar over the fits on standard error (``None``: when it is a
    terminal); the fits' own bars stay off.  ``stages``: a line on standard output per
    split, each training size written as its fits finish (for output that is not a
    terminal, where no bar is drawn).
    """
    rng = np.random.default_rng(seed)
    rows = []
    bar = progress_bar(progress, repeats * len(train_sizes) * len(methods), "fits")
    try:
        for rep in range(repeats):
            perm = rng.permutation(len(data))
            test = data.iloc[perm[-test_size:]]
            pool = data.iloc[perm[:-test_size]]
            t0 = time.perf_counter()
            if stages:
                print(f"split {rep + 1} of {repeats}: fitted on", end="", flush=True)
            for n in train_sizes:
                for label, method, hyper in methods:
                    rows.append({"repeat": rep, "train_rows": n, "estimator": label,
                                 **_score(dag, pool.iloc[:n], test, method, hyper)})
                    if bar is not None:
                        bar.set_postfix_str(f"split {rep + 1}, {n} rows, {label}", refresh=False)
                        bar.update()
                if stages:
                    print(f" {n}", end="", flush=True)
            if stages:
                print(f" rows ({time.perf_counter() - t0:.1f} s)", flush=True)
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


def paired_difference(res: pd.DataFrame, first: str, second: str, train_rows: int) -> dict:
    """Estimator ``first`` against ``second`` at ``train_rows`` training rows, paired on
    the splits (both scored on the same test rows after training on the same rows): the
    mean over the splits of the difference of their held-out log-likelihoods per row,
    its standard error (the differences' sample sd over the square root of their number),
    and the splits ``first`` won.  The test sets' shared variation cancels in each
    difference, which comparing each estimator's own spread over the splits keeps.
    An infinite difference (a test row of probability zero) has no standard error."""
    sub = res[res["train_rows"] == train_rows].pivot(index="repeat", columns="estimator", values="loglik_per_row")
    with np.errstate(invalid="ignore"):
        d = (sub[first] - sub[second]).to_numpy(dtype=np.float64)
    k = len(d)
    finite = bool(np.isfinite(d).all())
    se = float(np.std(d, ddof=1) / np.sqrt(k)) if finite and k > 1 else float("nan")
    return {"diff": float(d.mean()), "se": se, "won": int(np.sum(d > 0)), "splits": k}


def _differ(pair: dict, level: float) -> bool:
    """Whether the paired t-test rejects "no difference" at ``level`` (two-sided) in favour
    of the first estimator of ``pair`` (:func:`paired_difference`)."""
    from scipy.stats import t as student_t

    k, gap, err = pair["splits"], pair["diff"], pair["se"]
    if k < 2 or not np.isfinite(err) or gap <= 0:
        return False
    return bool(err == 0 or gap / err > student_t.ppf(0.5 + level / 2, k - 1))


def leaders(res: pd.DataFrame, labels: Sequence[str], level: float = 0.95) -> pd.DataFrame:
    """Per training size, the estimator with the highest mean held-out log-likelihood, the
    runner-up, and the leader compared with each other estimator paired on the same
    splits (:func:`paired_difference`): against the runner-up, the mean difference
    ``gap``, its standard error ``se`` and the splits the leader ``won`` of ``splits``;
    ``tied``, the estimators the paired t-test at ``level`` (two-sided: ``gap / se``
    beyond Student's t quantile with ``splits - 1`` degrees of freedom) does not tell
    from the leader.  ``winner`` is the leader where none is tied with it, else empty.
    Estimators with a ``-inf`` mean (a test row of probability zero) take no part; with
    one split there is no standard error and no winner."""
    mean, _ = summarize(res, labels)
    out = []
    for n in mean.columns:
        col = mean[n][np.isfinite(mean[n])].sort_values(ascending=False, kind="stable")
        if len(col) < 2:
            continue
        first = col.index[0]
        pairs = {other: paired_difference(res, first, other, n) for other in col.index[1:]}
        tied = [other for other, pair in pairs.items() if not _differ(pair, level)]
        second = col.index[1]
        out.append({"train_rows": n, "leader": first, "runner_up": second, "gap": pairs[second]["diff"],
                    "se": pairs[second]["se"], "won": pairs[second]["won"], "splits": pairs[second]["splits"],
                    "tied": tied, "winner": "" if tied else first})
    return pd.DataFrame(out).set_index("train_rows")


def _paired_table(res: pd.DataFrame, labels: Sequence[str], lead: pd.DataFrame, level: float = 0.95) -> str:
    """Per training size (columns), the leader minus each estimator (rows), paired on the
    splits: ``diff ± se k/m``, ``*`` where the paired t-test tells them apart."""
    cells = {}
    for n, row in lead.iterrows():
        col = []
        for label in labels:
            if label == row["leader"]:
                col.append("leader")
                continue
            pair = paired_difference(res, row["leader"], label, n)
            if not np.isfinite(pair["diff"]):
                col.append("inf")
                continue
            mark = " *" if _differ(pair, level) else "  "
            col.append(f"{_num(pair['diff'], '+')} ± {_num(pair['se'])} {pair['won']}/{pair['splits']}{mark}")
        cells[f"{n} rows"] = col
    table = pd.DataFrame(cells, index=list(labels))
    return table.to_string()


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


def _print_leaders(res: pd.DataFrame, labels: Sequence[str], repeats: int) -> None:
    if repeats < 2:
        print("\nOne split gives no standard error, so no estimator is named best (use --repeats 2 or more).")
        return
    lead = leaders(res, labels)
    print("\nPaired on the same splits: each size's leader minus each estimator (mean difference")
    print("of the log-likelihood per row ± its standard error, splits the leader won; *: a paired")
    print("t-test at the 5% level tells them apart; inf: the estimator gave a test row probability zero):")
    print(_paired_table(res, labels, lead))
    print("\nBest estimator by training size (named where the paired test tells it from every other):")
    finite = res.groupby(["train_rows", "estimator"])["loglik_per_row"].min().gt(-np.inf)
    for n, row in lead.iterrows():
        pair = (f"{row['leader']} - {row['runner_up']}: {_num(row['gap'], '+')} ± {_num(row['se'])}, "
                f"{row['won']}/{row['splits']} splits")
        if row["winner"]:
            print(f"  {n:>5} rows: {row['winner']} ({pair})")
        elif len(row["tied"]) + 1 < int(finite[n].sum()):
            print(f"  {n:>5} rows: {', '.join([row['leader'], *row['tied']])}, not told apart ({pair}); "
                  "ahead of the others")
        else:
            print(f"  {n:>5} rows: no clear winner ({pair})")


def _num(x: float, sign: str = "") -> str:
    """Four decimals, or two significant digits below 0.001 (a standard error of 0.00004)."""
    return f"{x:{sign}.4f}" if not np.isfinite(x) or x == 0 or abs(x) >= 0.001 else f"{x:{sign}.1e}"


def run_demo(seed: int = 2024, repeats: int = 10, dataset: str = "asia", progress: bool | None = None) -> pd.DataFrame:
    """Print a comparison of the estimators on ``dataset`` and return the raw results.

    ``progress``: a bar over the fits on standard error while they run (``None``, the
    default: only when standard error is a terminal; otherwise a line per split on
    standard output, as its training sizes are fitted)."""
    repeats = check_int("repeats", repeats, low=1)
    progress = check_choice("progress", progress, (None, True, False))
    stages = progress is None and not sys.stderr.isatty()
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
                             progress=progress, stages=stages)
    if stages:
        print()
    mean, se = summarize(res, labels)
    print("Mean held-out log-likelihood per row ± its standard error over the splits (nats;")
    print("higher is better; -inf: some test row has probability zero under the fitted network):")
    print(_mean_se_table(mean, se))
    imp = res.pivot_table(index="train_rows", columns="estimator", values="impossible_rows", aggfunc="mean")[labels]
    print("\nShare of held-out rows with probability zero:")
    with pd.option_context("display.width", 160, "display.float_format", "{:.2%}".format):
        print(imp.to_string())
    _print_leaders(res, labels, repeats)
    t = res.groupby("estimator")["fit_seconds"].median()[labels] * 1000
    print("Median fit time (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()))
    return res
