"""Reading and writing networks by file extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._atomic import atomic_open
from ..errors import FileFormatError

if TYPE_CHECKING:  # pragma: no cover
    from ..model.network import FittedNetwork
    from ..structure.dag import DAG

__all__ = ["read_network", "write_network", "NETWORK_FORMATS", "network_format"]

#: extension -> format name
NETWORK_FORMATS = {".bif": "bif", ".dsc": "dsc", ".net": "net", ".rds": "rds", ".pbn": "native"}


def network_format(path: str | os.PathLike, format: str | None = None) -> str:
    """The format of ``path``: ``format`` if given, else from the extension."""
    if format is not None:
        fmt = format.lower().lstrip(".")
        fmt = "native" if fmt == "pbn" else fmt
        if fmt not in NETWORK_FORMATS.values():
            raise FileFormatError(f"unknown network format {format!r}; use one of bif, dsc, net, rds, pbn")
        return fmt
    ext = Path(str(path)).suffix.lower()
    if ext == ".gz":
        ext = Path(str(path)[:-3]).suffix.lower()
    if ext not in NETWORK_FORMATS:
        raise FileFormatError(
            f"cannot tell the format of {str(path)!r} from its extension; use .bif, .dsc, .net, .rds "
            "or .pbn, or pass format="
        )
    return NETWORK_FORMATS[ext]


def _read_text(path: str) -> str:
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return fh.read()
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def read_network(path: str | os.PathLike, *, format: str | None = None) -> "FittedNetwork | DAG":
    """Read a network file.

    ``.bif``, ``.dsc``, ``.net`` (as bnlearn writes them, and the common
    variants of these formats), the native ``.pbn`` format, and ``.rds`` files
    holding a bnlearn ``bn.fit`` or ``bn`` object (needs R and rpy2).  Returns a
    :class:`FittedNetwork`, or a :class:`DAG` for a structure-only ``bn`` object.
    Node order and parent order are those of the file.
    """
    p = str(path)
    fmt = network_format(p, format)
    if not os.path.exists(p):
        raise FileNotFoundError(p)
    if fmt == "rds":
        from .rds import read_rds

        return read_rds(p)
    if fmt == "native":
        from .native import load_native

        with open(p, "rb") as fh:
            return load_native(fh, p)
    text = _read_text(p)
    if fmt == "bif":
        from .bif import parse_bif as parse
    elif fmt == "dsc":
        from .dsc import parse_dsc as parse
    else:
        from .net import parse_net as parse
    return parse(text, p).network()


def write_network(net: Any, path: str | os.PathLike, *, format: str | None = None) -> None:
    """Write a FittedNetwork (or, for ``.rds``, also a DAG) by extension or ``format``."""
    from ..model.network import FittedNetwork
    from ..structure.dag import DAG

    p = str(path)
    fmt = network_format(p, format)
    if fmt == "rds":
        from .rds import write_rds

        write_rds(net, p)
        return
    if not isinstance(net, FittedNetwork):
        if isinstance(net, DAG):
            raise FileFormatError(f"a DAG has no probabilities to write as {fmt}; fit it first (or write .rds)")
        raise TypeError(f"expected a FittedNetwork, not {type(net).__name__}")
    if fmt == "native":
        from .native import save_native

        with atomic_open(p, "wb") as fh:
            save_native(net, fh)
        return
    if net.domain is not None:
        raise FileFormatError(
            f"a multi-domain network cannot be written as {fmt}; write one domain at a time "
            "(net.for_domain(level).write(...)) or use the native .pbn format"
        )
    if fmt == "bif":
        from .bif import write_bif as writer
    elif fmt == "dsc":
        from .dsc import write_dsc as writer
    else:
        from .net import write_net as writer
    with atomic_open(p, "w") as fh:
        writer(net, fh)
