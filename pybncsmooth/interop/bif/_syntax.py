"""The pieces of BIF syntax the reader shares between its passes: the text with its
line numbers, the probability blocks as found, names and levels as bnlearn and pgmpy
read them."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from ...errors import FileFormatError

__all__ = ["BifText", "Block", "ROW", "ROW_PLAIN", "unquote", "declared_levels", "split_config", "level_lookup", "row_line"]

STRING = r'"(?:[^"\\]|\\.)*"'
#: one statement of a probability block: ``(configuration) numbers;``, ``table numbers;``
#: or ``default numbers;`` (groups: configuration, keyword, numbers)
ROW = re.compile(r"\s*(?:\(((?:" + STRING + r'|[^()"])*)\)|(table|default)\b)([^;]*);')
#: :data:`ROW` for a text without double quotes (the same matches, found faster)
ROW_PLAIN = re.compile(r'\s*(?:\(([^()"]*)\)|(table|default)\b)([^;]*);')
_ITEM = re.compile(r"(" + STRING + r")|([^,\s](?:[^,]*[^,\s])?)")
#: what bnlearn's write.bif replaces by "_" in the levels of a configuration row
_SANITISED = re.compile(r"[,{}()#%]")


class BifText:
    """The file's text, its path, whether it has no double quote, and the line of a
    position (an index of the line ends, built when first asked)."""

    def __init__(self, text: str, path: str | None) -> None:
        self.text, self.path = text, path
        self._ends: list[int] | None = None
        #: no double quote anywhere (patterns without the quoted-string case apply)
        self.plain = '"' not in text

    def line(self, pos: int) -> int:
        if self._ends is None:
            self._ends = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_left(self._ends, pos) + 1

    def error(self, message: str, line: int | None) -> FileFormatError:
        return FileFormatError(message, self.path, line)


@dataclass
class Block:
    """A probability block: its node, parents, the line of its header, where its body
    starts in the text and the body (``property`` statements blanked), its rows
    ``(configuration, keyword, numbers)`` and whether any row is a ``table`` or
    ``default`` row."""

    node: str
    parents: list[str]
    line: int
    body: int
    text: str
    rows: list[tuple[str, str, str]]
    keywords: bool


def unquote(name: str) -> str:
    """White space trimmed, and one pair of surrounding double quotes removed (``\\"``
    inside them a quote, ``\\\\`` a backslash)."""
    name = name.strip()
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        name = name[1:-1]
        if "\\" in name:
            name = re.sub(r"\\(.)", r"\1", name)
    return name


def declared_levels(raw: str, n: int) -> list[str]:
    """The levels between a declaration's braces: comma-separated items (a quoted one
    may hold anything but a bare quote), or white-space-separated words when there is
    no comma and the items are not ``n`` (pgmpy's reading)."""
    if '"' not in raw:
        items = [s.strip() for s in raw.split(",")]
        if items and not items[-1]:
            items.pop()  # a trailing comma
    else:
        items = [unquote(m.group(0)) for m in _ITEM.finditer(raw)]
    if len(items) != n and "," not in raw:
        items = [unquote(w) for w in raw.split()]
    return items


def split_config(cfg: str) -> list[str]:
    """The levels of one configuration row."""
    return [unquote(m.group(0)) for m in _ITEM.finditer(cfg)] if cfg.strip() else []


@lru_cache(maxsize=4096)
def level_lookup(levels: tuple[str, ...]) -> dict[str, int]:
    """Level -> code, and bnlearn's sanitised spelling of a level (``,{}()#%`` -> ``_``)
    where it names no other level."""
    lut = {lev: i for i, lev in enumerate(levels)}
    for i, lev in enumerate(levels):
        clean = _SANITISED.sub("_", lev)
        if clean != lev:
            lut.setdefault(clean, i)
    return lut


def row_line(src: BifText, block: Block, i: int) -> int:
    """The line of row ``i`` of a block (found again: for error messages only)."""
    pos = start = 0
    for _ in range(i + 1):
        m = ROW.match(block.text, pos)
        if m is None:
            break
        start = m.start() + len(m.group()) - len(m.group().lstrip())
        pos = m.end()
    return src.line(block.body + start)
