"""The pandas objects of a query's answer: the index of the targets' states and the
Series of one mapping's posterior.

A small query costs less than pandas' public constructors of its answer, so the
answer is assembled from its parts where this pandas offers them (each assembly
checked once, at its first use, against the public constructor: the same types,
dtypes, values and names; otherwise the public constructor is used):

* the categories of every node of a network whose levels are all text are slices of
  one text index of all its levels, built at the first query (one conversion of a
  list of text per network instead of one per target), from pyarrow's string array
  directly when pandas' text dtype is the pyarrow-backed one;
* a node's ``CategoricalIndex`` from its codes and dtype, without re-validation;
* the answer Series from its block.

What pandas infers for text depends on its settings (``future.infer_string``,
``mode.string_storage``), which a user may change between two queries: every cache
here that holds text (a dtype, an index, the internal constructors checked against the
public ones) is keyed by those settings too (:func:`text_setting`), so that an answer
is the one a fresh process with the same settings gives.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ...data.levels import levels_key

__all__ = ["state_index", "levels_dtype", "prob_series"]


def state_index(net: Any, targets: Sequence[str]) -> pd.Index:
    """Levels of one target, or the joint states of several (a MultiIndex); cached on
    the network (pandas indexes are immutable) for pandas' text settings."""
    cache = net.__dict__.setdefault("_query_states", {})
    setting = text_setting()
    key = (tuple(targets), setting)
    if key not in cache:
        idx = [_levels_index(net, t, setting) for t in targets]
        cache[key] = idx[0] if len(idx) == 1 else pd.MultiIndex.from_product(idx, names=list(targets))
    return cache[key]


def _setting_reader() -> Any:
    """A function reading pandas' text settings: from pandas' own option store (a dict
    look-up: a query pays well under a microsecond), else through ``pd.get_option``."""
    names = (("future", "infer_string"), ("mode", "string_storage"))
    try:
        from pandas._config import config

        store = config._global_config
        if all(isinstance(store.get(a), dict) and b in store[a] for a, b in names):
            return lambda: (store["future"]["infer_string"], store["mode"]["string_storage"])
    except (ImportError, AttributeError):  # pragma: no cover - another pandas layout
        pass

    def read() -> tuple:  # pragma: no cover - another pandas layout
        out = []
        for a, b in names:
            try:
                out.append(pd.get_option(f"{a}.{b}"))
            except (KeyError, pd.errors.OptionError):  # a pandas without this option
                out.append(None)
        return tuple(out)

    return read


#: pandas' settings that decide the dtype of an index of text: ``(infer_string, string_storage)``
text_setting = _setting_reader()


def levels_dtype(levels: tuple) -> pd.CategoricalDtype:
    """The Categorical dtype of a variable's levels (cached by the levels, their order and
    their types, :func:`~pybncsmooth.data.levels.levels_key`: ``(0, 1)`` and
    ``(False, True)`` are equal tuples but not the same categories; dtypes are immutable,
    and inferring one costs more than a small query).  The levels of a schema are distinct
    and none is missing, so pandas' own check of that (a hash table built for each new
    dtype, most of its cost) is skipped where pandas offers it; the categories are
    inferred as the public constructor infers them."""
    return _levels_dtype(levels_key(levels), text_setting())


@functools.lru_cache(maxsize=4096)
def _levels_dtype(key: tuple, setting: tuple) -> pd.CategoricalDtype:
    levels = key[0]
    fast = getattr(pd.CategoricalDtype, "_from_fastpath", None)
    if fast is None:  # pragma: no cover - a pandas without it
        return pd.CategoricalDtype(list(levels))
    if all(type(v) is str for v in levels):  # text: the dtype pandas infers for text, given (no inference)
        return fast(_text_index(list(levels), setting), False)
    return fast(list(levels), False)


@functools.lru_cache(maxsize=8)
def _text_dtype(setting: tuple) -> Any:
    """The dtype pandas infers for an index of text under the text settings ``setting``
    (``str`` or ``object``, by version and option)."""
    return pd.Index(["a"]).dtype


def _levels_index(net: Any, name: str, setting: tuple) -> pd.CategoricalIndex:
    """``pd.CategoricalIndex(levels, categories=levels, name=name)`` of node ``name``, from
    its dtype (:func:`_node_dtype`)."""
    codes = np.arange(net.schema.cardinality(name))  # valid codes by construction: pandas need not check them
    cat = pd.Categorical.from_codes(codes, dtype=_node_dtype(net, name, setting), validate=False)
    parts = _parts(setting)
    return parts.categorical_index(cat, name=name) if parts.categorical_index else pd.CategoricalIndex(cat, name=name)


