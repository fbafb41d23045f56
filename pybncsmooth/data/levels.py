"""How a value names a level: the one matching rule of every entry point.

Evidence of a query, the cells of a frame to predict or score, a domain label given to
:meth:`~pybncsmooth.FittedNetwork.for_domain`, ``query(domain=)``, ``sample(domain=)``,
:meth:`~pybncsmooth.FittedNetwork.adapt` or read from the domain column of rows, and the
command line's text all name a level of a variable the same way.  A value ``v`` names
the level ``l`` when

1. they are equal as dictionary keys are (numpy scalars taken as Python's): ``1``,
   ``1.0`` and ``np.int64(1)`` name one level; or else
2. their texts are equal, for a value and a level of different types: ``1978`` names
   the level ``'1978'`` (levels read from a file or a CSV are text), ``'3'`` names the
   integer level ``3`` (the command line gives text), a whole float ``2.0`` is written
   ``'2'``, a boolean ``'True'``.

A missing value (``None``, NaN, ``pd.NA``, ``NaT``) names no level: callers leave the
variable unobserved (or refuse it where a level is needed).  A value that is not one
scalar (a list, a tuple, a set, an array) is refused with
:class:`~pybncsmooth.errors.DataError`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError

__all__ = ["is_missing", "scalar_value", "level_code", "level_codes", "levels_key", "new_level", "as_levels"]


def is_missing(value: Any) -> bool:
    """Whether ``value`` is one missing value (``None``, NaN, ``pd.NA``, ``NaT``)."""
    if value is None:
        return True
    if np.ndim(value) != 0 or isinstance(value, (list, tuple, set, dict)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def scalar_value(value: Any, what: str) -> Any:
    """``value`` as one Python scalar (numpy scalars converted); a list, tuple, set,
    dict or array is refused naming ``what`` (e.g. "the evidence on 'A'")."""
    if isinstance(value, (list, tuple, set, frozenset, dict)) or np.ndim(value) != 0:
        raise DataError(f"{what} must be one level, not {value!r}")
    return value.item() if isinstance(value, np.generic) else value


def levels_key(levels: tuple) -> tuple:
    """A cache key of ``levels`` that is equal only for the same levels in the same
    order *and of the same types*: ``(0, 1)``, ``(False, True)`` and ``(0.0, 1.0)`` are
    equal tuples, ``0.0`` and ``-0.0`` equal floats, but they are different levels (a
    query answers with them; a Categorical shows them).  A cache whose value holds the
    levels themselves is keyed by this, never by the tuple alone."""
    types = tuple(map(type, levels))
    signs = tuple(math.copysign(1.0, v) for v in levels if type(v) is float)  # 0.0 and -0.0
    return levels, types, signs


def _text(value: Any) -> str | None:
    """The text a value is written as (``None``: a value without one)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int)):
        return str(value)
    if isinstance(value, float) and np.isfinite(value):
        return str(int(value)) if value == int(value) else str(value)
    return None


@functools.lru_cache(maxsize=4096)
def _by_key(levels: tuple) -> dict:
    """``{level: position}`` (levels of equal tuples, e.g. ``(0, 1)`` and ``(False, True)``,
    are equal keys position by position, so one cached dictionary serves them all)."""
    return {v: i for i, v in enumerate(levels)}


def _by_text(levels: tuple) -> dict:
    """``{text: position}`` of the levels' texts (the first level of each text).  Cached
    by the levels *and their types*: ``(0, 1)``, ``(False, True)`` and ``(0.0, 1.0)`` are
    equal tuples (equal keys of a cache) but are written as different texts."""
    return _by_text_typed(levels, tuple(map(type, levels)))


@functools.lru_cache(maxsize=4096)
def _by_text_typed(levels: tuple, types: tuple) -> dict:
    out: dict[str, int] = {}
    for i, v in enumerate(levels):
        t = _text(v)
        if t is not None:
            out.setdefault(t, i)
    return out


