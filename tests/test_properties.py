"""Property tests (hypothesis) of the features the third and fourth hostile-input rounds
cover: row weights, EM and the other missing-value policies, adapt, evaluate_domains,
domain labels of every dtype, discretised networks and integer levels.  Random weights
(zero, tiny, huge, fractional), frames with random missing cells and column types
(Categoricals, text, nullable integers and booleans, all-NaN float64 columns), random
domain labels (integers, text, Categoricals, booleans, unseen ones, in every form that
names them) and random evidence (numbers, bin labels, text) go in; what comes out is
finite probabilities summing to one, the same answer for every form of one value, or
one of the package's own errors (:class:`pybncsmooth.errors.PyBNCSmoothError`).  Any
other exception, and any numpy RuntimeWarning (an error under the test configuration:
a NaN made on the way), fails.

Small data, few examples, derandomised: the whole file runs in seconds and the same way
on every run.  The row-by-row regressions of the rounds are in ``test_hardening3.py`` and
``test_hardening4.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import pybncsmooth as bs  # noqa: E402
from pybncsmooth.errors import (  # noqa: E402
    ConvergenceWarning,
    DataError,
    PyBNCSmoothError,
    UnseenDomainWarning,
    UnseenLevelError,
    ZeroProbabilityWarning,
)

STRUCTURE = "[A][B|A][C|A:B]"
NODES = ("A", "B", "C")
LEVELS = ("a", "b", "c")
#: estimators that take fractional counts and fit in milliseconds
FAST = ("mle", "bayes", "mestimate", "hmd", "hgs", "hls", "mbranch")


def _settings(n: int):
    """``n`` examples, the same ones on every run (derandomised, no example database)."""
    return settings(
        max_examples=n, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )


# ----------------------------------------------------------------------------- checks


def _outcome(fn):
    """``fn()``, or ``None`` when it raises one of the package's own errors; the
    package's warnings (convergence, zero-probability rows, unseen domains) are allowed."""
    with warnings.catch_warnings():
        for w in (ConvergenceWarning, ZeroProbabilityWarning, UnseenDomainWarning):
            warnings.simplefilter("ignore", w)
        try:
            return fn()
        except PyBNCSmoothError:
            return None


def _check_network(net: bs.FittedNetwork) -> None:
    for node in net.nodes:
        cpt = net.cpt(node)
        assert np.isfinite(cpt).all() and cpt.min() >= 0.0, node
        np.testing.assert_allclose(cpt.sum(axis=0), 1.0, atol=1e-9)


def _check_proba(p) -> None:
    p = np.asarray(p, dtype=np.float64)
    assert np.isfinite(p).all() and p.min() >= 0.0
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


def _check_queries(net: bs.FittedNetwork, data: pd.DataFrame) -> None:
    """predict_proba of every node on ``data`` (its missing cells summed out), or an error
    of the package (e.g. a value unseen in training)."""
    for node in net.nodes:
        p = _outcome(lambda node=node: net.predict_proba(data, node))
        if p is not None:
            _check_proba(p)


# ----------------------------------------------------------------------------- strategies

WEIGHTS = st.sampled_from([0.0, 5e-324, 1e-300, 1e-12, 0.25, 0.5, 1.0, 3.0, 7.5, 1e6, 1e11, 1e13, 1e155, 1e200])


@st.composite
def column(draw, n: int, kind: str | None = None):
    """One column of ``n`` rows: codes over ``LEVELS`` with random missing cells, as a
    Categorical, text, nullable integers or booleans, or an all-NaN float64 column."""
    kind = kind or draw(st.sampled_from(["cat", "str", "int", "bool", "nan"]))
    if kind == "nan":
        return np.full(n, np.nan)
    codes = draw(st.lists(st.integers(0, 1 if kind == "bool" else 2), min_size=n, max_size=n))
    miss = draw(st.lists(st.sampled_from([False, False, False, True]), min_size=n, max_size=n))
    if kind == "cat":
        return pd.Categorical([None if m else LEVELS[c] for c, m in zip(codes, miss)], categories=list(LEVELS))
    if kind == "str":
        return np.array([None if m else LEVELS[c] for c, m in zip(codes, miss)], dtype=object)
    if kind == "int":
        return pd.array([None if m else 10 * c for c, m in zip(codes, miss)], dtype="Int64")
    return pd.array([None if m else bool(c) for c, m in zip(codes, miss)], dtype="boolean")


