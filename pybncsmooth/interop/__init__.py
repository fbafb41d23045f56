"""Interoperability: BIF / DSC / NET / XMLBIF / UAI files, the native format, bnlearn
objects, pgmpy and pyAgrum model objects.

What the text readers share is :mod:`.reading` (tokens, grammar, numbers, building a
network); the BIF format is the package :mod:`.bif`; each other format is a module
(:mod:`.dsc`, :mod:`.net`, :mod:`.xmlbif`, :mod:`.uai`, :mod:`.native`, :mod:`.rds`);
:mod:`.neighbours` converts pgmpy's and pyAgrum's objects, :mod:`.r_bridge` serves R.

Importing this package registers every format module in the model layer's format
table (:mod:`pybncsmooth.model.formats`), which :meth:`FittedNetwork.write` and
:func:`read_network` use.
"""

from .bif import format as _bif_format  # noqa: F401  (registers BIF; the package stays .bif)
from . import dsc, native, net, rds, uai, xmlbif  # noqa: F401  (each registers its format)
from .io import looks_like_network_path, network_extensions, read_network, write_network
from .neighbours import from_pgmpy, from_pyagrum

__all__ = ["read_network", "write_network", "network_extensions", "looks_like_network_path", "from_pgmpy",
           "from_pyagrum"]
