"""``net.update`` against the refit, side by side in one run.

1. ``bayes`` on alarm: a fit on 1,000,000 rows (drawn with replacement from bnlearn's
   20,000 alarm rows in ``tests/data``) updated with 1,000 more rows, against the refit
   on the 1,001,000 rows (best of ``--repeat`` after a warm-up; the update best of 10); the two networks'
   largest difference (the update equals the refit).
2. The samplers with 10% new rows: ``hdp`` on TAN over letter recognition (20,000 rows,
   16 features in 5 bins, 26 classes) and ``hls-bayes`` on alarm (20,000 rows), each
   fitted on 10/11 of the rows (seed 1) and updated with the rest (its default
   ``update_iterations``; seeds 5, 6, 7), against refits on all the rows with seeds 2,
   3, 4: the times (medians of 3, wall and the process's CPU time over all threads; the
   update's share of the fit's sweeps beside them: hls-bayes runs its two coupled
   chains in two threads, a fit's one chain in one), and
   the mean absolute difference of the CPT entries between each update and each refit
   (averaged over the refits) beside that between two refits (the seed-to-seed spread:
   Monte Carlo error) and its range; with the control variate (the default) and
   without it at the same cost (``update_control=False``: one run of twice the sweeps).
3. ``prior=`` with ``bayes`` against pyAgrum's ``BNLearner.useDirichletPrior(P, w)`` on a
   four-node network with three levels per node, for three weights: the largest
   difference of the CPT entries (pyAgrum imported where installed; the benchmark venv
   has it: ``PYTHONPATH=. .venv-bench/bin/python benchmarks/bench_update.py``).

Run: ``python benchmarks/bench_update.py [--rows 1000000] [--repeat 3] [--quick]``
(``--quick``: 100,000 rows and smaller sampler runs, for a smoke test).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pybncsmooth as bs

from _timing import best_time  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
BNLEARN = ROOT / "tests" / "data" / "bnlearn"
UCI = ROOT / "vignettes" / "data" / "uci_disc5"


def _alarm() -> tuple[pd.DataFrame, str]:
    df = pd.read_csv(BNLEARN / "alarm.csv.gz", dtype=str).astype("category")
    return df, (BNLEARN / "alarm.modelstring.txt").read_text().strip()


def bayes_alarm(rows: int, repeat: int) -> None:
    df, ms = _alarm()
    idx = np.random.default_rng(0).integers(0, len(df), rows + 1000)
    data = df.iloc[idx].reset_index(drop=True)
    old, new = data.iloc[:rows], data.iloc[rows:]
    net = bs.fit(ms, old, "bayes")
    t_refit = best_time(lambda: bs.fit(ms, data, "bayes"), repeat=repeat, label="bayes refit")
    t_update = best_time(lambda: net.update(new), repeat=max(repeat, 10), label="bayes update")  # cheap: more tries against noise
    diff = net.update(new).max_abs_diff(bs.fit(ms, data, "bayes"))
    print(f"1. bayes on alarm, {rows:,} rows + 1,000 new (warm: best of {repeat} after a warm-up "
          "call, in one process)")
    print(f"   refit on {rows + 1000:,} rows {t_refit:8.3f} s | update with 1,000 rows {t_update:8.4f} s | "
          f"update / refit {t_update / t_refit:.3f} | largest difference {diff:.1e}")


def _tables(net: bs.FittedNetwork) -> np.ndarray:
    return np.concatenate([net.cpt(v).ravel() for v in net.nodes])


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _timed_cpu(fn):
    """``fn()``, its wall time and the process's CPU time (all threads) it took."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def sampler(name: str, spec, data: pd.DataFrame, method: str, kw: dict) -> None:
    n = int(round(len(data) / 1.1))
    old, new = data.iloc[:n], data.iloc[n:]
    bs.fit(spec, data.iloc[:300], method, random_state=0, **{**kw, "iterations": 20}).update(
        data.iloc[300:400], random_state=0)  # compiled kernels warmed up
    net = bs.fit(spec, old, method, random_state=1, **kw)
    refits, times, cpus = [], [], []
    for seed in (2, 3, 4):
        r, t, c = _timed_cpu(lambda seed=seed: bs.fit(spec, data, method, random_state=seed, **kw))
        refits.append(_tables(r))
        times.append(t)
        cpus.append(c)
    between = [float(np.abs(a - b).mean()) for a, b in itertools.combinations(refits, 2)]
    t_ref, c_ref = float(np.median(times)), float(np.median(cpus))
    est = net.estimator
    print(f"   {name}: {len(old):,} rows + {len(new):,} new; fit {kw.get('iterations', est.iterations)} sweeps, "
          f"update {est.update_sweeps} per run")
    print(f"     refit {t_ref:7.2f} s, CPU {c_ref:.2f} s (medians of 3, seeds 2, 3, 4) | "
          f"refit-refit {np.mean(between):.2e} "
          f"(range {min(between):.2e} .. {max(between):.2e})")
    for label, control in (("update (control variate)", True), ("update without it (update_control=False)", False)):
        un = copy.copy(net)
        un.estimator = est.with_settings(update_control=control)
        ups = [_timed_cpu(lambda s=s: un.update(new, random_state=s)) for s in (5, 6, 7)]
        t_up, c_up = float(np.median([u[1] for u in ups])), float(np.median([u[2] for u in ups]))
        d = [float(np.mean([np.abs(_tables(u[0]) - r).mean() for r in refits])) for u in ups]
        runs = 2 if control else 1
        print(f"     {label}: {t_up:6.2f} s (median of 3, seeds 5, 6, 7) | update / refit {t_up / t_ref:.3f}, "
              f"CPU {c_up / c_ref:.3f} "
              f"(sweeps {runs} x {un.estimator.update_sweeps} / {kw.get('iterations', est.iterations)} = "
              f"{runs * un.estimator.update_sweeps / int(kw.get('iterations', est.iterations)):.2f}) | update-refit "
              f"{np.mean(d):.2e} (per update {', '.join(f'{v:.2e}' for v in d)}; "
              f"{np.mean(d) / np.mean(between):.2f}x refit-refit)")


