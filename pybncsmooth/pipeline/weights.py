"""Row weights: per-row numbers that the counts sum instead of ones (fractional counts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.sources import DataSource, as_source
from ..errors import DataError

__all__ = ["weights_column", "WEIGHT_COLUMN"]

#: the column an array of weights becomes in a copy of the data frame
WEIGHT_COLUMN = "__pybncsmooth_weight__"


def weights_column(source: DataSource, weights: Any) -> tuple[DataSource, str | None]:
    """The source and the name of its weights column: ``weights`` itself when it names a
    column, else (an array for a data frame in memory) a copy of the frame with the
    weights as a column of their own.  Values are checked while counting."""
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
    out = frame.copy()
    out[WEIGHT_COLUMN] = pd.Series(w, index=frame.index)
    return as_source(out), WEIGHT_COLUMN
