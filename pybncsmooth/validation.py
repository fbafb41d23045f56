"""One validation layer: every argument check of the package, with messages naming the culprit.

The front ends (``fit``, :class:`~pybncsmooth.BNClassifier`, the CLI, the R bridge)
and the layers below them check their arguments here, so a rule and its message are
written once (bnlearn's ``sanitization-*.R``; scikit-learn's ``utils.validation``):

* numbers: :func:`check_int`, :func:`check_number` (positive or non-negative),
  :func:`check_probability`, :func:`check_n_jobs`, :func:`check_random_state`,
  :func:`check_choice`; files to read: :func:`check_file`;
* hyperparameter declarations: a :class:`Param` states a hyperparameter's type, range,
  default and one line of doc; estimators declare theirs (``Estimator.params``) and
  :func:`check_params` checks a set of values against them;
* :func:`parallel_map`: a function over items in up to ``n_jobs`` threads, results in
  the items' order (the compiled kernels release the GIL).

This module sits at the bottom of the package: it imports nothing of it but
:mod:`pybncsmooth.errors`.
"""

from __future__ import annotations

import math
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, TypeVar

import numpy as np

from .errors import HyperparameterError

__all__ = [
    "check_int",
    "check_draws",
    "min_draws",
    "check_number",
    "check_probability",
    "check_choice",
    "check_n_jobs",
    "check_random_state",
    "check_file",
    "entropy_of",
    "Param",
    "check_params",
    "parallel_map",
    "progress_bar",
    "n_workers",
]

T = TypeVar("T")
R = TypeVar("R")


