"""Encoding of categorical pandas data frames into small-integer codes.

``encode(df)`` turns each column into codes ``0 .. r-1`` (``int8``/``int16``) under a
:class:`~pybncsmooth.data.schema.Schema`.  Code ``-1`` marks a value that is not
observed: missing under ``na="available"``, or unknown at prediction time under
``on_unseen="backoff"``.  The caller's data frame is never modified.

Accepted column types: pandas ``Categorical`` (its category order is kept),
strings (levels sorted by code point, i.e. byte order of their UTF-8 text, as R
sorts factor levels in the C locale), booleans (``False < True``) and integers
(numeric order, at most ``max_levels`` distinct values).  Floats, dates and
other types raise :class:`~pybncsmooth.errors.NonCategoricalError`, except a float
column whose every value is missing (an empty column as pandas reads it): missing values.
Against the levels of a fitted model, values name levels by the one rule of
:mod:`pybncsmooth.data.levels` (``1978`` names the level ``'1978'``, ``'3'`` the level ``3``,
a float column of whole numbers with missing cells names integer levels).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from ..errors import (
    DataError,
    DuplicateColumnError,
    EmptyDataError,
    MissingColumnError,
    MissingValueError,
    NonCategoricalError,
    TooManyLevelsError,
    UnseenLevelError,
)
from ..options import NAPolicy as _Policy
from .levels import level_codes
from .schema import NA_LABEL, Schema, _level_key, code_dtype

__all__ = [
    "EncodedData", "encode", "check_frame", "text_columns", "column_labels", "categorical_codes", "NAPolicy",
    "UnseenPolicy",
]

NAPolicy = Literal["error", "level", "drop", "available"]
UnseenPolicy = Literal["error", "backoff"]

#: Default maximum number of distinct values of a non-Categorical column.
DEFAULT_MAX_LEVELS = 1000


@dataclass
class EncodedData:
    """Codes of a data frame under a schema.

    Attributes
    ----------
    schema:
        Levels of every encoded variable.
    codes:
        Variable -> 1-d integer array of codes; ``-1`` means not observed.
    index:
        The pandas index of the rows kept (for aligning outputs with the input).
    n_dropped:
        Rows dropped under ``na="drop"``.
    n_missing:
        Missing cells of each encoded variable that has some, before the missing-value
        policy (as ``df[var].isna().sum()`` counts them; an encoding made otherwise
        than by :func:`encode` may leave it empty).
    complete:
        Variables whose codes are known to be all ``>= 0`` (checked as they were
        encoded: a Categorical without missing values); the others may hold ``-1``.
    stacked:
        ``(names, M)`` when the codes of ``names`` are the rows of one ``(len(names),
        n_rows)`` array ``M`` (every variable a Categorical without missing values, its
        codes copied once into ``M``): counting reads ``M.T`` as its code matrix instead
        of stacking the columns again.  ``None`` otherwise.
    """

    schema: Schema
    codes: dict[str, np.ndarray]
    index: pd.Index
    n_dropped: int = 0
    n_missing: dict[str, int] = field(default_factory=dict)
    complete: frozenset = frozenset()
    stacked: tuple[tuple[str, ...], np.ndarray] | None = None

    @property
    def n_rows(self) -> int:
        return len(self.index)

    def take(self, rows: np.ndarray) -> "EncodedData":
        """The rows at positions ``rows`` (the same schema)."""
        return EncodedData(self.schema, {v: c[rows] for v, c in self.codes.items()}, self.index[rows],
                           complete=self.complete)

    def __getitem__(self, var: str) -> np.ndarray:
        try:
            return self.codes[var]
        except KeyError:
            raise MissingColumnError(var, available=list(self.codes)) from None

    def matrix(self, variables: Sequence[str]) -> np.ndarray:
        """Codes of ``variables`` as an ``(n_rows, len(variables))`` int64 array."""
        out = np.empty((self.n_rows, len(variables)), dtype=np.int64)
        for j, v in enumerate(variables):
            out[:, j] = self[v]
        return out


def check_frame(df: Any, *, what: str = "data") -> pd.DataFrame:
    """Validate that ``df`` is a non-empty data frame with unique column names."""
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{what} must be a pandas DataFrame, not {type(df).__name__}")
    if not df.columns.is_unique:  # (cached by pandas: a frame checked once is not searched again)
        raise DuplicateColumnError(str(df.columns[df.columns.duplicated()][0]))
    if len(df.index) == 0:
        raise EmptyDataError(f"{what} has no rows")
    if len(df.columns) == 0:
        raise EmptyDataError(f"{what} has no columns")
    return text_columns(df)


def column_labels(df: pd.DataFrame) -> tuple:
    """The column labels of ``df`` as Python values (Arrow-backed text through Arrow's
    own conversion), cached by the identity of the frame's column Index (immutable; the
    cache holds it): a frame fitted again is not converted again."""
    return _levels_of(df.columns)


def text_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its column labels as text, as a fit names its variables (a frame with
    integer column labels fits nodes ``'0'``, ``'1'``, ...; its rows are queried the
    same way).  A new frame when a label changes (the caller's is untouched); two labels
    of one text (``1`` and ``'1'``) raise :class:`DuplicateColumnError`."""
    if all(isinstance(c, str) for c in column_labels(df)):
        return df
    df = df.rename(columns=str)
    dup = df.columns[df.columns.duplicated()]
    if len(dup):
        raise DuplicateColumnError(str(dup[0]))
    return df


