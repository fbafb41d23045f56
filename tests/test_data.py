"""Schemas and encoding of categorical data frames; bundled data sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pybncsmooth as bs
from pybncsmooth.data import NA_LABEL, Schema, encode
from pybncsmooth.errors import (
    DataError,
    DuplicateColumnError,
    EmptyDataError,
    MissingColumnError,
    MissingValueError,
    NonCategoricalError,
    SingleLevelError,
    TooManyLevelsError,
    UnseenLevelError,
)


def test_level_order_by_column_type():
    df = pd.DataFrame(
        {
            "cat": pd.Categorical(["lo", "hi", "mid", "lo"], categories=["lo", "mid", "hi"]),
            "txt": ["b", "B", "a", "b"],
            "flag": [True, False, True, True],
            "num": [10, 2, 2, 33],
            "nint": pd.array([1, None, 3, 1], dtype="Int64"),
        }
    )
    enc = encode(df, na="available")
    assert enc.schema["cat"] == ("lo", "mid", "hi")  # Categorical order kept
    assert enc.schema["txt"] == ("B", "a", "b")  # byte order, as R in the C locale
    assert enc.schema["flag"] == (False, True)
    assert enc.schema["num"] == (2, 10, 33)  # numeric, not text, order
    assert enc.schema["nint"] == (1, 3)
    assert enc["cat"].tolist() == [0, 2, 1, 0]
    assert enc["txt"].tolist() == [2, 0, 1, 2]
    assert enc["num"].tolist() == [1, 0, 0, 2]
    assert enc["nint"].tolist() == [0, -1, 1, 0]
    assert enc["cat"].dtype == np.int8
    assert "cat" in enc.schema.fixed and "txt" not in enc.schema.fixed


def test_string_dtype_and_many_levels_use_int16():
    vals = [f"v{i:04d}" for i in range(300)]
    df = pd.DataFrame({"x": pd.array(vals * 2, dtype="string")})
    enc = encode(df)
    assert len(enc.schema["x"]) == 300
    assert enc["x"].dtype == np.int16


def test_na_policies():
    df = pd.DataFrame({"a": ["x", None, "y", "x"], "b": ["u", "v", None, "v"]})
    with pytest.raises(MissingValueError) as e:
        encode(df)
    assert e.value.column == "a" and e.value.count == 1 and "row 1" in str(e.value)
    lev = encode(df, na="level")
    assert lev.schema["a"] == ("x", "y", NA_LABEL)
    assert lev["a"].tolist() == [0, 2, 1, 0]
    drop = encode(df, na="drop")
    assert drop.n_rows == 2 and drop.n_dropped == 2
    assert list(drop.index) == [0, 3]
    avail = encode(df, na="available")
    assert avail["b"].tolist() == [0, 1, -1, 1]
    with pytest.raises(EmptyDataError, match="no complete rows"):
        encode(pd.DataFrame({"a": ["x", None], "b": [None, "u"]}), na="drop")
    with pytest.raises(DataError, match="na must be"):
        encode(df, na="ignore")


def test_caller_frame_is_not_mutated():
    df = pd.DataFrame({"a": ["x", None, "y"], "b": [1, 2, 2]})
    before = df.copy(deep=True)
    encode(df, na="level")
    bs.fit("b ~ a", df, method="bayes", na="level")
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize(
    "frame,exc,match",
    [
        (pd.DataFrame({"a": [0.5, 1.5]}), NonCategoricalError, "'a'.*float64"),
        (pd.DataFrame({"a": [1.0, 2.0]}), NonCategoricalError, "whole numbers"),
        (pd.DataFrame({"a": ["x", 1]}), NonCategoricalError, "mixes value types"),
        (pd.DataFrame({"a": pd.to_datetime(["2020-01-01", "2021-01-01"])}), NonCategoricalError, "'a'"),
        (pd.DataFrame({"a": list(range(2000))}), TooManyLevelsError, "2000 distinct"),
        (pd.DataFrame({"a": []}, dtype=object), EmptyDataError, "no rows"),
        (pd.DataFrame(index=[0, 1]), EmptyDataError, "no columns"),
    ],
)
def test_bad_columns(frame, exc, match):
    with pytest.raises(exc, match=match):
        encode(frame)


def test_duplicate_columns_and_missing_columns():
    df = pd.DataFrame([["x", "y"]], columns=["a", "a"])
    with pytest.raises(DuplicateColumnError, match="'a'"):
        encode(df)
    with pytest.raises(MissingColumnError, match="'zz'"):
        encode(pd.DataFrame({"a": ["x"]}), variables=["zz"])


def test_encoding_against_a_schema():
    schema = Schema({"a": ("x", "y", "z")})
    df = pd.DataFrame({"a": ["y", "z", "w"]})
    with pytest.raises(UnseenLevelError) as e:
        encode(df, schema)
    assert e.value.column == "a" and e.value.levels == ["w"]
    back = encode(df, schema, on_unseen="backoff")
    assert back["a"].tolist() == [1, 2, -1]
    # integers against text levels (e.g. read back from a BIF file)
    s2 = Schema({"n": ("1", "2", "10")})
    assert encode(pd.DataFrame({"n": [10, 1]}), s2)["n"].tolist() == [2, 0]
    # a Categorical with other category order is mapped by label
    cat = pd.DataFrame({"a": pd.Categorical(["x", "z"], categories=["z", "x"])})
    assert encode(cat, schema)["a"].tolist() == [0, 2]


def test_schema_union_and_checks():
    a = Schema({"v": ("b", "d")})
    b = Schema({"v": ("a", "c")})
    assert a.union(b)["v"] == ("a", "b", "c", "d")
    fixed = Schema({"v": ("z", "a", "b", "c", "d")}, frozenset({"v"}))
    assert fixed.union(a)["v"] == ("z", "a", "b", "c", "d")
    with pytest.raises(UnseenLevelError):
        Schema({"v": ("a",)}, frozenset({"v"})).union(Schema({"v": ("q",)}))
    with pytest.raises(DataError, match="levels"):
        Schema({"v": ("a", "b")}, frozenset({"v"})).union(Schema({"v": ("b", "a")}, frozenset({"v"})))
    with pytest.raises(SingleLevelError, match="'v'"):
        Schema({"v": ("a",)}).check_min_levels(["v"])
    with pytest.raises(DataError, match="more than once"):
        Schema({"v": ("a", "a")})
    assert Schema.from_dict(fixed.to_dict()) == fixed


def test_bundled_datasets():
    assert bs.list_datasets() == ["asia", "chile", "gssvocab", "housevotes84", "learning_test"]
    asia = bs.load_dataset("asia")
    assert asia.shape == (5000, 8)
    assert list(asia["A"].cat.categories) == ["no", "yes"]
    assert int((asia["A"] == "yes").sum()) == 42  # bnlearn: P(A = yes) = 0.0084 by mle
    hv = bs.load_dataset("housevotes84")
    assert hv.shape == (435, 17) and int(hv.isna().sum().sum()) == 392
    dag = bs.datasets.structure("learning_test")
    assert dag.parents("E") == ["B", "F"]
    with pytest.raises(KeyError, match="unknown data set"):
        bs.load_dataset("nope")
    assert "Lauritzen" in bs.datasets.dataset_info("asia")["description"]
    # the two multi-domain surveys (carData, complete cases): rows per domain as exported
    gss = bs.load_dataset("gssvocab")
    assert gss.shape == (27360, 6) and int(gss.isna().sum().sum()) == 0
    assert bs.datasets.dataset_info("gssvocab")["domain"] == "year" and gss["year"].nunique() == 20
    assert list(gss["vocab"].cat.categories) == [str(i) for i in range(11)]
    chile = bs.load_dataset("chile")
    assert chile.shape == (2439, 6) and int((chile["region"] == "M").sum()) == 75
