r"""Hierarchical logistic smoothing (Cooper et al.): :mod:`.estimator` (``hls``, the
penalised fit), :mod:`.bayes` (``hls-bayes``, its Polya-Gamma Gibbs sampler),
:mod:`.posterior` (the sampler's posterior summaries), the compiled kernels :mod:`._kernels`
and the Polya-Gamma draws :mod:`._pg`."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.estimator`, importable from this package as before it was one
#: (``from pybncsmooth.estimators.hls import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['HLS', 'flatten_tree']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".estimator", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
