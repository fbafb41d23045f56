"""Fitted networks and their CPDs.

In the order data flows: :mod:`.cpd` (the tables), :mod:`.network` (FittedNetwork and
its parts, ``_network_*``), :mod:`.query` (the query engine), :mod:`.domains` (adapting
a new domain, its overlay, the domains' report), :mod:`.draws`, :mod:`.summary`,
:mod:`.plotting`, :mod:`.fit_state` (what an update needs) and :mod:`.formats` (the
table of file formats the interop layer fills).
"""

from .cpd import CPD, FixedPrefixCPD, TableCPD, TreeCPD
from .network import FittedNetwork

__all__ = ["FittedNetwork", "CPD", "TreeCPD", "TableCPD", "FixedPrefixCPD"]
