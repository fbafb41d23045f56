r"""Hierarchical gradient smoothing and M-branch, the two estimators fitted by penalised
Newton steps over a context tree: :mod:`.estimator` (``hgs``), :mod:`.mbranch` (``mbranch``)
and the compiled Newton kernels :mod:`._kernels`."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.estimator`, importable from this package as before it was one
#: (``from pybncsmooth.estimators.hgs import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['HGS', 'HGSProblem']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".estimator", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