def encode(
    df: pd.DataFrame,
    schema: Schema | None = None,
    *,
    variables: Sequence[str] | None = None,
    na: NAPolicy = "error",
    on_unseen: UnseenPolicy = "error",
    max_levels: int = DEFAULT_MAX_LEVELS,
    na_label: str = NA_LABEL,
    empty_ok: bool = False,
    missing_unobserved: bool = False,
    domains: Sequence[str] = (),
) -> EncodedData:
    """Encode the columns ``variables`` of ``df`` as integer codes.

    A float column whose every value is missing (``NaN``, as pandas reads an empty
    column) is a column of missing values, as an all-missing Categorical; a float
    column holding numbers raises :class:`NonCategoricalError`.

    Parameters
    ----------
    df:
        A pandas data frame of categorical columns.  It is not modified.
    schema:
        Levels to encode against (e.g. those a model was fitted with).  Variables
        not in it have their levels inferred from ``df``.
    variables:
        Columns to encode (default: all); each must be a column of ``df``.
    na:
        Missing values: ``"error"`` raises :class:`MissingValueError`; ``"level"``
        makes them a level of their own (labelled ``na_label``, placed last);
        ``"drop"`` drops every row with a missing value in ``variables``;
        ``"available"`` keeps them as code ``-1`` (each node then uses the rows
        where it and its parents are observed, as bnlearn does).
    on_unseen:
        A value that is not a level of ``schema``: ``"error"`` raises
        :class:`UnseenLevelError`; ``"backoff"`` encodes it as ``-1`` (not observed).
    max_levels:
        Largest number of distinct values an inferred (non-Categorical) column may have.
    empty_ok:
        With ``na="drop"``, a frame whose every row is incomplete gives an encoding with
        no rows (one chunk of a larger data set) instead of an :class:`EmptyDataError`.
    missing_unobserved:
        With ``na="level"`` and a variable of ``schema`` that has no level ``na_label``
        (a model whose training data had no missing value in it): its missing values are
        not observed (code ``-1``) instead of an unseen level.
    domains:
        Variables that are domain columns (users, sites), not nodes: ``max_levels``,
        a guard against numeric or identifier columns read as nodes, does not limit
        their levels (a fit of ten thousand users is a fit of ten thousand levels).
    """
    if na not in _Policy.COUNTING:
        raise DataError(f"na must be one of {_Policy.COUNTING} when encoding, not {na!r}")
    if on_unseen not in ("error", "backoff"):
        raise DataError(f"on_unseen must be 'error' or 'backoff', not {on_unseen!r}")
    df = check_frame(df)
    variables = _variables(df, variables)
    schema = schema if schema is not None else Schema()
    if not isinstance(schema, Schema):
        raise DataError(f"schema must be a Schema, not a {type(schema).__name__}")
    levels: dict[str, tuple] = {}
    fixed: set[str] = set()
    codes: dict[str, np.ndarray] = {}
    na_masks: dict[str, np.ndarray] = {}
    n_missing: dict[str, int] = {}
    arrays, stacked = _categorical_arrays(df, set(variables) - set(schema.levels))
    columns: dict[str, pd.Series] | None = None
    for var in variables:
        fast = arrays.get(var)
        if fast is not None:  # a Categorical without missing values: its codes and categories as they are
            levels[var], codes[var] = fast
            fixed.add(var)
            continue
        if columns is None:
            wanted = set(variables)
            columns = {name: s for name, s in df.items() if name in wanted}  # faster than df[var] each
        series = columns[var]
        if var in schema:
            lev, is_fixed = schema[var], var in schema.fixed
            c, na_mask, n_na = _map_to_levels(series, var, lev, na, on_unseen, na_label, missing_unobserved)
        else:
            limit = max_levels if var not in domains else sys.maxsize
            lev, is_fixed, c, na_mask, n_na = _infer_levels(series, var, na, limit, na_label)
        if n_na:
            n_missing[var] = n_na
        if is_fixed:
            fixed.add(var)
        levels[var] = lev
        codes[var] = c
        if na_mask is not None:
            na_masks[var] = na_mask
    # levels of Categoricals come checked (their categories are unique; cleaned as Schema cleans)
    schema_out = Schema._checked(levels, fixed) if len(arrays) == len(levels) else Schema(levels, frozenset(fixed))
    complete = frozenset(arrays)  # (their codes were checked >= 0)
    if na == "drop" and na_masks:
        return _dropped(df, schema_out, codes, na_masks, empty_ok, n_missing, complete)
    whole = (tuple(arrays), stacked) if stacked is not None and len(arrays) == len(codes) else None
    return EncodedData(schema_out, codes, df.index, 0, n_missing, complete, whole)


