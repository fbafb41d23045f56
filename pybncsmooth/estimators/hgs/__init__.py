r"""Hierarchical gradient smoothing and M-branch, the two estimators fitted by penalised
Newton steps over a context tree: :mod:`.estimator` (``hgs``), :mod:`.mbranch` (``mbranch``)
and the compiled Newton kernels :mod:`._kernels`."""

from ..._lazy import lazy_names

#: the public names of :mod:`.estimator`, importable from this package as before it was one
__all__ = ['HGS', 'HGSProblem']

__getattr__, __dir__ = lazy_names(__name__, ".estimator", __all__)