def check_int(
    name: str,
    value: Any,
    *,
    low: int | None = None,
    high: int | None = None,
    optional: bool = False,
) -> int | None:
    """``value`` as an ``int`` with ``low <= value <= high`` (bounds optional); ``None``
    passes when ``optional``.  Booleans and floats are refused (``2.0`` is not a count)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        bound = f" >= {low}" if low is not None else ""
        raise HyperparameterError(f"{name} must be an integer{bound}, not {value!r}")
    if low is not None and value < low:
        raise HyperparameterError(f"{name} must be an integer >= {low}, not {value!r}")
    if high is not None and value > high:
        raise HyperparameterError(f"{name} must be an integer <= {high}, not {value!r}")
    return int(value)


def min_draws(level: float) -> int:
    """The fewest draws (posterior draws or bootstrap replicates) an equal-tailed
    ``level`` interval is read from: ``2 / (1 - level)``, rounded up (and at least 2),
    so that each tail of ``(1 - level) / 2`` holds one draw; fewer give the range of
    the draws, narrower than the stated level (1 draw: width zero)."""
    return max(2, math.ceil(2.0 / (1.0 - float(level)) - 1e-9))


def check_draws(draws: Any, level: float | None = None, *, zero_ok: bool = False, low: int = 2,
                name: str = "draws") -> int:
    """``draws``, the number of draws an interval or a Monte Carlo answer is read from,
    as an ``int``: the one check of every entry point (``cpt_frame``, ``query``,
    ``summary``, ``domain_report``, ``variance_shares``, the command line).  At least
    ``low``, and with an interval of level ``level`` at least :func:`min_draws`
    (``level`` 0.9: 20); ``zero_ok``: 0 is accepted too (no interval).  Refused values
    raise :class:`HyperparameterError` naming the argument and its minimum."""
    need = low if level is None else max(low, min_draws(level))
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or (draws < need and not
                                                                                (zero_ok and draws == 0)):
        what = f"a {level:.0%} interval needs" if level is not None else "needs"
        zero = "0 (no interval) or " if zero_ok else ""
        why = (" (an equal-tailed interval reads each tail, (1 - level) / 2, from at least one draw: "
               "2 / (1 - level) draws)" if level is not None and need > low else "")
        raise HyperparameterError(f"{name}={draws!r}: {what} {zero}{name} >= {need}{why}")
    return int(draws)


def check_number(name: str, value: Any, *, strict: bool = True, optional: bool = False) -> float | None:
    """``value`` as a finite float, positive (``strict``) or non-negative; ``None``
    passes when ``optional``.  Anything else (text, booleans, sequences, NaN, inf)
    raises :class:`HyperparameterError` naming ``name``."""
    if value is None and optional:
        return None
    kind = "positive" if strict else "non-negative"
    v = _as_float(value, f"{name} must be a {kind} number, not {value!r}")
    if not math.isfinite(v) or v < 0 or (strict and v == 0):
        raise HyperparameterError(f"{name} must be {kind} and finite, not {value!r}")
    return v


def _as_float(value: Any, message: str) -> float:
    """``float(value)`` for numbers (NumPy's included); text, booleans, sequences and
    anything else raise :class:`HyperparameterError` with ``message``."""
    if isinstance(value, (bool, str, bytes)):
        raise HyperparameterError(message)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise HyperparameterError(message) from None


def check_probability(name: str, value: Any, *, open_low: bool = True, open_high: bool = True) -> float:
    """``value`` as a float in the interval (0, 1), its ends included where asked."""
    lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
    msg = f"{name} must be a number in {lo}0, 1{hi}, not {value!r}"
    v = _as_float(value, msg)
    if not math.isfinite(v) or v < 0 or v > 1 or (open_low and v == 0) or (open_high and v == 1):
        raise HyperparameterError(msg)
    return v


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """``value`` if it is one of ``choices``; else :class:`HyperparameterError` listing them."""
    if isinstance(value, (str, int, float, bool, type(None))) and value in choices:
        return value
    raise HyperparameterError(f"{name} must be one of {tuple(choices)}, not {value!r}")


def check_n_jobs(n_jobs: Any, name: str = "n_jobs") -> int | None:
    """``None`` (all cores) or an integer >= 1."""
    return check_int(name, n_jobs, low=1, optional=True)


def check_random_state(random_state: Any, name: str = "random_state") -> Any:
    """``None``, a non-negative integer, a ``numpy.random.Generator``, a
    ``SeedSequence`` or a legacy ``RandomState``: what seeds a stochastic routine."""
    ok_types = (np.random.Generator, np.random.SeedSequence, np.random.RandomState)
    if random_state is None or isinstance(random_state, ok_types):
        return random_state
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise HyperparameterError(
            f"{name} must be None, a non-negative integer or a numpy Generator, not {random_state!r}"
        )
    return int(random_state)


def check_file(path: Any, what: str = "file") -> str:
    """``path`` as text, naming a file that exists: a missing path raises
    ``FileNotFoundError`` and a folder ``IsADirectoryError``, each message saying which
    ``what`` (e.g. "data file", "network file") and the path."""
    p = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    try:  # one stat (os.path.exists and os.path.isdir would make two)
        mode = os.stat(p).st_mode
    except (OSError, ValueError):  # what os.path.exists takes for "no such file"
        raise FileNotFoundError(f"no such {what}: {p!r}") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"the {what} {p!r} is a folder, not a file")
    return p


def entropy_of(random_state: Any) -> int | None:
    """The integer entropy of ``random_state`` (an int, a numpy Generator, a
    ``SeedSequence``, a legacy ``RandomState`` or None), from which a routine spawns its
    independent streams (``numpy.random.SeedSequence``).  A generator is advanced by one
    draw, as scikit-learn's estimators do with theirs."""
    rs = random_state
    if rs is None:
        return None
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(0, 2**63 - 1))
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(rs, np.random.SeedSequence):
        return int(rs.generate_state(1, np.uint64)[0] >> np.uint64(1))
    if isinstance(rs, (int, np.integer)) and not isinstance(rs, bool) and rs < 0:
        raise HyperparameterError(f"random_state must be None, a non-negative integer or a numpy Generator, not {rs!r}")
    if isinstance(rs, (int, np.integer)) and not isinstance(rs, bool):
        return int(rs)
    raise HyperparameterError(f"random_state must be an int, a numpy Generator or None, not {rs!r}")


