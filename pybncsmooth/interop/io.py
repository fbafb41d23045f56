"""Reading and writing networks by file extension, through the format table of
:mod:`pybncsmooth.model.formats` (every format module of this package registers
itself there when :mod:`pybncsmooth.interop` is imported)."""

from __future__ import annotations

import gzip
import io
import os
from typing import Any, Callable, TextIO

from .._atomic import atomic_open
from ..errors import FileFormatError
from ..validation import check_file
from ..model.formats import check_format_options, format_extensions, network_format
from ..model.network import FittedNetwork
from ..structure.dag import DAG

__all__ = ["read_network", "write_network", "network_extensions", "looks_like_network_path"]


def network_extensions() -> dict[str, str]:
    """Extension (``".bif"``) -> format name of every registered format."""
    return format_extensions()


def looks_like_network_path(text: str) -> bool:
    """Whether ``text`` ends in the extension of a network format (``.gz`` allowed)."""
    low = text.strip().lower()
    return any(low.endswith(ext) or low.endswith(ext + ".gz") for ext in format_extensions())


def read_text(path: str) -> str:
    """A text file's content (gzip-compressed when the name ends in ``.gz``), line ends
    read as text mode reads them (``\\r\\n`` and ``\\r`` as ``\\n``), a UTF-8 byte-order mark
    at its start dropped (Windows editors write one; pgmpy and pyAgrum read such files);
    a file that is not UTF-8 text raises :class:`FileFormatError`.  The bytes are read at once and decoded
    (a text-mode file object costs a small file more than its reading)."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                data = fh.read()
        else:
            with open(path, "rb", buffering=0) as fh:
                data = fh.read()
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):  # a byte-order mark, not content
            text = text[1:]
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    except UnicodeDecodeError as e:
        raise FileFormatError(f"not a text file (byte {e.start} is not UTF-8)", path) from None
    except (gzip.BadGzipFile, EOFError) as e:
        raise FileFormatError(f"not a gzip file or a truncated one ({e})", path) from None


def text_writer(name: str, write: Callable[..., None]) -> Callable[..., None]:
    """A format's ``write(obj, path, **options)`` from a function writing a
    single-domain fitted network to an open text file (``write(net, fh, **options)``;
    atomically: a failed write leaves no file; gzip-compressed when the name ends in
    ``.gz``, as :func:`read_text` reads it)."""

    def _write(net: Any, path: str, **options: Any) -> None:
        check_writable(net, name)
        if net.domain is not None:
            raise FileFormatError(
                f"a multi-domain network cannot be written as {name}; write one domain at a time "
                "(net.for_domain(level).write(...)) or use the native .pbn format"
            )
        if str(path).endswith(".gz"):  # no name and mtime 0 in the header: the same bytes each time
            with atomic_open(path, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as gz, \
                    io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as fh:
                write(net, fh, **options)
            return
        with atomic_open(path, "w") as fh:
            write(net, fh, **options)

    return _write


def check_writable(net: Any, name: str) -> None:
    """A fitted network, or a specific error for a DAG or anything else."""
    if isinstance(net, FittedNetwork):
        return
    if isinstance(net, DAG):
        raise FileFormatError(f"a DAG has no probabilities to write as {name}; fit it first (or write .rds)")
    raise TypeError(f"expected a FittedNetwork, not {type(net).__name__}")


def read_network(path: str | os.PathLike, *, format: str | None = None, **options: Any) -> "FittedNetwork | DAG":
    """Read a network file.

    ``.bif``, ``.dsc``, ``.net`` (as bnlearn writes them, and the common
    variants of these formats), XMLBIF (``.xmlbif``, ``.bifxml``, ``.xml``: pgmpy's
    and pyAgrum's XML format), UAI (``.uai``; ``layout=`` says whose table layout, see
    :mod:`pybncsmooth.interop.uai`), the native ``.pbn`` format, and ``.rds`` files
    holding a bnlearn ``bn.fit`` or ``bn`` object (needs R and rpy2).  Returns a
    :class:`FittedNetwork`, or a :class:`DAG` for a structure-only ``bn`` object.
    Node order and parent order are those of the file.  A ``.gz`` file is read
    through gzip.
    """
    p = str(path)
    fmt = network_format(p, format)
    check_format_options(fmt, options)
    return fmt.read(check_file(p, "network file"), **options)


def write_network(net: Any, path: str | os.PathLike, *, format: str | None = None, **options: Any) -> None:
    """Write a FittedNetwork (or, for ``.rds``, also a DAG) by extension or ``format``
    (``options``: those the format takes, e.g. ``layout=`` of UAI)."""
    p = str(path)
    fmt = network_format(p, format)
    check_format_options(fmt, options)
    fmt.write(net, p, **options)
