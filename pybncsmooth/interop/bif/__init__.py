r"""The BIF format (bnlearn's repository format): :mod:`.format` (reader and writer),
:mod:`._syntax` (the declarations' grammar), :mod:`._tables` (probability tables),
:mod:`._quick` with its kernels :mod:`._quick_kernels` (one compiled pass over a large file)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.format`, importable from this package as before it was one
#: (``from pybncsmooth.interop.bif import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['parse_bif', 'write_bif', 'bif_name']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".format", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
