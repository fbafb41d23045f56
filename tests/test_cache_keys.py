"""Caches keyed by everything their value depends on (issue 56, cases 1 and 7).

A pandas ``CategoricalDtype`` without order is equal to (and hashes like) another with
the same categories in another order, and ``(0, 1) == (False, True) == (0.0, 1.0)``:
a cache keyed by either gives whichever value the process met first.  Each test here
starts from emptied caches (as a fresh process does: :mod:`process_state`), first does
the work that filled such a cache with the wrong value, then checks the answer against
numbers computed by hand, so it fails when the key is too coarse whatever ran before
it.  The property tests of the same rule (an answer equals the one
a fresh process gives) are in ``test_history.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from process_state import clear_caches
from pybncsmooth.data.levels import levels_key
from pybncsmooth.model.query.answer import levels_dtype

YES_NO, NO_YES = ["yes", "no"], ["no", "yes"]


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Each test starts with the process-wide caches a fresh process has (none)."""
    assert clear_caches() > 0


def _ab_frame(order: list[str]) -> pd.DataFrame:
    """``A`` then ``B | A``, 20 rows, as Categoricals with the categories in ``order``."""
    a = ["yes"] * 12 + ["no"] * 8
    b = ["yes"] * 9 + ["no"] * 3 + ["yes"] * 2 + ["no"] * 6
    return pd.DataFrame({"A": pd.Categorical(a, categories=order), "B": pd.Categorical(b, categories=order)})


def _bdeu_logpdf(df: pd.DataFrame) -> np.ndarray:
    """Each row's log-density under ``bayes`` (iss 1) fitted on the rows themselves, by hand:
    P(A = a) = (n_a + 1/2) / (n + 1), P(B = b | a) = (n_ab + 1/4) / (n_a + 1/2)."""
    a, b = df["A"].astype(str).to_numpy(), df["B"].astype(str).to_numpy()
    n = len(a)
    out = []
    for x, y in zip(a, b):
        n_a, n_ab = (a == x).sum(), ((a == x) & (b == y)).sum()
        out.append(math.log((n_a + 0.5) / (n + 1.0)) + math.log((n_ab + 0.25) / (n_a + 0.5)))
    return np.array(out)


def test_categorical_columns_in_two_orders_each_decoded_by_its_own_order():
    """Case 1: a network fitted on ``['yes', 'no']`` Categoricals scores the same rows as
    ``['no', 'yes']`` Categoricals, then as ``['yes', 'no']`` ones: both (and the rows as
    text) get the hand-computed log-densities, whichever order the process met first."""
    net = bs.fit("[A][B|A]", _ab_frame(YES_NO), method="bayes", iss=1)
    want = _bdeu_logpdf(_ab_frame(YES_NO))
    for order in (NO_YES, YES_NO, NO_YES):
        np.testing.assert_allclose(net.logpdf(_ab_frame(order)), want, rtol=1e-12)
    np.testing.assert_allclose(net.logpdf(_ab_frame(YES_NO).astype(str)), want, rtol=1e-12)
    # P(B = yes | A = yes) = (9 + 1/4) / (12 + 1/2), in either order of the frame's categories
    for order in (NO_YES, YES_NO):
        p = net.predict_proba(_ab_frame(order)[["A"]], "B")
        assert list(p.columns) == YES_NO
        assert p["yes"].iloc[0] == pytest.approx(9.25 / 12.5, rel=1e-12)
        assert p["yes"].iloc[-1] == pytest.approx(2.25 / 8.5, rel=1e-12)


def test_network_fitted_on_the_other_order_first_does_not_change_a_fit():
    """Case 1, fitting: two networks of the same data whose Categoricals list the levels
    in opposite orders have the same tables, transposed to each one's order."""
    first = bs.fit("[A][B|A]", _ab_frame(NO_YES), method="bayes", iss=1)
    first.logpdf(_ab_frame(NO_YES))
    second = bs.fit("[A][B|A]", _ab_frame(YES_NO), method="bayes", iss=1)
    assert second.levels("A") == YES_NO and first.levels("A") == NO_YES
    np.testing.assert_allclose(second.cpt("A"), [12.5 / 21, 8.5 / 21], rtol=1e-12)
    np.testing.assert_allclose(second.cpt("B"), first.cpt("B")[::-1, ::-1], rtol=1e-12)
    np.testing.assert_allclose(second.logpdf(_ab_frame(NO_YES)), first.logpdf(_ab_frame(YES_NO)), rtol=1e-12)


def test_expert_file_fit_does_not_depend_on_an_earlier_logpdf(tmp_path, asia):
    """Case 1, the issue's reproducer: ``bs.fit("expert.bif", asia)``, the file listing
    ``yes`` first and the data ``no`` first, gives P(A = yes) = (42 + 1/2) / (5000 + 1)
    (bayes, iss 1: asia has 42 rows with A = yes) after an unrelated network scored a
    frame whose Categoricals list ``yes`` first (0.9915 on main: the file's order read
    as the data's)."""
    flipped = asia.apply(lambda s: s.cat.reorder_categories(YES_NO))
    expert = tmp_path / "expert.bif"
    bs.fit(bs.datasets.structure("asia"), flipped.head(50), method="bayes").write(expert)
    other = bs.fit(bs.datasets.structure("asia"), flipped, method="bayes")
    other.logpdf(flipped)  # the unrelated work
    net = bs.fit(str(expert), asia)
    n_yes = int((asia["A"] == "yes").sum())
    assert n_yes == 42 and net.levels("A") == YES_NO
    np.testing.assert_allclose(net.cpt("A"), [(n_yes + 0.5) / 5001, (5000 - n_yes + 0.5) / 5001], rtol=1e-12)
    np.testing.assert_allclose(net.logpdf(asia), bs.fit(str(expert), asia.astype(str)).logpdf(asia), rtol=1e-12)


