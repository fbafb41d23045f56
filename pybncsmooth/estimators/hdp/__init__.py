r"""The HDP estimator (Petitjean et al. 2018): the collapsed Gibbs sampler over a
context tree, in the order data flows: :mod:`.estimator` (the ``hdp`` estimator, its chains
and posterior means), :mod:`.posterior` (posterior draws and standard deviations) and
:mod:`._kernels` (the compiled sampler; the Stirling-number ratio tables it reads are
:mod:`pybncsmooth.estimators._stirling`, shared with the domain prior)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.estimator`, importable from this package as before it was one
#: (``from pybncsmooth.estimators.hdp import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['HDP', 'split_rhat']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".estimator", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
