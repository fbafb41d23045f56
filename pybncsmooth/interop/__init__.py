"""Interoperability: BIF / DSC / NET files, the native format, bnlearn objects."""

from .io import read_network, write_network

__all__ = ["read_network", "write_network"]
