"""The validation layer: each check's accepted values, conversions and messages."""

from __future__ import annotations

import numpy as np
import pytest

from pybncsmooth.errors import DataError, HyperparameterError
from pybncsmooth.options import NAPolicy
from pybncsmooth.validation import (
    Param,
    check_int,
    check_n_jobs,
    check_number,
    check_params,
    check_probability,
    check_random_state,
    entropy_of,
    parallel_map,
)


def test_one_na_policy_knows_what_every_layer_does():
    """Each spelling: how counting, structure learning and queries treat a missing cell,
    and what an estimator does with it (EM, or data augmentation for samplers)."""
    from pybncsmooth.estimators import make_estimator

    table = {  # name: (counting, structure, prediction, em)
        "error": ("error", "error", "available", None),
        "level": ("level", "level", "level", None),
        "drop": ("drop", "drop", "available", None),
        "available": ("available", "pairwise", "available", None),
        "pairwise": ("available", "pairwise", "available", None),
        "em": ("available", "pairwise", "available", "soft"),
        "hard-em": ("available", "pairwise", "available", "hard"),
    }
    assert set(table) == set(NAPolicy.NAMES)
    for name, (counting, structure, prediction, em) in table.items():
        p = NAPolicy(name)
        assert (p.counting, p.structure, p.prediction, p.em) == (counting, structure, prediction, em), name
        assert p.counting in NAPolicy.COUNTING and p.structure in NAPolicy.STRUCTURE
    assert NAPolicy("em").treatment(make_estimator("hdp")) == "augmentation"
    assert NAPolicy("em").treatment(make_estimator("bayes")) == "em"
    assert NAPolicy("pairwise").treatment(make_estimator("bayes")) == "available"
    assert NAPolicy("level", "M").encode_args() == {"na": "level", "na_label": "M"}
    with pytest.raises(DataError, match="na must be one of .*, not 'sometimes'"):
        NAPolicy("sometimes")
    with pytest.raises(HyperparameterError, match="na_label must be a non-empty string"):
        NAPolicy("level", "")


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


def test_entropy_of_every_accepted_seed():
    assert entropy_of(np.random.RandomState(4)) == entropy_of(np.random.RandomState(4))
    ss = entropy_of(np.random.SeedSequence(9))
    assert ss == entropy_of(np.random.SeedSequence(9)) and 0 <= ss < 2**63
    with pytest.raises(HyperparameterError, match="random_state"):
        entropy_of(-1)


# ---------------------------------------------------------------- declarations of the estimators


def test_every_estimator_is_constructed_from_its_declarations():
    """The declarations drive the constructor, its signature, get_params and the docs."""
    import inspect

    from pybncsmooth.estimators import Estimator, available_methods, estimator_class

    for method in available_methods():
        cls = estimator_class(method)
        sig = inspect.signature(cls).parameters
        assert [n for n in sig] == [p.name for p in cls.params] + list(Estimator.RUN), method
        for p in cls.params:
            assert p.doc and p.default == sig[p.name].default, (method, p.name)
            assert p.check(p.default) == p.default or p.default is None, (method, p.name)
            assert f"    {p.name}: {p.describe()}" in cls.__doc__, (method, p.name)  # the generated docs
        est = cls()  # the declared defaults construct
        run = {"random_state": None, "n_jobs": None, "progress": None}
        assert est.get_params() == {**{p.name: p.default for p in cls.params}, **run} or method == "hdp"
        assert type(est)(**est.get_params()) == est
        with pytest.raises(HyperparameterError, match=f"method {method!r} has no hyperparameter 'nope'"):
            cls(nope=1)


def test_an_estimator_cannot_write_its_own_init_or_take_an_option_name():
    from pybncsmooth.estimators import Estimator, available_methods, register_estimator

    with pytest.raises(TypeError, match="Skew defines __init__: declare its hyperparameters in params"):

        class Skew(Estimator):
            name = "skew-test"
            params = (Param("a", "float", 1.0, "a"),)

            def __init__(self, a: float = 2.0) -> None:
                self.a = a

    class Clash(Estimator):
        name = "clash-test"
        params = (Param("na", "choice", "x", "clashes with the option na", choices=("x",)),)

    with pytest.raises(TypeError, match="declares 'na', which is an option of every fit"):
        register_estimator(Clash)
    assert "skew-test" not in available_methods() and "clash-test" not in available_methods()


def test_declarations_serve_errors_help_and_r():
    from pybncsmooth.estimators import describe_methods, make_estimator, method_params
    from pybncsmooth.interop.r_bridge import integer_params, method_table

    with pytest.raises(HyperparameterError, match=r"no hyperparameter 'iterations'.*tau, tol.*tau: number > 0"):
        make_estimator("hls", iterations=3)
    # the constructor's checks are the declarations': type, range and the accepted values named
    with pytest.raises(HyperparameterError, match="prior_rate must be a non-negative number, not '1'"):
        make_estimator("hdp", prior_rate="1")
    with pytest.raises(HyperparameterError, match=r"initial_concentration must be a positive number, not \[1\]"):
        make_estimator("hdp", initial_concentration=[1])
    with pytest.raises(HyperparameterError, match="must be >= initial_concentration"):
        make_estimator("hdp", initial_concentration=5.0, max_concentration=4.0)
    assert [p.name for p in method_params("mestimate")] == ["m"]
    d = describe_methods(details=True)["hdp"]["iterations"]
    assert d == {
        "default": 2000,
        "kind": "int",
        "constraint": "integer >= 1 or 'auto'",
        "doc": method_params("hdp")[0].doc,
    }
    assert describe_methods()["bayes"] == {"iss": 1.0, "unseen": "uniform"}
    t = method_table()
    rows = {(m, p): (dflt, c) for m, p, dflt, c in zip(t["method"], t["parameter"], t["default"], t["constraint"])}
    assert rows[("hmd", "s")] == ("NULL", "number >= 1e-10 and <= 1e+10 or 'levels' or None")
    assert rows[("hls", "tol")] == ("1e-09", "number > 0")
    assert rows[("hdp", "debug")] == ("FALSE", "True or False")
    assert set(integer_params("hdp")) >= {"iterations", "burn_in", "n_chains", "random_state", "k", "n_estimators",
                                          "n_jobs", "em_max_iter"}
    assert "tau" not in integer_params("hls") and "max_iter" in integer_params("hls")


