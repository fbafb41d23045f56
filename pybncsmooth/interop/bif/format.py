"""BIF (Bayesian Interchange Format) files, as bnlearn's ``read.bif``/``write.bif``.

Reading accepts the BIF 0.15 syntax of bnlearn, pgmpy and the Bayesian network
repository: ``//`` and ``/* */`` comments, ``property`` statements (ignored),
``table`` entries (for a node with parents, the node's level varies slowest and the
last parent fastest), ``default`` entries and one ``(config) probs;`` row per parent
configuration.  A level is whatever stands between the commas of the braces, white
space trimmed (``<7.5``, ``>=7.5``, ``0-3_days``, ``a b``), as bnlearn and pgmpy read
it; one pair of double quotes around a name or level is removed (pgmpy's reading, and
what this module writes for a level no other reading would keep), with ``\\"`` inside
them a quote.  A configuration row may also name a level as bnlearn's ``write.bif``
sanitises it (``,{}()#%`` replaced by ``_``).  Each distribution must sum to 1 within
0.01 and is renormalised, as bnlearn does.

A small file in the plain form bnlearn and pgmpy write (no quotes, comments or
``default`` rows) is read by one compiled pass over its bytes (:mod:`~pybncsmooth.interop.bif._quick`);
any other, and any file with an error, by the general reader, which makes one pass
over the text for its blocks (a regular expression for the braces), one per block for
its rows, and parses the numbers of all the probability
blocks together in one compiled pass (:mod:`~pybncsmooth.interop.reading.numbers`), so that a file of millions
of numbers reads at the speed of its bytes.

Writing reproduces ``write.bif`` byte for byte for fitted networks; a table whose
numbers are short decimals (a network read from a file) is written with as many
digits as they need, so that it reads back unchanged.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from ...model.formats import NetworkFormat, register_format
from ...model.network import FittedNetwork
from ..._jit import numba_loaded
from ._quick import quick_parts
from ._syntax import ROW, ROW_PLAIN, STRING, BifText, Block, declared_levels, unquote
from ._tables import build_tables
from ..reading.build import NetworkParts, write_probability_blocks
from ..reading.tokens import check_writable_names
from ..io import read_text, text_writer

__all__ = ["parse_bif", "write_bif", "bif_name"]

_BRACES = re.compile(r"[{}]")
_BRACES_QUOTED = re.compile(STRING + r"|[{}]")
_COMMENT = re.compile(r"(" + STRING + r")|(//[^\n]*|/\*.*?\*/)", re.S)
_TYPE = re.compile(r"\btype\s+([^\s\[;]+)\s*\[\s*(\d+)\s*\]\s*=?\s*\{((?:" + STRING + r'|[^}"])*)\}\s*;', re.S)
#: :data:`_TYPE` for a text without double quotes (the same matches, found faster)
_TYPE_PLAIN = re.compile(r'\btype\s+([^\s\[;]+)\s*\[\s*(\d+)\s*\]\s*=?\s*\{([^}"]*)\}\s*;')
_PROPERTY = re.compile(r"(?:^|(?<=[;{}]))\s*property\b[^;]*;")


def parse_bif(text: str, path: str | None = None) -> NetworkParts:
    """Parse BIF text into its nodes, levels, parents and tables (a small plain file
    through :func:`~pybncsmooth.interop.bif._quick.quick_parts`, the same result)."""
    quick = quick_parts(text, path) if numba_loaded() else None  # (no numba start for a first read)
    if quick is not None:
        return quick
    src = BifText(_strip_comments(text), path)
    blocks = _top_blocks(src)
    if not blocks or _first_word(src.text[blocks[0][0] : blocks[0][1]]) != "network":
        raise src.error("a BIF file starts with 'network'", 1)
    parts = NetworkParts(path=path, format="bif", checked=True)
    pending: list[Block] = []
    line, last = 1, 0
    for start, open_, close in blocks[1:]:
        header = src.text[start:open_]
        word = _first_word(header)
        at = start + len(header) - len(header.lstrip(" \t\r\n;"))
        line, last = line + src.text.count("\n", last, at), at
        if word == "variable":
            _variable(src, header, open_, close, parts, line)
        elif word == "probability":
            pending.append(_probability(src, header, open_, close, line, parts))
        else:
            raise src.error(f"expected 'variable' or 'probability' but found {word or '{'!r}", line)
    for block, table in build_tables(src, pending, parts):
        parts.add_table(block.node, block.parents, table, block.line)
    parts.finish()
    return parts


def _strip_comments(text: str) -> str:
    """``//`` and ``/* */`` comments outside quotes blanked (their line breaks kept)."""
    if "//" not in text and "/*" not in text:
        return text
    return _COMMENT.sub(lambda m: m.group(1) or "\n" * m.group(2).count("\n"), text)


