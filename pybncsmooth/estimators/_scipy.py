"""SciPy's special functions the estimators use, imported when first called.

``scipy.special`` costs a third of a second to import, more than the rest of what
``import pybncsmooth`` needs; most fits (``mle``, ``bayes``, the hierarchical
estimators' compiled kernels) never call it.  Each function here imports SciPy's
ufunc on its first call and passes the call on: same ufunc, same numbers.
"""

from __future__ import annotations

from typing import Any

__all__ = ["gammaln", "digamma", "expit"]


def gammaln(*args: Any, **kwargs: Any) -> Any:
    """``scipy.special.gammaln``: log |Gamma(x)|."""
    from scipy.special import gammaln as f

    return f(*args, **kwargs)


def digamma(*args: Any, **kwargs: Any) -> Any:
    """``scipy.special.digamma``: d/dx log Gamma(x)."""
    from scipy.special import digamma as f

    return f(*args, **kwargs)


def expit(*args: Any, **kwargs: Any) -> Any:
    """``scipy.special.expit``: 1 / (1 + exp(-x))."""
    from scipy.special import expit as f

    return f(*args, **kwargs)
