"""Interleaved A/B timing of variants of the HDP sampler's kernels, in one process.

On a noisy machine the same benchmark moves by 10-50% between runs minutes apart, far
more than most kernel changes.  This runs the fits of the four reference data sets of
``bench_hdp.py`` (5000 sweeps, level tying, one chain, one thread) with each variant of
``pybncsmooth/estimators/hdp/_kernels.py`` in turn, round after round in the same
process, so that the machine's drift falls on every variant alike, and prints each
variant's fastest and median time.

A variant is a copy of the kernel module, edited (pass the project's own file as the
baseline).  Its relative imports are pointed at the package and it is compiled without
numba's disk cache (the first round is a warm-up that compiles it); the estimator's
``hdp_sweeps`` is switched to the variant's for its fits.  ``--check`` also runs each
variant on three seeds and prints the largest difference of its leaf estimates from
the first variant's (0 when a change keeps every draw).

Run: ``python benchmarks/ab_hdp_kernels.py pybncsmooth/estimators/hdp/_kernels.py
/tmp/variant.py [--rounds 7] [--tying level] [--check]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path
from types import ModuleType

import numpy as np

import pybncsmooth.estimators.hdp.estimator as hdp_module
from pybncsmooth.counting import count_tree
from pybncsmooth.estimators import HDP

from bench_hdp import load

SETS = [(2, 1000), (5, 1000), (2, 100000), (5, 100000)]


def load_variant(path: Path) -> ModuleType:
    """The kernel module at ``path`` as a module of its own (imports from the package)."""
    src = path.read_text()
    for sub in ("_rng", "_stirling", "_special"):
        src = src.replace(f"from ..{sub} import", f"from pybncsmooth.estimators.{sub} import")
    src = src.replace("cache=True, ", "")
    spec = importlib.util.spec_from_loader(f"variant_{path.stem}", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds (3 for the slowest set)")
    ap.add_argument("--tying", default="level")
    ap.add_argument("--check", action="store_true", help="compare the variants' estimates (three seeds)")
    args = ap.parse_args(argv)
    names = [f"{i}:{p.stem}" for i, p in enumerate(args.variants)]
    mods = [load_variant(p) for p in args.variants]
    original = hdp_module.hdp_sweeps
    try:
        for card, n in SETS:
            df = load(card, n)
            parents = ["P1", "P2", "P3", "P4"]
            tree = count_tree("X", parents, df["X"].to_numpy(), [df[p].to_numpy() for p in parents], card, [card] * 4)
            est = HDP(iterations=5000, random_state=1, n_jobs=1, progress=False, tying=args.tying)
            times: list[list[float]] = [[] for _ in mods]
            for mod in mods:  # warm-up: compiles the variant
                hdp_module.hdp_sweeps = mod.hdp_sweeps
                est.estimate(tree)
            rounds = 3 if (card, n) == (5, 100000) else args.rounds
            for _ in range(rounds):
                for v, mod in enumerate(mods):
                    hdp_module.hdp_sweeps = mod.hdp_sweeps
                    t0 = time.perf_counter()
                    est.estimate(tree)
                    times[v].append(time.perf_counter() - t0)
            cells = [f"{nm} min {min(ts) * 1e3:.2f} med {np.median(ts) * 1e3:.2f} ms" for nm, ts in zip(names, times)]
            print(f"card{card}_n{n} (warm: after a warm-up, in one process): " + " | ".join(cells), flush=True)
            if args.check:
                diffs = []
                for seed in range(3):
                    leaves = []
                    for mod in mods:
                        hdp_module.hdp_sweeps = mod.hdp_sweeps
                        e = HDP(iterations=2000, random_state=seed, n_jobs=1, progress=False, tying=args.tying)
                        leaves.append(e.estimate(tree).probs[-1])
                    diffs.append([float(np.abs(lv - leaves[0]).max()) for lv in leaves[1:]])
                worst = np.max(diffs, axis=0) if diffs and diffs[0] else []
                print("  largest |difference| of the leaf estimates from the first variant: "
                      + ", ".join(f"{nm} {d:.1e}" for nm, d in zip(names[1:], worst)))
    finally:
        hdp_module.hdp_sweeps = original
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
