"""Atomic file writes: write beside the target, move into place when complete.

A failure midway (an exception, a full disk, an interrupted process) leaves no
partial file, and an existing file intact.  The temporary name keeps the target's
name as its end, so tools that infer a format from the extension (``.csv.gz``)
still do.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Any, Iterator

__all__ = ["atomic_path", "atomic_open"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """A temporary path to write to; moved onto ``path`` when the block completes."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {target!r}: the folder {folder!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".pbncs-", suffix="-" + os.path.basename(target), dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """``open(path, mode)`` written atomically (text: UTF-8, ``\\n`` line ends)."""
    with atomic_path(path) as tmp:
        kwargs: dict[str, Any] = {} if "b" in mode else {"encoding": "utf-8", "newline": "\n"}
        with open(tmp, mode, **kwargs) as fh:
            yield fh
