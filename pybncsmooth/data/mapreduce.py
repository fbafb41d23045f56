"""One pass over a data source as a map-reduce: a summary per chunk, merged.

Every statistic pybncsmooth learns from data (context trees, the counts structure
learning needs, leave-one-out losses) is a sum over rows, so it is computed chunk by
chunk and merged: in this process for frames, files and lists of chunks (one chunk
in memory at a time), or on the workers of a Dask cluster for a Dask DataFrame (one
task per partition, then a pairwise tree of merges).  Merging in a fixed order
(partition ``2i`` with ``2i + 1``, then the pairs' results, ...) makes the result
independent of which worker ran what.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import pandas as pd

from ..errors import PyBNCSmoothError
from .sources import DataSource, _plain_values, auto_chunksize

__all__ = ["reduce_chunks", "in_chunk"]

T = TypeVar("T")


def in_chunk(err: PyBNCSmoothError, index: int) -> PyBNCSmoothError:
    """Prefix ``err``'s message with the chunk it comes from (``err.chunk`` is set too)."""
    if getattr(err, "chunk", None) is None and err.args:
        err.args = (f"chunk {index}: {err.args[0]}", *err.args[1:])
        err.chunk = index
    return err


def _identity(x: Any) -> Any:
    return x


def _apply(
    map_fn: Callable[[Any], T],
    annotate: bool,
    chunk: Any,
    index: int,
    merge: Callable | None = None,
    plain: frozenset = frozenset(),
) -> T:
    """``map_fn`` on one chunk; a chunk of more than :func:`slice_rows` rows (a large data
    frame in memory, a large Dask partition) is taken in slices merged with ``merge``, so
    that the per-chunk work arrays stay bounded whatever the chunk's size."""
    if plain:  # a Dask partition (a fresh frame): categories unknown to Dask as plain values
        chunk = _plain_values(chunk, set(plain))
    try:
        n = len(chunk) if isinstance(chunk, pd.DataFrame) else 0
        step = slice_rows(len(chunk.columns)) if n else 0
        if merge is None or n <= step:
            return map_fn(chunk)
        acc = map_fn(chunk.iloc[:step])
        for start in range(step, n, step):
            acc = merge(acc, map_fn(chunk.iloc[start : start + step]))
        return acc
    except PyBNCSmoothError as e:
        if annotate:
            raise in_chunk(e, index) from None
        raise


#: the fewest rows a slice of a chunk in memory holds: the work per node and slice (a
#: bincount over the slice's rows) then outweighs the fixed cost of a node's count and
#: merge, which a wide frame sliced by cells paid once per node and slice (1,000 columns:
#: slices of 2,000 rows, each node counted and merged ten times for 20,000 rows)
MIN_SLICE_ROWS = 250_000


def slice_rows(n_columns: int) -> int:
    """Rows per slice of a large chunk in memory: :func:`auto_chunksize` (about 2M values)
    for tall frames, at least :data:`MIN_SLICE_ROWS` rows for wide ones (the transient
    codes of a slice are then at most ``MIN_SLICE_ROWS x columns`` small integers, beside a
    frame that already holds as many)."""
    return max(auto_chunksize(n_columns), MIN_SLICE_ROWS)


def _merge_pairwise(parts: list, merge: Callable[[Any, Any], Any], submit: Callable | None = None) -> Any:
    while len(parts) > 1:
        nxt = []
        for i in range(0, len(parts) - 1, 2):
            nxt.append(submit(merge, parts[i], parts[i + 1]) if submit else merge(parts[i], parts[i + 1]))
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def reduce_chunks(
    source: DataSource,
    map_fn: Callable[[Any], T],
    merge: Callable[[T, T], T],
    *,
    progress: bool | None = False,
    desc: str = "chunks",
) -> T | None:
    """``merge`` of ``map_fn(chunk)`` over the chunks of ``source`` (``None`` if there is none).

    ``map_fn`` and ``merge`` must be picklable (module-level functions or
    :func:`functools.partial` of them) for a Dask source; ``merge`` may reuse its first
    argument.  Errors raised on a chunk name it (``chunk 3: ...``) when the source has
    several.  ``progress`` shows a bar over chunks (Dask: over finished partitions).
    """
    if source.kind == "dask":
        return _reduce_dask(source, map_fn, merge, progress=progress, desc=desc)
    annotate = source.kind != "frame"
    bar = _bar(progress, desc)
    acc = None
    for i, chunk in enumerate(source.chunks()):
        part = _apply(map_fn, annotate, chunk, i, merge)
        acc = part if acc is None else merge(acc, part)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return acc


def _bar(progress: bool | None, desc: str, total: int | None = None) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", leave=False)


def _reduce_dask(source: DataSource, map_fn: Callable, merge: Callable, *, progress: bool | None, desc: str) -> Any:
    import dask

    parts = source.data.to_delayed()
    if not parts:
        return None
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        client = None
    # the map function (with what it carries: trees, schemas) is sent once and shared by
    # the partitions' tasks: scattered to the workers, or one node of a local graph
    fn = client.scatter(map_fn, broadcast=True, hash=False) if client is not None else dask.delayed(_identity)(map_fn)
    # Categoricals whose categories Dask does not know (per partition: Parquet dictionaries
    # written by other tools) carry no level order: plain values, united as text levels
    ddf = source.data
    plain = frozenset(
        str(c)
        for c, dt in ddf.dtypes.items()
        if isinstance(dt, pd.CategoricalDtype) and (len(dt.categories) == 0 or not getattr(ddf[c].cat, "known", True))
    )
    mapped = [dask.delayed(_apply)(fn, True, p, i, merge, plain) for i, p in enumerate(parts)]
    if client is None:  # Dask's local scheduler: the tree of merges as one graph
        return _merge_pairwise(mapped, dask.delayed(merge), submit=None).compute()
    futures = client.compute(mapped)
    bar = _bar(progress, desc, total=len(futures))
    if bar is not None:
        from distributed import as_completed

        for _ in as_completed(futures):
            bar.update(1)
        bar.close()
    return _merge_pairwise(futures, merge, submit=client.submit).result()
