"""The command line's options, from their declarations (:mod:`pybncsmooth.options`).

Every option an entry point takes becomes a flag of the command (``--na-label``,
``--max-levels``, ``--em-tol``, ...; ``--seed`` is ``--random-state``), its text read by
the option's kind; ``-p NAME=VALUE`` takes the method's hyperparameters and, as well,
any option (given once: by its flag or by ``-p``).  An option added to the
declarations is a flag here with no line of this module changed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Sequence

from ._cli_specs import OPTION_FLAGS

if TYPE_CHECKING:
    from ..options import OptionSpec

__all__ = ["add_option_flags", "given_settings", "parse_value"]

#: a second spelling of some options' flags
_ALIASES = {"random_state": ["--seed"]}


def parse_value(text: str) -> Any:
    """A hyperparameter's text as a boolean, ``None``, a whole number, a number or text."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _read(spec: OptionSpec, text: str) -> Any:
    """An option's text read by its kind (``ValueError`` naming the option on bad text)."""
    if spec.kind in ("int", "seed"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{spec.name} expects a whole number, got {text!r}") from None
    if spec.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{spec.name} expects a number, got {text!r}") from None
    if spec.kind in ("bool", "progress"):
        if text.lower() not in ("true", "false"):
            raise ValueError(f"{spec.name} expects true or false, got {text!r}")
        return text.lower() == "true"
    return text


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_option_flags(parser: argparse.ArgumentParser, entry: str, *, skip: Sequence[str] = ()) -> None:
    """A flag for every option ``entry`` takes (but ``skip``), its default unset."""
    group = parser.add_argument_group("options (see 'pybncsmooth options')")
    for name, kind, text, choices in OPTION_FLAGS[entry]:
        if name in skip:
            continue
        flags = [_flag(name), *_ALIASES.get(name, [])]
        if kind in ("bool", "progress"):
            group.add_argument(*flags, dest=name, default=None, metavar="true|false", help=text)
        else:
            group.add_argument(*flags, dest=name, default=None, choices=None if choices is None else list(choices),
                               help=text)


def _pairs(pairs: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for p in pairs:
        if "=" not in p:
            raise ValueError(f"-p expects NAME=VALUE, got {p!r}")
        k, v = p.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def given_settings(args: argparse.Namespace, entry: str, pairs: Sequence[str],
                   not_p: dict[str, str] | None = None) -> dict[str, Any]:
    """The options given by their flags and the ``-p NAME=VALUE`` pairs (options and
    hyperparameters alike), each read by its kind; an option given twice, or a name
    ``-p`` cannot take (``not_p``: name -> how to give it), is a ``ValueError``."""
    from ..options import option_specs

    specs = option_specs(entry)
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        text = getattr(args, name, None)
        if text is not None:
            out[name] = _read(spec, text) if isinstance(text, str) else text
    for name, text in _pairs(pairs):
        key = "random_state" if name == "seed" else name
        if not_p and key in not_p:
            raise ValueError(f"-p {name}=... is not an option: give it with {not_p[key]}")
        if key in out:
            raise ValueError(f"{key} is given twice (-p {name}=... and {_flag(key)}): give it once")
        out[key] = _read(specs[key], text) if key in specs else parse_value(text)
    return out
