"""The fit pipeline below the front ends: structure spec -> DAG, data -> counts,
counts -> estimates -> :class:`~pybncsmooth.FittedNetwork`.

Every front end (``pybncsmooth.fit``, :class:`~pybncsmooth.BNClassifier` and ESKDB,
the command line, the R bridge) fits through :func:`fit_network` (counting from any
data source), :func:`estimate_network` (counts already in hand, as selective kDB's) or
:func:`assemble_network` (estimates in hand, as ESKDB's members sharing their trees),
each taking the call's :class:`~pybncsmooth.options.Options` whole; :class:`DomainRole`
decides where the domain column goes.
"""

from .domains import DomainRole, check_domain, strip_domain
from .fitting import assemble_network, check_counted_weight, estimate_network, fit_network, weighted_source
from .structure import resolve_structure
from .update import update_network

__all__ = [
    "fit_network",
    "estimate_network",
    "assemble_network",
    "check_counted_weight",
    "weighted_source",
    "resolve_structure",
    "DomainRole",
    "strip_domain",
    "check_domain",
    "update_network",
]