def _int_frame() -> pd.DataFrame:
    a = [0] * 6 + [1] * 4
    b = [0] * 5 + [1] + [0] + [1] * 3
    return pd.DataFrame({"A": a, "B": b})


def test_integer_network_queried_after_a_boolean_one_answers_with_integers():
    """Case 7: after a network of booleans is queried, a network of integers 0 and 1
    answers with its own levels (the query's index, ``map_query``'s states), not
    ``False`` and ``True``."""
    bools = _int_frame().astype(bool)
    bnet = bs.fit("[A][B|A]", bools, method="bayes", iss=1)
    assert list(bnet.query("B", evidence={"A": True}).index) == [False, True]
    bnet.map_query("B", evidence=bools[["A"]])
    net = bs.fit("[A][B|A]", _int_frame(), method="bayes", iss=1)
    q = net.query("B", evidence={"A": 1})
    assert list(q.index) == [0, 1] and not any(isinstance(v, (bool, np.bool_)) for v in q.index)
    assert q.index.categories.dtype == np.int64
    # P(B = 1 | A = 1) = (3 + 1/4) / (4 + 1/2)
    assert q.loc[1] == pytest.approx(3.25 / 4.5, rel=1e-12)
    m = net.map_query("B", evidence=_int_frame()[["A"]])
    assert m["B"].cat.categories.dtype == np.int64
    assert (m["B"] == 1).tolist() == [False] * 6 + [True] * 4
    assert net.map_query("B", evidence={"A": 1}).state == {"B": 1}
    assert type(net.map_query("B", evidence={"A": 1}).state["B"]) is not bool


def test_float_levels_queried_after_integer_ones_answer_with_floats():
    """Case 7 for floats: Categoricals of 0.0 and 1.0 after integers 0 and 1."""
    bs.fit("[A][B|A]", _int_frame(), method="bayes").query("B", evidence={"A": 1})
    floats = _int_frame().apply(lambda s: pd.Categorical(s.astype(float), categories=[0.0, 1.0]))
    q = bs.fit("[A][B|A]", floats, method="bayes").query("B", evidence={"A": 1.0})
    assert q.index.categories.dtype == np.float64 and [repr(float(v)) for v in q.index] == ["0.0", "1.0"]


def test_levels_dtype_keeps_each_type_and_sign():
    """The dtype cache of query answers (case 7), directly: equal tuples of other types
    (and ``0.0`` beside ``-0.0``) each get their own categories."""
    for levels in [(False, True), (0, 1), (0.0, 1.0), (-0.0, 1.0), (True, False), (1, 0), ("0", "1")]:
        for _ in range(2):
            cats = levels_dtype(levels).categories
            assert [repr(v) for v in cats.tolist()] == [repr(v) for v in levels], levels
            assert [type(v) for v in cats.tolist()] == [type(v) for v in levels], levels


def test_levels_key_tells_types_orders_and_signs_apart():
    same = [(0, 1), (0, 1)]
    assert levels_key(same[0]) == levels_key(same[1])
    keys = [levels_key(t) for t in [(0, 1), (False, True), (0.0, 1.0), (-0.0, 1.0), (1, 0), ("0", "1")]]
    assert len(set(keys)) == len(keys)
    assert levels_key(("no", "yes")) != levels_key(("yes", "no"))


def _infer_string_option() -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3 deprecates the option
        try:
            return bool(pd.get_option("future.infer_string"))
        except (KeyError, pd.errors.OptionError):
            pytest.skip("this pandas has no future.infer_string option")


def test_query_answers_follow_pandas_text_setting():
    """What pandas infers for text is a setting a user may change between two queries:
    the answers' categories are of the dtype pandas infers for text now, for a network
    queried before the change (its own caches) and for a new one (the process's)."""
    now = _infer_string_option()
    df = pd.DataFrame({"A": ["x", "y", "x", "x"], "B": ["u", "v", "v", "u"]})
    net = bs.fit("[A][B|A]", df)
    assert net.query("B", evidence={"A": "x"}).index.categories.dtype == pd.Index(["u"]).dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas deprecates the option
        with pd.option_context("future.infer_string", not now):
            want = pd.Index(["u"]).dtype
            for one in (net, bs.fit("[A][B|A]", df)):
                q = one.query("B", evidence={"A": "x"})
                assert q.index.categories.dtype == want
                assert one.query(["A", "B"]).index.levels[1].categories.dtype == want
                assert one.map_query("B", evidence=df[["A"]])["B"].cat.categories.dtype == want
    assert net.query("B", evidence={"A": "x"}).index.categories.dtype == pd.Index(["u"]).dtype
