r"""The Bayesian Hierarchical Dirichlet (BHD) score of data sets from related domains
(Azzimonti, Corani & Scutari 2022).

The rows come from :math:`D` related domains (sites, years, users: the ``domain``
column).  One structure is shared; its parameters are not.  For node :math:`X` with
:math:`r` levels and each configuration :math:`j` of its parents, the domains'
conditional distributions are drawn around a shared one, itself uncertain:

.. math::
    \alpha_j \sim s \cdot \mathrm{Dir}(\alpha_0), \qquad
    \theta_{X \mid j, d} \mid \alpha_j \sim \mathrm{Dir}(\alpha_j), \qquad
    n_{\cdot j d} \mid \theta \sim \mathrm{Mult}(\theta_{X \mid j, d}),

the hierarchical Multinomial-Dirichlet model of Azzimonti, Corani & Zaffalon (2019,
Sec. 2.2) with the domains as its columns, one model per parent configuration.  The
family's marginal likelihood :math:`\prod_j p(n_{\cdot j \cdot})` has no closed form;
the BHD score of the family is the sum over configurations of the variational lower
bound :math:`\tilde L` of :math:`\log p(n_{\cdot j \cdot})` (Azzimonti et al. 2019,
Sec. 3.1 and Appendix B.1) at its fixed point, under
:math:`q(\theta_{jd}) = \mathrm{Dir}(\nu_{jd})`,
:math:`q(\alpha_j / s) = \mathrm{Dir}(\tau_j \kappa_j)`:

.. math::
    \mathrm{BHD}(X, \Pi) = \sum_j \max_{\nu, \tau, \kappa}
    \mathrm{E}_q\!\left[\log \frac{p(n_{\cdot j \cdot}, \theta_{j \cdot}, \alpha_j)}
    {q(\theta_{j \cdot})\, q(\alpha_j)}\right] \le \sum_j \log p(n_{\cdot j \cdot}),

in closed form given the variational parameters (digamma and log-gamma terms).  The
likelihood is that of the sequence of rows, as BDeu's, so the two are on one scale.
This is the evidence bound of :mod:`pybncsmooth.estimators.hmd`'s fit of one count
matrix (:func:`~pybncsmooth.estimators.hmd.hmd_evidence`, the same solver), applied to
each parent configuration's ``levels x domains`` table.  A configuration no row shows
adds 0, and a domain without rows in a configuration is left out of its table: it
integrates out of the marginal likelihood exactly, and the bound is tighter without
it.  (The ``hmd`` *fit* with ``domain=`` shrinks each domain's column toward the
configuration's pooled estimate with one concentration per node learned by marginal
likelihood; this score keeps the paper's fixed ``s`` per configuration.)

Defaults as Azzimonti et al. (2019, Sec. 4.1), whose model the score inherits:
``s`` = :math:`r` (the node's number of levels) and ``alpha0`` = 1 for every level.
With one domain the score is a hierarchical-prior marginal likelihood close to (and
below) K2's (every :math:`\alpha_{jk} = 1`) when ``s = r``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..counting.family import family_counts
from ..errors import DataError, HyperparameterError, MissingColumnError
from ..estimators.hmd import hmd_evidence
from ..validation import check_number
from ._family import FamilyScorer, encode_nodes

__all__ = ["bhd_scorer", "bhd_family"]

#: the Newton decrement (nats) below which the maximisation of a configuration's bound takes
#: its last step, and its most steps: on alarm's families (5 domains) the score then agrees
#: with the maximum found at 1e-13 to 3e-11 nats, and a configuration stopped by the cap
#: still gives a lower bound (every value of the variational parameters does)
_TOL = 1e-6
_MAX_ITER = 100


def bhd_family(counts: np.ndarray, s: float | None = None, alpha0: float = 1.0) -> float:
    """The BHD score of one family from its ``(q, D, r)`` counts (parent configuration,
    domain, level of the node): the sum over configurations of the variational bound
    of the module's model (``s`` defaults to ``r``)."""
    counts = np.asarray(counts, dtype=np.float64)
    r = counts.shape[2]
    return hmd_evidence(counts, float(r if s is None else s), alpha0, tol=_TOL, max_iter=_MAX_ITER)


def bhd_scorer(data: pd.DataFrame, nodes: Sequence[str], hyper: dict[str, Any]) -> FamilyScorer:
    """A :class:`~pybncsmooth.learning._family.FamilyScorer` of BHD over the columns
    ``nodes``, the domains read from the column ``hyper["domain"]``."""
    domain = hyper.get("domain")
    if domain is None:
        raise HyperparameterError("the bhd score needs domain=, the column naming each row's data set")
    domain = str(domain)
    if domain in nodes:
        raise DataError(f"the domain column {domain!r} cannot also be a node of the structure")
    if isinstance(data, pd.DataFrame) and domain not in [str(c) for c in data.columns]:
        raise MissingColumnError(domain, "domain", [str(c) for c in data.columns])
    s = hyper.get("s")
    s = None if s is None else float(check_number("s", s))
    alpha0 = float(check_number("alpha0", hyper.get("alpha0", 1.0)))
    M, cards, _ = encode_nodes(data, [*nodes, domain])
    dcol = len(nodes)
    n_domains = int(cards[dcol])
    cards_list = [int(c) for c in cards]

    def table(child: int, parents: tuple[int, ...]) -> float:
        t = family_counts(M, child, [*parents, dcol], cards_list)
        q = t.shape[0] // n_domains
        return bhd_family(t.reshape(q, n_domains, cards_list[child]), s, alpha0)

    return FamilyScorer(M, cards, "bhd", 0.0, table=table)
