"""A Sphinx extension that makes a Markdown table row with a cell too many or too few a
warning (an error under ``-W``).

A GitHub-flavoured Markdown table splits its rows at every ``|`` not escaped as ``\\|``,
inside code spans too, and silently drops the cells beyond the header's count, so that
``|X|`` written in a cell loses the rest of the row without a word from the parser.
Here every row of every table of a Markdown page (and of a file it includes) is counted
the same way against its header row, outside fenced code blocks."""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

__all__ = ["row_cells", "table_cell_mismatches", "setup"]

_logger = logging.getLogger(__name__)
_FENCE = re.compile(r"^(```|~~~)")
_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")


def row_cells(row: str) -> int:
    """The number of cells a table row has, split as GitHub-flavoured Markdown splits it."""
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return len(re.split(r"(?<!\\)\|", row))


def table_cell_mismatches(text: str) -> list[tuple[int, int, int]]:
    """``(line, cells, header cells)`` of every table row whose cell count differs from
    its header's (lines counted from 1)."""
    out: list[tuple[int, int, int]] = []
    lines = text.splitlines()
    in_fence, header = False, None
    for i, line in enumerate(lines):
        s = line.strip()
        if _FENCE.match(s):
            in_fence, header = not in_fence, None
            continue
        if in_fence or not s.startswith("|"):
            header = None
            continue
        if header is None:
            if i + 1 < len(lines) and _DELIMITER.match(lines[i + 1].strip()):
                header = row_cells(s)
            continue
        if not _DELIMITER.match(s) and row_cells(s) != header:
            out.append((i + 1, row_cells(s), header))
    return out


def _warn(text: str, location: str) -> None:
    for line, n, header in table_cell_mismatches(text):
        _logger.warning(
            f"a table row has {n} cells where its header has {header}: a '|' inside a cell (code spans "
            f"included) splits it; write it as '\\|'", location=(location, line), type="tablecells",
        )


def _source_read(app, docname: str, source: list[str]) -> None:
    if Path(app.env.doc2path(docname)).suffix == ".md":
        _warn(source[0], docname)


def _include_read(app, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    if Path(relative_path).suffix == ".md":
        _warn(content[0], str(relative_path))


def setup(app) -> dict:
    app.connect("source-read", _source_read)
    app.connect("include-read", _include_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
