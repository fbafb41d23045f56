"""Every fitted table, sd and interval of this checkout against another's, exactly.

Fits a grid of cases with two checkouts of the package, each in a process of its own
(``--base``: the other checkout's root, put on ``PYTHONPATH``; for example a
``git worktree add ../base HEAD~1``)
and compares every array they give: each node's ``cpt`` (mean and, where the estimator
has them, ``stat="sd"``), the tidy ``cpt_frame(interval=0.9)`` bounds of a few nodes,
``logpdf`` of rows, a query with its interval, parameter draws.  Cases: ``mle``,
``bayes`` (two ``iss``, both ``unseen`` rules), ``mestimate`` on asia and alarm; missing
values under ``na=`` available / drop / level / em; row weights; text columns; a
domain; ``hmd``, ``hdp``, ``hls``, ``mbranch``; an expert prior; an update after the
fit; a ``.pbn`` round trip; a pickle round trip.  Any difference (even 1 ulp) is
printed and the exit status is 1.

Run: ``python benchmarks/equal_fit_tables.py [--base /path/to/other/checkout]``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ASIA = "[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]"


def _data() -> dict:
    import pandas as pd

    import pybncsmooth as bs

    asia = bs.load_dataset("asia")
    alarm = pd.read_csv(ROOT / "tests" / "data" / "bnlearn" / "alarm.csv.gz", dtype="category").iloc[:3000]
    rng = np.random.default_rng(3)
    holes = asia.copy()
    for c in holes.columns:
        holes.loc[rng.random(len(holes)) < 0.04, c] = np.nan
    text = asia.astype(str)
    dom = asia.copy()
    dom["dom"] = pd.Categorical(rng.choice(["u", "v", "w"], len(asia)))
    alarm_dag = (ROOT / "tests" / "data" / "bnlearn" / "alarm.modelstring.txt").read_text().strip()
    return {"asia": asia, "alarm": alarm, "holes": holes, "text": text, "dom": dom, "alarm_dag": alarm_dag,
            "w": rng.integers(0, 4, len(asia)).astype(float) * 0.5}


def _cases(d: dict) -> list[tuple[str, str, object, dict]]:
    """(name, structure, data, fit keywords)."""
    out = []
    for data in ("asia", "alarm"):
        spec = ASIA if data == "asia" else d["alarm_dag"]
        for method, kw in [("mle", {}), ("mle", {"unseen": "uniform"}), ("bayes", {}),
                           ("bayes", {"iss": 10.0, "unseen": "backoff"}), ("mestimate", {"m": 2.0})]:
            out.append((f"{data}-{method}-{kw}", spec, d[data], {"method": method, **kw}))
    for na in ("available", "drop", "level", "em"):
        for method in ("bayes", "mle", "mestimate"):
            out.append((f"holes-{method}-na={na}", ASIA, d["holes"], {"method": method, "na": na}))
    out += [
        ("weights-bayes", ASIA, d["asia"], {"method": "bayes", "weights": d["w"]}),
        ("weights-mle", ASIA, d["asia"], {"method": "mle", "weights": d["w"]}),
        ("text-bayes", ASIA, d["text"], {"method": "bayes"}),
        ("text-mestimate", ASIA, d["text"], {"method": "mestimate"}),
        ("domain-bayes", ASIA, d["dom"], {"method": "bayes", "domain": "dom"}),
        ("domain-mle", ASIA, d["dom"], {"method": "mle", "domain": "dom"}),
        ("hmd", ASIA, d["asia"], {"method": "hmd"}),
        ("hdp", ASIA, d["asia"].iloc[:1500], {"method": "hdp", "iterations": 200, "random_state": 1}),
        ("hls", ASIA, d["asia"], {"method": "hls"}),
        ("mbranch", ASIA, d["asia"], {"method": "mbranch"}),
    ]
    return out


def _record(out: dict, key: str, net, rows, nodes=None) -> None:
    """Every array the network gives for ``key``."""
    from pybncsmooth.errors import StatisticUnavailableError

    for n in net.nodes:
        out[f"{key}|cpt|{n}"] = net.cpt(n)
        try:
            out[f"{key}|sd|{n}"] = net.cpt(n, stat="sd")
        except StatisticUnavailableError:
            pass
    for n in (nodes or net.nodes[:2]):
        try:
            f = net.cpt_frame(n, interval=0.9, draws=50)
            out[f"{key}|interval|{n}"] = f[["sd", "lower", "upper"]].to_numpy(dtype=float)
        except StatisticUnavailableError:
            pass
    out[f"{key}|logpdf"] = net.logpdf(rows.iloc[:300])
    if net.domain is None:
        target, ev = net.nodes[-1], {net.nodes[0]: net.levels(net.nodes[0])[0]}
        try:
            q = net.query(target, evidence=ev, interval=0.9, draws=100, random_state=0)
            out[f"{key}|query"] = q.to_numpy(dtype=float) if hasattr(q, "to_numpy") else np.asarray(q, dtype=float)
        except StatisticUnavailableError:
            pass


def worker(path: str) -> None:
    import pybncsmooth as bs

    d = _data()
    out: dict[str, np.ndarray] = {}
    for name, spec, data, kw in _cases(d):
        t = time.perf_counter()
        net = bs.fit(spec, data, **kw)
        _record(out, name, net, data)
        if os.environ.get("EQUAL_FIT_TIMES"):
            print(f"{name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    for method in ("mle", "bayes", "mestimate"):  # an update after the fit
        net = bs.fit(ASIA, d["asia"].iloc[:3000], method=method).update(d["asia"].iloc[3000:])
        _record(out, f"update-{method}", net, d["asia"])
    expert = bs.fit(ASIA, d["asia"].iloc[:400], method="bayes")
    net = bs.fit(ASIA, d["asia"].iloc[400:], method="bayes", prior=expert, prior_weight=20.0)
    _record(out, "prior-bayes", net, d["asia"])
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("bayes", "mle"):
            net = bs.fit(d["alarm_dag"], d["alarm"], method=method)
            p = Path(tmp) / f"{method}.pbn"
            net.write(p)
            _record(out, f"pbn-{method}", bs.read_network(p), d["alarm"])
            _record(out, f"pickle-{method}", pickle.loads(pickle.dumps(net)), d["alarm"])
    np.savez(path, **{k: np.asarray(v, dtype=float) for k, v in out.items()})


def _run(root: Path, path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(root))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(path)], env=env, check=True,
                   cwd=str(root))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="the other checkout's root (a git worktree of the commit to compare); required")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if not args.base:
        ap.error("--base is required: the root of the other checkout to compare with")
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "base.npz", Path(tmp) / "here.npz"
        _run(Path(args.base), a)
        _run(ROOT, b)
        base, here = dict(np.load(a)), dict(np.load(b))
    bad = sorted(set(base) ^ set(here))
    for k in sorted(set(base) & set(here)):
        x, y = base[k], here[k]
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
            bad.append(k)
            diff = np.nanmax(np.abs(x - y)) if x.shape == y.shape else "shape"
            print(f"DIFFERENT {k}: {diff}")
    cases = {k.split("|")[0] for k in here}
    print(f"{len(here)} arrays over {len(cases)} cases compared with {args.base}: "
          + ("all identical (difference exactly 0)" if not bad else f"{len(bad)} differ"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
