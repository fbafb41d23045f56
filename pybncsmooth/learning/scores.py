"""Scores of a network structure given data, as bnlearn's ``score()`` computes them.

Every score is decomposable: the sum over nodes of a family score of the node's counts
:math:`n_{ijk}` (node :math:`i`, parent configuration :math:`j` of :math:`q_i`, level
:math:`k` of :math:`r_i`; :math:`n_{ij} = \\sum_k n_{ijk}`, :math:`n` rows):

* ``loglik``: :math:`\\sum_{jk} n_{ijk} \\log (n_{ijk} / n_{ij})`;
* ``aic``: loglik :math:`- k\\,(r_i - 1)\\,q_i` (``k`` 1 by default);
* ``bic``: loglik :math:`- k\\,(r_i - 1)\\,q_i` with ``k`` :math:`\\log(n)/2` by default
  (Schwarz 1978);
* ``bde`` (BDeu, Heckerman, Geiger & Chickering 1995): the log marginal likelihood under
  Dirichlet priors of :math:`\\alpha_{ijk} = \\mathrm{iss} / (q_i r_i)`,
  :math:`\\sum_j [\\log\\Gamma(\\alpha_{ij}) - \\log\\Gamma(\\alpha_{ij} + n_{ij})] +
  \\sum_{jk} [\\log\\Gamma(\\alpha_{ijk} + n_{ijk}) - \\log\\Gamma(\\alpha_{ijk})]`,
  :math:`\\alpha_{ij} = \\sum_k \\alpha_{ijk}` (``iss`` 1 by default);
* ``bds`` (Scutari 2016): BDeu with :math:`q_i` replaced by the number of parent
  configurations observed in the data;
* ``k2`` (Cooper & Herskovits 1992): the same with every :math:`\\alpha_{ijk} = 1`;
* ``bhd`` (Azzimonti, Corani & Scutari 2022): the hierarchical Dirichlet score of data
  sets from related domains, :func:`pybncsmooth.learning.bhd.bhd_family`.

The graph prior is uniform (bnlearn's default), so BDe/BDs/K2 are log marginal
likelihoods.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import StructureError
from ..pipeline.structure import resolve_structure
from ._family import FamilyScorer, encode_nodes, score_hyperparameters, use_twins

__all__ = ["score", "make_scorer"]


def make_scorer(data: pd.DataFrame, nodes: list[str], type: str, hyper: dict[str, Any]) -> FamilyScorer:
    """The :class:`~pybncsmooth.learning._family.FamilyScorer` of ``type`` over the columns
    ``nodes`` of ``data`` (for ``bhd``, the domain column is read too)."""
    hyper = dict(hyper)
    if type == "bhd":
        from .bhd import bhd_scorer

        return bhd_scorer(data, nodes, hyper)
    a = score_hyperparameters(type, hyper, len(data))
    M, cards, _ = encode_nodes(data, nodes)
    return FamilyScorer(M, cards, type, a)


def score(structure: Any, data: pd.DataFrame, type: str = "bic", *, by_node: bool = False,
          **hyperparameters: Any) -> float | pd.Series:
    """The score of a network structure given complete categorical data, as bnlearn's
    ``score(x, data, type=, by.node=)``.

    Parameters
    ----------
    structure:
        A :class:`~pybncsmooth.DAG`, a bnlearn model string, a formula, a network file
        or a fitted network (its structure).
    data:
        A data frame holding a categorical column per node (other columns are ignored);
        a Categorical's categories are its levels (unobserved ones included, as R's
        factor levels), and no value may be missing.
    type:
        ``"loglik"``, ``"aic"``, ``"bic"`` (default, as bnlearn's for discrete data),
        ``"bde"``, ``"bds"``, ``"k2"`` or ``"bhd"``; the formulas are in the module's
        documentation.
    by_node:
        Return each node's term (a Series in the structure's node order) instead of
        the sum.
    **hyperparameters:
        ``k`` (AIC, BIC), ``iss`` (BDe, BDs); for BHD ``domain`` (the column naming each
        row's data set) and the model's hyperparameters
        (:func:`pybncsmooth.learning.bhd.bhd_family`).

    Returns
    -------
    float or pandas.Series
        The network's score (larger is better), or the terms by node.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> round(bs.score("[A][S][T|A][L|S][B|S][E|T:L][X|E][D|B:E]", df, type="bde", iss=1), 4)
    -11095.8242
    """
    dag, _ = resolve_structure(structure, [str(c) for c in data.columns] if isinstance(data, pd.DataFrame) else None)
    nodes = dag.nodes
    if not nodes:
        raise StructureError("the structure has no node")
    scorer = make_scorer(data, nodes, type, hyperparameters)
    use_twins(scorer, len(nodes))
    pos = {v: i for i, v in enumerate(nodes)}
    values = np.array([scorer.family(pos[v], [pos[p] for p in dag.parents(v)]) for v in nodes])
    if by_node:
        return pd.Series(values, index=pd.Index(nodes), name=type)
    return float(values.sum())
