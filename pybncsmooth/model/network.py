"""FittedNetwork: a DAG, the levels of its variables and one CPD per node."""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..counting.context_tree import mixed_radix
from ..data.encode import EncodedData, encode
from ..data.schema import NA_LABEL, Schema
from ..data.sources import as_source
from ..errors import (
    DataError,
    EmptyDataError,
    MissingColumnError,
    StatisticUnavailableError,
    UnknownNodeError,
    UnseenDomainWarning,
    ZeroProbabilityWarning,
)
from ..structure.dag import DAG
from ..validation import check_int, check_probability, check_random_state
from .draws import entry_intervals
from .cpd import CPD, DEFAULT_MAX_CELLS, QUERY_DENSE_CELLS, DomainLastCPD, FixedPrefixCPD, TreeCPD
from .formats import network_format
from .inference import log_marginal
from .query import map_query as _map_query
from .query import query as _query
from .query_batch import log_posterior_rows
from .plotting import plot_cpt, plot_shrinkage

__all__ = ["FittedNetwork"]


class FittedNetwork:
    """A discrete Bayesian network with estimated conditional probability tables.

    Built by :func:`pybncsmooth.fit` or read by :func:`pybncsmooth.read_network`.

    Parameters
    ----------
    dag:
        The structure; ``dag.parents(node)`` is the axis order of ``cpt(node)``.
    schema:
        Levels of every node (and of the domain variable, if any).
    cpds:
        Node -> :class:`~pybncsmooth.model.cpd.CPD`, conditioning on
        ``domain`` (if any) followed by the node's parents.
    domain:
        The domain variable of a multi-domain fit (a split of every
        context tree), or ``None``.
    info:
        Fit metadata: ``method``, ``hyperparameters``, ``n_rows``, ``n_dropped``, ``na``.
    """

    def __init__(
        self,
        dag: DAG,
        schema: Schema,
        cpds: Mapping[str, CPD],
        *,
        domain: str | None = None,
        estimator: Any = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.dag = dag
        self.domain = domain
        self._prefix: tuple[str, ...] = (domain,) if domain is not None else ()
        self.schema = schema.subset(list(self._prefix) + dag.nodes)
        self.estimator = estimator
        self.info = dict(info or {})
        #: optional transformer (e.g. a discretiser) applied to data before every query
        self.transformer: Any = None
        missing = [n for n in dag.nodes if n not in cpds]
        if missing:
            raise UnknownNodeError(missing[0], "has no CPD")
        self._cpds: dict[str, CPD] = {}
        for n in dag.nodes:
            cpd = cpds[n]
            expected = self._prefix + tuple(dag.parents(n))
            if tuple(cpd.parents) != expected:
                raise ValueError(f"CPD of {n!r} conditions on {list(cpd.parents)}, expected {list(expected)}")
            if cpd.card != self.schema.cardinality(n) or cpd.parent_cards != self.schema.cardinalities(expected):
                raise ValueError(f"CPD of {n!r} does not match the levels of the schema")
            self._cpds[n] = cpd

    # ------------------------------------------------------------------ structure
    @property
    def nodes(self) -> list[str]:
        """Node names in node order."""
        return self.dag.nodes

    def parents(self, node: str) -> list[str]:
        """Parents of ``node`` in CPT axis order (the domain is not a parent)."""
        return self.dag.parents(node)

    def children(self, node: str) -> list[str]:
        return self.dag.children(node)

    def levels(self, var: str) -> list:
        """Levels of a variable, in code order."""
        return list(self.schema[var])

    @property
    def method(self) -> str | None:
        return self.info.get("method")

    @property
    def n_rows(self) -> int | None:
        return self.info.get("n_rows")

    def modelstring(self) -> str:
        """The bnlearn model string of the structure."""
        return self.dag.modelstring()

    def cpd(self, node: str) -> CPD:
        """The CPD object of ``node``."""
        if node not in self._cpds:
            raise UnknownNodeError(node, "in the network")
        return self._cpds[node]

    def tree(self, node: str):
        """The :class:`~pybncsmooth.counting.ContextTree` of ``node`` (fitted networks only)."""
        cpd = self.cpd(node)
        if not isinstance(cpd, (TreeCPD, DomainLastCPD)):
            raise DataError(f"node {node!r} has a dense table, not a context tree (the network was read from a file)")
        return cpd.tree

    # ------------------------------------------------------------------ tables
    def cpt(self, node: str, *, stat: str = "mean", max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
        """Dense CPT of ``node`` with axes ``(node, *parents)`` in level order (bnlearn's
        layout); a multi-domain fit adds the domain as the last axis, as bnlearn's ``hdir``.

        Parent configurations absent from the data are filled by the estimator's
        rule (back-off to the deepest observed ancestor, uniform for ``bayes``, the
        population-level CPT for domain-pooled ``hmd``).

        ``stat="sd"``: the posterior standard deviation of every entry instead of
        the posterior mean (``bayes``, ``hdp``, ``hmd``, ``hls-bayes`` and their
        multi-domain fits); an unseen parent configuration's is the hierarchy's
        predictive spread around the node it backs off to.  A method that gives none
        (``mle``, ``mestimate``, ``hls``, ``hgs``, ``mbranch``, tables read from
        BIF/DSC/NET) raises :class:`~pybncsmooth.errors.StatisticUnavailableError`
        naming it and why.
        """
        cpd = self.cpd(node)
        max_cells = check_int("max_cells", max_cells, low=0)
        if stat == "sd" and not cpd.has_sd:
            raise StatisticUnavailableError("standard deviation", self.method, node)
        t = cpd.table(max_cells, stat)
        if self._prefix:
            k = len(self._prefix)
            t = np.moveaxis(t, list(range(1, 1 + k)), list(range(t.ndim - k, t.ndim)))
        return t

    def table_dims(self, node: str) -> list[str]:
        """The axes of :meth:`cpt`: the node, its parents, and the domain (multi-domain fits)."""
        return [node] + self.parents(node) + list(self._prefix)

    def cpt_frame(
        self,
        node: str,
        *,
        wide: bool = False,
        interval: float | None = None,
        draws: int = 1000,
        random_state: Any = 0,
        max_cells: int = DEFAULT_MAX_CELLS,
    ) -> pd.DataFrame:
        """The CPT of ``node`` as a labelled data frame.

        Tidy (default): one row per cell with columns ``node, *parents, "prob"``,
        the node varying fastest (as R's ``as.data.frame()`` of a ``bn.fit`` table).
        ``wide=True``: one row per parent configuration (a MultiIndex) and one
        column per level of ``node``.

        ``interval=0.95`` (tidy only) adds the columns ``sd``, ``lower`` and
        ``upper``: the posterior standard deviation of each entry and its equal-tailed
        credible interval, a statement about the true value (a 90% interval covers
        it about 90% of the time when the data come from the model, unseen parent
        configurations included: see :mod:`pybncsmooth.model.draws`).  For ``bayes``
        the exact Beta marginal of the Dirichlet posterior; for the hierarchical
        estimators (``hdp``, ``hmd``, ``hls-bayes``, domain fits) quantiles of
        ``draws`` joint posterior draws seeded by ``random_state``.  Such posteriors
        can be very skewed (a level never observed along a configuration's path has
        most of its mass near 0), and then the mean can lie outside the
        equal-tailed interval.  Methods without a posterior raise
        :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        """
        t = self.cpt(node, max_cells=max_cells)
        dims = self.table_dims(node)
        if interval is not None:
            if wide:
                raise ValueError("interval= needs the tidy layout (wide=False)")
            interval = check_probability("interval", interval)
            draws = check_int("draws", draws, low=0)
            sd = self.cpt(node, stat="sd", max_cells=max_cells)
        if wide:
            m = np.moveaxis(t, 0, -1).reshape(-1, t.shape[0])
            if len(dims) > 1:
                idx = pd.MultiIndex.from_product(
                    [pd.CategoricalIndex(self.schema[d], categories=self.schema[d], name=d) for d in dims[1:]]
                )
            else:
                idx = pd.RangeIndex(1)
            cols = pd.CategoricalIndex(self.schema[node], categories=self.schema[node], name=node)
            return pd.DataFrame(m, index=idx, columns=cols)
        shape = t.shape
        grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
        data = {}
        for d, g in zip(dims, grids):
            codes = g.reshape(-1, order="F")
            data[d] = pd.Categorical.from_codes(codes, categories=list(self.schema[d]))
        data["prob"] = t.reshape(-1, order="F")
        if interval is not None:
            sdv = sd.reshape(-1, order="F")
            data["sd"] = sdv
            lo, hi = entry_intervals(self, node, t, sd, float(interval), draws, random_state)
            data["lower"], data["upper"] = lo.reshape(-1, order="F"), hi.reshape(-1, order="F")
        return pd.DataFrame(data)

    # ------------------------------------------------------------------ domains
    @property
    def domains(self) -> list:
        """Levels of the domain variable (multi-domain fits), else an empty list."""
        return list(self.schema[self.domain]) if self.domain is not None else []

    def for_domain(self, level: Any) -> "FittedNetwork":
        """The network of one domain of a multi-domain fit.

        Its CPDs keep the pooled context trees above the domain, so parent
        configurations unseen in this domain still back off to pooled estimates.
        """
        if self.domain is None:
            raise DataError("this network was not fitted with domain=")
        if level in set(self.schema[self.domain]):
            code = self.schema.code(self.domain, level)
        else:
            warnings.warn(
                f"domain {level!r} of {self.domain!r} was not seen in training: its tables are the "
                "population-level ones (pooled estimates)",
                UnseenDomainWarning,
                stacklevel=2,
            )
            code = -1
        cpds = {n: FixedPrefixCPD(self._cpds[n], [code]) for n in self.nodes}
        info = dict(self.info, domain_level=level)
        out = FittedNetwork(self.dag, self.schema, cpds, estimator=self.estimator, info=info)
        out.transformer = self.transformer
        return out

    def adapt(
        self,
        rows: Any,
        domain: Any,
        *,
        column: str | None = None,
        s_domain: float | Mapping[str, float] | None = None,
    ) -> "FittedNetwork":
        r"""This network with the domain ``domain`` added (or, if it exists, given more
        rows), the fitted population serving as its prior: no estimator runs again.

        For each node and parent configuration ``y`` seen in ``rows``, the domain's
        table is :math:`(n_{yxd} + s_D \hat	heta_{x|y}) / (n_{yd} + s_D)` around the
        population's :math:`\hat	heta_{x|y}` with the node's domain concentration
        :math:`s_D` learned by the fit (``s_domain=`` a number or ``{node: number}``
        overrides it; maximum likelihood keeps the domain's own frequencies); the
        other configurations back off to the population's tables.  For ``hmd`` this is
        the posterior of paper 001's eq. 8 with the pooled mean fixed, for ``hdp`` a
        Dirichlet process with the population's posterior mean as base measure.

        Rows of a domain that already exists add to its counts: adapting twice equals
        adapting once with all the rows.  A network fitted without ``domain=`` adapts
        too (it is the population; its domain column is named ``column``, default
        ``"domain"``, and :math:`s_D` defaults to the node's number of levels).  The
        other domains' tables are unchanged.  ``rows`` holds the nodes' columns (the
        domain column too, if every value is ``domain``); any data source
        :func:`pybncsmooth.fit` reads.  ``domain`` matches the domain levels as
        :meth:`predict_proba` matches values: 1978 is the level ``'1978'`` of text
        levels (and a new label joins text levels as text); a label of another type
        than number levels is refused.  ``s_domain`` naming a node the network does not
        have is refused (:class:`~pybncsmooth.errors.UnknownNodeError`).  Missing
        values are handled as the fit's ``na`` handled them; under ``na="level"`` a node
        that had no missing value in training counts its rows where it is observed.
        """
        from .adapt import adapt_network

        return adapt_network(self, rows, domain, column=column, s_domain=s_domain)

    # ------------------------------------------------------------------ queries
    def _predict_na(self, on_unseen: str) -> str:
        """Missing values in queries: a level of their own where the fit made them one
        (``na="level"``, variables that had missing values in training), else code
        ``-1``, summed out by exact inference."""
        if self.info.get("na") == "level":
            return "level"
        return "available"

    def _na_level_vars(self, variables: Sequence[str]) -> set[str]:
        """The variables whose missing values are a level of their own: under
        ``na="level"`` those whose levels hold the label of missing values (a variable
        without missing values in training has no such level: its missing values in a
        query are unobserved, and summed out)."""
        if self.info.get("na") != "level":
            return set()
        label = self.info.get("na_label", NA_LABEL)
        return {v for v in variables if v in self.schema and label in self.schema[v]}

    def _encode_query(self, df: pd.DataFrame, variables: Sequence[str], on_unseen: str) -> EncodedData:
        return encode(df, self.schema, variables=variables, na=self._predict_na(on_unseen), on_unseen=on_unseen,
                      na_label=self.info.get("na_label", NA_LABEL), missing_unobserved=True)

    def _missing_rows(self, data: pd.DataFrame, variables: Sequence[str]) -> np.ndarray:
        """Rows with a missing value in ``variables`` that the network sums out (not in
        the variables whose missing values are a level of their own)."""
        own = self._na_level_vars(variables)
        cols = [v for v in variables if v in data.columns and v not in own]
        if not cols:
            return np.zeros(len(data), dtype=bool)
        return data[cols].isna().to_numpy().any(axis=1)

    def _all_codes(self, enc: EncodedData, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The codes of ``rows`` for the domain and every node (``-1``: missing, or a
        column the data lack)."""
        out = {}
        for v in list(self._prefix) + self.nodes:
            out[v] = enc[v][rows].astype(np.int64) if v in enc.codes else np.full(len(rows), -1, dtype=np.int64)
        return out

    def _encode(self, df: pd.DataFrame, variables: Sequence[str], on_unseen: str) -> EncodedData:
        if self.transformer is not None:
            df = self.transformer.transform(df)
        variables = list(dict.fromkeys(variables))
        if self.domain is None or self.domain not in variables:
            return self._encode_query(df, variables, on_unseen)
        # a domain unseen in training is answered by the population-level tables
        others = [v for v in variables if v != self.domain]
        dom = self._encode_query(df, [self.domain], "backoff")
        col = df[self.domain]
        bad = (dom[self.domain] < 0) & col.notna().to_numpy()
        new = list(pd.unique(col[bad])) if bad.any() else []
        if new:
            shown = ", ".join(repr(v) for v in new[:5]) + (" ..." if len(new) > 5 else "")
            warnings.warn(
                f"domain(s) {shown} of {self.domain!r} not seen in training: their rows get the "
                "population-level (pooled) tables",
                UnseenDomainWarning,
                stacklevel=3,
            )
        codes = {self.domain: dom[self.domain]}
        if others:
            enc = self._encode_query(df, others, on_unseen)
            codes.update(enc.codes)
        return EncodedData(self.schema.subset([v for v in self.schema if v in codes]), codes, dom.index)

    def _cond_codes(self, enc: EncodedData, node: str, override: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        vars_ = list(self._prefix) + self.parents(node)
        out = np.empty((enc.n_rows, len(vars_)), dtype=np.int64)
        for j, v in enumerate(vars_):
            out[:, j] = override[v] if override and v in override else enc[v]
        return out

    def logpdf(self, data: pd.DataFrame, *, on_unseen: str = "error") -> np.ndarray:
        """Log-probability of each row: :math:`\\sum_v \\log P(x_v \\mid \\pi_v)`.

        Every node must be a column of ``data``.  A row with missing values gets the
        probability of its observed cells, the missing ones summed out by exact
        inference (:mod:`pybncsmooth.model.inference`), unless the network was fitted
        with ``na="level"`` and the variable had missing values in training (then
        missing is its level).  A float column whose every value is ``NaN`` is a column
        of missing values.  With ``on_unseen="backoff"`` a
        parent value unseen in training backs off in the node's context tree; the
        node's own value must be a known level.
        Rows impossible under the model get ``-inf``.  ``data`` may also be data read
        in chunks (a CSV/Parquet path, a list of frames, a function returning chunks, a
        Dask DataFrame): the rows of every chunk, in order.
        """
        if not isinstance(data, pd.DataFrame):
            parts = [self.logpdf(c, on_unseen=on_unseen) for c in as_source(data).chunks()]
            return np.concatenate(parts) if parts else np.zeros(0)
        enc = self._encode(data, list(self._prefix) + self.nodes, on_unseen)
        total = np.zeros(enc.n_rows)
        holes = self._missing_rows(data, self.nodes)
        full = np.flatnonzero(~holes)
        if len(full) < enc.n_rows:
            sub = enc.take(full)
        else:
            sub = enc
        with np.errstate(divide="ignore"):
            for node in self.nodes:
                x = sub[node]
                if x.size and x.min() < 0:
                    raise DataError(f"cannot evaluate the probability of rows whose value of {node!r} is unknown")
                total[full] += np.log(self._cpds[node].prob_of(x, self._cond_codes(sub, node)))
        if holes.any():  # the probability of what was observed: the missing cells summed out
            rows = np.flatnonzero(holes)
            total[rows] = log_marginal(self, self._all_codes(enc, rows))
        return total

    def loglik(self, data: pd.DataFrame, *, on_unseen: str = "error") -> float:
        """Total log-likelihood of ``data`` (natural log)."""
        return float(self.logpdf(data, on_unseen=on_unseen).sum())

    def predict_proba(self, data: pd.DataFrame, target: str, *, on_unseen: str = "error") -> pd.DataFrame:
        """Posterior of ``target`` given the other variables of each row.

        Exact: :math:`P(t \\mid \\text{rest}) \\propto P(t \\mid \\pi_t) \\prod_{c \\in ch(t)}
        P(x_c \\mid \\pi_c)` with ``t`` substituted, which only involves the Markov
        blanket of ``target`` (those columns must be present; others are ignored,
        ``target`` itself may be absent).  A row with a missing value in the blanket
        (unless the fit made missing a level of that variable, ``na="level"``; an
        all-``NaN`` float column is missing values) gets the exact posterior
        given every observed column, the missing cells summed out
        (:mod:`pybncsmooth.model.inference`).  With ``on_unseen="backoff"`` an unseen
        value of a child of ``target`` drops that factor and one of a parent backs off
        in its context tree.

        Returns a data frame indexed like ``data`` with one column per level of
        ``target``, rows summing to 1.  ``data`` may also be data read in chunks (a
        CSV/Parquet path, a list of frames, a function, a Dask DataFrame): the rows of
        every chunk in order, indexed ``0 .. n - 1``.
        """
        if target not in self.dag:
            raise UnknownNodeError(target, "(the target is not a node of the network)")
        if not isinstance(data, pd.DataFrame):
            parts = [self.predict_proba(c, target, on_unseen=on_unseen) for c in as_source(data).chunks()]
            if not parts:
                raise EmptyDataError("the data to predict has no chunk")
            return pd.concat(parts, ignore_index=True)
        mb = list(self._prefix) + self.dag.markov_blanket(target)
        cols = set(data.columns) if isinstance(data, pd.DataFrame) else set()
        for v in mb:
            if v not in cols:
                role = "domain" if v in self._prefix else f"Markov-blanket variable of {target!r}"
                raise MissingColumnError(v, role, [str(c) for c in data.columns])
        if mb:
            enc = self._encode(data, mb, on_unseen)
            n, index = enc.n_rows, enc.index
        else:  # an isolated node: its posterior is its marginal
            n, index = len(data), data.index
            enc = EncodedData(self.schema.subset([]), {}, index)
        holes = self._missing_rows(data, [v for v in mb if v not in self._prefix])
        if not holes.any():
            logp = self._log_joint_by_target(enc, target, n)
        else:  # the missing cells summed out, the other observed columns used too
            logp = np.empty((n, self.schema.cardinality(target)))
            full = np.flatnonzero(~holes)
            sub = enc.take(full)
            logp[full] = self._log_joint_by_target(sub, target, len(full))
            rows = np.flatnonzero(holes)
            codes = self._all_codes(enc, rows)
            # columns outside the blanket inform the missing ones (their unseen levels count as missing)
            known = [v for v in self.nodes if v in data.columns and v not in mb and v != target]
            if known:
                extra = self._encode_query(data.iloc[rows], known, "backoff")
                codes.update({v: extra[v].astype(np.int64) for v in known})
            logp[rows] = log_posterior_rows(self, codes, target)
        post = _normalise_log(logp, target)
        cols_idx = pd.CategoricalIndex(self.schema[target], categories=self.schema[target], name=target)
        return pd.DataFrame(post, index=index, columns=cols_idx)

    def _factor_tables(self, target: str) -> list[tuple[list[str], tuple[int, ...], np.ndarray]] | None:
        """Log-tables of the factors that involve ``target`` (its CPT and its children's),
        each reshaped to ``(configurations of the other variables, levels of target)``.

        Cached; ``None`` when some table is too large to materialise.
        """
        cache = self.__dict__.setdefault("_factor_cache", {})
        if target in cache:
            return cache[target]
        out: list[tuple[list[str], tuple[int, ...], np.ndarray]] | None = []
        r = self.schema.cardinality(target)
        for node in [target, *self.children(target)]:
            cpd = self._cpds[node]
            if cpd.n_configs * cpd.card > QUERY_DENSE_CELLS:
                out = None
                break
            axes = [node, *self._prefix, *self.parents(node)]
            t = np.moveaxis(cpd.table(QUERY_DENSE_CELLS), axes.index(target), -1)
            other = [v for v in axes if v != target]
            with np.errstate(divide="ignore"):
                out.append((other, self.schema.cardinalities(other), np.log(t.reshape(-1, r))))
        cache[target] = out
        return out

    def _log_joint_by_target(self, enc: EncodedData, target: str, n: int) -> np.ndarray:
        """``(n, r)`` matrix of :math:`\\log P(t \\mid \\pi_t) + \\sum_c \\log P(x_c \\mid \\pi_c)`
        with ``target = t``: one gather per factor from its cached log-table; rows with
        an unobserved value go through the CPDs (which back off)."""
        r = self.schema.cardinality(target)
        tables = self._factor_tables(target)
        if tables is None:
            return self._log_joint_slow(enc, target, np.arange(n))
        logp = np.zeros((n, r))
        unknown = np.zeros(n, dtype=bool)
        for other, cards, L in tables:
            if other:
                cols = [enc[v] for v in other]
                for c in cols:
                    if c.size and c.min() < 0:
                        unknown |= c < 0
                idx = mixed_radix([np.maximum(c, 0) for c in cols], cards)
                logp += L[idx]
            else:
                logp += L[0]
        if unknown.any():
            rows = np.flatnonzero(unknown)
            logp[rows] = self._log_joint_slow(enc, target, rows)
        return logp

    def _log_joint_slow(self, enc: EncodedData, target: str, rows: np.ndarray) -> np.ndarray:
        """The same through the CPDs, one target level at a time (handles unobserved values)."""
        r = self.schema.cardinality(target)
        n = len(rows)
        sub = enc.take(rows)
        logp = np.zeros((n, r))
        with np.errstate(divide="ignore"):
            for t in range(r):
                tcol = np.full(n, t, dtype=np.int64)
                over = {target: tcol}
                logp[:, t] += np.log(self._cpds[target].prob_of(tcol, self._cond_codes(sub, target, over)))
                for c in self.children(target):
                    x = sub[c].astype(np.int64)
                    ok = x >= 0
                    if ok.all():
                        logp[:, t] += np.log(self._cpds[c].prob_of(x, self._cond_codes(sub, c, over)))
                    elif ok.any():
                        P = self._cond_codes(sub, c, over)[ok]
                        logp[ok, t] += np.log(self._cpds[c].prob_of(x[ok], P))
        return logp

    def query(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | pd.DataFrame | None = None,
        *,
        interval: float | None = None,
        draws: int = 1000,
        random_state: Any = None,
        domain: Any = None,
    ) -> pd.Series | pd.DataFrame:
        r"""Exact posterior :math:`P(X_T \mid x_E)` of one target or the joint of several.

        .. math:: P(x_T \mid x_E) \propto \sum_{x_H} \prod_v P(x_v \mid x_{\pi_v}),

        the hidden variables :math:`H` summed out by variable elimination (Koller and
        Friedman 2009, Ch. 9) after pruning the nodes that cannot matter (barren nodes,
        and those d-separated from the targets by the evidence); the plan is compiled
        once per pattern of targets and evidence variables and cached on the network.
        The tables are the posterior means :meth:`cpt` shows (unseen parent
        configurations filled by the estimator's back-off).  See
        :mod:`pybncsmooth.model.query`.

        Parameters
        ----------
        targets:
            A node, or a list of nodes for their joint posterior.
        evidence:
            ``{variable: level}`` (a missing value leaves the variable unobserved;
            a value that is not a level raises
            :class:`~pybncsmooth.errors.UnseenLevelError`), or a data frame with one
            query per row, its columns nodes (NaN: unobserved in that row).  ``None``:
            no evidence.  Evidence d-separated from the targets does not change the
            answer and is not evaluated, except that a level no parent configuration
            allows is always refused.
        interval:
            Add the equal-tailed credible interval of each probability at this level
            (e.g. ``0.9``), from ``draws`` parameter sets drawn from the posterior of
            the CPTs given the training data (``random_state`` makes it
            reproducible); networks without such a posterior raise
            :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        domain:
            Multi-domain fits: the domain to query (required); a label unseen in
            training is answered by the population-level tables, with an
            :class:`~pybncsmooth.errors.UnseenDomainWarning`.

        Returns
        -------
        One target and a mapping: a Series named ``"prob"`` indexed by the target's
        levels (a ``CategoricalIndex`` named after it); several targets: indexed by
        their joint states (a ``MultiIndex``).  With ``interval=``: a frame with
        columns ``prob``, ``lower``, ``upper`` on that index.  A frame of evidence: a
        frame with one row per query (the evidence's index) and one column per
        level or joint state; with ``interval=``, columns ``(stat, state)``.

        Evidence with probability zero raises
        :class:`~pybncsmooth.errors.ImpossibleEvidenceError` (naming the rows).
        """
        return _query(self, targets, evidence, interval=interval, draws=draws, random_state=random_state,
                     domain=domain)

    def map_query(
        self,
        targets: str | Sequence[str],
        evidence: Mapping[str, Any] | pd.DataFrame | None = None,
        *,
        domain: Any = None,
    ) -> Any:
        r"""The most probable joint state of ``targets`` given ``evidence``:
        :math:`\hat x_T = \arg\max_{x_T} P(x_T \mid x_E)`, the other hidden variables
        summed out (marginal MAP, Koller and Friedman 2009, Sec. 13.1; pgmpy's
        ``VariableElimination.map_query`` answers the same question).  Ties go to the
        first joint state in level order.

        ``evidence`` and ``domain`` as in :meth:`query`.  Returns, for a mapping, a
        :class:`~pybncsmooth.model.query.MapResult` ``(state, prob)``: ``state`` a dict
        ``{target: level}``, ``prob`` its posterior probability; for a frame of
        evidence, a frame with one row per query, a Categorical column per target and
        the column ``prob``.
        """
        return _map_query(self, targets, evidence, domain=domain)

    def predict(self, data: pd.DataFrame, target: str, *, on_unseen: str = "error") -> pd.Series:
        """Most probable level of ``target`` for each row (ties: the first level)."""
        proba = self.predict_proba(data, target, on_unseen=on_unseen)
        codes = np.argmax(proba.to_numpy(), axis=1)
        cat = pd.Categorical.from_codes(codes, categories=list(self.schema[target]))
        return pd.Series(cat, index=proba.index, name=target)

    def sample(self, n: int, random_state: Any = None, *, domain: Any = None) -> pd.DataFrame:
        """Draw ``n`` rows by forward (ancestral) sampling in topological order.

        ``random_state`` (an int, a ``numpy.random.Generator`` or ``None``) makes the
        draw reproducible.  Multi-domain networks need ``domain=`` (a level).
        Columns are pandas Categoricals in node order.
        """
        n = check_int("n", n, low=0)
        check_random_state(random_state)
        if self.domain is not None:
            if domain is None:
                raise DataError("pass domain= (a level of the domain variable) to sample a multi-domain network")
            return self.for_domain(domain).sample(n, random_state)
        rng = np.random.default_rng(random_state)
        codes: dict[str, np.ndarray] = {}
        for node in self.dag.topological_order():
            pa = self.parents(node)
            P = np.empty((n, len(pa)), dtype=np.int64)
            for j, p in enumerate(pa):
                P[:, j] = codes[p]
            probs = self._cpds[node].probs(P)
            cum = np.cumsum(probs, axis=1)
            u = rng.random(n) * cum[:, -1]
            x = (cum < u[:, None]).sum(axis=1)
            codes[node] = np.minimum(x, probs.shape[1] - 1)
        return pd.DataFrame(
            {v: pd.Categorical.from_codes(codes[v], categories=list(self.schema[v])) for v in self.nodes}
        )

    # ------------------------------------------------------------------ reporting
    @property
    def n_params(self) -> int:
        """Free parameters of the dense tables (``sum (r - 1) q``; per domain for multi-domain fits)."""
        return sum(c.n_params for c in self._cpds.values())

    def summary(self) -> pd.DataFrame:
        """One row per node: levels, parents, parent configurations (possible and
        observed), context-tree nodes, rows counted, free parameters and, for
        multi-chain HDP fits, the split-R-hat of the leaf estimates; for iterative
        fits (``hmd``, ``hls``, ``hdp`` with ``iterations="auto"``), the iterations run
        and whether they converged, and for ``iterations="auto"`` the largest
        Monte-Carlo standard error of an entry (``<NA>`` where a quantity does not
        apply, e.g. for tables read from a file).  A fit with ``na="em"`` /
        ``"hard-em"`` keeps its iterations, convergence and observed-data
        log-likelihood trace in ``summary().attrs["em"]``."""
        rows = []
        any_rhat = False
        for node in self.nodes:
            cpd = self._cpds[node]
            row = {
                "node": node,
                "levels": cpd.card,
                "parents": ", ".join(self.parents(node)),
                "configurations": cpd.n_configs,
                "observed": pd.NA,
                "tree_nodes": pd.NA,
                "n": pd.NA,
                "parameters": cpd.n_params,
                "rhat": pd.NA,
            }
            if isinstance(cpd, (TreeCPD, DomainLastCPD)):
                row["observed"] = cpd.tree.n_leaves
                row["tree_nodes"] = cpd.tree.n_nodes
                row["n"] = cpd.tree.total
                if "rhat" in cpd.estimate.info:
                    row["rhat"] = float(cpd.estimate.info["rhat"])
                    any_rhat = True
                if "converged" in cpd.estimate.info:
                    row["iterations"] = int(cpd.estimate.info.get("iterations", 0))
                    row["converged"] = bool(cpd.estimate.info["converged"])
                if "mcse" in cpd.estimate.info:
                    row["mcse"] = float(cpd.estimate.info["mcse"])
            rows.append(row)
        out = pd.DataFrame(rows).set_index("node")
        for c in ("observed", "tree_nodes", "n"):
            whole = all(v is pd.NA or float(v).is_integer() for v in out[c])
            out[c] = out[c].astype("Int64" if whole else "Float64")  # n: summed weights of a weighted or EM fit
        if "converged" in out:
            out["iterations"] = out["iterations"].astype("Int64")
            out["converged"] = out["converged"].astype("boolean")
        if "mcse" in out:
            out["mcse"] = out["mcse"].astype("Float64")
        if any_rhat:
            out["rhat"] = out["rhat"].astype("Float64")
        else:
            out = out.drop(columns="rhat")
        if "em" in self.info:
            out.attrs["em"] = dict(self.info["em"])
        return out

    def __repr__(self) -> str:
        head = f"FittedNetwork({len(self.nodes)} nodes, {len(self.dag.arcs)} arcs"
        if self.method:
            hp = self.info.get("hyperparameters") or {}
            hp_txt = ", ".join(f"{k}={v}" for k, v in hp.items())
            head += f", method={self.method}" + (f" ({hp_txt})" if hp_txt else "")
        if self.n_rows is not None:
            head += f", n={self.n_rows}"
        if self.domain is not None:
            head += f", domain={self.domain} ({len(self.domains)} levels)"
        em = self.info.get("em")
        if em:
            what = "data augmentation blocks" if em.get("augmentation") else "EM iterations"
            head += f", {em['iterations']} {what}" + ("" if em.get("converged") else " (not converged)")
        ms = self.modelstring()
        if len(ms) > 100:
            ms = ms[:97] + "..."
        return head + f"): {ms}"

    # ------------------------------------------------------------------ comparison / IO
    def max_abs_diff(self, other: "FittedNetwork") -> float:
        """Largest absolute difference between the CPT entries of two networks
        with the same nodes, parents and levels."""
        if not isinstance(other, FittedNetwork):
            raise DataError(f"max_abs_diff compares two fitted networks, not one with a {type(other).__name__}")
        if self.nodes != other.nodes and sorted(self.nodes) != sorted(other.nodes):
            raise DataError("the networks have different nodes")
        worst = 0.0
        for n in self.nodes:
            a = self.cpt(n)
            b = _align_table(other, n, self.parents(n), self.schema)
            worst = max(worst, float(np.max(np.abs(a - b))))
        return worst

    def write(self, path: Any, *, format: str | None = None) -> None:
        """Write the network: ``.bif``, ``.dsc``, ``.net`` (as bnlearn writes them) or
        the lossless native format ``.pbn``, chosen by extension or ``format``."""
        p = str(path)
        network_format(p, format).write(self, p)

    def sample_parameters(self, n: int, random_state: Any = None) -> list["FittedNetwork"]:
        """``n`` networks whose CPTs are joint draws from the posterior of this fit's
        parameters (one draw of every node's table each; nodes independent, as the
        posterior factorises): exact Dirichlet draws for ``bayes``, the sampler's
        recorded states for ``hdp`` and ``hls-bayes``, the hyperparameters' posterior
        and the Dirichlet columns given them for ``hmd``; unseen parent
        configurations drawn from the hierarchy's predictive.  Their tables are dense
        (the networks answer every query a network read from a file does).  Methods
        without a posterior raise :class:`~pybncsmooth.errors.StatisticUnavailableError`.
        See :mod:`pybncsmooth.model.draws`."""
        from .draws import sample_parameters

        return sample_parameters(self, n, random_state)

    def _posterior_tables(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """For each node, ``(n, *cpt(node).shape)`` joint posterior draws of its table
        (draw ``k`` of every node is one parameter set; columns sum to 1); see
        :func:`pybncsmooth.model.draws.posterior_tables`."""
        from .draws import posterior_tables

        return posterior_tables(self, n, rng)

    def domain_report(self, *, level: float = 0.9, draws: int = 200, random_state: Any = 0) -> pd.DataFrame:
        """Per domain and node, how the domain's CPT differs from the population's: KL
        and Jensen-Shannon divergences weighted by the domain's own parent
        configurations, an interval for JS from the estimator's uncertainty (``level``,
        ``draws``), the domain's rows and its mean shrinkage weight toward the
        population; see :mod:`pybncsmooth.model.domain_report`.  An estimator without
        posterior sds (``mle``, ``hgs``, ``mbranch``, ``hls``) gives no interval: the
        report then has no interval columns, and ``attrs["intervals"]`` says why."""
        from .domain_report import domain_report

        check_probability("level", level)
        check_int("draws", draws, low=0)
        return domain_report(self, level=level, draws=draws, random_state=random_state)

    def plot_domains(self, node: str, ax: Any = None, **report: Any) -> Any:
        """Forest plot of the domains' deviations from the population for ``node``
        (needs matplotlib); ``report`` goes to :meth:`domain_report`."""
        from .plotting import plot_domains

        if node not in self.dag:
            raise UnknownNodeError(node, "(plot_domains needs a node of the network)")
        return plot_domains(self.domain_report(**report), node, ax=ax)

    def plot_shrinkage(self, node: str, value: Any = None, ax: Any = None) -> Any:
        """Leaf estimates against relative frequencies and parent estimates (needs
        matplotlib); see :func:`pybncsmooth.model.plotting.plot_shrinkage`."""
        return plot_shrinkage(self, node, value, ax=ax)

    def plot_cpt(self, node: str, ax: Any = None, *, cmap: str = "viridis", annotate: bool | None = None) -> Any:
        """Heatmap of the CPT of ``node``: one column per parent configuration, one
        row per level (needs matplotlib).  Returns the matplotlib Axes."""
        return plot_cpt(self, node, ax=ax, cmap=cmap, annotate=annotate)


def _normalise_log(logp: np.ndarray, target: str) -> np.ndarray:
    m = logp.max(axis=1, keepdims=True)
    impossible = ~np.isfinite(m[:, 0])
    if impossible.any():
        warnings.warn(
            f"{int(impossible.sum())} row(s) have probability zero under every level of {target!r} "
            "(an estimate with zeros, e.g. mle); they get the uniform distribution",
            ZeroProbabilityWarning,
            stacklevel=3,
        )
        m = np.where(impossible[:, None], 0.0, m)
        logp = np.where(impossible[:, None], 0.0, logp)
    p = np.exp(logp - m)
    return p / p.sum(axis=1, keepdims=True)


def _align_table(net: FittedNetwork, node: str, parents: Sequence[str], schema: Schema) -> np.ndarray:
    """``net``'s CPT of ``node`` with its axes and levels in the order of ``parents``/``schema``."""
    t = net.cpt(node)
    dims = net.table_dims(node)
    want = [node] + list(parents) + list(net._prefix)
    if sorted(dims) != sorted(want):
        raise DataError(f"node {node!r} has parents {dims[1:]} in one network and {want[1:]} in the other")
    t = np.transpose(t, [dims.index(w) for w in want])
    for ax, v in enumerate(want):
        a, b = list(net.schema[v]), list(schema[v])
        if a != b:
            if sorted(map(str, a)) != sorted(map(str, b)):
                raise DataError(f"variable {v!r} has different levels in the two networks")
            pos = {str(l): i for i, l in enumerate(a)}
            t = np.take(t, [pos[str(l)] for l in b], axis=ax)
    return t
