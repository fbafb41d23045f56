"""Row weights: per-row numbers that counts sum instead of ones (fractional counts)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from .sources import DataSource, as_source

__all__ = ["weights_column", "chunk_weights", "check_weights", "check_total_weight", "WEIGHT_COLUMN",
           "MAX_TOTAL_WEIGHT"]

#: the column an array of weights becomes in a copy of the data frame
WEIGHT_COLUMN = "__pybncsmooth_weight__"

#: the largest total of the row weights counted.  The smoothing estimators weigh a prior
#: of a few rows' worth against the counts, and their solvers (Newton steps, fixed points,
#: leave-one-out sums) resolve a count to about 1e-16 of the total: at 1e12 one row is
#: still seen to 1e-4, far above it the fit would be rounding (and products of counts
#: overflow from about 1e154).  Relative weights keep their meaning when rescaled.
MAX_TOTAL_WEIGHT = 1e12


def weights_column(source: DataSource, weights: Any) -> tuple[DataSource, str | None]:
    """The source and the name of its weights column: ``weights`` itself when it names a
    column, else (an array for a data frame in memory) a copy of the frame with the
    weights as a column of their own.  Values are checked while counting
    (:func:`chunk_weights`)."""
    if weights is None:
        return source, None
    if isinstance(weights, str):
        cols = source.columns() or []
        if weights not in cols:
            raise DataError(f"weights={weights!r} is not a column of the data (columns: {list(cols)[:10]})")
        return source, weights
    if not source.in_memory:
        raise DataError(
            "weights as an array needs the data as a DataFrame in memory; for data read in chunks (a file, chunks, "
            "a Dask DataFrame) put the weights in a column and pass its name, weights='w'"
        )
    frame = source.data
    w = check_weights(weights, frame.index, "weights")
    out = frame.copy()
    out[WEIGHT_COLUMN] = pd.Series(w, index=frame.index)
    return as_source(out), WEIGHT_COLUMN


def _check_finite(w: np.ndarray, index: pd.Index, what: str) -> None:
    """Every weight finite and >= 0, else :class:`DataError` naming the first bad row."""
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        pos = int(np.argmax(bad))
        raise DataError(
            f"{what} has {int(bad.sum())} value(s) that are missing, infinite or negative (first at row "
            f"{index[pos]!r}: {w[pos]!r}); weights must be finite numbers >= 0"
        )


def check_total_weight(total: float, what: str) -> None:
    """:class:`DataError` when the weights ``what`` sum to more than
    :data:`MAX_TOTAL_WEIGHT` (or to an overflow), saying why and what to do."""
    if total <= MAX_TOTAL_WEIGHT:
        return
    raise DataError(
        f"{what} sum to {total:.3g}, above {MAX_TOTAL_WEIGHT:.0e}: the estimators weigh their priors (a few rows' "
        "worth) against the counts, and at such totals double precision (16 digits) no longer resolves a row in "
        "their sums; rescale the weights, e.g. w * len(w) / w.sum() (relative weights keep their meaning)"
    )


def _total(w: np.ndarray) -> float:
    with np.errstate(over="ignore"):  # an overflow is a total above the bound
        return float(w.sum())


def _aligned(weights: pd.Series, index: pd.Index, name: str) -> np.ndarray:
    """The values of a Series of weights in the order of the rows' labels ``index``; a
    Series whose labels are not the rows' is refused, naming the first row without one."""
    if weights.index.equals(index):
        return weights.to_numpy()
    if weights.index.has_duplicates or index.has_duplicates:
        raise DataError(
            f"{name} is a Series whose index is not the data's and one of them repeats labels, so the weights "
            "cannot be aligned with the rows; pass them as an array in the rows' order"
        )
    lacking = ~index.isin(weights.index)
    if lacking.any():
        raise DataError(
            f"{name} is a Series aligned with the rows by index, and row {index[int(np.argmax(lacking))]!r} of the "
            f"data has no weight in it ({int(lacking.sum())} row(s) lack one); pass a Series indexed like the data, or "
            "an array in the rows' order"
        )
    extra = ~weights.index.isin(index)
    if extra.any():
        raise DataError(
            f"{name} is a Series aligned with the rows by index, and its label "
            f"{weights.index[int(np.argmax(extra))]!r} is not a row of the data"
        )
    return weights.reindex(index).to_numpy()


def check_weights(weights: Any, index: pd.Index, name: str) -> np.ndarray:
    """An array of row weights checked against the rows of ``index``: one number per row,
    finite, >= 0, not all zero, totalling at most :data:`MAX_TOTAL_WEIGHT`; as float64.
    A pandas Series is aligned with the rows by its index (see :func:`_aligned`)."""
    if isinstance(weights, pd.Series):
        weights = _aligned(weights, index, name)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must hold numbers") from None
    if w.ndim != 1 or len(w) != len(index):
        raise DataError(f"{name} has shape {w.shape}; expected one weight per row ({len(index)})")
    _check_finite(w, index, name)
    if not (w > 0).any():
        raise DataError(f"{name} has only zero weights; at least one weight must be non-zero")
    check_total_weight(_total(w), "the weights" if name == "weights" else f"the weights ({name})")
    return w


def chunk_weights(df: pd.DataFrame, column: str, variables: Sequence[str], na: str) -> np.ndarray:
    """The weights of the rows of ``df`` that encoding keeps (``na="drop"`` drops the rows
    with a missing value in ``variables``), checked: numbers, finite, non-negative, their
    total at most :data:`MAX_TOTAL_WEIGHT` (the total over every chunk is checked where
    the counts are estimated)."""
    try:
        w = pd.to_numeric(df[column], errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"the weights column {column!r} holds values that are not numbers") from None
    _check_finite(w, df.index, f"the weights column {column!r}")
    if na == "drop":
        keep = ~df[list(variables)].isna().to_numpy().any(axis=1)
        w = w[keep]
    check_total_weight(_total(w), f"the weights in column {column!r}")
    return w


def encoded_chunk(memo: dict | None, df: pd.DataFrame, schema: Any, variables: Sequence[str], na: str, na_label: str,
                  weights: str | None) -> tuple[Any, np.ndarray | None]:
    """A chunk's codes (:func:`~pybncsmooth.data.encode.encode` of ``variables`` on
    ``schema`` with ``na``, ``na_label``, empty allowed) and its row weights
    (:func:`chunk_weights`; ``None`` without a weights column).  With a ``memo`` (one
    fit's dict), the last chunk encoded is kept there and given again for the same
    chunk object, schema and arguments: the passes over a data frame (a source of one
    chunk) read one encoding; one chunk at most is held."""
    key = (tuple(variables), na, na_label, weights)
    if memo is not None:
        held = memo.get(_CHUNK_KEY)
        if held is not None and held[0] is df and held[1] is schema and held[2] == key:
            return held[3]
    from .encode import encode

    enc = encode(df, schema, variables=list(variables), na=na, empty_ok=True, na_label=na_label)
    w = chunk_weights(df, weights, variables, na) if weights is not None else None
    if memo is not None:
        memo[_CHUNK_KEY] = (df, schema, key, (enc, w))
    return enc, w


#: the key of the last chunk's codes in a fit's memo (:func:`encoded_chunk`)
_CHUNK_KEY = "encoded chunk"

