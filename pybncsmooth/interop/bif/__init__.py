r"""The BIF format (bnlearn's repository format): :mod:`.format` (reader and writer),
:mod:`._syntax` (the declarations' grammar), :mod:`._tables` (probability tables),
:mod:`._quick` with its kernels :mod:`._quick_kernels` (one compiled pass over a large file)."""

from ..._lazy import lazy_names

#: the public names of :mod:`.format`, importable from this package as before it was one
__all__ = ['parse_bif', 'write_bif', 'bif_name']

__getattr__, __dir__ = lazy_names(__name__, ".format", __all__)