def _node_dtype(net: Any, node: str, setting: tuple) -> pd.CategoricalDtype:
    """The Categorical dtype of ``node``'s levels (cached on the network, for pandas'
    text settings ``setting``).  When every level of the network is text, its
    categories are a slice of one index of all the network's levels, built at the
    first query (under those settings): pandas converts a list of text to its
    string array at a cost per call far above the cost per string (about 0.15 ms a call
    against 0.03 ms a slice), so one conversion per network replaces one per target;
    otherwise the dtype is :func:`levels_dtype`'s.  Equal to ``pd.CategoricalDtype(levels)``."""
    store = net.__dict__
    dtypes = store.setdefault("_query_dtypes", {})
    if (node, setting) in dtypes:
        return dtypes[node, setting]
    texts = store.setdefault("_query_text_levels", {})
    text = texts.get(setting)
    if text is None:
        text = texts[setting] = _text_levels(net.schema, setting)
    fast = getattr(pd.CategoricalDtype, "_from_fastpath", None)
    if text is False or fast is None:
        dtype = levels_dtype(net.schema[node])
    else:
        index, where = text
        a, b = where[node]
        dtype = fast(index[a:b], False)
    dtypes[node, setting] = dtype
    return dtype


def _text_levels(schema: Any, setting: tuple) -> tuple[pd.Index, dict[str, tuple[int, int]]] | bool:
    """One text index of every variable's levels, one after the other, and each
    variable's ``(start, stop)`` in it; ``False`` when some level is not text."""
    where, flat = {}, []
    for var, levels in schema.levels.items():
        if not all(type(v) is str for v in levels):
            return False
        where[var] = (len(flat), len(flat) + len(levels))
        flat.extend(levels)
    return _text_index(flat, setting), where


def _text_index(texts: list[str], setting: tuple | None = None) -> pd.Index:
    """``pd.Index(texts)`` of a list of text (pandas' text dtype under the text settings
    ``setting``, default the current ones), built from pyarrow's string array when that
    is what pandas would build."""
    setting = text_setting() if setting is None else setting
    make = _parts(setting).text_index
    return make(texts) if make is not None else pd.Index(texts, dtype=_text_dtype(setting))


def prob_series(values: np.ndarray, index: pd.Index) -> pd.Series:
    """``pd.Series(values, index=index, name="prob", copy=False)`` (``values`` a fresh
    float64 array), from its block where pandas offers it (a third of the constructor's
    cost, which a small query pays in full)."""
    parts = _parts(text_setting()).series
    if parts is None:
        return pd.Series(values, index=index, name="prob", copy=False)
    return _series_from(parts, values, index)


class _Parts:
    """pandas' internal constructors this module assembles answers with (``None``
    where absent, or where one does not give what the public constructor gives) under
    the text settings ``setting``."""

    def __init__(self, setting: tuple) -> None:
        self.text_index = _checked(lambda: _arrow_text_index(setting), lambda f: f(["a", "b", "a"]),
                                   lambda: pd.Index(["a", "b", "a"]))
        self.categorical_index = _checked(
            lambda: pd.CategoricalIndex._simple_new,
            lambda f: f(pd.Categorical(["b", "a"], categories=["a", "b"]), name="X"),
            lambda: pd.CategoricalIndex(pd.Categorical(["b", "a"], categories=["a", "b"]), name="X"),
        )
        self.series = _checked(_series_parts, lambda p: _series_from(p, np.array([0.25, 0.75]), pd.Index(["a", "b"])),
                               lambda: pd.Series(np.array([0.25, 0.75]), index=pd.Index(["a", "b"]), name="prob"))


def _checked(get: Any, use: Any, want: Any) -> Any:
    """``get()`` when it exists and ``use(get())`` equals ``want()`` exactly (type, dtype,
    values, names), else ``None``."""
    try:
        part = get()
        if part is None:
            return None
        got, ref = use(part), want()
        same = type(got) is type(ref) and got.dtype == ref.dtype and repr(got.dtype) == repr(ref.dtype)
        if isinstance(ref, pd.Series):
            pd.testing.assert_series_equal(got, ref, check_exact=True)
            same = same and got.flags.allows_duplicate_labels == ref.flags.allows_duplicate_labels
        else:
            pd.testing.assert_index_equal(got, ref, exact=True)
        return part if same else None
    except Exception:  # pragma: no cover - a pandas without these internals, or unequal
        return None


def _arrow_text_index(setting: tuple) -> Any:
    """``texts -> pd.Index(texts)`` through pyarrow's string array, when pandas' text
    dtype is the pyarrow-backed string dtype (pandas 3); else ``None``."""
    dtype = _text_dtype(setting)
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow":
        return None
    import pyarrow as pa
    from pandas.core.arrays.string_arrow import ArrowStringArray

    kind = pd.Index(["a"]).array._pa_array.type
    return lambda texts: pd.Index._simple_new(ArrowStringArray(pa.array(texts, type=kind), dtype=dtype))


def _series_parts() -> tuple[Any, Any]:
    from pandas.core.internals import SingleBlockManager

    return SingleBlockManager.from_array, pd.Series._from_mgr


def _series_from(parts: tuple[Any, Any], values: np.ndarray, index: pd.Index) -> pd.Series:
    from_array, from_mgr = parts
    mgr = from_array(values, index)
    out = from_mgr(mgr, axes=mgr.axes)
    object.__setattr__(out, "_name", "prob")  # what the ``name`` setter stores, once checked for hashability
    return out


@functools.lru_cache(maxsize=8)
def _parts(setting: tuple) -> _Parts:
    return _Parts(setting)