def _top_blocks(src: BifText) -> list[tuple[int, int, int]]:
    """``(start of header, '{', '}')`` of every top-level block, in file order."""
    text = src.text
    pattern = _BRACES_QUOTED if '"' in text else _BRACES
    out, depth, start, open_ = [], 0, 0, 0
    for m in pattern.finditer(text):
        ch = m.group()
        if ch == "{":
            if depth == 0:
                open_ = m.start()
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise src.error("unbalanced '}'", src.line(m.start()))
            if depth == 0:
                out.append((start, open_, m.start()))
                start = m.end()
    if depth:
        raise src.error("a block opened here is never closed (expected '}')", src.line(open_))
    tail = text[start:].strip(" \t\r\n;")
    if tail:
        word = (tail.split() or [tail])[0]
        raise src.error(f"expected 'variable' or 'probability' but found {word!r}",
                        src.line(text.index(tail, start)))
    return out


def _first_word(header: str) -> str:
    """The keyword a block's header starts with (``probability( E | A )``: a parenthesis
    ends it as a blank does)."""
    words = header.strip(" \t\r\n;").split(None, 1)
    return words[0].split("(", 1)[0] if words else ""


def _variable(src: BifText, header: str, open_: int, close: int, parts: NetworkParts, line: int) -> None:
    name = unquote(header.strip(" \t\r\n;")[len("variable") :])
    if not name:
        raise src.error("expected a variable name after 'variable'", line)
    m = (_TYPE_PLAIN if src.plain else _TYPE).search(src.text, open_ + 1, close)
    if m is None:
        what = "cannot read the 'type' declaration" if "type" in src.text[open_:close] else "has no 'type' declaration"
        raise src.error(f"variable {name!r} {what} (expected: type discrete [ n ] {{ level, ... }};)", line)
    tline = line + src.text.count("\n", open_, m.start(1))
    if m.group(1) != "discrete":
        raise src.error(f"variable {name!r} is of type {m.group(1)!r}; only discrete networks are supported", tline)
    n = int(m.group(2))
    levels = declared_levels(m.group(3), n)
    if len(levels) != n:
        raise src.error(f"variable {name!r} declares {n} levels but lists {len(levels)}", tline)
    parts.add_variable(name, levels, line)


def _probability(src: BifText, header: str, open_: int, close: int, line: int, parts: NetworkParts) -> Block:
    i, j = header.find("("), header.rfind(")")
    if i < 0 or j < i:
        raise src.error("expected 'probability ( node | parents )'", line)
    node, parents = _header_names(header[i + 1 : j], src, line, parts.levels)
    body = src.text[open_ + 1 : close]
    if "property" in body:  # blanked, positions kept for the line numbers
        body = _PROPERTY.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), body)
    quoted = '"' in body
    rows = (ROW if quoted else ROW_PLAIN).findall(body)
    bare = _QUOTED.sub(lambda m: "\0" * len(m.group()), body) if quoted else body  # a quoted level's ';' is its own
    last = bare.rfind(";")
    if len(rows) != bare.count(";") or body[last + 1 :].strip():
        _bad_statement(src, body, open_ + 1, node)
    keywords = ("table" in body or "default" in body) and any(kw for _, kw, _ in rows)
    return Block(node, parents, line, open_ + 1, body, rows, keywords)


