"""The validation layer: each check's accepted values, conversions and messages."""

from __future__ import annotations

import numpy as np
import pytest

from pybncsmooth.errors import DataError, HyperparameterError
from pybncsmooth.validation import (
    NA_POLICIES,
    STRUCTURE_NA_POLICIES,
    Param,
    check_int,
    check_n_jobs,
    check_na,
    check_number,
    check_params,
    check_probability,
    check_random_state,
    entropy_of,
    parallel_map,
)


def test_na_policies():
    assert check_na("level") == "level"
    with pytest.raises(DataError, match="na must be one of .*'available'.*, not 'pairwise'"):
        check_na("pairwise", NA_POLICIES)
    assert check_na("pairwise", STRUCTURE_NA_POLICIES) == "pairwise"
    with pytest.raises(DataError, match="for structure learning, not 'available'"):
        check_na("available", STRUCTURE_NA_POLICIES, what="structure learning")


def test_integers():
    assert check_int("k", np.int64(3), low=0) == 3 and type(check_int("k", np.int64(3))) is int
    for bad in (True, 2.0, "2", None):
        with pytest.raises(HyperparameterError, match="k must be an integer"):
            check_int("k", bad, low=0)
    with pytest.raises(HyperparameterError, match=r"k must be an integer >= 1, not 0"):
        check_int("k", 0, low=1)
    with pytest.raises(HyperparameterError, match=r"<= 5"):
        check_int("k", 6, high=5)
    assert check_int("k", None, optional=True) is None
    assert check_n_jobs(None) is None and check_n_jobs(2) == 2
    with pytest.raises(HyperparameterError, match="n_jobs"):
        check_n_jobs(0)


def test_numbers_and_probabilities():
    assert check_number("iss", 2) == 2.0
    assert check_number("m", 0, strict=False) == 0.0
    with pytest.raises(HyperparameterError, match="iss must be positive"):
        check_number("iss", 0)
    for bad in (float("nan"), float("inf"), -1, "x", True):
        with pytest.raises(HyperparameterError, match="m must be"):
            check_number("m", bad, strict=False)
    assert check_probability("p", 0.25) == 0.25
    assert check_probability("p", 1, open_high=False) == 1.0
    with pytest.raises(HyperparameterError, match=r"p must be a number in \(0, 1\), not 1"):
        check_probability("p", 1)


def test_random_state_and_entropy():
    g = np.random.default_rng(1)
    assert check_random_state(g) is g and check_random_state(None) is None and check_random_state(7) == 7
    for bad in (-1, 1.5, "seed", True):
        with pytest.raises(HyperparameterError, match="random_state"):
            check_random_state(bad)
    assert entropy_of(5) == 5 and entropy_of(None) is None
    # a Generator gives its next draw: reproducible from its seed
    assert entropy_of(np.random.default_rng(3)) == entropy_of(np.random.default_rng(3))


def test_param_declarations():
    decl = [
        Param("iterations", "int", 2000, "Gibbs sweeps", low=1, also=("auto",)),
        Param("iss", "float", 1.0, "imaginary sample size", strict=True),
        Param("tol", "float", 1e-3, "tolerance", low=0, strict=True, optional=True),
        Param("tying", "choice", "level", "concentration tying", choices=("level", "single")),
        Param("rhat", "float", 1.01, "R-hat bound", low=1, strict=True),
    ]
    got = check_params(decl, {"iterations": "auto", "iss": 2, "tol": None, "tying": "single", "rhat": 1.05})
    assert got == {"iterations": "auto", "iss": 2.0, "tol": None, "tying": "single", "rhat": 1.05}
    with pytest.raises(HyperparameterError, match="iterations must be an integer >= 1 or one of"):
        check_params(decl, {"iterations": "often"})
    with pytest.raises(HyperparameterError, match=r"rhat must be > 1, not 1"):
        check_params(decl, {"rhat": 1})
    with pytest.raises(HyperparameterError, match="tying must be one of"):
        check_params(decl, {"tying": "none"})
    with pytest.raises(HyperparameterError, match="no hyperparameter 'alpha'"):
        check_params(decl, {"alpha": 1})
    assert decl[0].describe() == "integer >= 1 or 'auto'"
    assert decl[4].describe() == "number > 1"


def test_parallel_map_keeps_order():
    items = list(range(50))
    assert parallel_map(lambda x: x * x, items, 1) == [x * x for x in items]
    assert parallel_map(lambda x: x * x, items, 4) == [x * x for x in items]
