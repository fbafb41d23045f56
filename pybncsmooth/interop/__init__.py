"""Interoperability: BIF / DSC / NET files, the native format, bnlearn objects.

Importing this package registers every format module in the model layer's format
table (:mod:`pybncsmooth.model.formats`), which :meth:`FittedNetwork.write` and
:func:`read_network` use.
"""

from . import bif, dsc, native, net, rds  # noqa: F401  (each registers its format)
from .io import looks_like_network_path, network_extensions, read_network, write_network

__all__ = ["read_network", "write_network", "network_extensions", "looks_like_network_path"]
