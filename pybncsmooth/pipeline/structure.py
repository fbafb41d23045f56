"""Any structure spec a user may give -> a :class:`DAG` (and the levels a file declares)."""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..data.schema import Schema
from ..errors import StructureError
from ..interop.io import looks_like_network_path, read_network
from ..model.network import FittedNetwork
from ..structure.dag import DAG

__all__ = ["resolve_structure"]


def resolve_structure(spec: Any, columns: Sequence[str] | None = None) -> tuple[DAG, Schema | None]:
    """A DAG (and the levels a file declares, if any) from any structure spec.

    Accepted: a :class:`DAG`; a :class:`FittedNetwork` (its structure and levels);
    a bnlearn model string (``"[A][B|A]"``); one per-node formula or a list of them
    (``"B ~ A"``; ``.`` means every other column of the data, ``columns``); a path to
    a ``.bif``/``.dsc``/``.net``/``.rds``/``.pbn`` file; a ``networkx.DiGraph``.
    """
    if isinstance(spec, DAG):
        return spec, None
    if isinstance(spec, FittedNetwork):
        return spec.dag, spec.schema.subset(spec.nodes)
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and looks_like_network_path(spec)):
        obj = read_network(spec)
        if isinstance(obj, DAG):
            return obj, None
        return obj.dag, obj.schema
    if isinstance(spec, str):
        s = spec.strip()
        if s.startswith("["):
            return DAG.from_modelstring(s), None
        if "~" in s:
            return DAG.from_formulas([s], columns), None
        raise StructureError(
            f"cannot read {spec!r} as a structure: expected a model string '[A][B|A]', a formula "
            "'B ~ A', or a path to a .bif/.dsc/.net/.rds/.pbn file"
        )
    if isinstance(spec, (list, tuple)) and all(isinstance(f, str) for f in spec):
        return DAG.from_formulas(list(spec), columns), None
    if hasattr(spec, "is_directed") and hasattr(spec, "edges"):
        return DAG.from_networkx(spec), None
    raise StructureError(f"cannot use a {type(spec).__name__} as a network structure")
