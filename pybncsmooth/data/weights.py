"""Row weights: per-row numbers that counts sum instead of ones (fractional counts)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError
from .sources import DataSource, as_source

__all__ = ["weights_column", "chunk_weights", "WEIGHT_COLUMN"]

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
    w = np.asarray(weights)
    if w.ndim != 1 or len(w) != len(frame):
        raise DataError(f"weights has shape {w.shape}; expected one weight per row ({len(frame)})")
    if np.issubdtype(w.dtype, np.number) and np.all(w == 0):
        raise DataError("weights has only zero weights; at least one weight must be non-zero")
    out = frame.copy()
    out[WEIGHT_COLUMN] = pd.Series(w, index=frame.index)
    return as_source(out), WEIGHT_COLUMN


def chunk_weights(df: pd.DataFrame, column: str, variables: Sequence[str], na: str) -> np.ndarray:
    """The weights of the rows of ``df`` that encoding keeps (``na="drop"`` drops the rows
    with a missing value in ``variables``), checked: numbers, finite, non-negative."""
    col = df[column]
    try:
        w = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"the weights column {column!r} holds values that are not numbers") from None
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        first = df.index[int(np.argmax(bad))]
        raise DataError(
            f"the weights column {column!r} has {int(bad.sum())} value(s) that are missing, infinite or "
            f"negative (first at row {first!r}: {col[first]!r}); weights must be finite numbers >= 0"
        )
    if na == "drop":
        keep = ~df[list(variables)].isna().to_numpy().any(axis=1)
        w = w[keep]
    return w
