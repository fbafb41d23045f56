"""Coverage of the credible intervals of queries P(target | evidence) on data sampled
from a known network.

For every network file, estimator, sample size ``n`` and seed: ``n`` rows are drawn
from the network, its structure is fitted, and ``--queries`` random queries are asked
of the fit with ``interval=level``: a target node and three evidence variables, their
values those of a row drawn from the true network (evidence that happens), the level
checked the target's value in that row.  A query covers when the true probability of
that level given the evidence (the true network's answer) lies in the fitted
network's interval.  A calibrated 90% interval covers about 90% of the queries.

Two figures: *within 0.001* counts an interval that misses the truth by less than 0.001
as covering (as ``bench_coverage.py``), then the strict one.  The Monte Carlo standard
error beside them is that of a mean of clusters (:func:`clustered_se`): the queries of
one fit share its tables (a root whose sample happened to stray answers wrongly in every
query it enters), so they are not independent, and the binomial
``sqrt(p (1 - p) / m)`` of ``m`` queries understates the error several times over;
the seeds are the independent replicates.  The estimators without a
posterior answer with bootstrap intervals (their draws are replicates of a bootstrap
over rows).

Run, e.g.::

    PYTHONPATH=. .venv-bench/bin/python benchmarks/bench_query_coverage.py   # the listed networks
    python benchmarks/bench_query_coverage.py --network insurance --method hmd --n 200 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pybncsmooth as bs  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _networks import LISTED, load  # noqa: E402
from bench_coverage import TOLERANCE, parse_method  # noqa: E402

DEFAULT_METHODS = ("hdp:iterations=1000", "hmd", "hls-bayes", "bayes:iss=1", "mle")


def random_queries(ref: bs.FittedNetwork, n_queries: int, seed: int) -> list[tuple[str, dict, str]]:
    """``(target, evidence, level)``: three evidence variables and the target's level
    taken from one row drawn from the true network, per query."""
    rng = np.random.default_rng(seed)
    rows = ref.sample(n_queries, random_state=int(rng.integers(2**31)))
    out = []
    for i in range(n_queries):
        nodes = list(rng.permutation(ref.nodes))
        target, ev = nodes[0], nodes[1:4]
        row = rows.iloc[i]
        out.append((target, {v: row[v] for v in ev}, row[target]))
    return out


def misses(ref: bs.FittedNetwork, net: bs.FittedNetwork, queries: list, level: float, draws: int,
           seed: int) -> np.ndarray:
    """How far each query's interval misses the true probability (0: it holds it)."""
    out = []
    for target, ev, lev in queries:
        truth = float(ref.query(target, ev)[lev])
        q = net.query(target, ev, interval=level, draws=draws, random_state=seed)
        out.append(max(q.loc[lev, "lower"] - truth, truth - q.loc[lev, "upper"], 0.0))
    return np.asarray(out)


def covered(ref: bs.FittedNetwork, net: bs.FittedNetwork, queries: list, level: float, draws: int,
            seed: int, tolerance: float = 0.0) -> np.ndarray:
    """Whether each query's interval holds the true probability (missing it by no more
    than ``tolerance`` counts as holding it)."""
    return misses(ref, net, queries, level, draws, seed) <= tolerance


def clustered_se(per_fit: list[np.ndarray]) -> float:
    r"""Standard error of the pooled coverage of ``per_fit`` (each fit's 0/1 hits), the
    fits the independent clusters: :math:`\sqrt{\sum_f m_f^2 (\bar c_f - \bar c)^2 /
    (k (k - 1))} / \bar m` for ``k`` fits of ``m_f`` queries (the ratio estimator's
    between-cluster variance; ``nan`` for one fit)."""
    k = len(per_fit)
    if k < 2:
        return float("nan")
    m = np.array([len(h) for h in per_fit], dtype=float)
    c = np.array([h.mean() for h in per_fit])
    pooled = float((m * c).sum() / m.sum())
    return float(np.sqrt((m * m * (c - pooled) ** 2).sum() / (k * (k - 1))) / m.mean())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", action="append",
                    help="a bnlearn repository name or a BIF/DSC/NET file (repeatable; default: " + ", ".join(LISTED)
                    + ")")
    ap.add_argument("--method", action="append", help="name[:key=value,...] (repeatable)")
    ap.add_argument("--n", nargs="+", type=int, default=[200, 2000])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--draws", type=int, default=400)
    args = ap.parse_args(argv)
    methods = [parse_method(m) for m in (args.method or DEFAULT_METHODS)]
    print(f"# {platform.machine()}, {platform.python_version()}, pybncsmooth {bs.__version__}")
    print(f"# python benchmarks/bench_query_coverage.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("# seconds: the wall time of a cell's fits, draws and queries over its seeds; the first cell of the"
          " run is cold (it also loads the compiled kernels), the others warm")
    for spec in args.network or list(LISTED):
        name, ref = load(spec)
        print(f"\n## {name}: {args.queries} queries a fit, {int(args.level * 100)}% intervals\n")
        print(f"| n | estimator | within {TOLERANCE:g} | +- se (fits as clusters) | strict | per seed (within) "
              "| seconds |")
        print("|---|---|---|---|---|---|---|")
        for n in args.n:
            for method, hyper in methods:
                near, strict, t0 = [], [], time.perf_counter()
                for seed in args.seeds:
                    data = ref.sample(n, random_state=seed)
                    net = bs.fit(ref.dag, data, method, random_state=seed, **hyper)
                    queries = random_queries(ref, args.queries, 1000 + seed)
                    miss = misses(ref, net, queries, args.level, args.draws, seed)
                    near.append(miss < TOLERANCE)
                    strict.append(miss == 0)
                label = method + ("" if not hyper else f" ({', '.join(f'{k}={v}' for k, v in hyper.items())})")
                seeds = " / ".join(f"{h.mean():.2f}" for h in near)
                print(f"| {n} | {label} | {np.concatenate(near).mean():.2f} | {clustered_se(near):.3f} "
                      f"| {np.concatenate(strict).mean():.2f} "
                      f"| {seeds} | {time.perf_counter() - t0:.1f} |", flush=True)


if __name__ == "__main__":
    main()
