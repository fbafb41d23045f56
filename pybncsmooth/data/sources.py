"""Where data come from: data frames, streams of chunks, CSV and Parquet files.

Text files are read with every column as text (an empty field or ``NA`` is a
missing value), so levels sort in byte order of their text, as R's factors do
in the C locale.  Parquet files keep their column types (Categoricals included).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import pandas as pd

from ..errors import DataError

__all__ = ["read_table", "iter_frames", "DEFAULT_NA_VALUES"]

#: Text read as a missing value (R's ``read.csv`` default plus the empty field).
DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA")


def _is_parquet(path: str) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def read_table(
    path: str | os.PathLike,
    *,
    chunksize: int | None = None,
    columns: Sequence[str] | None = None,
    na_values: Sequence[str] = DEFAULT_NA_VALUES,
    sep: str | None = None,
) -> pd.DataFrame | Iterator[pd.DataFrame]:
    """Read a CSV (any delimiter, optionally compressed) or Parquet file.

    With ``chunksize`` an iterator of data frames of at most that many rows is
    returned, for out-of-core counting.
    """
    p = str(path)
    if not os.path.exists(p):
        raise FileNotFoundError(p)
    if _is_parquet(p):
        try:
            import pyarrow.parquet as pq
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("reading Parquet files needs pyarrow: pip install 'pybncsmooth[parquet]'") from e
        if chunksize is None:
            return pd.read_parquet(p, columns=list(columns) if columns else None)
        pf = pq.ParquetFile(p)
        return (
            b.to_pandas() for b in pf.iter_batches(batch_size=chunksize, columns=list(columns) if columns else None)
        )
    if sep is None:
        sep = "\t" if p.lower().endswith((".tsv", ".tsv.gz", ".tab")) else ","
    return pd.read_csv(
        p,
        sep=sep,
        dtype=str,
        keep_default_na=False,
        na_values=list(na_values),
        usecols=list(columns) if columns else None,
        chunksize=chunksize,
    )


def iter_frames(data: Any, *, chunksize: int | None = None) -> Iterator[pd.DataFrame]:
    """Turn ``data`` (a data frame, a path, or an iterable of data frames) into an
    iterator of data frames."""
    if isinstance(data, pd.DataFrame):
        yield data
        return
    if isinstance(data, (str, os.PathLike)):
        res = read_table(data, chunksize=chunksize)
        if isinstance(res, pd.DataFrame):
            yield res
        else:
            yield from res
        return
    if isinstance(data, Iterable) and not isinstance(data, (bytes, dict)):
        any_chunk = False
        for k, chunk in enumerate(data):
            if not isinstance(chunk, pd.DataFrame):
                raise DataError(f"chunk {k} of the data is a {type(chunk).__name__}, not a pandas DataFrame")
            any_chunk = True
            yield chunk
        if not any_chunk:
            from ..errors import EmptyDataError

            raise EmptyDataError("the data iterator yielded no chunk")
        return
    raise DataError(
        f"data must be a pandas DataFrame, an iterable of DataFrames or a path to a CSV/Parquet file, "
        f"not {type(data).__name__}"
    )
