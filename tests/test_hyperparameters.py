"""Every estimator's hyperparameters walked through invalid and extreme values.

The values come from the estimators' own declarations (``method_params``): None, text,
lists, NaN, +-inf, negative, zero, booleans, fractions, 1e308, 1e-320, 10**12.  Each
either raises pybncsmooth's :class:`HyperparameterError` or fits a network whose every
CPT entry is finite, plain and domain-pooled.  The walk runs in a process of its own
(``tests/hyperwalk.py``): a hang (hmd's ``s=1e308`` once never returned) fails at the
time limit instead of stopping the suite; the limit guards against hangs and is 20x what
the walk takes on our 2-core machines (about 15 s), not a speed assertion.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pybncsmooth.estimators import available_methods, method_params

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def walked() -> list[dict]:
    proc = subprocess.run(
        [sys.executable, str(HERE / "hyperwalk.py")], capture_output=True, text=True, timeout=300, cwd=HERE
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_every_declared_hyperparameter_is_walked(walked):
    import hyperwalk

    seen = {(r["method"], r["param"], r["value"]) for r in walked}
    for method in available_methods():
        for p in method_params(method):
            for label, _ in hyperwalk.VALUES:
                assert (method, p.name, label) in seen


def test_invalid_values_give_the_package_error_or_a_finite_fit(walked):
    bad = [r for r in walked if r["outcome"] == "error" and r["error"] != "HyperparameterError"]
    assert not bad, bad[:5]
    assert all(r["module"] == "pybncsmooth.errors" for r in walked if r["outcome"] == "error")
    not_finite = [r for r in walked if r["outcome"] == "fit" and not r["finite"]]
    assert not not_finite, not_finite[:5]


def test_values_that_are_never_valid_are_refused(walked):
    """None where no default rule exists, text, lists, NaN and inf are refused by every
    numeric hyperparameter (no silent conversion of "1" or [1])."""
    by_key = {(r["method"], r["param"], r["value"]): r for r in walked}
    for method in available_methods():
        for p in method_params(method):
            if p.kind not in ("int", "float"):
                continue
            for label in ("list", "nan", "inf", "-inf", "bool"):
                assert by_key[(method, p.name, label)]["outcome"] == "error", (method, p.name, label)
            if not p.also:  # iterations="auto" is text on purpose
                assert by_key[(method, p.name, "text")]["outcome"] == "error", (method, p.name)
            if not p.optional:
                assert by_key[(method, p.name, "None")]["outcome"] == "error", (method, p.name)
    # the extremes of the reproducers of the hardening round (issue 20, item 7)
    for key in [("hmd", "s", "huge"), ("hmd", "s", "tiny"), ("hmd", "alpha0", "huge"), ("hls-bayes", "variance", "tiny"),
                ("hls-bayes", "prior_shape", "huge")]:
        assert by_key[key]["outcome"] == "error", key
    # random_state is a setting of every estimator's run (an option), checked as such
    from pybncsmooth.errors import HyperparameterError
    from pybncsmooth.estimators import make_estimator

    for method in available_methods():
        with pytest.raises(HyperparameterError, match="random_state must be None, a non-negative integer"):
            make_estimator(method, random_state=-1)
    # an extreme that is meaningful is answered: a window wider than any count
    assert by_key[("hdp", "window", "huge-int")] == {**by_key[("hdp", "window", "huge-int")], "outcome": "fit"}
