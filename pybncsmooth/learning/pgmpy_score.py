"""Our structure scores as pgmpy structure scores, for pgmpy's own searches.

:func:`pgmpy_score` wraps any score of :func:`pybncsmooth.score` (``"bhd"``, the
hierarchical score of data sets from related domains that pgmpy lacks, and ``"bde"``,
``"bds"``, ``"k2"``, ``"bic"``, ``"aic"``, ``"loglik"`` with bnlearn's definitions) in an
object that pgmpy's hill climbing takes as its ``scoring_method``: the legacy
``pgmpy.estimators.HillClimbSearch(data).estimate(scoring_method=...)`` and the newer
``pgmpy.causal_discovery.HillClimbSearch(scoring_method=...).fit(data)`` alike (the
object is an instance of both of pgmpy's base classes, ``StructureScore`` and
``BaseStructureScore``, where the installed pgmpy has them).

Its ``local_score(variable, parents)`` is the family term of
:func:`pybncsmooth.score(..., by_node=True) <pybncsmooth.learning.scores.score>`: the
rows are encoded once, each family counted by the compiled counting and cached by the
child and the set of its parents (every score here ignores the parents' order).

The domain column of ``bhd`` is read by the score and is never a node: give pgmpy's
search the data without it, ``HillClimbSearch(df.drop(columns="site"))``; a search that
asks the score about the domain column gets a :class:`~pybncsmooth.errors.DataError`
that says so.

pgmpy is optional: importing :mod:`pybncsmooth` (or this module) does not import it;
:func:`pgmpy_score` imports it and raises an ``ImportError`` naming the package to
install when it is missing.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import pandas as pd

from ..errors import DataError, StructureError, UnknownNodeError
from ..validation import require_package

__all__ = ["pgmpy_score"]


#: the score classes built on the installed pgmpy's bases (made at the first call)
_CLASSES: dict[tuple[type, ...], type] = {}


def _bases() -> tuple[type, ...]:
    """pgmpy's structure score base classes: ``pgmpy.estimators.StructureScore`` (the
    legacy searches; removed in pgmpy 1.3) and ``pgmpy.structure_score.BaseStructureScore``
    (pgmpy >= 1.1), whichever exist."""
    require_package("pgmpy", "pgmpy", "a pgmpy structure score")
    import importlib
    import warnings

    bases = []
    for module, name in (("pgmpy.estimators", "StructureScore"), ("pgmpy.structure_score", "BaseStructureScore")):
        try:
            with warnings.catch_warnings():  # the legacy module warns of its removal when first imported
                warnings.simplefilter("ignore", FutureWarning)
                mod = importlib.import_module(module)
        except ImportError:
            continue
        cls = getattr(mod, name, None)
        if isinstance(cls, type):
            bases.append(cls)
    if not bases:
        raise ImportError("the installed pgmpy has no structure score base class (pgmpy.estimators.StructureScore "
                          "or pgmpy.structure_score.BaseStructureScore): pip install -U pgmpy")
    return tuple(bases)


def _score_class(bases: tuple[type, ...]) -> type:
    cls = _CLASSES.get(bases)
    if cls is not None:
        return cls

    def __init__(self: Any, data: pd.DataFrame, score_type: str, hyper: dict[str, Any]) -> None:
        from .scores import make_scorer  # numba's kernels: loaded when a score is made

        if not isinstance(data, pd.DataFrame):
            raise DataError(f"a pgmpy structure score takes a pandas DataFrame, not a {type(data).__name__}")
        domain = hyper.get("domain") if score_type == "bhd" else None
        labels = [c for c in data.columns if str(c) != (None if domain is None else str(domain))]
        nodes = [str(c) for c in labels]
        if len(set(nodes)) != len(nodes):
            raise StructureError("the data has two columns of one name")
        self.type = score_type
        self.hyperparameters = dict(hyper)
        self.domain = None if domain is None else str(domain)
        self.nodes = nodes
        self._scorer = make_scorer(data, nodes, score_type, hyper)
        self._index: dict[Hashable, int] = {}
        for i, (label, name) in enumerate(zip(labels, nodes)):
            self._index[name] = i
            self._index[label] = i
        # pgmpy's bases keep the data, its variables and state names: give them the nodes only
        bases[0].__init__(self, data[labels])
        if len(bases) > 1 and not hasattr(self, "_cached_local_score"):
            self._cached_local_score = self._local_score

    def _position(self: Any, v: Hashable) -> int:
        i = self._index.get(v)
        if i is None:
            i = self._index.get(str(v))
        if i is not None:
            return i
        if self.domain is not None and str(v) == self.domain:
            raise DataError(f"the domain column {self.domain!r} is not a node: give pgmpy's search the data without "
                            f"it (HillClimbSearch(data.drop(columns={self.domain!r})))")
        raise UnknownNodeError(str(v), "(not a column of the data the score was made from)")

    def local_score(self: Any, variable: Hashable, parents: Sequence[Hashable]) -> float:
        """The family term of ``variable`` given ``parents`` (any order), as
        ``pybncsmooth.score(..., by_node=True)`` gives it."""
        return self._scorer.family(self._position(variable), [self._position(p) for p in parents])

    def __repr__(self: Any) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.hyperparameters.items())
        return f"pgmpy_score(type={self.type!r}{extra}; {len(self.nodes)} nodes)"

    cls = type("PyBNCSmoothScore", bases, {
        "__doc__": "A pybncsmooth structure score for pgmpy's searches (made by pybncsmooth.learning.pgmpy_score).",
        "__module__": __name__,
        "__init__": __init__,
        "_position": _position,
        "local_score": local_score,
        "_local_score": local_score,
        "__repr__": __repr__,
    })
    _CLASSES[bases] = cls
    return cls



def pgmpy_score(data: pd.DataFrame, type: str = "bhd", **hyperparameters: Any) -> Any:
    r"""A pybncsmooth structure score as a pgmpy structure score.

    Parameters
    ----------
    data:
        The rows (a data frame of categorical columns without missing values, the
        ``domain`` column of ``bhd`` included); every other column is a node.
    type:
        A score of :func:`pybncsmooth.score`: ``"bhd"`` (default; needs ``domain=``),
        ``"bde"``, ``"bds"``, ``"k2"``, ``"bic"``, ``"aic"``, ``"loglik"``.
    **hyperparameters:
        The score's (``domain``, ``s``, ``alpha0`` for BHD; ``iss`` for BDe/BDs; ``k``
        for AIC/BIC), as :func:`pybncsmooth.score` takes them.

    Returns
    -------
    object
        An instance of pgmpy's structure score base classes whose
        ``local_score(variable, parents)`` is the family's term of the score: for BHD
        (Azzimonti, Corani & Scutari 2022) the sum over the parents' configurations of
        the variational lower bound of the log marginal likelihood of the
        ``levels x domains`` counts under the hierarchical Dirichlet model
        (:mod:`pybncsmooth.learning.bhd`); for BDeu
        :math:`\sum_j [\log\Gamma(\alpha_{ij}) - \log\Gamma(\alpha_{ij} + n_{ij}) +
        \sum_k (\log\Gamma(\alpha_{ijk} + n_{ijk}) - \log\Gamma(\alpha_{ijk}))]` with
        :math:`\alpha_{ijk} = \mathrm{iss}/(q_i r_i)`.

    Raises
    ------
    ImportError
        pgmpy is not installed.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> from pybncsmooth.learning.pgmpy_score import pgmpy_score
    >>> from pgmpy.estimators import HillClimbSearch                # doctest: +SKIP
    >>> df = bs.load_dataset("asia")
    >>> df["site"] = ["a", "b"] * (len(df) // 2)
    >>> score = pgmpy_score(df, "bhd", domain="site")               # doctest: +SKIP
    >>> dag = HillClimbSearch(df.drop(columns="site")).estimate(
    ...     scoring_method=score, show_progress=False)               # doctest: +SKIP
    """
    return _score_class(_bases())(data, type, hyperparameters)