@dataclass(frozen=True)
class Param:
    """One hyperparameter of an estimator: its constraint, default and doc.

    ``kind`` is ``"int"`` (with ``low``/``high``), ``"float"`` (``low``, and
    ``strict``: whether ``low`` itself is excluded), ``"bool"``, ``"choice"``
    (``choices``), ``"seed"`` (see :func:`check_random_state`), ``"progress"``
    (``None`` or a boolean) or ``"any"``.  ``optional``: ``None`` is accepted (meaning
    the documented default rule); ``also``: literal values accepted besides the kind
    (HDP's ``iterations="auto"``).
    """

    name: str
    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    strict: bool = False
    choices: tuple[Any, ...] = ()
    optional: bool = False
    also: tuple[Any, ...] = ()

    def check(self, value: Any) -> Any:
        """``value`` converted to the parameter's type, or :class:`HyperparameterError`."""
        if value is None and self.optional:
            return None
        if self.also and isinstance(value, str) and value in self.also:
            return value
        if self.kind == "int":
            if self.also and isinstance(value, str):
                raise HyperparameterError(
                    f"{self.name} must be an integer >= {self.low} or one of {self.also}, not {value!r}"
                )
            lo = None if self.low is None else int(self.low)
            hi = None if self.high is None else int(self.high)
            return check_int(self.name, value, low=lo, high=hi)
        if self.kind == "float":
            return self._check_float(value)
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise HyperparameterError(f"{self.name} must be True or False, not {value!r}")
            return bool(value)
        if self.kind == "progress":
            if value is not None and not isinstance(value, (bool, np.bool_)):
                raise HyperparameterError(f"{self.name} must be None, True or False, not {value!r}")
            return value if value is None else bool(value)
        if self.kind == "choice":
            return check_choice(self.name, value, self.choices)
        if self.kind == "seed":
            return check_random_state(value, self.name)
        return value

    def _check_float(self, value: Any) -> float:
        low = 0.0 if self.low is None else float(self.low)
        if low == 0.0 and self.high is None:
            return check_number(self.name, value, strict=self.strict)  # type: ignore[return-value]
        bounds = f"{'>' if self.strict else '>='} {low:g}"
        if self.high is not None:
            bounds += f" and <= {self.high:g}"
        v = _as_float(value, f"{self.name} must be a number {bounds}, not {value!r}")
        bad = not math.isfinite(v) or v < low or (self.strict and v == low)
        if bad or (self.high is not None and v > self.high):
            raise HyperparameterError(f"{self.name} must be {bounds}, not {value!r}")
        return v

    def describe(self) -> str:
        """The constraint in words (for help texts)."""
        if self.kind == "int":
            rng = f"integer >= {int(self.low)}" if self.low is not None else "integer"
            rng += f", <= {int(self.high)}" if self.high is not None else ""
        elif self.kind == "float":
            low = 0.0 if self.low is None else self.low
            rng = f"number {'>' if self.strict else '>='} {low:g}"
            rng += f" and <= {self.high:g}" if self.high is not None else ""
        elif self.kind == "choice":
            rng = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "bool":
            rng = "True or False"
        elif self.kind == "progress":
            rng = "None, True or False"
        elif self.kind == "seed":
            rng = "None, an integer >= 0 or a numpy Generator"
        else:
            rng = "any"
        if self.also:
            rng += " or " + " or ".join(repr(a) for a in self.also)
        if self.optional and self.kind not in ("seed", "progress"):
            rng += " or None"
        return rng


def check_params(params: Sequence[Param], values: dict[str, Any]) -> dict[str, Any]:
    """Every value of ``values`` checked against its declaration in ``params`` (converted
    to the declared type); a name with no declaration raises :class:`HyperparameterError`."""
    decl = {p.name: p for p in params}
    out = {}
    for name, value in values.items():
        if name not in decl:
            raise HyperparameterError(f"no hyperparameter {name!r}; declared: {', '.join(decl) or 'none'}")
        out[name] = decl[name].check(value)
    return out


def progress_bar(enabled: bool | None, total: int | None, desc: str) -> Any:
    """A tqdm bar of ``total`` steps when ``enabled`` (``None``: when standard error is
    a terminal), else ``None``; the caller updates and closes it."""
    import sys

    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def n_workers(n_jobs: int | None, n_items: int) -> int:
    """Threads to use for ``n_items`` tasks: ``n_jobs`` (default: all cores), at most one
    per item, at least one."""
    return max(1, min(n_jobs or os.cpu_count() or 1, n_items))


def parallel_map(fn: Callable[[T], R], items: Iterable[T], n_jobs: int | None) -> list[R]:
    """``[fn(x) for x in items]`` in up to ``n_jobs`` threads (default: all cores),
    results in the items' order; one worker runs in the calling thread."""
    items = list(items)
    workers = n_workers(n_jobs, len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def require_package(module: str, package: str, what: str) -> Any:
    """Import the optional ``module`` or raise an ``ImportError`` saying that ``what``
    needs ``package`` and how to install it (alone, or with the other neighbour through
    the ``interop`` extra)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {package}, which is not installed: pip install {package} "
                          '(or both neighbours: pip install "pybncsmooth[interop]")') from None
