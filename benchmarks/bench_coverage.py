"""Coverage of the CPT entries' intervals on data sampled from a known network.

For every network, estimator, sample size ``n`` and seed: ``n`` rows are drawn from
the network (``ref.sample(n, random_state=seed)``), the known structure is fitted with
the estimator, and every entry of every CPT is checked: does its true value lie in the
entry's ``level`` interval (``cpt_frame(node, interval=level)``, ``[lower, upper]``)?
Entries are classed by how many training rows their parent configuration had:
*unseen* (0), *thin* (1-19), *rich* (20 or more).  A calibrated 90% interval covers
about 90% of the entries in every class.

Two figures per cell: *within 0.001* counts an interval that misses the truth by less
than 0.001 as covering (a truth far below 1e-3 just above an interval that ends at,
say, 1e-8 is the prior's statement about a level never seen along a path, and changes
no decision), *strict* counts it as a miss.  A further column gives the coverage (within
0.001) of the entries whose truth lies in ``[0.001, 0.999]``: on networks of mostly
deterministic tables (win95pts: 39% of the entries are exactly 0 or 1, water 54%) an
honest interval of such an entry reaches 0 or 1, so the overall figure there exceeds
0.9 by construction, and this column shows the calibration where it can be judged.  A
uniform column (every entry ``1/r``) is what a network's author writes for a parent
configuration left unspecified (win95pts: 42% of its entries, its rare multi-fault
configurations); where such a configuration has no rows, its entries lie inside any
interval that spreads over its siblings (a binary child whose siblings are near 0 and
near 1 gets an interval of nearly ``[0, 1]``), so any such interval covers them.
The column *judgeable* leaves them out of the previous one, and *if calibrated* is the
overall figure of intervals covering exactly ``level`` of the judgeable entries and every
other entry (the uniform columns above, and the deterministic entries, which an interval
reaching 0 or 1 covers within 0.001): where it exceeds 0.95 (win95pts), an overall
figure within 0.85-0.95 needs intervals that miss entries of those kinds.  The
hierarchical Bayesian estimators' intervals (and ``mestimate``'s, the Dirichlet
posterior its pseudo-counts imply) are credible intervals; ``mle``'s are Wilson score
intervals.  ``hgs``, ``mbranch`` and ``hls`` print none (their bootstrap over rows
covered 0.52-0.69), nor does ``bayes`` with its BDeu prior (its exact posterior's
intervals covered 0.44-0.79 of thin configurations' truths): their rows say so.

The verdict is the done-when of every estimator that prints an interval: overall at
least 0.85, configurations seen in the data (1-19 and 20+ rows together, column
*seen*) at most 0.95, and at least 0.80 in every class of 30 or more entries (within
0.001).  An unseen configuration's interval is the back-off's predictive (``[0, 1]``
for ``mle`` and ``mestimate``): covering more there is conservative, so no ceiling.
The column *seen: truth 0/1 / in (0.001, 0.999)* splits the seen entries into those
whose truth lies within 0.001 of 0 or 1 (an entry exactly 0 never seen has the count 0,
and any honest interval of it starts at 0) and the others; the verdict ``MISS (0/1)``
marks a cell where only the ceiling fails and the others keep it: with a share ``d`` of
deterministic seen entries covered 1 and the others ``c``, the seen coverage is
``d + (1 - d) c``, over 0.95 at ``d = 0.5`` as soon as ``c > 0.90``.

One command prints every table of the uncertainty round's done-when (the networks of
the bnlearn repository that pgmpy 1.1.2 ships; run it with an interpreter that has
pgmpy, which also reads ``child.bif``)::

    PYTHONPATH=. python benchmarks/bench_coverage.py

and, e.g., one network and estimator::

    python benchmarks/bench_coverage.py --network tests/data/bnlearn/alarm.bif \\
        --method hdp:iterations=1000 --n 200 2000 --seeds 0 1

``--method name:key=value,key=value`` sets hyperparameters (numbers are parsed);
``--csv out.csv`` also writes one row per (network, method, n, seed, class).  With
several seeds the table pools their entries (and prints the range over seeds).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pybncsmooth as bs  # noqa: E402
from pybncsmooth.errors import StatisticUnavailableError  # noqa: E402
from _networks import LISTED, load  # noqa: E402

CLASSES = ("unseen", "thin", "rich")
#: an interval that misses the truth by less than this covers it (the strict figure beside)
TOLERANCE = 1e-3
#: every estimator that prints an interval, and ``bayes``, which prints none with its BDeu prior (nor do ``hgs``,
#: ``mbranch``, ``hls``): its rows say why
DEFAULT_METHODS = ("hdp:iterations=1000", "hmd", "hls-bayes", "bayes:iss=1", "mle", "mestimate")


def parse_method(spec: str) -> tuple[str, dict[str, Any]]:
    """``"hdp:iterations=1000,tying=level"`` -> ``("hdp", {"iterations": 1000, "tying": "level"})``."""
    name, _, rest = spec.partition(":")
    hyper: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        k, _, v = item.partition("=")
        try:
            hyper[k] = int(v)
        except ValueError:
            try:
                hyper[k] = float(v)
            except ValueError:
                hyper[k] = v
    return name, hyper


def config_rows(ref: Any, data: pd.DataFrame, node: str) -> np.ndarray:
    """Training rows of every parent configuration of ``node``, shaped like ``cpt(node)[0]``."""
    pa = ref.parents(node)
    cards = [len(ref.levels(p)) for p in pa]
    if not pa:
        return np.array(len(data))
    code = np.zeros(len(data), dtype=np.int64)
    for p, c in zip(pa, cards):
        code = code * c + data[p].cat.codes.to_numpy().astype(np.int64)
    counts = np.bincount(code, minlength=int(np.prod(cards)))
    return counts.reshape(cards)


def entry_classes(rows: np.ndarray) -> np.ndarray:
    """0 = unseen, 1 = thin (1-19 rows), 2 = rich (20 or more)."""
    return np.where(rows == 0, 0, np.where(rows < 20, 1, 2))


def judgeable(truth: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """The entries of ``truth`` (a CPT, the node first; flat, as ``truth.ravel()``) whose
    coverage says something about the interval: truth in ``[0.001, 0.999]``, and not in a
    uniform column (every entry ``1/r``) of a parent configuration without rows
    (``cls``, flat like ``truth``, 0: see :func:`entry_classes`)."""
    col = truth.reshape(truth.shape[0], -1)
    uniform = np.broadcast_to(np.all(np.abs(col - 1.0 / col.shape[0]) < 1e-9, axis=0), col.shape)
    mid = (truth >= TOLERANCE) & (truth <= 1 - TOLERANCE)
    return (mid.ravel() & ~(uniform.reshape(truth.shape).ravel() & (np.asarray(cls) == 0)))


def interval_of(net: Any, node: str, level: float, draws: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of every entry of ``cpt(node)``, in the table's layout."""
    frame = net.cpt_frame(node, interval=level, draws=draws)
    shape = net.cpt(node).shape
    return (frame["lower"].to_numpy().reshape(shape, order="F"), frame["upper"].to_numpy().reshape(shape, order="F"))