@st.composite
def frames(draw, min_rows: int = 4, max_rows: int = 12, complete: bool = False):
    """A frame of the three nodes; ``complete``: Categoricals without missing cells."""
    n = draw(st.integers(min_rows, max_rows))
    if complete:
        return pd.DataFrame({
            v: pd.Categorical([LEVELS[c] for c in draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))],
                              categories=list(LEVELS))
            for v in NODES
        })
    return pd.DataFrame({v: draw(column(n)) for v in NODES})


@st.composite
def known_or_missing(draw, min_rows: int = 1, max_rows: int = 6):
    """A frame of the nodes whose cells are known levels or missing: Categoricals with
    missing cells, or all-NaN float64 columns (the natural "unknown")."""
    n = draw(st.integers(min_rows, max_rows))
    return pd.DataFrame({v: draw(column(n, draw(st.sampled_from(["cat", "cat", "nan"])))) for v in NODES})


@st.composite
def domain_labels(draw, n: int):
    """``n`` domain labels of one type (integers, text or a Categorical with an unused
    category) over two or three domains."""
    kind = draw(st.sampled_from(["int", "str", "cat"]))
    codes = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    if kind == "int":
        return np.array([1978 + c for c in codes])
    if kind == "str":
        return np.array([str(1978 + c) for c in codes], dtype=object)
    return pd.Categorical([f"d{c}" for c in codes], categories=["d0", "d1", "d2", "unused"])


# ----------------------------------------------------------------------------- weights


@_settings(30)
@given(
    data=frames(complete=True),
    w=st.lists(WEIGHTS, min_size=12, max_size=12),
    method=st.sampled_from(FAST),
    as_series=st.booleans(),
)
def test_random_weights_give_distributions_or_a_package_error(data, w, method, as_series):
    weights = np.asarray(w[: len(data)])
    given = pd.Series(weights, index=data.index)[::-1] if as_series else weights  # a Series: aligned by index
    net = _outcome(lambda: bs.fit(STRUCTURE, data, method, weights=given))
    if net is not None:
        _check_network(net)
        _check_queries(net, data)
        if as_series:
            assert net.max_abs_diff(bs.fit(STRUCTURE, data, method, weights=weights)) == 0.0


@_settings(6)
@given(data=frames(complete=True), w=st.lists(st.sampled_from([0, 1, 2, 5]), min_size=12, max_size=12),
       fractional=st.booleans(), method=st.sampled_from(["hdp", "hls-bayes"]))
def test_weights_for_the_samplers_are_whole_or_refused(data, w, fractional, method):
    weights = np.asarray(w[: len(data)], dtype=np.float64)
    weights[0] += 0.5 if fractional else 0.0
    net = _outcome(lambda: bs.fit(STRUCTURE, data, method, weights=weights, iterations=20, random_state=0))
    if net is not None:
        _check_network(net)


# ----------------------------------------------------------------------------- EM and na policies


@_settings(30)
@given(
    data=frames(),
    na=st.sampled_from(["error", "level", "drop", "available", "em", "hard-em"]),
    method=st.sampled_from(FAST),
)
def test_missing_values_under_every_policy(data, na, method):
    net = _outcome(lambda: bs.fit(STRUCTURE, data, method, na=na, em_max_iter=5))
    if net is not None:
        _check_network(net)
        _check_queries(net, data)
        ll = _outcome(lambda: net.logpdf(data))
        if ll is not None:
            assert not np.isnan(ll).any() and (ll <= 1e-12).all()


@_settings(5)
@given(data=frames(min_rows=6))
def test_data_augmentation_with_missing_values(data):
    net = _outcome(lambda: bs.fit(STRUCTURE, data, "hdp", na="em", iterations=20, em_draws=2, em_burn=0,
                                  random_state=1))
    if net is not None:
        _check_network(net)


@_settings(12)
@given(train=frames(complete=True, min_rows=8), query=known_or_missing(),
       na=st.sampled_from(["level", "pairwise", "drop"]))