def _levels_of(categories: pd.Index) -> tuple:
    """A Categorical's categories as Python values, as :class:`Schema` keeps levels
    (Arrow-backed text through Arrow's own conversion: a tenth of the cost of
    ``Index.tolist()``).  Cached by the categories' identity (an Index is immutable, and
    the cache holds it, so that its id is not reused while cached): the columns of one
    frame, fitted again, are not converted again."""
    key = id(categories)
    hit = _LEVELS_CACHE.get(key)
    if hit is not None and hit[0] is categories:
        return hit[1]
    arr = categories.array
    # Arrow-backed text only: pandas' python-backed text has __arrow_array__ too, which
    # imports pyarrow (not a dependency)
    if getattr(categories.dtype, "storage", None) in _ARROW_STORAGE:
        levels = tuple(arr.__arrow_array__().to_pylist())
    else:
        levels = tuple(categories.tolist())
    if not all(type(v) is str for v in levels):
        levels = tuple(_plain(v) for v in levels)
    if len(_LEVELS_CACHE) >= _LEVELS_CACHE_SIZE:
        _LEVELS_CACHE.clear()
    _LEVELS_CACHE[key] = (categories, levels)
    return levels


#: the storages of pandas' text dtype whose arrays are Arrow arrays (pyarrow installed)
_ARROW_STORAGE = ("pyarrow", "pyarrow_numpy")
#: categories already converted (:func:`_levels_of`): id -> (the Index, its levels)
_LEVELS_CACHE: dict[int, tuple[pd.Index, tuple]] = {}
_LEVELS_CACHE_SIZE = 4096


def _categorical_arrays(df: pd.DataFrame, names: set) -> tuple[dict[str, tuple[tuple, np.ndarray]], np.ndarray | None]:
    """``(levels, codes)`` of the Categorical columns among ``names`` that have no missing
    value and no more than 127 levels (int8 codes, as encoding keeps them), read from the
    frame's arrays without building a Series a column; and, when none of those columns
    has a missing value, their codes as the rows of one array (a copy: the codes given
    are its rows, in the dictionary's order), else ``None``.  Whether any has a missing
    value (code -1) is one reduction over that array (a reduction a column costs as much
    as the whole), each column's own only when one has."""
    found: dict[str, tuple[tuple, np.ndarray]] = {}
    arrays = _column_arrays(df)
    for i, name in enumerate(column_labels(df)):
        if name not in names:
            continue
        arr = arrays[i] if arrays is not None else df.iloc[:, i].array
        if arr is None:  # a column of a NumPy block: not a Categorical
            continue
        small = _small_categorical(arr)
        if small is not None:
            found[name] = small
    if not found:
        return found, None
    stacked = np.array([c for _, c in found.values()])
    if not stacked.size or stacked.min() >= 0:
        return {name: (lc[0], row) for (name, lc), row in zip(found.items(), stacked)}, stacked
    return {name: (lc[0], _read_only(lc[1])) for name, lc in found.items() if lc[1].min() >= 0}, None


