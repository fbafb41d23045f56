r"""The query engine, in the order a query flows: :mod:`.queries` (the public entry:
:math:`P(X_T \mid x_E)`, MAP states, credible intervals), :mod:`.evidence` (evidence
checked and coded), :mod:`.zeros` (configurations evidence rules out), :mod:`.plan` and
:mod:`.elimination` (which factors, in which order), :mod:`.engine` (the einsum evaluation),
:mod:`.joint` (the joint path for small networks), :mod:`.batch` (many queries sharing a
plan), :mod:`.answer` (the answer object), :mod:`.variance` (variance shares of an answer over
the CPTs' posteriors), :mod:`.summary`, :mod:`.inference` (the missing cells of rows) and
:mod:`.approximate` (likelihood weighting)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.queries`, importable from this package as before it was one
#: (``from pybncsmooth.model.query import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['query', 'map_query', 'sample_tables', 'MapResult']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".queries", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
