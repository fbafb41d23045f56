"""Every estimator's every declared hyperparameter through invalid and extreme values.

Run as a script (``python hyperwalk.py``) by ``test_hyperparameters.py``, in a process
of its own so that a hang fails the test at its time limit instead of stopping the
suite.  Prints one JSON line per (method, hyperparameter, value): ``"error"`` with the
exception's class, or ``"fit"`` with whether every CPT entry is finite.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd

import pybncsmooth as bs
from pybncsmooth.estimators import available_methods, method_params

#: the values every hyperparameter is tried with (name, value)
VALUES = [
    ("None", None),
    ("text", "1"),
    ("list", [1]),
    ("nan", float("nan")),
    ("inf", float("inf")),
    ("-inf", float("-inf")),
    ("negative", -1),
    ("zero", 0),
    ("zero-float", 0.0),
    ("bool", True),
    ("fraction", 2.5),
    ("huge", 1e308),
    ("tiny", 1e-320),
    ("huge-int", 10**12),
    ("numpy-int", np.int64(3)),
]
#: hyperparameters that set the amount of work: a huge count is accepted but not run
WORK = {"iterations", "max_iterations", "n_chains", "burn_in"}
#: small runs of the samplers (unless the hyperparameter walked is one of these)
QUICK = {"hdp": {"iterations": 60}, "hls-bayes": {"iterations": 40}}


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 24
    return pd.DataFrame(
        {
            "A": pd.Categorical(rng.choice(["x", "y", "z"], n)),
            "B": pd.Categorical(rng.choice(["u", "v"], n)),
            "d": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        }
    )


def walk() -> list[dict]:
    df = _data()
    out = []
    for method in available_methods():
        for p in method_params(method):
            for label, value in VALUES:
                hyper = {k: v for k, v in QUICK.get(method, {}).items() if k != p.name}
                if p.name == "burn_in" and "iterations" in hyper:
                    hyper["iterations"] = 10**4  # room for a burn-in to be valid
                hyper[p.name] = value
                row = {"method": method, "param": p.name, "value": label}
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = bs.make_estimator(method, **hyper)
                        if label == "huge-int" and p.name in WORK:
                            row.update(outcome="accepted")
                            out.append(row)
                            continue
                        for domain in (None, "d") if method != "mle" else (None,):
                            net = bs.fit("[A][B|A]", df, method=est, domain=domain)
                            finite = all(np.isfinite(np.asarray(net.cpt(n), dtype=float)).all() for n in net.nodes)
                            row.update(outcome="fit", finite=bool(finite))
                except Exception as e:  # noqa: BLE001 - the class is the result
                    row.update(outcome="error", error=type(e).__name__, module=type(e).__module__)
                out.append(row)
    return out


def main() -> None:
    for row in walk():
        print(json.dumps(row, default=lambda v: None if isinstance(v, float) and math.isnan(v) else str(v)))


if __name__ == "__main__":
    main()
