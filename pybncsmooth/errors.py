"""Exception types raised by pybncsmooth.

Every error names what is wrong: the variable, level, node, file line or
hyperparameter.  All of them derive from :class:`PyBNCSmoothError`, and each also
derives from the closest built-in exception (``ValueError``, ``KeyError``,
``TypeError``) so that generic ``except ValueError`` handlers keep working.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = [
    "PyBNCSmoothError",
    "DataError",
    "EmptyDataError",
    "DuplicateColumnError",
    "MissingColumnError",
    "NonCategoricalError",
    "MissingValueError",
    "UnseenLevelError",
    "UndeclaredLevelError",
    "SingleLevelError",
    "TooManyLevelsError",
    "ParseError",
    "StructureError",
    "CycleError",
    "UnknownNodeError",
    "DuplicateNodeError",
    "ModelStringError",
    "FormulaError",
    "FileFormatError",
    "HyperparameterError",
    "UnknownDatasetError",
    "DenseTableTooLargeError",
    "StatisticUnavailableError",
    "ImpossibleEvidenceError",
    "FactorBudgetError",
    "ZeroProbabilityWarning",
    "ConvergenceWarning",
    "UnseenDomainWarning",
    "UnseenDomainError",
    "NoDomainColumnError",
    "ClassRelabellingWarning",
]


class PyBNCSmoothError(Exception):
    """Base class of every error raised on purpose by pybncsmooth."""


# --------------------------------------------------------------------------- data


class DataError(PyBNCSmoothError, ValueError):
    """The data cannot be used as given."""


class EmptyDataError(DataError):
    """The data frame (or every chunk of it) has no rows."""


class DuplicateColumnError(DataError):
    """Two columns of the data frame share a name."""

    def __init__(self, column: str):
        self.column = column
        super().__init__(f"column {column!r} appears more than once in the data")


class MissingColumnError(DataError, KeyError):
    """A variable of the network (a node or a parent) is not a column of the data."""

    def __init__(self, column: str, role: str = "variable", available: Sequence[str] = ()):
        self.column = column
        self.role = role
        hint = ""
        if available:
            shown = ", ".join(repr(c) for c in list(available)[:12])
            more = "" if len(available) <= 12 else f", ... ({len(available)} columns)"
            hint = f"; the data has {shown}{more}"
        super().__init__(f"{column!r} ({role}) is not a column of the data{hint}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class NonCategoricalError(DataError, TypeError):
    """A column is not categorical (floats, dates, ...) and no discretiser was given."""

    def __init__(self, column: str, dtype: Any, hint: str = ""):
        self.column = column
        self.dtype = dtype
        msg = (
            f"column {column!r} has dtype {dtype}, which is not categorical; "
            "discretise it first or convert it to a pandas Categorical"
        )
        super().__init__(msg + (f" ({hint})" if hint else ""))


class MissingValueError(DataError):
    """A missing value was found under ``na="error"``."""

    def __init__(self, column: str, count: int, first_row: Any = None):
        self.column = column
        self.count = count
        where = "" if first_row is None else f" (first at row {first_row!r})"
        super().__init__(
            f"column {column!r} has {count} missing value(s){where}; choose "
            'na="level" (missing is its own level), na="drop" (drop incomplete rows) '
            'or na="available" (per node, use the rows where it and its parents are observed)'
        )


_BACKOFF_HINT = 'pass on_unseen="backoff" to back off instead'


class UnseenLevelError(DataError, KeyError):
    """A value of a variable is not one of the levels it was fitted with."""

    def __init__(self, column: str, levels: Sequence[Any], known: Sequence[Any] = (), hint: str | None = None):
        self.column = column
        self.levels = list(levels)
        self.known = list(known)
        shown = ", ".join(repr(v) for v in self.levels[:5])
        more = "" if len(self.levels) <= 5 else f" and {len(self.levels) - 5} more"
        known_txt = ""
        if known:
            known_txt = "; known levels: " + ", ".join(repr(v) for v in list(known)[:10])
            if len(known) > 10:
                known_txt += ", ..."
        super().__init__(
            f"variable {column!r} has level(s) {shown}{more} not seen when the model "
            f"was fitted{known_txt} ({hint or _BACKOFF_HINT})"
        )

    def __str__(self) -> str:
        return str(self.args[0])


_DOMAIN_HINT = ('on_unseen_domain="warn" answers them with the population-level tables; net.adapt(rows, domain=...) '
                "adds a domain")


class UnseenDomainError(UnseenLevelError):
    """Rows or a query without a fitted domain, refused (``on_unseen_domain="error"``):
    a domain the network was not fitted with, or no domain at all (no domain column, a
    missing domain value, a query without ``domain=``), which ``what`` then says."""

    def __init__(self, column: str, levels: Sequence[Any], known: Sequence[Any] = (), what: str | None = None):
        if what is None:
            super().__init__(column, levels, known, hint=_DOMAIN_HINT)
            return
        self.column = column
        self.levels = list(levels)
        self.known = list(known)
        shown = ", ".join(repr(v) for v in self.known[:10]) + (", ..." if len(self.known) > 10 else "")
        DataError.__init__(self, f"{what}; the fitted domains of {column!r} are {shown} ({_DOMAIN_HINT})")


class NoDomainColumnError(UnseenDomainError, MissingColumnError):
    """Rows without the domain column of a multi-domain fit, refused
    (``on_unseen_domain="error"``): an :class:`UnseenDomainError` that is also a
    :class:`MissingColumnError` (what it was before the domain errors were one)."""

    def __init__(self, column: str, known: Sequence[Any] = ()):
        self.role = "domain"
        UnseenDomainError.__init__(self, column, [], known,
                                   what=f"the rows have no domain: {column!r} (domain) is not a column of the data")


class UndeclaredLevelError(UnseenLevelError):
    """A value of the data is not a level the network file (BIF, DSC, NET, .rds) declares."""

    def __init__(self, column: str, levels: Sequence[Any], declared: Sequence[Any] = ()):
        self.column = column
        self.levels = list(levels)
        shown = ", ".join(repr(v) for v in self.levels[:5])
        more = "" if len(self.levels) <= 5 else f" and {len(self.levels) - 5} more"
        decl = ", ".join(repr(v) for v in list(declared)[:10]) + (", ..." if len(declared) > 10 else "")
        DataError.__init__(
            self,
            f"variable {column!r} has level(s) {shown}{more} that the network's declared levels do not include "
            f"(declared: {decl}); fix the data or declare the level",
        )


class SingleLevelError(DataError):
    """A variable of the network has fewer than two levels."""

    def __init__(self, column: str, levels: Sequence[Any], message: str | None = None):
        self.column = column
        super().__init__(
            message
            or f"variable {column!r} has {len(levels)} level(s) ({list(levels)!r}); "
            "a node of a discrete network needs at least two"
        )


class TooManyLevelsError(DataError):
    """A column has so many distinct values that it is unlikely to be categorical."""

    def __init__(self, column: str, n_levels: int, max_levels: int):
        self.column = column
        super().__init__(
            f"column {column!r} has {n_levels} distinct values (more than max_levels="
            f"{max_levels}); if it really is categorical, make it a pandas Categorical "
            "or raise max_levels"
        )


# ---------------------------------------------------------------------- structure


class ParseError(PyBNCSmoothError, ValueError):
    """Text that cannot be parsed: a model string or formula (the character is named) or a
    BIF / DSC / NET / native file (the line is named)."""


class StructureError(PyBNCSmoothError, ValueError):
    """The network structure is not a valid DAG."""


class CycleError(StructureError):
    """The graph has a directed cycle."""

    def __init__(self, cycle: Sequence[str]):
        self.cycle = list(cycle)
        path = " -> ".join(self.cycle + self.cycle[:1])
        super().__init__(f"the graph has a cycle: {path}")


class UnknownNodeError(StructureError, KeyError):
    """A node name is not part of the network."""

    def __init__(self, node: str, context: str = ""):
        self.node = node
        super().__init__(f"unknown node {node!r}" + (f" {context}" if context else ""))

    def __str__(self) -> str:
        return str(self.args[0])


class DuplicateNodeError(StructureError):
    """A node is declared twice, or a parent is listed twice."""

    def __init__(self, node: str, context: str = ""):
        self.node = node
        super().__init__(f"node {node!r} is declared more than once" + (f" {context}" if context else ""))


class ModelStringError(StructureError, ParseError):
    """A bnlearn model string is malformed."""

    def __init__(self, message: str, modelstring: str, position: int | None = None):
        self.modelstring = modelstring
        self.position = position
        where = ""
        if position is not None:
            lo = max(0, position - 15)
            snippet = modelstring[lo : position + 15]
            where = f" at character {position + 1} (near {snippet!r})"
        super().__init__(f"malformed model string{where}: {message}")


class FormulaError(StructureError, ParseError):
    """A node formula such as ``"D ~ A + C"`` is malformed."""

    def __init__(self, message: str, formula: str):
        self.formula = formula
        super().__init__(f"malformed formula {formula!r}: {message}")


# -------------------------------------------------------------------------- files


class FileFormatError(ParseError):
    """A BIF / DSC / NET / native file cannot be parsed."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
        if line is not None:
            where += f"{':' if where else 'line '}{line}"
        super().__init__(f"{where}: {message}" if where else message)