def test_classifier_options_checked_before_reading_data():
    import pandas as pd

    from pybncsmooth import BNClassifier

    df = pd.DataFrame({"a": ["x", "y"] * 5, "Class": ["p", "q", "q", "p", "p"] * 2})
    cases = [
        (dict(na="bogus"), DataError, "na must be one of .*, not 'bogus'"),
        (dict(random_state=-1), HyperparameterError, "random_state must be None"),
        (dict(on_unseen="x"), HyperparameterError, r"on_unseen must be one of \('error', 'backoff'\)"),
        (dict(n_bins=0), HyperparameterError, "n_bins must be an integer >= 1, not 0"),
        (dict(structure="eskdb", method="mestimate", n_jobs=0), HyperparameterError, "n_jobs must be an integer"),
    ]
    for kw, err, msg in cases:
        with pytest.raises(err, match=msg):
            BNClassifier(**kw).fit(df, "Class")
        with pytest.raises(err, match=msg):  # the same from a list of chunks
            BNClassifier(**kw).fit([df], "Class")


def test_a_new_estimator_needs_nothing_outside_its_module(monkeypatch, capsys):
    """One class and its registration: every front end takes it from the registry."""
    import pandas as pd

    import pybncsmooth as bs
    from pybncsmooth.estimators import Estimator, TreeEstimate, base, register_estimator
    from pybncsmooth.frontends.cli import main
    from pybncsmooth.interop.r_bridge import integer_params, method_table

    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))  # registered for this test only

    @register_estimator
    class AddA(Estimator):
        name = "adda-test"
        params = (Param("a", "float", 1.0, "pseudo-count of every cell", strict=True),)

        def estimate(self, tree):
            probs = []
            for lev in tree.levels:
                n = lev.counts + self.a
                probs.append(n / n.sum(axis=1, keepdims=True))
            return TreeEstimate(tuple(probs))

    df = pd.DataFrame({"A": list("xxyyx"), "B": list("uvvvu")})
    net = bs.fit("[A][B|A]", df, method="adda-test", a=2)
    # B | A = x: counts u 2, v 1 -> (2 + 2) / (3 + 4)
    assert net.cpt("B")[0, 0] == pytest.approx(4 / 7)
    with pytest.raises(HyperparameterError, match="a must be positive and finite, not -1"):
        bs.fit("[A][B|A]", df, method="adda-test", a=-1)
    clf = bs.BNClassifier(structure="nb", method="adda-test", a=0.5).fit(df.rename(columns={"B": "Class"}), "Class")
    assert clf.predict_proba(df[["A"]]).shape == (5, 2)
    assert main(["methods", "adda-test"]) == 0
    assert "a = 1.0  [number > 0]" in capsys.readouterr().out
    assert "adda-test" in method_table()["method"] and "a" not in integer_params("adda-test")


def test_tree_estimate_names_the_level_of_a_bad_entry():
    from pybncsmooth.estimators.base import TreeEstimate

    probs = (np.array([[0.5, 0.5]]), np.full((2, 2), 0.5), np.full((4, 2), 0.5))
    sd = tuple(np.full_like(p, 0.1) for p in probs)
    TreeEstimate(probs, sd=sd)  # valid
    bad = (probs[0], probs[1], probs[2].copy())
    bad[2][3, 1] = np.nan
    with pytest.raises(FloatingPointError, match="non-finite probabilities at tree level 2"):
        TreeEstimate(bad)
    for level, value in [(1, -0.1), (0, np.inf), (2, np.nan)]:
        s = [v.copy() for v in sd]
        s[level].flat[-1] = value
        with pytest.raises(FloatingPointError, match=f"negative or non-finite standard deviations at tree level {level}"):
            TreeEstimate(probs, sd=tuple(s))
    with pytest.raises(ValueError, match="sd must have the shapes of probs"):
        TreeEstimate(probs, sd=sd[:2])
    table = np.full((3, 2), 0.5)
    TreeEstimate(probs, "fallback", fallback=table, fallback_sd=table)  # valid
    for name, value in [("fallback", -0.5), ("fallback_sd", np.inf), ("fallback", np.nan)]:
        bad_table = table.copy()
        bad_table[2, 0] = value
        tables = {"fallback": table, "fallback_sd": table, name: bad_table}
        with pytest.raises(FloatingPointError, match=f"negative or non-finite entries in the {name} table"):
            TreeEstimate(probs, "fallback", **tables)
