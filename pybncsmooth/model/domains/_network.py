"""The domains of a multi-domain :class:`~pybncsmooth.FittedNetwork`: one domain's
network, and a new domain added from a few rows."""

from __future__ import annotations

import warnings
from typing import Any, Mapping

from ...data.levels import level_code, scalar_value
from ...errors import DataError, UnseenDomainError, UnseenDomainWarning
from ...options import Options
from ..cpd import FixedPrefixCPD

__all__ = ["DomainsMixin"]


class DomainsMixin:
    """Domains of a multi-domain fit (part of :class:`FittedNetwork`)."""

    @property
    def domains(self) -> list:
        """Levels of the domain variable (multi-domain fits), else an empty list."""
        return list(self.schema[self.domain]) if self.domain is not None else []

    def for_domain(self, level: Any) -> Any:
        """The network of one domain of a multi-domain fit; ``None``: the population's.

        Its CPDs keep the pooled context trees above the domain, so parent
        configurations unseen in this domain still back off to pooled estimates.  The
        population's network (``level=None``) answers every configuration with its
        pooled tables, as a domain without rows (what rows with no domain, or of a
        domain not fitted, get).  ``level`` names a domain as values name levels
        everywhere (:mod:`pybncsmooth.data.levels`: ``1978`` is the domain ``'1978'``
        of text labels).  A label the network was not fitted with gets the
        population's network too, with an
        :class:`~pybncsmooth.errors.UnseenDomainWarning` (an
        :class:`~pybncsmooth.errors.UnseenDomainError` under ``on_unseen_domain="error"``).
        """
        if self.domain is None:
            raise DataError("this network was not fitted with domain=")
        code = -1 if level is None else level_code(tuple(self.schema[self.domain]), scalar_value(level, "the domain"))
        if code >= 0:
            level = self.schema[self.domain][code]
        elif level is not None:
            if self.options.on_unseen_domain == "error":
                raise UnseenDomainError(self.domain, [level], self.domains)
            warnings.warn(
                f"domain {level!r} of {self.domain!r} was not seen in training: its tables are the "
                "population-level ones (pooled estimates)",
                UnseenDomainWarning,
                stacklevel=2,
            )
        cpds = {n: FixedPrefixCPD(self._cpds[n], [code]) for n in self.nodes}
        info = dict(self.info, domain_level=level)
        out = type(self)(self.dag, self.schema, cpds, estimator=self.estimator, info=info,
                         options=self.options.replace(domain=None))
        out.transformer = self.transformer
        return out

    def adapt(
        self,
        rows: Any,
        domain: Any,
        *,
        column: str | None = None,
        s_domain: float | Mapping[str, float] | None = None,
        new_type: float | None = None,
        **options: Any,
    ) -> Any:
        r"""This network with the domain ``domain`` added (or, if it exists, given more
        rows), the fitted population serving as its prior: no estimator runs again.

        The new domain is a copy of one of the fitted domains (their tables in every
        node at once, as the fit knows them; prior probability ``(1 - new_type) / D``
        each) or a type of its own (``new_type``, default 1/2): drawn around the
        population with the node's shared concentration, or unusual (a concentration
        of its own, the uniform shrinkage prior).  The rows weigh these by their exact
        marginal likelihood jointly over the nodes, and every parent configuration's
        table is the posterior mean, a mixture of Dirichlets: under the new type
        :math:`(n_{yxd} + s' \hat\theta_{x|y}) / (n_{yd} + s')` around the population's
        :math:`\hat\theta_{x|y}` (``s' = s A_y / (s + A_y + 1)``, ``A_y`` the number of
        draws the population knows :math:`\theta_y` by), under a copy of ``e`` the
        posterior of ``e``'s table given the rows
        (:mod:`pybncsmooth.estimators.domains.prior`; Pitman and Yor 1997).  Rows like
        an unusual fitted domain's take its tables, typical ones borrow from the
        population, rows unlike every fitted domain's keep more of their own counts.
        ``new_type=1`` never copies (the smallest worst case against pooling and
        separating, the least gained on average); ``s_domain=`` (a number or ``{node:
        number}``) fixes the concentration toward the population (and never copies);
        maximum likelihood keeps the domain's own frequencies.  The domain level is
        this Dirichlet pooling whatever the estimator of the levels above (``hmd``:
        Azzimonti et al.'s (2019) eq. 8 with the pooled mean fixed).
        :meth:`domain_report` says what the domain was taken for (``p_new``, ``like``).

        Rows of a domain that already exists add to its counts: adapting twice equals
        adapting once with all the rows.  The added domain's leaves are kept beside
        the fitted tree: adapting costs the same whatever the number of fitted domains.
        A network fitted without ``domain=`` adapts too (it is the population; its
        domain column is named ``column``, default ``"domain"``, and :math:`s_D`
        defaults to the node's number of levels).  The other domains' tables are
        unchanged.  ``rows`` holds the nodes' columns (the domain column too, if every
        value is ``domain``); any data source :func:`pybncsmooth.fit` reads.
        ``domain`` names the domain levels as values name levels everywhere
        (:mod:`pybncsmooth.data.levels`): 1978 is the level ``'1978'`` of text levels
        (and a new label joins text levels as text); a new label is one text, whole
        number or boolean, and a missing value, a list, a tuple or another type is
        refused (:class:`~pybncsmooth.errors.DataError`), as is a label of another type
        than number levels.  ``s_domain`` naming a node the network does not have is
        refused (:class:`~pybncsmooth.errors.UnknownNodeError`).  Missing values are
        handled as the fit's ``na`` handled them; under ``na="level"`` a node that had
        no missing value in training counts its rows where it is observed.

        Options (:class:`~pybncsmooth.options.Options`, the ``adapt`` entry point):
        ``weights`` (a column of ``rows`` or one number per row: the new counts are sums
        of weights), ``chunksize`` (``rows`` read from a file), ``on_unseen``
        (``"backoff"``: a level unseen in training is an unobserved cell instead of an
        error; default: the fit's option, as the network's queries).  A network fitted
        with ``discretize=`` cuts numeric columns of ``rows`` into its fitted bins, as
        its queries do.
        """
        from .adapt import adapt_network

        options.setdefault("on_unseen", self.options.on_unseen)
        return adapt_network(self, rows, domain, column=column, s_domain=s_domain, new_type=new_type,
                             options=Options.build("adapt", **options))
