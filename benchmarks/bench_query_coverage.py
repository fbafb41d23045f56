"""Coverage of the credible intervals of queries P(target | evidence) on data sampled
from a known network.

For every network file, estimator, sample size ``n`` and seed: ``n`` rows are drawn
from the network, its structure is fitted, and ``--queries`` random queries are asked
of the fit with ``interval=level``: a target node and three evidence variables, their
values those of a row drawn from the true network (evidence that happens), the level
checked the target's value in that row.  A query covers when the true probability of
that level given the evidence (the true network's answer) lies in the fitted
network's interval.  A calibrated 90% interval covers about 90% of the queries.

Run, e.g.::

    python benchmarks/bench_query_coverage.py                 # insurance and alarm
    python benchmarks/bench_query_coverage.py --method hmd --n 200 --seeds 0 1 2
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
from bench_coverage import parse_method  # noqa: E402

REF = ROOT / "tests" / "data" / "bnlearn"
DEFAULT_METHODS = ("bayes:iss=1", "hdp:iterations=1000", "hmd", "hls-bayes")


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


def covered(ref: bs.FittedNetwork, net: bs.FittedNetwork, queries: list, level: float, draws: int,
            seed: int) -> np.ndarray:
    """Whether each query's interval holds the true probability."""
    hits = []
    for target, ev, lev in queries:
        truth = float(ref.query(target, ev)[lev])
        q = net.query(target, ev, interval=level, draws=draws, random_state=seed)
        hits.append(q.loc[lev, "lower"] <= truth <= q.loc[lev, "upper"])
    return np.asarray(hits)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", action="append", help="BIF/DSC/NET file (repeatable; default insurance and alarm)")
    ap.add_argument("--method", action="append", help="name[:key=value,...] (repeatable)")
    ap.add_argument("--n", nargs="+", type=int, default=[200, 2000])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--draws", type=int, default=400)
    args = ap.parse_args(argv)
    networks = args.network or [str(REF / "insurance.bif"), str(REF / "alarm.bif")]
    methods = [parse_method(m) for m in (args.method or DEFAULT_METHODS)]
    print(f"# {platform.machine()}, {platform.python_version()}, pybncsmooth {bs.__version__}")
    print(f"# python benchmarks/bench_query_coverage.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    for path in networks:
        ref = bs.read_network(path)
        print(f"\n## {Path(path).stem}: {args.queries} queries a fit, {int(args.level * 100)}% intervals\n")
        print("| n | estimator | covered | per seed | seconds |")
        print("|---|---|---|---|---|")
        for n in args.n:
            for name, hyper in methods:
                per_seed, t0 = [], time.perf_counter()
                for seed in args.seeds:
                    data = ref.sample(n, random_state=seed)
                    net = bs.fit(ref.dag, data, name, random_state=seed, **hyper)
                    queries = random_queries(ref, args.queries, 1000 + seed)
                    per_seed.append(covered(ref, net, queries, args.level, args.draws, seed))
                allhits = np.concatenate(per_seed)
                label = name + ("" if not hyper else f" ({', '.join(f'{k}={v}' for k, v in hyper.items())})")
                seeds = " / ".join(f"{h.mean():.2f}" for h in per_seed)
                print(f"| {n} | {label} | {allhits.mean():.2f} | {seeds} | {time.perf_counter() - t0:.1f} |",
                      flush=True)


if __name__ == "__main__":
    main()