def categorical_codes(df: pd.DataFrame, variables: Sequence[str]) -> tuple[list[tuple], list[np.ndarray]] | None:
    """Each of ``variables``' levels and codes (the Categorical's own int8 array, never
    to be written to) when every one is a column of ``df`` holding a Categorical of at
    most 127 levels and the frame's column labels are distinct text: the levels and codes
    :func:`encode` gives such a column when it has no missing value (code -1: the
    caller's to look for).  ``None`` otherwise (encoding then decides).  The columns are
    read from the frame's blocks (a Categorical is a block of its own), only those of
    ``variables``."""
    where = _text_positions(df.columns)
    try:
        blocks, blknos = df._mgr.blocks, df._mgr.blknos
    except (AttributeError, TypeError):
        return None
    if where is None or len(blknos) != len(where):
        return None
    levels, codes = [], []
    for v in variables:
        i = where.get(v)
        arr = blocks[blknos[i]].values if i is not None else None
        small = _small_categorical(arr) if getattr(arr, "ndim", 0) == 1 else None
        if small is None:
            return None
        levels.append(small[0])
        codes.append(small[1])
    return levels, codes


def _small_categorical(arr: Any) -> tuple[tuple, np.ndarray] | None:
    """``(levels, codes)`` of a Categorical array of at most 127 levels (its own int8
    codes, as encoding keeps them); ``None`` for any other array."""
    if not isinstance(getattr(arr, "dtype", None), pd.CategoricalDtype):
        return None
    codes = _codes_of(arr)
    if codes.dtype != np.int8:  # more than 127 categories
        return None
    levels = _levels_of(arr.dtype.categories)
    return (levels, codes) if len(levels) <= 127 else None


def _text_positions(columns: pd.Index) -> dict[str, int] | None:
    """Each column label's position when the labels are distinct text, else ``None``;
    cached by the Index's identity (immutable; the cache holds it)."""
    hit = _POSITIONS_CACHE.get(id(columns))
    if hit is not None and hit[0] is columns:
        return hit[1]
    labels = _levels_of(columns)
    where: dict[str, int] | None = {v: i for i, v in enumerate(labels)}
    if len(where) < len(labels) or not all(isinstance(v, str) for v in labels):
        where = None
    if len(_POSITIONS_CACHE) >= _LEVELS_CACHE_SIZE:
        _POSITIONS_CACHE.clear()
    _POSITIONS_CACHE[id(columns)] = (columns, where)
    return where


#: column labels' positions (:func:`_text_positions`): id -> (the Index, positions or None)
_POSITIONS_CACHE: dict[int, tuple[pd.Index, dict[str, int] | None]] = {}


def _column_arrays(df: pd.DataFrame) -> list | None:
    """Each column's array as pandas holds it when it is an extension array (a
    Categorical: a block of its own), ``None`` for a column of a NumPy block; read from
    the frame's blocks, a fraction of the cost of asking the frame column by column
    (``None`` where pandas keeps its data otherwise)."""
    try:
        mgr = df._mgr
        blocks, blknos = mgr.blocks, mgr.blknos.tolist()
    except (AttributeError, TypeError):
        return None
    out = []
    for b in blknos:
        values = blocks[b].values
        out.append(values if getattr(values, "ndim", 2) == 1 else None)
    return out if len(out) == len(df.columns) else None


def _codes_of(arr: pd.Categorical) -> np.ndarray:
    """A Categorical's codes: its own array (``_codes``, where pandas keeps it: no
    read-only view made at each call as ``Categorical.codes`` does; never written to)."""
    codes = getattr(arr, "_codes", None)
    return codes if isinstance(codes, np.ndarray) else np.asarray(arr.codes)


def _read_only(codes: np.ndarray) -> np.ndarray:
    """A read-only view of a column's codes (the caller's frame's own array)."""
    view = codes.view()
    view.flags.writeable = False
    return view


def _variables(df: pd.DataFrame, variables: Sequence[str] | None) -> list[str]:
    """The columns to encode: all, or the given ones, each a column of ``df``."""
    if variables is None:
        return [str(c) for c in df.columns]
    cols = set(column_labels(df))
    for v in variables:
        if v not in cols:
            raise MissingColumnError(v, available=[str(c) for c in df.columns])
    return list(variables)