def test_classifier_queries_with_missing_cells(train, query, na):
    """A classifier trained without missing values answers rows whose cells are known or
    missing (all-NaN float columns included) under every na policy: the missing cells are
    summed out, never an error."""
    clf = _outcome(lambda: bs.BNClassifier(structure="tan", na=na).fit(train, "C"))
    if clf is not None:
        _check_proba(clf.predict_proba(query.drop(columns="C")))


# ----------------------------------------------------------------------------- adapt and domain labels


@_settings(20)
@given(
    data=frames(complete=True, min_rows=9),
    rows=known_or_missing(max_rows=5),
    labels=st.data(),
    method=st.sampled_from(["mle", "bayes", "mestimate", "hmd", "hgs"]),
    na=st.sampled_from(["level", "available", "drop"]),
)
def test_adapt_with_random_labels_and_rows(data, rows, labels, method, na):
    dom = labels.draw(domain_labels(len(data)))
    net = _outcome(lambda: bs.fit(STRUCTURE, data.assign(dom=dom), method, domain="dom", na=na))
    if net is None:
        return
    first = net.domains[0]
    twin = str(first) if not isinstance(first, str) else (int(first) if first.isdigit() else first + "x")
    unseen = st.sampled_from([1981, "1981", "zz", 3.5, True])
    new = labels.draw(st.one_of(st.just(first), st.just(twin), unseen))  # seen, its text / number twin, unseen
    out = _outcome(lambda: net.adapt(rows, new))
    if out is not None:
        _check_network(out)
        # a label names the domains as values name levels everywhere (1978 is '1978', '1978' is 1978)
        known = any(d == new or str(d) == str(new) for d in net.domains)
        assert len(out.domains) == len(net.domains) + (0 if known else 1)
        label = next(d for d in out.domains if d == new or str(d) == str(new))
        _check_queries(out.for_domain(label), rows)


@_settings(15)
@given(
    data=frames(complete=True, min_rows=9),
    labels=st.data(),
    query=st.sampled_from([1978, "1978", 1980, "1980", "d1", "unused", "zz", 2.5]),
    method=st.sampled_from(["bayes", "mestimate", "hmd", "mle"]),
)
def test_domain_labels_in_queries(data, labels, query, method):
    """Queries name domains by labels of any type: seen (also as text for text levels),
    declared but without rows, unseen (pooled tables)."""
    dom = labels.draw(domain_labels(len(data)))
    net = _outcome(lambda: bs.fit(STRUCTURE, data.assign(dom=dom), method, domain="dom"))
    if net is None:
        return
    _check_network(net)
    q = data.iloc[:3].assign(dom=[query] * 3)
    for node in NODES:
        p = _outcome(lambda node=node: net.predict_proba(q, node))
        if p is not None:
            _check_proba(p)


@_settings(6)
@given(
    data=frames(complete=True, min_rows=12, max_rows=18),
    labels=st.data(),
    k_grid=st.sampled_from([(), (0,), (0, 2), (3,), (50,)]),
    lodo=st.booleans(),
    test_size=st.sampled_from([0.2, 0.5]),
)
def test_evaluate_domains_scores_or_refuses(data, labels, k_grid, lodo, test_size):
    dom = labels.draw(domain_labels(len(data)))
    settings_ = {"pooled": {"mode": "pooled", "method": "bayes"}, "hier": {"mode": "domain", "method": "mestimate"},
                 "sep": {"mode": "separate", "method": "bayes"}}
    ev = _outcome(lambda: bs.evaluate_domains(STRUCTURE, data.assign(dom=dom), "dom", settings_, k_grid=k_grid,
                                              lodo=lodo, test_size=test_size, random_state=0))
    if ev is None:
        return
    r = ev.results
    assert len(r) and np.isfinite(r["loglik"]).all() and (r["loglik"] <= 1e-12).all()
    assert set(r["scheme"]) <= {"within", "lodo"}
    for metric in ("loglik", "rmse"):
        w = _outcome(lambda metric=metric: ev.win_draw_loss("hier", "pooled", metric=metric))
        if w is not None:
            assert w["wins"] + w["draws"] + w["losses"] <= 3


