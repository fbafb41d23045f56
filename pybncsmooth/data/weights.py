"""Row weights: per-row numbers that counts sum instead of ones (fractional counts)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from .sources import DataSource, as_source

__all__ = ["weights_column", "chunk_weights", "check_weights", "WEIGHT_COLUMN"]

#: the column an array of weights becomes in a copy of the data frame
WEIGHT_COLUMN = "__pybncsmooth_weight__"


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


def check_weights(weights: Any, index: pd.Index, name: str) -> np.ndarray:
    """An array of row weights checked against the rows of ``index``: one number per row,
    finite, >= 0, not all zero; as float64."""
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must hold numbers") from None
    if w.ndim != 1 or len(w) != len(index):
        raise DataError(f"{name} has shape {w.shape}; expected one weight per row ({len(index)})")
    _check_finite(w, index, name)
    if not (w > 0).any():
        raise DataError(f"{name} has only zero weights; at least one weight must be non-zero")
    return w


def chunk_weights(df: pd.DataFrame, column: str, variables: Sequence[str], na: str) -> np.ndarray:
    """The weights of the rows of ``df`` that encoding keeps (``na="drop"`` drops the rows
    with a missing value in ``variables``), checked: numbers, finite, non-negative."""
    try:
        w = pd.to_numeric(df[column], errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"the weights column {column!r} holds values that are not numbers") from None
    _check_finite(w, df.index, f"the weights column {column!r}")
    if na == "drop":
        keep = ~df[list(variables)].isna().to_numpy().any(axis=1)
        w = w[keep]
    return w
