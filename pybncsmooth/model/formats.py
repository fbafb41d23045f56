"""The table of network file formats: who reads and writes which extension.

The model layer owns the table; each format module of :mod:`pybncsmooth.interop`
registers its reader and writer when it is imported (``register_format``), so
:meth:`FittedNetwork.write` and :func:`pybncsmooth.read_network` find them without
the model importing the interop layer.  A new format is one module and one
``register_format`` call.  A format may take options (``layout=`` of UAI files),
declared by name in :attr:`NetworkFormat.options`; any other is refused by name.

The same table holds the converters to and from other libraries' model objects
(pgmpy, pyAgrum): :meth:`FittedNetwork.to_pgmpy` and friends find them here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import FileFormatError, HyperparameterError

__all__ = [
    "NetworkFormat",
    "register_format",
    "get_format",
    "network_format",
    "format_extensions",
    "check_format_options",
    "ObjectConverter",
    "register_converter",
    "get_converter",
]


@dataclass(frozen=True)
class NetworkFormat:
    """One file format: its ``name``, the ``extensions`` that select it (with the dot),
    ``read(path, **options) -> FittedNetwork | DAG`` and ``write(obj, path, **options)``,
    ``options`` the names of the keyword options they take (none for most formats)."""

    name: str
    extensions: tuple[str, ...]
    read: Callable[..., Any]
    write: Callable[..., None]
    aliases: tuple[str, ...] = ()
    options: tuple[str, ...] = ()


_FORMATS: dict[str, NetworkFormat] = {}
#: extension -> format, rebuilt when a format is registered (every read looks it up)
_BY_EXTENSION: dict[str, NetworkFormat] = {}


def register_format(fmt: NetworkFormat) -> NetworkFormat:
    """Add (or replace) a format in the table."""
    _FORMATS[fmt.name] = fmt
    _BY_EXTENSION.clear()
    _BY_EXTENSION.update({ext: f for f in _FORMATS.values() for ext in f.extensions})
    return fmt


def format_extensions() -> dict[str, str]:
    """Extension (``".bif"``) -> format name, over the registered formats."""
    return {ext: f.name for ext, f in _BY_EXTENSION.items()}


def _suffix(path: str) -> str:
    """``pathlib.Path(path).suffix``, lower-cased, without building a path object: the
    last component's text from its last dot (none for a name starting with its only
    dot, or ending in a dot)."""
    name = os.path.basename(path.rstrip(os.sep + (os.altsep or "")))
    i = name.rfind(".")
    return name[i:].lower() if 0 < i < len(name) - 1 else ""


def get_format(name: str) -> NetworkFormat:
    """The registered format called ``name`` (or one of its aliases, case-insensitive)."""
    key = name.lower().lstrip(".")
    for f in _FORMATS.values():
        if key == f.name or key in f.aliases:
            return f
    known = ", ".join(sorted(_FORMATS)) or "none registered"
    raise FileFormatError(f"unknown network format {name!r}; use one of {known}")


def network_format(path: str | os.PathLike, format: str | None = None) -> NetworkFormat:
    """The format of ``path``: ``format`` if given, else from the extension (a trailing
    ``.gz`` is looked through)."""
    if format is not None:
        return get_format(format)
    p = str(path)
    ext = _suffix(p)
    if ext == ".gz":
        ext = _suffix(p[:-3])
    fmt = _BY_EXTENSION.get(ext)
    if fmt is None:
        exts = ", ".join(sorted(_BY_EXTENSION))
        raise FileFormatError(
            f"cannot tell the format of {p!r} from its extension; use one of {exts}, or pass format="
        )
    return fmt


def check_format_options(fmt: NetworkFormat, options: dict[str, Any]) -> None:
    """Refuse, by name, an option the format does not take."""
    for name in options:
        if name not in fmt.options:
            takes = f"it takes {', '.join(fmt.options)}" if fmt.options else "it takes none"
            raise HyperparameterError(f"the {fmt.name} format has no option {name!r} ({takes})")


@dataclass(frozen=True)
class ObjectConverter:
    """Conversion to and from another library's model object: the library's ``name``
    (the package to install), ``to_object(net)`` and ``from_object(obj)``."""

    name: str
    to_object: Callable[[Any], Any]
    from_object: Callable[[Any], Any]


_CONVERTERS: dict[str, ObjectConverter] = {}


def register_converter(conv: ObjectConverter) -> ObjectConverter:
    """Add (or replace) a converter in the table."""
    _CONVERTERS[conv.name] = conv
    return conv


def get_converter(name: str) -> ObjectConverter:
    """The converter of library ``name`` (``"pgmpy"``, ``"pyagrum"``)."""
    if name not in _CONVERTERS:
        raise KeyError(f"no converter for {name!r}; known: {', '.join(sorted(_CONVERTERS))}")
    return _CONVERTERS[name]
