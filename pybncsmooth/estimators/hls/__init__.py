r"""Hierarchical logistic smoothing (Cooper et al.): :mod:`.estimator` (``hls``, the
penalised fit), :mod:`.bayes` (``hls-bayes``, its Polya-Gamma Gibbs sampler),
:mod:`.posterior` (the sampler's posterior summaries), the compiled kernels :mod:`._kernels`
and the Polya-Gamma draws :mod:`._pg`."""

from ..._lazy import lazy_names

#: the public names of :mod:`.estimator`, importable from this package as before it was one
__all__ = ['HLS', 'flatten_tree']

__getattr__, __dir__ = lazy_names(__name__, ".estimator", __all__)
