r"""The HDP estimator (Petitjean et al. 2018): the collapsed Gibbs sampler over a
context tree, in the order data flows: :mod:`.estimator` (the ``hdp`` estimator, its chains
and posterior means), :mod:`.posterior` (posterior draws and standard deviations) and
:mod:`._kernels` (the compiled sampler; the Stirling-number ratio tables it reads are
:mod:`pybncsmooth.estimators._stirling`, shared with the domain prior)."""

from ..._lazy import lazy_names

#: the public names of :mod:`.estimator`, importable from this package as before it was one
__all__ = ['HDP', 'split_rhat']

__getattr__, __dir__ = lazy_names(__name__, ".estimator", __all__)
