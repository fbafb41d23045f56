r"""The hierarchical Multinomial-Dirichlet estimator (Azzimonti et al. 2019): variational
inference over a context tree, in the order data flows: :mod:`.estimator` (``hmd``),
:mod:`.posterior` (its posterior moments and draws), :mod:`.backoff` (the learned back-off
concentration an unseen configuration is answered with, shared with ``hdp``) and the compiled
kernels :mod:`._kernels`, :mod:`._backoff_kernels`."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: the public names of :mod:`.estimator`, importable from this package as before it was one
#: (``from pybncsmooth.estimators.hmd import ...``); imported when first asked for, so that the modules of
#: this package can import one another's internals without a cycle through this file
__all__ = ['HMD', 'fit_hmd_matrix', 'fit_hmd_sparse', 'hmd_evidence', 'HMDFit', 'exact_alpha_moments']


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".estimator", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
