"""Where data come from: data frames, streams of chunks, CSV and Parquet files.

Text files are read with every column as text (an empty field or ``NA`` is a
missing value), so levels sort in byte order of their text, as R's factors do
in the C locale.  Parquet files keep their column types, Categoricals written by
pandas included; other dictionary-encoded columns (Spark, Arrow: a dictionary per row
group, in order of appearance) are read as plain values.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, EmptyDataError
from ..validation import check_file
from .encode import column_labels

__all__ = [
    "read_table",
    "iter_frames",
    "DEFAULT_NA_VALUES",
    "DataSource",
    "as_source",
    "auto_chunksize",
    "is_dask_frame",
    "DEFAULT_CHUNK_CELLS",
]

#: Text read as a missing value (R's ``read.csv`` default plus the empty field).
DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA")


#: Cells (rows x columns) of a chunk read from a file when no ``chunksize`` is given:
#: 2 million text cells are about 150 MB of Python strings, whatever the file's size.
DEFAULT_CHUNK_CELLS = 2_000_000


def auto_chunksize(n_columns: int, cells: int = DEFAULT_CHUNK_CELLS) -> int:
    """Rows per chunk so that a chunk holds about ``cells`` values (at least 1000 rows)."""
    return max(1000, cells // max(1, n_columns))


def is_dask_frame(data: Any) -> bool:
    """A Dask DataFrame (checked without importing Dask)."""
    mod = type(data).__module__ or ""
    return mod.startswith("dask") and hasattr(data, "npartitions") and hasattr(data, "to_delayed")


def _sep_of(path: str, sep: str | None) -> str:
    if sep is not None:
        return sep
    return "\t" if path.lower().endswith((".tsv", ".tsv.gz", ".tab")) else ","


def _is_parquet(path: str) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def _undeclared_dictionaries(pf: Any) -> set[str]:
    """Dictionary-encoded columns of a Parquet file that pandas did not write as
    Categoricals (Spark, Arrow, ...): their dictionaries are per row group, in order of
    appearance, so they carry no level order; they are read as plain values, whose
    levels sort as text does (the same whether the file is read whole or in chunks)."""
    import pyarrow as pa

    declared = set()
    meta = pf.schema_arrow.pandas_metadata or {}
    for col in meta.get("columns", []):
        if col.get("pandas_type") == "categorical" and col.get("name") is not None:
            declared.add(str(col["name"]))
    return {f.name for f in pf.schema_arrow if pa.types.is_dictionary(f.type) and f.name not in declared}


def _plain_values(df: pd.DataFrame, plain: set[str]) -> pd.DataFrame:
    for c in plain:
        if c in df.columns and isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


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
    p = check_file(path, "data file")
    if os.path.getsize(p) == 0:
        raise EmptyDataError(f"the file {p!r} is empty (no header, no rows)")
    if _is_parquet(p):
        try:
            import pyarrow.parquet as pq
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("reading Parquet files needs pyarrow: pip install 'pybncsmooth[parquet]'") from e
        pf = pq.ParquetFile(p)
        plain = _undeclared_dictionaries(pf)
        cols = list(columns) if columns else None
        if chunksize is None:
            return _plain_values(pf.read(columns=cols).to_pandas(), plain)
        return (_plain_values(b.to_pandas(), plain) for b in pf.iter_batches(batch_size=chunksize, columns=cols))
    _check_chunksize(chunksize)
    sep = _sep_of(p, sep)
    return _read_csv(
        p,
        sep=sep,
        dtype=str,
        keep_default_na=False,
        na_values=list(na_values),
        usecols=list(columns) if columns else None,
        chunksize=chunksize,
    )


def _read_csv(path: str, **kw: Any) -> Any:
    """``pandas.read_csv``, with a file of blank lines (no header) as :class:`EmptyDataError`."""
    try:
        return pd.read_csv(path, **kw)
    except pd.errors.EmptyDataError:
        raise EmptyDataError(f"the file {path!r} has no header (only blank lines)") from None


def _check_chunksize(chunksize: Any) -> None:
    """``None`` or a whole number of rows >= 1 (:class:`DataError` otherwise)."""
    if chunksize is None:
        return
    if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) or chunksize < 1:
        raise DataError(f"chunksize must be a positive whole number of rows, not {chunksize!r}")


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
            raise EmptyDataError("the data iterator yielded no chunk")
        return
    raise DataError(
        f"data must be a pandas DataFrame, an iterable of DataFrames or a path to a CSV/Parquet file, "
        f"not {type(data).__name__}"
    )


def _n_columns(path: str, sep: str | None) -> int:
    """Columns of a file, from its header (CSV) or its metadata (Parquet)."""
    if _is_parquet(path):
        import pyarrow.parquet as pq

        return len(pq.ParquetFile(path).schema_arrow.names)
    return len(_read_csv(path, sep=_sep_of(path, sep), nrows=0).columns)


class DataSource:
    """Data that can be read chunk by chunk, once or several times.

    Wraps what :func:`pybncsmooth.fit` and ``BNClassifier.fit`` accept: a data frame
    (one chunk), a CSV or Parquet path (read in chunks of ``chunksize`` rows, by
    default :func:`auto_chunksize` of its column count, so that memory does not grow
    with the file), a list or tuple of data frames, a function returning an iterable
    of data frames (called once per pass), a one-shot iterator of data frames
    (one pass only) or a Dask DataFrame (its partitions).

    :meth:`chunks` gives a fresh pass over the data each time it is called, except for
    a one-shot iterator; :meth:`require_passes` refuses such an iterator up front where
    the data must be read two or three times (structure learning).
    """

    def __init__(self, data: Any, *, chunksize: int | None = None, sep: str | None = None) -> None:
        if isinstance(data, DataSource):
            data, chunksize, sep = data.data, chunksize or data.chunksize, sep or data.sep
        _check_chunksize(chunksize)
        self.data = data
        self.sep = sep
        self.chunksize = chunksize
        self._used = False
        self._first: pd.DataFrame | None = None
        self._columns: list[str] | None = None
        self._rest: Iterator[pd.DataFrame] = iter(())
        if isinstance(data, pd.DataFrame):
            self.kind = "frame"
        elif isinstance(data, (str, os.PathLike)):
            self.kind = "path"
            p = check_file(data, "data file")
            if os.path.getsize(p) == 0:
                raise EmptyDataError(f"the file {p!r} is empty (no header, no rows)")
            if self.chunksize is None:
                self.chunksize = auto_chunksize(_n_columns(p, sep))
        elif is_dask_frame(data):
            self.kind = "dask"
        elif isinstance(data, (list, tuple)):
            self.kind = "chunks"
        elif callable(data):
            self.kind = "callable"
        elif isinstance(data, Iterable) and not isinstance(data, (bytes, dict)):
            self.kind = "iterator"
        else:
            raise DataError(
                "data must be a pandas DataFrame, a path to a CSV/Parquet file, a list of DataFrames, a function "
                f"returning an iterable of DataFrames, an iterator of DataFrames or a Dask DataFrame, not "
                f"{type(data).__name__}"
            )

    @property
    def in_memory(self) -> bool:
        """One data frame held in memory."""
        return self.kind == "frame"

    def reiterable(self) -> bool:
        return self.kind != "iterator"

    def require_passes(self, n: int, what: str) -> None:
        """Refuse a one-shot iterator when ``what`` reads the data ``n`` times."""
        if n > 1 and not self.reiterable():
            raise DataError(
                f"{what} reads the data {n} times, and an iterator of chunks can be read once: pass a path, a "
                "list of DataFrames or a function returning a fresh iterator of chunks"
            )

    def columns(self) -> list[str] | None:
        """Column names (a file's header, a frame's columns, or the first chunk's;
        found once and kept)."""
        if self._columns is None:
            self._columns = self._find_columns()
        return self._columns

    def _find_columns(self) -> list[str] | None:
        if self.kind == "frame":
            return [str(c) for c in column_labels(self.data)]
        if self.kind == "dask":
            return [str(c) for c in self.data.columns]
        if self.kind == "chunks" and self.data and isinstance(self.data[0], pd.DataFrame):
            return [str(c) for c in self.data[0].columns]
        if self.kind == "path":
            p = str(self.data)
            if _is_parquet(p):
                import pyarrow.parquet as pq

                return list(pq.ParquetFile(p).schema_arrow.names)
            return [str(c) for c in pd.read_csv(p, sep=_sep_of(p, self.sep), nrows=0).columns]
        first = self._peek()
        return None if first is None else [str(c) for c in first.columns]

    def _peek(self) -> pd.DataFrame | None:
        """The first chunk (an iterator's is kept and given back by :meth:`chunks`)."""
        if self.kind == "iterator":
            if self._first is None and not self._used:
                it = iter_frames(self.data)
                self._first = next(it, None)
                self._rest = it
            return self._first
        return next(iter(self.chunks()), None)

    def chunks(self) -> Iterator[pd.DataFrame]:
        """A fresh iterator over the chunks (Dask: its partitions, computed one by one)."""
        if self.kind == "iterator":
            if self._used:
                raise DataError("the iterator of chunks was already read; it can be read once")
            self._used = True
            if self._first is not None:
                return itertools.chain([self._first], self._rest)
            return iter_frames(self.data)
        if self.kind == "frame":
            return iter([self.data])
        if self.kind == "path":
            return self._file_chunks()
        if self.kind == "chunks":
            return iter_frames(list(self.data))
        if self.kind == "callable":
            return iter_frames(self.data())
        return (self.data.get_partition(i).compute() for i in range(self.data.npartitions))

    def _file_chunks(self) -> Iterator[pd.DataFrame]:
        res = read_table(self.data, chunksize=self.chunksize, sep=self.sep)
        yield from ([res] if isinstance(res, pd.DataFrame) else res)


def as_source(data: Any, *, chunksize: int | None = None) -> DataSource:
    """``data`` as a :class:`DataSource`."""
    return data if isinstance(data, DataSource) and chunksize is None else DataSource(data, chunksize=chunksize)
