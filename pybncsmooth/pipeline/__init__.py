"""The fit pipeline below the front ends: structure spec -> DAG, data -> counts,
counts -> estimates -> :class:`~pybncsmooth.FittedNetwork`.

Every front end (``pybncsmooth.fit``, :class:`~pybncsmooth.BNClassifier` and ESKDB,
the command line, the R bridge) fits through :func:`fit_network` (counting from any
data source), :func:`estimate_network` (counts already in hand, as selective kDB's) or
:func:`assemble_network` (estimates in hand, as ESKDB's members sharing their trees).
"""

from .domains import check_domain, domain_from_hyper, strip_domain
from .fitting import assemble_network, check_counted_weight, estimate_network, fit_network
from .structure import resolve_structure

__all__ = [
    "fit_network",
    "estimate_network",
    "assemble_network",
    "check_counted_weight",
    "resolve_structure",
    "strip_domain",
    "check_domain",
    "domain_from_hyper",
]
