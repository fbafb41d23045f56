r"""The hierarchical Multinomial-Dirichlet estimator (Azzimonti et al. 2019): variational
inference over a context tree, in the order data flows: :mod:`.estimator` (``hmd``),
:mod:`.posterior` (its posterior moments and draws), :mod:`.backoff` (the learned back-off
concentration an unseen configuration is answered with, shared with ``hdp``) and the compiled
kernels :mod:`._kernels`, :mod:`._backoff_kernels`."""

from ..._lazy import lazy_names

#: the public names of :mod:`.estimator`, importable from this package as before it was one
__all__ = ['HMD', 'fit_hmd_matrix', 'fit_hmd_sparse', 'hmd_evidence', 'HMDFit', 'exact_alpha_moments']

__getattr__, __dir__ = lazy_names(__name__, ".estimator", __all__)