# ----------------------------------------------------------------------------- discretised networks


def _inside(cuts: np.ndarray, b: int) -> float:
    """A number inside bin ``b`` of the cut points (intervals ``(a, b]``)."""
    if b == 0:
        return float(cuts[0] - 1.0)
    if b == len(cuts):
        return float(cuts[-1] + 1.0)
    return float((cuts[b - 1] + cuts[b]) / 2)


@_settings(15)
@given(
    x=st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=12, max_size=30),
    n_bins=st.integers(2, 4),
    kind=st.sampled_from(["equal_frequency", "equal_width"]),
    cells=st.lists(st.tuples(st.sampled_from(["number", "label", "missing", "junk"]), st.floats(-5, 5, width=32),
                             st.integers(0, 3)), min_size=1, max_size=5),
)
def test_discretised_networks_take_numbers_and_bin_labels(x, n_bins, kind, cells):
    """A discretised network reads a cell as a number (cut into its bins), one of its bin
    labels, or missing, whatever the mix in one column: the answers equal those of the
    numbers alone; any other text is an UnseenLevelError (an unobserved cell under
    on_unseen="backoff")."""
    xs = np.asarray(x, dtype=np.float64)
    df = pd.DataFrame({"x": xs, "y": pd.Categorical(np.where(np.sin(3 * xs) > 0, "a", "b"), categories=["a", "b"])})
    net = _outcome(lambda: bs.fit("[x][y|x]", df, "bayes", discretize=kind, n_bins=n_bins))
    if net is None:
        return
    labels, cuts = net.levels("x"), net.transformer.cut_points_["x"]
    given_, numbers = [], []
    for what, v, b in cells:
        b = b % len(labels)
        given_.append({"number": float(v), "label": labels[b], "missing": None, "junk": "zz"}[what])
        numbers.append({"number": float(v), "label": _inside(cuts, b)}.get(what, np.nan))
    mixed = pd.DataFrame({"x": pd.array(given_, dtype=object)})
    plain = pd.DataFrame({"x": np.asarray(numbers, dtype=np.float64)})
    if any(w == "junk" for w, _, _ in cells):
        with pytest.raises(UnseenLevelError, match="'x'"):
            net.predict_proba(mixed, "y")
        with pytest.raises(UnseenLevelError, match="'x'"):
            net.query("y", mixed)
        pd.testing.assert_frame_equal(net.predict_proba(mixed, "y", on_unseen="backoff"),
                                      net.predict_proba(plain, "y"))
        return
    p = net.predict_proba(mixed, "y")
    _check_proba(p)
    pd.testing.assert_frame_equal(p, net.predict_proba(plain, "y"))
    pd.testing.assert_frame_equal(net.query("y", mixed), net.query("y", plain))
    first = given_[0]
    pd.testing.assert_series_equal(net.query("y", {"x": first}), net.query("y", {"x": numbers[0]}))


# ----------------------------------------------------------------------------- integer levels


@_settings(25)
@given(
    codes=st.lists(st.integers(0, 2), min_size=6, max_size=20),
    offset=st.sampled_from([0, 1, -1, 1978]),
    value=st.integers(-1, 3),
    form=st.sampled_from(["int", "numpy", "float", "text", "float column", "Int64 column", "text column"]),
)
def test_integer_levels_are_named_by_every_form_of_the_number(codes, offset, value, form):
    """An integer level is named by the integer, a numpy integer, a whole float (also a
    float column with a missing cell, as pandas holds integers with holes), its text and
    a nullable integer column alike; a number that is not a level is an UnseenLevelError."""
    c = np.asarray(codes)
    df = pd.DataFrame({"A": offset + c, "B": (c * 7 + np.arange(len(c))) % 2})
    net = _outcome(lambda: bs.fit("[A][B|A]", df, "bayes"))
    if net is None:
        return
    v = offset + value
    as_given = {"int": v, "numpy": np.int32(v), "float": float(v), "text": str(v)}.get(form)
    column = {"float column": pd.Series([float(v), np.nan]), "Int64 column": pd.array([v, None], dtype="Int64"),
              "text column": pd.Series([str(v), None], dtype=object)}.get(form)
    known = v in net.levels("A")
    if as_given is not None:
        if not known:
            with pytest.raises(UnseenLevelError, match="'A'"):
                net.query("B", {"A": as_given})
            return
        pd.testing.assert_series_equal(net.query("B", {"A": as_given}), net.query("B", {"A": v}))
        return
    frame = pd.DataFrame({"A": column})
    if not known:
        with pytest.raises(UnseenLevelError, match="'A'"):
            net.predict_proba(frame, "B")
        return
    p = net.predict_proba(frame, "B")
    _check_proba(p)
    np.testing.assert_allclose(p.iloc[0], net.query("B", {"A": v}), rtol=1e-12)
    np.testing.assert_allclose(p.iloc[1], net.query("B"), rtol=1e-12)
    np.testing.assert_allclose(net.query("B", frame).to_numpy(), p.to_numpy(), rtol=1e-12)