def _dropped(df: pd.DataFrame, schema: Schema, codes: dict, na_masks: dict, empty_ok: bool, n_missing: dict,
             complete: frozenset = frozenset()) -> EncodedData:
    """The encoding without the rows that have a missing value (``na="drop"``)."""
    bad = np.zeros(len(df), dtype=bool)
    for m in na_masks.values():
        bad |= m
    n_dropped = int(bad.sum())
    if n_dropped == len(df) and not empty_ok:
        raise EmptyDataError(
            f'no complete rows are left after na="drop" (every one of the {len(df)} rows has a missing value)'
        )
    keep = ~bad
    return EncodedData(schema, {v: c[keep] for v, c in codes.items()}, df.index[keep], n_dropped, n_missing, complete)


# ----------------------------------------------------------------------------- helpers


def _first_na_row(series: pd.Series, mask: np.ndarray) -> Any:
    return series.index[int(np.flatnonzero(mask)[0])]


def _text_levels(series: pd.Series, var: str, max_levels: int) -> tuple[tuple, np.ndarray]:
    """Levels of a text (or object) column, sorted as R sorts factor levels, and codes."""
    dtype = series.dtype
    raw, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    uniq = list(uniques)
    kinds = {_kind(u) for u in uniq}
    if len(kinds) > 1:
        raise NonCategoricalError(var, dtype, f"it mixes value types {sorted(kinds)}; convert it to one type first")
    kind = kinds.pop() if kinds else "str"
    if kind == "other":
        bad = next(u for u in uniq if _kind(u) == "other")
        raise NonCategoricalError(var, dtype, f"value {bad!r} of type {type(bad).__name__}")
    if kind == "float":
        raise NonCategoricalError(var, dtype, "it holds floating-point numbers")
    if len(uniq) > max_levels:
        raise TooManyLevelsError(var, len(uniq), max_levels)
    order = sorted(range(len(uniq)), key=lambda i: _level_key(uniq[i]))
    remap = np.empty(len(uniq) + 1, dtype=np.int64)
    remap[np.asarray(order, dtype=np.int64)] = np.arange(len(uniq))
    remap[-1] = -1
    return tuple(_plain(uniq[i]) for i in order), remap[np.asarray(raw, dtype=np.int64)]


