"""A small tokenizer and cursor shared by the BIF, DSC and NET readers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import FileFormatError

_PUNCT = set("{}()[];,|=:")


@dataclass(frozen=True)
class Token:
    kind: str  # "punct", "word" or "string"
    text: str
    line: int


def tokenize(text: str, *, line_comments: Sequence[str], block_comments: bool, path: str | None) -> list[Token]:
    """Split ``text`` into punctuation, words and double-quoted strings."""
    out: list[Token] = []
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            continue
        if ch.isspace():
            i += 1
            continue
        if any(text.startswith(c, i) for c in line_comments):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if block_comments and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise FileFormatError("unterminated /* comment", path, line)
            line += text.count("\n", i, j)
            i = j + 2
            continue
        if ch == '"':
            j = text.find('"', i + 1)
            if j < 0:
                raise FileFormatError("unterminated string", path, line)
            out.append(Token("string", text[i + 1 : j], line))
            line += text.count("\n", i, j)
            i = j + 1
            continue
        if ch in _PUNCT:
            out.append(Token("punct", ch, line))
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] not in _PUNCT and text[j] != '"':
            if any(text.startswith(c, j) for c in line_comments) or (block_comments and text.startswith("/*", j)):
                break
            j += 1
        out.append(Token("word", text[i:j], line))
        i = j
    return out


class Cursor:
    """Sequential access to tokens with errors that carry the file and line."""

    def __init__(self, tokens: list[Token], path: str | None) -> None:
        self.tokens = tokens
        self.pos = 0
        self.path = path

    @property
    def line(self) -> int | None:
        if self.pos < len(self.tokens):
            return self.tokens[self.pos].line
        return self.tokens[-1].line if self.tokens else None

    def error(self, message: str, line: int | None = None) -> FileFormatError:
        return FileFormatError(message, self.path, line if line is not None else self.line)

    def at_end(self) -> bool:
        return self.pos >= len(self.tokens)

    def peek(self, k: int = 0) -> Token | None:
        j = self.pos + k
        return self.tokens[j] if j < len(self.tokens) else None

    def next(self, what: str = "more input") -> Token:
        if self.pos >= len(self.tokens):
            raise self.error(f"unexpected end of file, expected {what}")
        t = self.tokens[self.pos]
        self.pos += 1
        return t

    def is_punct(self, ch: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "punct" and t.text == ch

    def is_word(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "word" and t.text in words

    def expect(self, ch: str) -> Token:
        t = self.next(repr(ch))
        if t.kind != "punct" or t.text != ch:
            raise self.error(f"expected {ch!r} but found {t.text!r}", t.line)
        return t

    def expect_word(self, *words: str) -> Token:
        t = self.next(" or ".join(repr(w) for w in words))
        if t.kind != "word" or t.text not in words:
            raise self.error(f"expected {' or '.join(repr(w) for w in words)} but found {t.text!r}", t.line)
        return t

    def name(self, what: str = "a name") -> str:
        t = self.next(what)
        if t.kind == "punct":
            raise self.error(f"expected {what} but found {t.text!r}", t.line)
        return t.text

    def integer(self, what: str = "an integer") -> int:
        t = self.next(what)
        try:
            return int(t.text)
        except ValueError:
            raise self.error(f"expected {what} but found {t.text!r}", t.line) from None

    def number(self) -> float:
        t = self.next("a number")
        try:
            v = float(t.text)
        except ValueError:
            raise self.error(f"expected a probability but found {t.text!r}", t.line) from None
        if not np.isfinite(v) or v < 0:
            raise self.error(f"{t.text!r} is not a probability", t.line)
        return v

    def skip_statement(self) -> None:
        """Skip tokens up to and including the next ';' at this nesting level."""
        depth = 0
        while True:
            t = self.next("';'")
            if t.kind == "punct":
                if t.text in "({[":
                    depth += 1
                elif t.text in ")}]":
                    depth -= 1
                    if depth < 0:
                        raise self.error("unbalanced brackets", t.line)
                elif t.text == ";" and depth == 0:
                    return

    def skip_block(self) -> None:
        """Skip a balanced ``{ ... }`` block (the cursor is on its '{')."""
        self.expect("{")
        depth = 1
        while depth:
            t = self.next("'}'")
            if t.kind == "punct" and t.text == "{":
                depth += 1
            elif t.kind == "punct" and t.text == "}":
                depth -= 1

    def separated(self, item: "Callable[[], Any]", sep: str = ",") -> list:
        """``item (sep item)*``."""
        out = [item()]
        while self.is_punct(sep):
            self.next()
            out.append(item())
        return out

    def numbers(self) -> list[float]:
        """Comma-separated probabilities ending with ';'."""
        vals = self.separated(self.number)
        self.expect(";")
        return vals

    def sub_block(self) -> "Cursor":
        """A cursor over the balanced ``{ ... }`` block at the cursor, which is skipped."""
        start = self.pos
        self.skip_block()
        return Cursor(self.tokens[start : self.pos], self.path)


def check_writable_names(net: Any, fmt: str) -> None:
    """Node and level names a text format cannot hold (a double quote ends every quoted
    string of BIF, DSC and NET) are refused before anything is written."""
    for node in net.nodes:
        if '"' in str(node):
            raise FileFormatError(f"node name {node!r} contains a double quote, which {fmt} files cannot hold")
        for lev in net.levels(node):
            if '"' in str(lev):
                raise FileFormatError(
                    f"level {str(lev)!r} of {node!r} contains a double quote, which {fmt} files cannot hold; "
                    "rename it or write the native .pbn format"
                )


def word_or_quoted(name: str) -> str:
    """``name`` as it is when it reads back as one word (what bnlearn writes), else in
    double quotes (spaces, punctuation, comment markers, the empty name)."""
    plain = (
        name != "" and not any(ch.isspace() or ch in _PUNCT for ch in name) and "//" not in name and "/*" not in name
    )
    return name if plain else f'"{name}"'