def draw_interval(net: Any, level: float, draws: int, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every node's equal-tailed ``level`` interval from ``draws`` joint posterior draws."""
    tables = net._posterior_tables(draws, np.random.default_rng(seed))
    tail = (1 - level) / 2
    return {node: tuple(np.quantile(t, [tail, 1 - tail], axis=0)) for node, t in tables.items()}


def coverage_one(ref: Any, method: str, hyper: dict, n: int, seed: int, level: float,
                 draws: int = 0) -> dict[str, Any]:
    """Hits (strict and within :data:`TOLERANCE`) and entries per class for one fit
    (intervals from ``cpt_frame``, or from ``draws`` posterior draws)."""
    data = ref.sample(n, random_state=seed)
    t0 = time.perf_counter()
    net = bs.fit(ref.dag, data, method=method, random_state=seed, **hyper)
    fit_s = time.perf_counter() - t0
    strict = np.zeros(3, dtype=np.int64)
    near = np.zeros(3, dtype=np.int64)
    tot = np.zeros(3, dtype=np.int64)
    inner = np.zeros(2, dtype=np.int64)  # hits and entries whose truth lies in [0.001, 0.999]
    judge = np.zeros(2, dtype=np.int64)  # of those, the ones outside a uniform column without rows
    seen_mid = np.zeros(2, dtype=np.int64)  # hits and entries of seen configurations, truth in (0.001, 0.999)
    seen_det = np.zeros(2, dtype=np.int64)  # the other seen entries: truth within 0.001 of 0 or 1
    t0 = time.perf_counter()
    try:
        from_draws = draw_interval(net, level, draws, seed) if draws else {}
        for node in ref.nodes:
            truth = ref.cpt(node)
            lo, hi = from_draws[node] if draws else interval_of(net, node, level)
            cls = np.broadcast_to(entry_classes(config_rows(ref, data, node))[None], truth.shape).ravel()
            ok = ((lo <= truth) & (truth <= hi)).ravel()
            ok_near = ((lo - TOLERANCE < truth) & (truth < hi + TOLERANCE)).ravel()
            strict += np.bincount(cls, weights=ok, minlength=3).astype(np.int64)
            near += np.bincount(cls, weights=ok_near, minlength=3).astype(np.int64)
            tot += np.bincount(cls, minlength=3)
            mid = ((truth >= TOLERANCE) & (truth <= 1 - TOLERANCE)).ravel()
            inner += [int(ok_near[mid].sum()), int(mid.sum())]
            fair = judgeable(truth, cls)
            judge += [int(ok_near[fair].sum()), int(fair.sum())]
            inside = ((truth > TOLERANCE) & (truth < 1 - TOLERANCE)).ravel() & (cls > 0)
            det = ~((truth > TOLERANCE) & (truth < 1 - TOLERANCE)).ravel() & (cls > 0)
            seen_mid += [int(ok_near[inside].sum()), int(inside.sum())]
            seen_det += [int(ok_near[det].sum()), int(det.sum())]
    except StatisticUnavailableError as e:
        return {"unavailable": str(e), "fit_s": fit_s}
    return {"hits": near, "strict": strict, "tot": tot, "inner": inner, "judge": judge, "seen_mid": seen_mid,
            "seen_det": seen_det, "fit_s": fit_s, "interval_s": time.perf_counter() - t0}


def fmt(h: int, t: int) -> str:
    return f"{h / t:.2f}" if t else "-"


def pooled(res: list[dict]) -> dict[str, np.ndarray]:
    """Hits and entries summed over seeds."""
    return {k: sum(r[k] for r in res) for k in ("hits", "strict", "tot", "inner", "judge", "seen_mid", "seen_det")}


def verdict(p: dict[str, np.ndarray]) -> str:
    """The done-when's check of one cell (within 0.001): at least 0.85 overall, at most
    0.95 on the configurations seen in the data (thin and rich together), at least 0.80
    in every class of 30 or more entries: ``"ok"`` or ``"MISS"``; ``"MISS (0/1)"`` where
    the ceiling alone fails and the seen entries whose truth lies in (0.001, 0.999) keep
    it: the excess is then the entries within 0.001 of 0 or 1, which any honest interval
    reaching 0 or 1 covers (``seen`` = ``d * 1 + (1 - d) * c`` with ``d`` their share and
    ``c`` the others' coverage: ``c = 0.90`` and ``d > 0.5`` give ``seen > 0.95``)."""
    allc = p["hits"].sum() / p["tot"].sum()
    seen = p["hits"][1:].sum() / max(p["tot"][1:].sum(), 1)
    classes = [p["hits"][c] / p["tot"][c] for c in range(3) if p["tot"][c] >= 30]
    floors = allc >= 0.85 and min(classes, default=1.0) >= 0.80
    if floors and seen <= 0.95:
        return "ok"
    mid = p["seen_mid"][0] / max(p["seen_mid"][1], 1)
    return "MISS (0/1)" if floors and mid <= 0.95 else "MISS"


def table_row(n: int, spec: str, res: list[dict], level: float = 0.9) -> tuple[str, str]:
    """One Markdown row (within 0.001 / strict per class) and its verdict."""
    fit_s = np.mean([r["fit_s"] for r in res])
    if "unavailable" in res[0]:
        return f"| {n} | {spec} | no intervals: {res[0]['unavailable']} ||||||||||||| {fit_s:.1f} |", ""
    p = pooled(res)
    per_seed = [r["hits"].sum() / r["tot"].sum() for r in res]
    cells = [f"{fmt(p['hits'].sum(), p['tot'].sum())} / {fmt(p['strict'].sum(), p['tot'].sum())}"]
    cells.append(f"{fmt(p['hits'][1:].sum(), p['tot'][1:].sum())} / {fmt(p['strict'][1:].sum(), p['tot'][1:].sum())}")
    cells += [f"{fmt(p['hits'][c], p['tot'][c])} / {fmt(p['strict'][c], p['tot'][c])}" for c in range(3)]
    cells.append(f"{fmt(p['seen_det'][0], p['seen_det'][1])} of {int(p['seen_det'][1])} / "
                 f"{fmt(p['seen_mid'][0], p['seen_mid'][1])} of {int(p['seen_mid'][1])}")
    cells.append(fmt(p["inner"][0], p["inner"][1]))
    cells.append(fmt(p["judge"][0], p["judge"][1]))
    total = p["tot"].sum()
    cells.append(f"{(total - (1 - level) * p['judge'][1]) / total:.2f}" if total else "-")
    v = verdict(p)
    row = (f"| {n} | {spec} | " + " | ".join(cells) + f" | {'/'.join(str(int(t)) for t in p['tot'])} | "
           f"{min(per_seed):.2f}-{max(per_seed):.2f} | {v} | {fit_s:.1f} |")
    return row, v


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--network", action="append",
                    help="a bnlearn repository name (alarm, child, ...) or a BIF/DSC/NET file (repeatable; default: "
                    + ", ".join(LISTED) + ")")
    ap.add_argument("--method", action="append", help="name[:key=value,...] (repeatable)")
    ap.add_argument("--n", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--draws", type=int, default=0,
                    help="intervals from quantiles of this many posterior draws instead of cpt_frame")
    ap.add_argument("--csv", help="write the per-fit rows here")
    args = ap.parse_args(argv)
    nets = args.network or list(LISTED)
    methods = args.method or list(DEFAULT_METHODS)
    print(f"# {platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, pybncsmooth {bs.__version__}")
    print("# python benchmarks/bench_coverage.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(f"# cells: within {TOLERANCE:g} / strict; verdict: overall >= 0.85, seen (thin and rich) <= 0.95, "
          ">= 0.80 in every class of 30+ entries; MISS (0/1): only the ceiling fails, and the seen entries whose "
          "truth lies in (0.001, 0.999) keep it")
    rows, misses, ceiling = [], [], []
    for spec_net in nets:
        name, ref = load(spec_net)
        print(f"\n## {name}: {len(ref.nodes)} nodes, {sum(ref.cpt(v).size for v in ref.nodes)} CPT entries; "
              f"{int(args.level * 100)}% intervals, seeds {' '.join(map(str, args.seeds))}\n")
        print("<!-- fit s: the mean fit seconds over the seeds, in this process: the run's first cell is cold (it loads"
              " the kernels), the others warm -->")
        print("| n | estimator | all | seen | unseen | thin | rich | seen: truth 0/1 / in (0.001, 0.999) "
              "| truth in [0.001, 0.999] | judgeable | if calibrated | entries (unseen/thin/rich) "
              "| range over seeds (all) | verdict | fit s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in args.n:
            for spec in methods:
                method, hyper = parse_method(spec)
                res = [coverage_one(ref, method, hyper, n, s, args.level, args.draws) for s in args.seeds]
                line, v = table_row(n, spec, res, args.level)
                print(line, flush=True)
                if v == "MISS":
                    misses.append(f"{name} n={n} {spec}")
                elif v == "MISS (0/1)":
                    ceiling.append(f"{name} n={n} {spec}")
                for s, r in zip(args.seeds, res):
                    if "unavailable" in r:
                        continue
                    for c in range(3):
                        rows.append({"network": name, "method": spec, "n": n, "seed": s, "class": CLASSES[c],
                                     "hits": int(r["hits"][c]), "strict": int(r["strict"][c]),
                                     "entries": int(r["tot"][c])})
    print("\n# cells missing the done-when: " + ("; ".join(misses) if misses else "none"))
    print("# cells missing only the ceiling on seen configurations, which their entries with truth in "
          "(0.001, 0.999) keep (the excess: truths within 0.001 of 0 or 1): " + ("; ".join(ceiling) if ceiling else "none"))
    out = pd.DataFrame(rows)
    if args.csv:
        out.to_csv(args.csv, index=False)
    return out


if __name__ == "__main__":
    main()