def samplers(quick: bool) -> None:
    print("2. the samplers with 10% new rows (warm start from the fit's kept state); "
          "timings warm: kernels loaded by a first small fit in this process")
    letter = pd.read_csv(UCI / "letterrecognition.csv.gz", dtype=str).astype("category")
    if quick:
        letter = letter.iloc[:4000]
    dag = bs.BNClassifier(structure="tan", method="bayes").fit(letter.drop(columns="lettr"), letter["lettr"]).dag_
    sampler("hdp, TAN on letter recognition", dag, letter, "hdp", {"iterations": 500} if quick else {})
    alarm, ms = _alarm()
    sampler("hls-bayes, alarm", ms, alarm.iloc[:4000] if quick else alarm, "hls-bayes",
            {"iterations": 600} if quick else {})


def pyagrum_prior() -> None:
    print("3. prior= with bayes against pyAgrum's useDirichletPrior(P, w)")
    try:
        import pyagrum as gum
    except ImportError:
        print("   pyAgrum is not installed here (the benchmark venv has it): skipped")
        return
    gum.initRandom(3)
    truth = gum.fastBN("A->B->C;A->C;C->D", 3)
    prior = gum.fastBN("A->B->C;A->C;C->D", 3)
    prior.generateCPTs()
    gen = gum.BNDatabaseGenerator(truth)
    gen.drawSamples(300)
    ms = "[A][B|A][C|A:B][D|C]"
    dag = bs.DAG.from_modelstring(ms)

    def table(b, v):
        fam = [v, *dag.parents(v)]
        out = np.zeros([3] * len(fam))
        for idx in itertools.product(range(3), repeat=len(fam)):
            out[idx] = b.cpt(v)[dict(zip(fam, idx))]
        return out

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "d.csv")
        gen.to_pandas().to_csv(path, index=False)
        data = pd.read_csv(path, dtype=str).astype(pd.CategoricalDtype(["0", "1", "2"]))
        cpts = {v: table(prior, v) for v in "ABCD"}
        for w in (1.0, 10.0, 250.0):
            learner = gum.BNLearner(path, truth)
            learner.useDirichletPrior(prior, w)
            theirs = learner.learnParameters(truth.dag())
            ours = bs.fit(ms, data, "bayes", prior=cpts, prior_weight=w)
            diff = max(np.abs(ours.cpt(v) - table(theirs, v)).max() for v in "ABCD")
            print(f"   weight {w:6.1f}: largest |ours - pyAgrum| {diff:.1e} (pyAgrum {gum.__version__})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    bayes_alarm(100_000 if args.quick else args.rows, args.repeat)
    samplers(args.quick)
    pyagrum_prior()


if __name__ == "__main__":
    main()
