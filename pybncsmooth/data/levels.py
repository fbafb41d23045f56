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

__all__ = ["is_missing", "scalar_value", "level_code", "level_codes", "levels_key"]


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
