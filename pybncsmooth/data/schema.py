"""Schema: the ordered levels of every categorical variable.

A :class:`Schema` maps each variable name to the tuple of its levels, in a fixed
order.  The order is the order of a pandas ``Categorical``'s categories, of a
file's state list, or (for plain string / integer / boolean columns) the sorted
order of the values seen, never hash order.  Levels are what probability tables
are indexed by: level ``i`` of variable ``X`` is code ``i`` everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..options import NA_LABEL as _NA_LABEL
from ..errors import DataError, SingleLevelError, UnknownNodeError, UnseenLevelError

__all__ = ["Schema", "NA_LABEL", "code_dtype"]

#: Label of the extra level that stands for a missing value under ``na="level"``
#: (declared with the options: :data:`pybncsmooth.options.NA_LABEL`).
NA_LABEL = _NA_LABEL


def code_dtype(n_levels: int) -> np.dtype:
    """The smallest signed integer dtype that holds codes ``-1 .. n_levels - 1``."""
    if n_levels <= np.iinfo(np.int8).max:
        return np.dtype(np.int8)
    if n_levels <= np.iinfo(np.int16).max:
        return np.dtype(np.int16)
    return np.dtype(np.int32)


def _level_key(level: Any) -> tuple[int, Any]:
    """Sort key for inferred levels: values of one type in natural order, NA last."""
    if level == NA_LABEL and isinstance(level, str):
        return (2, "")
    if isinstance(level, (bool, np.bool_)):
        return (0, int(level))
    if isinstance(level, (int, np.integer)):
        return (0, int(level))
    return (1, str(level))


@dataclass(frozen=True)
class Schema:
    """Variable name -> ordered levels.

    Parameters
    ----------
    levels:
        Mapping from variable name to a sequence of distinct levels.
    fixed:
        Variables whose level order was given (a Categorical, a file, the user) and
        must not be re-sorted when schemas of data chunks are merged.  The others
        were inferred from the values and are kept sorted.
    """

    levels: Mapping[str, tuple] = field(default_factory=dict)
    fixed: frozenset = frozenset()

    def __post_init__(self) -> None:
        clean: dict[str, tuple] = {}
        for var, lev in self.levels.items():
            tup = tuple(lev)
            if not all(type(v) is str for v in tup):  # text levels (the usual case) need no conversion
                tup = tuple(_python_scalar(v) for v in tup)
            if len(set(tup)) != len(tup):
                seen: set = set()
                dup = next(v for v in tup if v in seen or seen.add(v))  # type: ignore[func-returns-value]
                raise DataError(f"variable {var!r} lists level {dup!r} more than once")
            clean[str(var)] = tup
        object.__setattr__(self, "levels", clean)
        object.__setattr__(self, "fixed", frozenset(v for v in self.fixed if v in clean))

    # ------------------------------------------------------------------ access
    @property
    def variables(self) -> list[str]:
        """Variable names, in the schema's order."""
        return list(self.levels)

    def __contains__(self, var: object) -> bool:
        return var in self.levels

    def __iter__(self) -> Iterator[str]:
        return iter(self.levels)

    def __len__(self) -> int:
        return len(self.levels)

    def __getitem__(self, var: str) -> tuple:
        try:
            return self.levels[var]
        except KeyError:
            raise UnknownNodeError(var, "in the schema") from None

    def cardinality(self, var: str) -> int:
        """Number of levels of ``var``."""
        return len(self[var])

    def cardinalities(self, variables: Sequence[str]) -> tuple[int, ...]:
        return tuple(len(self[v]) for v in variables)

    def code(self, var: str, level: Any) -> int:
        """The code (0-based index) of ``level`` in ``var``."""
        levels = self[var]
        try:
            return levels.index(_python_scalar(level))
        except ValueError:
            raise UnseenLevelError(var, [level], levels) from None

    def subset(self, variables: Iterable[str]) -> "Schema":
        """The schema restricted to ``variables`` (in that order)."""
        variables = list(variables)
        return Schema._checked({v: self[v] for v in variables}, self.fixed & frozenset(variables))

    @staticmethod
    def _checked(levels: dict, fixed: Iterable[str]) -> "Schema":
        """A schema of levels already checked (taken from schemas): no pass over them
        again (a domain column of a hundred thousand levels)."""
        out = object.__new__(Schema)
        object.__setattr__(out, "levels", levels)
        object.__setattr__(out, "fixed", frozenset(v for v in fixed if v in levels))
        return out

    def with_levels(self, var: str, levels: Sequence[Any], fixed: bool = True) -> "Schema":
        """A copy with ``var``'s levels replaced (or added).  Levels that extend ``var``'s
        own are checked for the new ones alone (a domain added to thousands)."""
        lev = dict(self.levels)
        fx = set(self.fixed)
        (fx.add if fixed else fx.discard)(var)
        old = self.levels.get(var)
        levels = tuple(levels)
        if old is not None and len(levels) > len(old) and levels[: len(old)] == old:
            extra = tuple(_python_scalar(v) for v in levels[len(old):])
            if len(set(extra)) != len(extra) or not set(extra).isdisjoint(old):
                return Schema({**lev, var: levels}, frozenset(fx))  # the full check names the duplicate
            lev[var] = old + extra
            return Schema._checked(lev, fx)
        lev[var] = levels
        return Schema(lev, frozenset(fx))

    def check_min_levels(self, variables: Iterable[str]) -> None:
        """Raise :class:`SingleLevelError` if any of ``variables`` has < 2 levels."""
        for v in variables:
            if len(self[v]) < 2:
                raise SingleLevelError(v, self[v])

    # ------------------------------------------------------------------ merging
    def union(self, other: "Schema") -> "Schema":
        """Merge two schemas (e.g. of two chunks of one data set).

        Inferred levels are united and re-sorted; a fixed order wins over an
        inferred one (the inferred levels must be among its levels); two fixed
        orders are united where they agree on their shared levels (see
        :func:`_unite_orders`: a level missing from one chunk's Categorical, the level
        of missing values present in some chunks only) and refused where they do not.
        """
        out: dict[str, tuple] = {}
        fixed = set()
        for var in list(self.levels) + [v for v in other.levels if v not in self.levels]:
            a = self.levels.get(var)
            b = other.levels.get(var)
            fa, fb = var in self.fixed, var in other.fixed
            if a is None or b is None:
                out[var] = a if b is None else b
                if fa if b is None else fb:
                    fixed.add(var)
                continue
            if fa and fb:
                out[var] = _unite_orders(var, a, b)
                fixed.add(var)
            elif fa or fb:
                keep, other_lev = (a, b) if fa else (b, a)
                extra = [v for v in other_lev if v not in keep]
                if extra:
                    raise UnseenLevelError(var, extra, keep)
                out[var] = keep
                fixed.add(var)
            else:
                out[var] = tuple(sorted(set(a) | set(b), key=_level_key))
        return Schema(out, frozenset(fixed))

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """A JSON-serialisable description (levels as JSON scalars)."""
        return {
            "variables": self.variables,
            "levels": {v: [_json_level(x) for x in lev] for v, lev in self.levels.items()},
            "fixed": sorted(self.fixed),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "Schema":
        return cls({v: tuple(d["levels"][v]) for v in d["variables"]}, frozenset(d.get("fixed", ())))

    def __repr__(self) -> str:
        parts = [f"{v}[{len(l)}]" for v, l in self.levels.items()]
        if len(parts) > 8:
            parts = parts[:8] + [f"... ({len(parts)} variables)"]
        return f"Schema({', '.join(parts)})"


def _unite_orders(var: str, a: tuple, b: tuple) -> tuple:
    """Two given level orders of one variable (two chunks' Categoricals) united.

    Orders that agree on the levels they share are united: the longer one where one
    holds all the other's levels (a chunk declaring ``['no']``, another ``['no', 'yes']``),
    else ``a``'s order followed by ``b``'s new levels.  The level of missing values
    (``na="level"``, present only in the chunks that have missing values) stays last.
    Orders that disagree (``['a', 'b']`` and ``['b', 'a']``) raise :class:`DataError`."""
    if a == b:
        return a
    na = NA_LABEL in a or NA_LABEL in b
    a2 = tuple(v for v in a if v != NA_LABEL)
    b2 = tuple(v for v in b if v != NA_LABEL)
    shared = set(a2) & set(b2)
    if [v for v in a2 if v in shared] != [v for v in b2 if v in shared]:
        raise DataError(
            f"variable {var!r} has levels {list(a)!r} in one part of the data and {list(b)!r} in another, "
            "in different orders; give its Categoricals one order of levels"
        )
    if set(a2) <= set(b2):
        out = b2
    elif set(b2) <= set(a2):
        out = a2
    else:
        out = a2 + tuple(v for v in b2 if v not in shared)
    return out + ((NA_LABEL,) if na else ())


def _python_scalar(v: Any) -> Any:
    """numpy scalars -> Python scalars, so that levels compare and hash simply."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _json_level(v: Any) -> Any:
    if isinstance(v, (str, bool, int, float)) or v is None:
        return v
    return str(v)