def _header_names(inner: str, src: BifText, line: int, declared: Any) -> tuple[str, list[str]]:
    """``node | p1, p2`` (or the old ``node p1 p2``; a declared name with spaces is one
    node); a ``|``, comma or space inside double quotes belongs to the name."""
    bare = _QUOTED.sub(lambda m: "\0" * len(m.group()), inner) if '"' in inner else inner
    if "|" not in bare and unquote(inner) in declared:
        return unquote(inner), []
    if "|" in bare:
        i = bare.index("|")
        node, parents = unquote(inner[:i]), [unquote(p) for p in _split(inner[i + 1 :], bare[i + 1 :], ",")]
    else:
        words = [unquote(w) for w in _split(inner, bare, "," if "," in bare else None)] or [""]
        node, parents = words[0], words[1:]
    if not node or not all(parents):
        raise src.error(f"expected 'probability ( node | parents )' but found '({inner.strip()})'", line)
    return node, parents


_QUOTED = re.compile(STRING)


def _split(text: str, bare: str, sep: str | None) -> list[str]:
    """``text`` split where ``bare`` (the same text, its quoted names blanked) has ``sep``
    (``None``: runs of white space)."""
    if '"' not in text:  # nothing quoted (``bare`` is ``text``): the plain split
        return text.split() if sep is None else text.split(sep)
    cuts = [m.span() for m in re.finditer(r"\s+" if sep is None else re.escape(sep), bare)]
    out, start = [], 0
    for a, b in cuts:
        out.append(text[start:a])
        start = b
    out.append(text[start:])
    return [w for w in out if w.strip()] if sep is None else out


def _bad_statement(src: BifText, body: str, offset: int, node: str) -> None:
    """Raise on the first statement of a probability block that is not a row."""
    pos = 0
    while True:
        m = ROW.match(body, pos)
        if m is None:
            rest = body[pos:].lstrip()
            where = src.line(offset + len(body) - len(rest))
            if ";" not in rest:
                raise src.error(f"expected ';' at the end of a row of the table of {node!r}", where)
            raise src.error(f"unexpected {rest.split()[0]!r} in the table of {node!r}", where)
        pos = m.end()


# ----------------------------------------------------------------------------- writing

_PLAIN_BAD = re.compile(r'[,;{}()|"\n\r]|//|/\*')


def bif_name(name: Any) -> str:
    """A node name or level as written in a BIF file: as it is (what bnlearn writes, and
    what bnlearn, pgmpy and this module read back unchanged: ``<7.5``, ``a b``), in
    double quotes only when it could not be read back bare (empty, white space at an
    end, a comma, bar, brace, parenthesis, semicolon, quote or comment marker)."""
    s = str(name)
    if s and s == s.strip() and not _PLAIN_BAD.search(s):
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_bif(net: "FittedNetwork", fh: TextIO) -> None:
    """Write ``net`` as bnlearn's ``write.bif`` does."""
    check_writable_names(net, "BIF")
    fh.write("network unknown {\n}\n")
    for node in net.nodes:
        lev = [bif_name(l) for l in net.levels(node)]
        fh.write(f"variable {bif_name(node)} {{\n  type discrete [ {len(lev)} ] {{ {', '.join(lev)} }};\n}}\n")
    write_probability_blocks(
        net,
        fh,
        "  table ",
        lambda codes, labels: "  (" + ", ".join(bif_name(lab[c]) for lab, c in zip(labels, codes)) + ") ",
        name=bif_name,
    )


def read_bif(path: str) -> "FittedNetwork":
    """A BIF file (gzip-compressed when the name ends in ``.gz``) as a fitted network."""
    return parse_bif(read_text(path), path).network()


register_format(NetworkFormat("bif", (".bif",), read_bif, text_writer("bif", lambda net, fh: write_bif(net, fh))))