def level_code(levels: tuple, value: Any) -> int:
    """The position of the level ``value`` names among ``levels`` (see the module
    docstring), ``-1`` when it names none (a missing value names none)."""
    if type(value) is str:  # the common case: a text level (never missing), equal as a key
        code = _by_key(levels).get(value, -1)
        if code >= 0:
            return code
    value = scalar_value(value, "a value")
    if is_missing(value):
        return -1
    try:
        code = _by_key(levels).get(value, -1)
    except TypeError:  # unhashable scalars name no level
        return -1
    if code >= 0:
        return code
    text = _text(value)
    if text is None:
        return -1
    code = _by_text(levels).get(text, -1)
    # a text names a level of another type only (equal texts of one type are equal keys)
    return code if code >= 0 and type(levels[code]) is not type(value) else -1


def level_codes(values: np.ndarray, levels: tuple) -> np.ndarray:
    """:func:`level_code` of every value of an object array (each distinct value looked
    up once); ``-1`` for missing values and values that name no level."""
    codes, distinct = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    found = np.array([level_code(levels, v) for v in distinct] + [-1], dtype=np.int64)
    return found[codes]


def new_level(levels: tuple, value: Any) -> Any:
    """``value`` (a scalar naming none of ``levels``) as the level it joins them as, or
    ``None`` when it cannot join them.  A whole float joins as its integer; against text
    levels a number or a boolean joins as its text (``1980`` as ``'1980'``); against
    integer levels the text of an integer joins as that integer (``'3'`` as ``3``: the
    command line and a CSV give text); otherwise a value joins levels of its own type
    only (a level of another type beside them is refused, not added: ``'zz'`` beside
    ``[1978, 1979]``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not levels:
        return value
    kinds = {type(v) for v in levels}
    if kinds == {str}:
        return _text(value)
    if kinds == {int} and isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            return None
        return number if str(number) == value else None
    return value if type(value) in kinds else None


def as_levels(col: pd.Series, levels: tuple, what: str) -> pd.Series:
    """The column ``col`` of new rows with each value written as the level it names among
    ``levels`` (:func:`level_code`: ``'1'`` is the integer level ``1``) and each value
    naming none as the level it joins them as (:func:`new_level`); missing values stay
    missing.  ``col`` itself when every value already is its level (no copy); a value that
    cannot join the levels is refused (:class:`~pybncsmooth.errors.DataError` naming
    ``what``, e.g. "node 'A'").  A Categorical comes back as values (object dtype) when a
    category changes: the levels' order is the network's."""
    levels = tuple(levels)
    values = col.array.categories if isinstance(col.dtype, pd.CategoricalDtype) else None
    if values is not None:
        distinct = np.asarray(values, dtype=object)
        cats = tuple(v.item() if isinstance(v, np.generic) else v for v in distinct)
        if cats == levels and all(type(a) is type(b) for a, b in zip(cats, levels)):
            return col  # the network's own levels (the common case: no look-up)
    else:
        kinds = {type(v) for v in levels}
        if kinds <= {str} and pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty"):
            return col  # text against text levels: a level by itself, or a new level as it is
        if kinds <= {int} and pd.api.types.is_integer_dtype(col.dtype):
            return col  # integers against integer levels: likewise
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        distinct = np.asarray(uniques, dtype=object)
    named = np.empty(len(distinct), dtype=object)
    same = True
    for i, v in enumerate(distinct):
        v = v.item() if isinstance(v, np.generic) else v
        code = level_code(levels, v)
        out = levels[code] if code >= 0 else new_level(levels, v)
        if out is None:
            kinds = "/".join(sorted({type(x).__name__ for x in levels}))
            shown = ", ".join(repr(x) for x in levels[:5]) + (", ..." if len(levels) > 5 else "")
            raise DataError(
                f"{what} has the value {v!r} ({type(v).__name__}), which names none of its levels ({kinds}: {shown}) "
                f"and cannot join them as a level of another type; give its values as {kinds}"
            )
        named[i] = out
        same = same and type(out) is type(v) and out == v
    if same:
        return col
    if values is not None:
        codes = np.asarray(col.array.codes, dtype=np.int64)
    filled = np.append(named, None)[codes]  # a missing value's code -1 picks None
    return pd.Series(filled, index=col.index, name=col.name, dtype=object)