def _raw_levels(series: pd.Series, var: str, max_levels: int) -> tuple[tuple, bool, np.ndarray]:
    """Levels of a column by its type, whether their order is fixed, and codes (-1 = NA)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return tuple(dtype.categories.tolist()), True, series.array.codes
    if pd.api.types.is_bool_dtype(dtype):
        if pd.api.types.is_extension_array_dtype(dtype):
            arr = series.to_numpy(dtype=np.float64, na_value=np.nan)
            return (False, True), False, np.where(np.isnan(arr), -1, arr).astype(np.int64)
        return (False, True), False, series.to_numpy().astype(np.int64)
    if pd.api.types.is_integer_dtype(dtype):
        raw, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
        levels = tuple(int(u) for u in np.asarray(uniques))
        if len(levels) > max_levels:
            raise TooManyLevelsError(var, len(levels), max_levels)
        return levels, False, raw
    if pd.api.types.is_float_dtype(dtype) and series.isna().all():  # no value: no level
        return (), False, np.full(len(series), -1, dtype=np.int64)
    if pd.api.types.is_float_dtype(dtype):
        vals = series.dropna().to_numpy(dtype=np.float64)
        hint = ""
        if vals.size and np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
            hint = "its values are whole numbers: convert it with .astype('Int64') or to a Categorical"
        raise NonCategoricalError(var, dtype, hint)
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        levels, raw = _text_levels(series, var, max_levels)
        return levels, False, raw
    raise NonCategoricalError(var, dtype)


def _infer_levels(
    series: pd.Series, var: str, na: str, max_levels: int, na_label: str
) -> tuple[tuple, bool, np.ndarray, np.ndarray | None, int]:
    """Levels, whether their order is fixed, codes (-1 = NA), the NA mask and the number
    of missing cells (before the policy)."""
    levels, fixed, raw = _raw_levels(series, var, max_levels)
    raw = np.asarray(raw)
    na_mask = raw < 0
    n_na = int(na_mask.sum())
    if not n_na:
        na_mask = None
    if na_mask is not None:
        if na == "error":
            raise MissingValueError(var, int(na_mask.sum()), _first_na_row(series, na_mask))
        if na == "level":
            if na_label in levels:
                raise DataError(f"variable {var!r} already has a level {na_label!r}; pass another na_label")
            levels = levels + (na_label,)
            raw = np.where(na_mask, len(levels) - 1, raw)
            na_mask = None
    codes = np.asarray(raw, dtype=code_dtype(len(levels)))
    return levels, fixed, codes, na_mask, n_na


def _map_to_levels(
    series: pd.Series, var: str, levels: tuple, na: str, on_unseen: str, na_label: str,
    missing_unobserved: bool = False,
) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Codes of ``series`` against known ``levels`` (-1 = not observed), the NA mask and
    the number of missing cells (before the policy)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(series.array.codes, dtype=np.int64)  # a copy: the Categorical's codes are int8/16
        na_mask = codes < 0  # a Categorical's missing values are its code -1
        # (not cached by the dtype: unordered dtypes of the same levels in two orders are equal)
        cats = _levels_of(dtype.categories)
        if cats == levels:
            raw = codes
        else:  # each category named as any value names a level (pybncsmooth.data.levels)
            raw = np.append(level_codes(np.array(cats, dtype=object), levels), -1)[codes]
    elif pd.api.types.is_float_dtype(dtype):
        raw, na_mask = _float_codes(series, var, levels)
    else:
        raw, na_mask = _positions(series.to_numpy(dtype=object), levels)
    raw[na_mask] = -1
    n_na = int(na_mask.sum())
    unknown = (raw < 0) & ~na_mask
    if unknown.any():  # the rest of the one rule: e.g. integers against levels read back as text
        raw[unknown] = level_codes(series.to_numpy(dtype=object)[unknown], levels)
        unknown = (raw < 0) & ~na_mask
    if unknown.any():
        if on_unseen == "error":
            bad = pd.unique(series[unknown].astype(object))
            raise UnseenLevelError(var, list(bad), levels)
        raw[unknown] = -1
    if n_na:
        if na == "error":
            raise MissingValueError(var, n_na, _first_na_row(series, na_mask))
        if na == "level" and na_label in levels:
            raw[na_mask] = levels.index(na_label)
            na_mask = None
        elif na == "level":
            if on_unseen == "error" and not missing_unobserved:
                raise UnseenLevelError(var, [na_label], levels)
    else:
        na_mask = None
    return raw.astype(code_dtype(len(levels))), na_mask, n_na


def _float_codes(series: pd.Series, var: str, levels: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a float column against known levels and its missing cells: a column of
    whole numbers (as pandas holds integers with missing cells) names levels as its
    integers do; a float that is not a whole number means numeric data
    (:class:`NonCategoricalError`)."""
    vals = series.to_numpy(dtype=np.float64, na_value=np.nan)
    na_mask = np.isnan(vals)
    if na_mask.all():  # every value missing: an unknown column
        return np.full(len(series), -1, dtype=np.int64), na_mask
    seen = vals[~na_mask]
    if not (np.isfinite(seen).all() and (seen == np.round(seen)).all()):
        raise NonCategoricalError(var, series.dtype)
    raw = np.full(len(series), -1, dtype=np.int64)
    raw[~na_mask] = level_codes(seen.astype(object), levels)
    return raw, na_mask


def _positions(values: np.ndarray, levels: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The position of each value among ``levels`` (-1: not a level, or missing) and
    the mask of missing values (``None``, NaN, ``pd.NA``, ``NaT``, as ``pd.isna``).

    The values are factorised (hashing, in C) and only the distinct ones looked up,
    which with text columns is several times faster than an index look-up of every
    value (pandas checks dtypes on each ``get_indexer``; ``Series.isna`` builds a
    Series).  Values match levels as a dictionary matches keys, as
    ``pd.Index.get_indexer`` does."""
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    where = _level_positions(levels)
    found = np.array([where.get(v, -1) for v in distinct] + [-1], dtype=np.int64)
    return found[codes], codes < 0  # the missing values' code -1 picks the appended -1


@functools.lru_cache(maxsize=4096)
def _level_positions(levels: tuple) -> dict:
    """Each level's position (cached by the levels: equal tuples, e.g. ``(0, 1)`` and
    ``(False, True)``, give dictionaries that answer every look-up alike)."""
    return {v: i for i, v in enumerate(levels)}


def _kind(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (float, np.floating)):
        return "float"
    return "other"


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
