"""Interoperability: BIF / DSC / NET / XMLBIF / UAI files, the native format, bnlearn
objects, pgmpy and pyAgrum model objects.

Importing this package registers every format module in the model layer's format
table (:mod:`pybncsmooth.model.formats`), which :meth:`FittedNetwork.write` and
:func:`read_network` use.
"""

from . import bif, dsc, native, net, rds, uai, xmlbif  # noqa: F401  (each registers its format)
from .io import looks_like_network_path, network_extensions, read_network, write_network
from .neighbours import from_pgmpy, from_pyagrum

__all__ = ["read_network", "write_network", "network_extensions", "looks_like_network_path", "from_pgmpy",
           "from_pyagrum"]
