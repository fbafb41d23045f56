"""Fitted networks and their CPDs."""

from .cpd import CPD, FixedPrefixCPD, TableCPD, TreeCPD
from .network import FittedNetwork

__all__ = ["FittedNetwork", "CPD", "TreeCPD", "TableCPD", "FixedPrefixCPD"]