# ------------------------------------------------------------------ estimation


class UnknownDatasetError(DataError, KeyError):
    """A data set name :func:`~pybncsmooth.load_dataset` does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class HyperparameterError(PyBNCSmoothError, ValueError):
    """An estimator got an unknown or invalid hyperparameter."""


class DenseTableTooLargeError(PyBNCSmoothError, MemoryError):
    """Materialising a dense CPT over all parent configurations would be too large."""

    def __init__(self, node: str, cells: int, limit: int, what: str | None = None, hint: str | None = None):
        self.node = node
        self.cells = cells
        what = what or f"the dense table of node {node!r}"
        hint = hint or (
            "query it row by row (logpdf / predict_proba / cpt_frame(observed_only=True)) or raise max_cells"
        )
        super().__init__(f"{what} would have {cells:,} cells (limit {limit:,}); {hint}")


class StatisticUnavailableError(PyBNCSmoothError, ValueError):
    """A statistic (e.g. the posterior sd of a CPT entry) that the estimator cannot give."""

    def __init__(self, stat: str, method: str | None, node: str | None = None, reason: str | None = None):
        self.stat = stat
        self.method = method
        where = f" of node {node!r}" if node else ""
        if not method:  # fixed tables: read from a file (or one draw of a posterior)
            super().__init__(
                f"no posterior {stat}{where}: a table read from a file is fixed (a BIF, DSC, NET or .rds file keeps "
                "the tables only, not the posterior they were estimated with: tables alone do not say how many rows "
                "stand behind them); fit the network from data (every estimator gives intervals) and save it in the "
                "native format (.pbn), which keeps the posterior"
            )
            return
        why = reason or _NO_POSTERIOR.get(method, "")
        if reason:
            advice = ""  # the reason says what to do
        elif method in _NO_POSTERIOR:
            advice = ": use a hierarchical Bayesian estimator ('hdp', 'hmd', 'hls-bayes')"
        else:
            advice = ": fit the network from data (every estimator gives intervals), or read it from a .pbn file"
        kind = "" if method in _NO_POSTERIOR else "posterior "
        super().__init__(f"method {method!r} gives no {kind}{stat}{where}" + (f" ({why})" if why else "") + advice)


class ImpossibleEvidenceError(DataError):
    """The evidence of a query has probability zero under the network: the posterior
    given it is undefined."""


class FactorBudgetError(DataError, MemoryError):
    """Exact inference would build a factor larger than the memory budget of a query
    (the option ``max_factor_bytes``)."""

    def __init__(self, cells: int, budget: int, variable: str | None, targets: list):
        self.cells, self.budget, self.variable = cells, budget, variable
        what = (f"summing out {variable!r}" if variable is not None
                else f"the joint posterior of {targets}")
        super().__init__(
            f"exact inference needs a factor of {cells:,} cells ({_bytes(8 * cells)}) for {what}, more than "
            f"max_factor_bytes={budget:,} ({_bytes(budget)}) allows: raise max_factor_bytes (an option of fit, "
            "BNClassifier and query), or ask for an approximate answer with its Monte Carlo error "
            "(query(..., method='approximate'))"
        )


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


#: why an estimator without a posterior has no uncertainty where it has none: its
#: bootstrap over rows covers single-domain fits only
_NO_POSTERIOR = {
    m: "its uncertainty is a bootstrap over rows of one data set, which a multi-domain fit does not offer"
    for m in ("mle", "mestimate", "hls", "mbranch", "hgs")
}


# ----------------------------------------------------------------------- warnings


class ZeroProbabilityWarning(UserWarning):
    """Some rows have probability zero under every value of the target."""


class ConvergenceWarning(UserWarning):
    """An iterative estimator stopped at its iteration cap before converging."""


class UnseenDomainWarning(UserWarning):
    """A domain absent from the training data: its rows get the population-level CPTs."""


class ClassRelabellingWarning(UserWarning):
    """A feature is the class under another name on the training rows (leakage, or chance
    on a tiny sample): predictions will rest on it."""
