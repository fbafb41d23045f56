"""XMLBIF files (the XML version of BIF, 0.3), as pgmpy and pyAgrum read and write them.

A ``VARIABLE`` of type ``nature`` declares a node: its ``NAME`` and its levels, one
``OUTCOME`` each.  A ``DEFINITION`` (older files: ``PROBABILITY``) gives the table of
the node ``FOR`` given its parents (``GIVEN``, in order): the ``TABLE`` lists the
distributions of the node, one configuration of the parents after another, the last
parent varying fastest (and within a distribution the node's levels in order).  pgmpy
1.1 and pyAgrum 3.3 both write and read this layout.  Each distribution must sum to 1
within 0.01 and is renormalised, as for BIF.  Names and levels are their elements' text
exactly as written, blanks at either end kept (``'yes '`` and ``'yes'`` are two levels),
as pgmpy reads them.

Writing gives every number with ``repr`` (the shortest text that reads back as the
same double), so a network written and read back has the same tables, bit for bit.
Extensions: ``.xmlbif``, ``.bifxml`` (pyAgrum's) and ``.xml`` (pgmpy's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..errors import FileFormatError
from ..model.formats import NetworkFormat, register_format
from ..model.network import FittedNetwork
from .reading.build import NetworkParts, table_columns
from .reading.numbers import BadNumber, parse_number_rows
from .io import read_text, text_writer

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

__all__ = ["parse_xmlbif", "write_xmlbif"]


class _Errors:
    """Errors of one file (XML carries no line numbers once parsed)."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def error(self, message: str, line: int | None = None) -> FileFormatError:
        return FileFormatError(message, self.path, line)


def _text(el: ET.Element | None) -> str:
    """An element's text as written (a name or level may begin or end with a blank, as
    pgmpy reads it too)."""
    return "" if el is None or el.text is None else el.text


def _numbers(el: ET.Element | None) -> str:
    return _text(el).strip()


def parse_xmlbif(text: str, path: str | None = None) -> NetworkParts:
    """Parse XMLBIF text into its nodes, levels, parents and tables."""
    import xml.etree.ElementTree as ET  # the XML parser, imported when an XMLBIF file is read

    err = _Errors(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise FileFormatError(f"not well-formed XML ({e})", path, e.position[0]) from None
    net = root.find("NETWORK") if root.tag == "BIF" else None
    if net is None:
        raise err.error("an XMLBIF file has a <BIF> element holding a <NETWORK>")
    parts = NetworkParts(path=path, format="xmlbif")
    for var in net.iter("VARIABLE"):
        name = _text(var.find("NAME"))
        kind = var.get("TYPE", "nature")
        if kind != "nature":
            raise err.error(f"variable {name!r} is of type {kind!r}; only chance ('nature') nodes are supported")
        if not name:
            raise err.error("a <VARIABLE> without a <NAME>")
        parts.add_variable(name, [_text(o) for o in var.findall("OUTCOME")], None)
    defs = list(net.iter("DEFINITION")) + list(net.iter("PROBABILITY"))
    heads = [(_text(d.find("FOR")), [_text(g) for g in d.findall("GIVEN")]) for d in defs]
    try:
        values, counts = parse_number_rows([_numbers(d.find("TABLE")) for d in defs])
    except BadNumber as e:
        raise err.error(f"the table of {heads[e.row][0]!r} holds {e.token!r} where a probability was expected") from None
    starts = np.cumsum(counts) - counts
    for (node, parents), s, k in zip(heads, starts, counts):
        parts.add_table(node, parents, _table(node, parents, values[s : s + k], parts, err), None)
    parts.finish()
    return parts


def _table(node: str, parents: list[str], vals: np.ndarray, parts: NetworkParts, err: _Errors) -> np.ndarray:
    for v in [node, *parents]:
        if v not in parts.levels:
            raise err.error(f"node {v!r} of the definition of {node!r} is not declared")
    r = len(parts.levels[node])
    cards = [len(parts.levels[p]) for p in parents]
    Q = int(np.prod(cards)) if cards else 1
    if len(vals) != r * Q:
        raise err.error(f"the table of {node!r} has {len(vals)} numbers, expected {r * Q}")
    if not np.all(np.isfinite(vals)) or (vals < 0).any():
        raise err.error(f"the table of {node!r} has a number that is not a probability")
    return table_columns(vals.reshape(Q, r).copy(), node, parents, parts, None, err, np.full(Q, -1), None)


def _escape(name: object) -> str:
    """A name or level as element text: ``&``, ``<``, ``>`` escaped, and a carriage
    return as a character reference (an XML reader turns a bare one into a line feed)."""
    from xml.sax.saxutils import escape  # (with urllib and ssl: imported when an XMLBIF file is written)

    return escape(str(name), {"\r": "&#13;"})


def write_xmlbif(net: "FittedNetwork", fh: TextIO) -> None:
    """Write ``net`` as XMLBIF 0.3 (pgmpy's and pyAgrum's layout, see the module docstring)."""
    fh.write('<?xml version="1.0" encoding="UTF-8"?>\n<BIF VERSION="0.3">\n<NETWORK>\n<NAME>unknown</NAME>\n')
    for node in net.nodes:
        outcomes = "".join(f"\t<OUTCOME>{_escape(l)}</OUTCOME>\n" for l in net.levels(node))
        fh.write(f'<VARIABLE TYPE="nature">\n\t<NAME>{_escape(node)}</NAME>\n{outcomes}</VARIABLE>\n')
    for node in net.nodes:
        t = np.moveaxis(net.cpt(node), 0, -1)  # (*parents, node): the last parent, then the node, fastest
        given = "".join(f"\t<GIVEN>{_escape(p)}</GIVEN>\n" for p in net.parents(node))
        numbers = " ".join(map(repr, t.ravel().tolist()))
        fh.write(f"<DEFINITION>\n\t<FOR>{_escape(node)}</FOR>\n{given}\t<TABLE>{numbers}</TABLE>\n</DEFINITION>\n")
    fh.write("</NETWORK>\n</BIF>\n")


def read_xmlbif(path: str) -> "FittedNetwork":
    """An XMLBIF file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_xmlbif(read_text(path), path).network()


def _write(net: Any, fh: TextIO) -> None:
    write_xmlbif(net, fh)


register_format(NetworkFormat("xmlbif", (".xmlbif", ".bifxml", ".xml"), read_xmlbif, text_writer("xmlbif", _write),
                              aliases=("bifxml", "xml")))