# ----------------------------------------------------------------------------- domain labels of every dtype


def _domain_column(kind: str, codes: list[int]) -> Any:
    """A domain column of ``kind`` over two or three domains."""
    c = np.asarray(codes)
    return {
        "int": 1978 + c,
        "int8": (c + 1).astype(np.int8),
        "Int64": pd.array(1978 + c, dtype="Int64"),
        "str": np.array([str(1978 + v) for v in c], dtype=object),
        "cat": pd.Categorical([f"d{v}" for v in c], categories=["d0", "d1", "d2", "unused"]),
        "catint": pd.Categorical(1978 + c, categories=[1978, 1979, 1980]),
        "bool": c % 2 == 1,
    }[kind]


def _named(fn):
    """``(result, warned)``: ``fn()`` and whether it warned that the domain is not fitted."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    return out, any(issubclass(w.category, UnseenDomainWarning) for w in seen)


@_settings(20)
@given(
    data=frames(complete=True, min_rows=9),
    codes=st.lists(st.integers(0, 2), min_size=18, max_size=18),
    kind=st.sampled_from(["int", "int8", "Int64", "str", "cat", "catint", "bool"]),
    pick=st.integers(0, 3),
    form=st.sampled_from(["as is", "text", "int", "float", "numpy", "unseen"]),
)
def test_domain_labels_of_every_dtype_name_one_domain_everywhere(data, codes, kind, pick, form):
    """Whatever the domain column's dtype and the label's form (the level itself, its
    text, an integer, a whole float, a numpy scalar, an unseen label), for_domain,
    query(domain=), sample(domain=), predict_proba's domain column and adapt name the
    same domain, and agree on whether it was fitted."""
    dom = _domain_column(kind, codes[: len(data)])
    net = _outcome(lambda: bs.fit(STRUCTURE, data.assign(dom=dom), "bayes", domain="dom"))
    if net is None:
        return
    level = net.domains[pick % len(net.domains)]
    number = int(level) if isinstance(level, (bool, int)) or str(level).isdigit() else None
    label = {"as is": level, "text": str(level), "int": number, "float": None if number is None else float(number),
             "numpy": np.int64(number) if number is not None else np.str_(level), "unseen": "zz"}[form]
    if label is None:
        return
    one, warned = _named(lambda: net.for_domain(label))
    q, q_warned = _named(lambda: net.query("C", domain=label))
    s, s_warned = _named(lambda: net.sample(6, random_state=1, domain=label))
    rows = data.iloc[:3].drop(columns="C")
    p, p_warned = _named(lambda: net.predict_proba(rows.assign(dom=[label] * 3), "C"))
    assert warned == q_warned == s_warned == p_warned == (form == "unseen")
    pd.testing.assert_series_equal(q, one.query("C"))
    pd.testing.assert_frame_equal(s, one.sample(6, random_state=1))
    pd.testing.assert_frame_equal(p, one.predict_proba(rows, "C"))
    out = _outcome(lambda: net.adapt(data.iloc[:4], label))
    if out is not None:
        assert len(out.domains) == len(net.domains) + (1 if warned else 0)
    else:
        with pytest.raises(DataError):  # a new label of another type than the domains
            net.adapt(data.iloc[:4], label)
        assert warned
