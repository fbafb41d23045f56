"""Rows scored by a :class:`~pybncsmooth.FittedNetwork`: the log-probability of each row
and the posterior of a target given the rest of each row (its Markov blanket), the
missing cells summed out exactly."""

from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..counting.context_tree import mixed_radix
from ..data.encode import EncodedData, encode, text_columns
from ..data.sources import as_source
from ..errors import DataError, EmptyDataError, MissingColumnError, UnknownNodeError
from ..errors import NoDomainColumnError, UnseenDomainError, UnseenDomainWarning, ZeroProbabilityWarning
from ..validation import check_choice
from .cpd import QUERY_DENSE_CELLS
from .query.inference import log_marginal
from .query.batch import log_posterior_rows
from .query.evidence import node_name
from .query.zeros import has_zeros, impossible_rows

__all__ = ["RowsMixin"]


class RowsMixin:
    """``logpdf``, ``predict_proba``, ``predict`` (part of :class:`FittedNetwork`)."""

    def _predict_na(self, on_unseen: str) -> str:
        """Missing values in queries: a level of their own where the fit made them one
        (``na="level"``, variables that had missing values in training), else code
        ``-1``, summed out by exact inference."""
        return self.options.missing.prediction

    def _na_level_vars(self, variables: Sequence[str]) -> set[str]:
        """The variables whose missing values are a level of their own: under
        ``na="level"`` those whose levels hold the label of missing values (a variable
        without missing values in training has no such level: its missing values in a
        query are unobserved, and summed out)."""
        if self.options.missing.prediction != "level":
            return set()
        label = self.options.na_label
        return {v for v in variables if v in self.schema and label in self.schema[v]}

    def _encode_query(self, df: pd.DataFrame, variables: Sequence[str], on_unseen: str) -> EncodedData:
        return encode(df, self.schema, variables=variables, na=self._predict_na(on_unseen), on_unseen=on_unseen,
                      na_label=self.options.na_label, missing_unobserved=True)

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

    def _on_unseen(self, on_unseen: str | None) -> str:
        """A query's rule for levels unseen in training: the call's, else the fit's option."""
        return self.options.on_unseen if on_unseen is None else on_unseen

    def _on_unseen_domain(self, on_unseen_domain: str | None) -> str:
        """A query's rule for rows without a fitted domain: the call's, else the fit's option."""
        if on_unseen_domain is None:
            return self.options.on_unseen_domain
        return check_choice("on_unseen_domain", on_unseen_domain, ("warn", "error"))

    def _domain_codes(self, df: pd.DataFrame, rule: str) -> tuple[np.ndarray, pd.Index]:
        """The domain code of every row of ``df`` (``-1``: no fitted domain, answered by the
        population-level tables), with the warning or error ``rule`` asks for: rows
        without a domain (no domain column, a missing value) and domains not fitted."""
        if self.domain not in df.columns:
            if rule == "error":
                raise NoDomainColumnError(self.domain, self.domains)
            _warn_domain(f"the rows have no domain column {self.domain!r}: they get the population-level (pooled) "
                         "tables")
            return np.full(len(df), -1, dtype=np.int64), df.index
        dom = self._encode_query(df, [self.domain], "backoff")
        col = df[self.domain]
        codes = dom[self.domain].astype(np.int64)
        bad = (codes < 0) & col.notna().to_numpy()
        if bad.any():
            new = list(pd.unique(col[bad]))
            if rule == "error":
                raise UnseenDomainError(self.domain, new, self.domains)
            shown = ", ".join(repr(v) for v in new[:5]) + (" ..." if len(new) > 5 else "")
            _warn_domain(f"domain(s) {shown} of {self.domain!r} not seen in training: their rows get the "
                         "population-level (pooled) tables")
        missing = int(col.isna().sum())
        if missing:
            if rule == "error":
                first = df.index[int(np.argmax(col.isna().to_numpy()))]
                raise UnseenDomainError(self.domain, [], self.domains,
                                        what=f"{missing} row(s) have no domain ({self.domain!r} missing, first at row "
                                             f"{first!r})")
            _warn_domain(f"{missing} row(s) have no domain ({self.domain!r} missing): they get the population-level "
                         "(pooled) tables")
        return codes, dom.index

    def _encode(self, df: pd.DataFrame, variables: Sequence[str], on_unseen: str | None,
                on_unseen_domain: str | None = None) -> EncodedData:
        on_unseen = self._on_unseen(on_unseen)
        if self.transformer is not None:
            from ..data.discretize import apply_transformer  # scikit-learn, imported when first used

            df = apply_transformer(self.transformer, df, on_unseen)
        variables = list(dict.fromkeys(variables))
        if self.domain is None or self.domain not in variables:
            return self._encode_query(df, variables, on_unseen)
        others = [v for v in variables if v != self.domain]
        dom_codes, index = self._domain_codes(df, self._on_unseen_domain(on_unseen_domain))
        codes = {self.domain: dom_codes}
        if others:
            enc = self._encode_query(df, others, on_unseen)
            codes.update(enc.codes)
            index = enc.index
        return EncodedData(self.schema.subset([v for v in self.schema if v in codes]), codes, index)

    def _cond_codes(self, enc: EncodedData, node: str, override: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        vars_ = list(self._prefix) + self.parents(node)
        out = np.empty((enc.n_rows, len(vars_)), dtype=np.int64)
        for j, v in enumerate(vars_):
            out[:, j] = override[v] if override and v in override else enc[v]
        return out

    def logpdf(self, data: pd.DataFrame, *, on_unseen: str | None = None,
               on_unseen_domain: str | None = None) -> np.ndarray:
        """Log-probability of each row: :math:`\\sum_v \\log P(x_v \\mid \\pi_v)`.

        Every node must be a column of ``data``.  A row with missing values gets the
        probability of its observed cells, the missing ones summed out by exact
        inference (:mod:`pybncsmooth.model.query.inference`), unless the network was fitted
        with ``na="level"`` and the variable had missing values in training (then
        missing is its level).  A float column whose every value is ``NaN`` is a column
        of missing values.  ``on_unseen`` defaults to the
        fit's option (``"error"``); with ``on_unseen="backoff"`` a
        parent value unseen in training backs off in the node's context tree; the
        node's own value must be a known level.
        Rows impossible under the model get ``-inf``.  ``data`` may also be data read
        in chunks (a CSV/Parquet path, a list of frames, a function returning chunks, a
        Dask DataFrame): the rows of every chunk, in order.

        Multi-domain fits: each row is scored by its domain's tables; rows with no domain
        (``data`` without the domain column, or a missing value there) and rows of a
        domain the network was not fitted with get the population-level tables, with an
        :class:`~pybncsmooth.errors.UnseenDomainWarning`, or are refused with
        ``on_unseen_domain="error"`` (default: the fit's option, ``"warn"``).
        """
        if not isinstance(data, pd.DataFrame):
            parts = [self.logpdf(c, on_unseen=on_unseen, on_unseen_domain=on_unseen_domain)
                     for c in as_source(data).chunks()]
            return np.concatenate(parts) if parts else np.zeros(0)
        data = text_columns(data)
        enc = self._encode(data, list(self._prefix) + self.nodes, on_unseen, on_unseen_domain)
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

    def loglik(self, data: pd.DataFrame, *, on_unseen: str | None = None,
               on_unseen_domain: str | None = None) -> float:
        """Total log-likelihood of ``data`` (natural log)."""
        return float(self.logpdf(data, on_unseen=on_unseen, on_unseen_domain=on_unseen_domain).sum())

    def predict_proba(self, data: pd.DataFrame, target: str, *, on_unseen: str | None = None,
                      on_unseen_domain: str | None = None) -> pd.DataFrame:
        """Posterior of ``target`` given the other variables of each row.

        Exact: :math:`P(t \\mid \\text{rest}) \\propto P(t \\mid \\pi_t) \\prod_{c \\in ch(t)}
        P(x_c \\mid \\pi_c)` with ``t`` substituted, which only involves the Markov
        blanket of ``target`` (those columns must be present; others are ignored,
        ``target`` itself may be absent).  A row with a missing value in the blanket
        (unless the fit made missing a level of that variable, ``na="level"``; an
        all-``NaN`` float column is missing values) gets the exact posterior
        given every observed column, the missing cells summed out
        (:mod:`pybncsmooth.model.query.inference`).  ``on_unseen`` defaults to the
        fit's option (``"error"``); with ``on_unseen="backoff"`` an unseen
        value of a child of ``target`` drops that factor and one of a parent backs off
        in its context tree.

        Multi-domain fits answer each row with its domain's tables; rows with no domain
        (no domain column, or a missing value) and rows of a domain not fitted get the
        population-level tables with an :class:`~pybncsmooth.errors.UnseenDomainWarning`
        (``on_unseen_domain="error"`` refuses them; default: the fit's option).

        A row whose evidence has probability zero under the network (wherever the
        zero lies, also outside the blanket) gets the uniform distribution with a
        :class:`~pybncsmooth.errors.ZeroProbabilityWarning`.  Columns named by integers
        name the nodes by their text, as the fit named them.

        Returns a data frame indexed like ``data`` with one column per level of
        ``target``, rows summing to 1.  ``data`` may also be data read in chunks (a
        CSV/Parquet path, a list of frames, a function, a Dask DataFrame): the rows of
        every chunk in order, indexed ``0 .. n - 1``.
        """
        target = node_name(target)
        if target not in self.dag:
            raise UnknownNodeError(target, "(the target is not a node of the network)")
        if not isinstance(data, pd.DataFrame):
            parts = [self.predict_proba(c, target, on_unseen=on_unseen, on_unseen_domain=on_unseen_domain)
                     for c in as_source(data).chunks()]
            if not parts:
                raise EmptyDataError("the data to predict has no chunk")
            return pd.concat(parts, ignore_index=True)
        data = text_columns(data)
        mb = list(self._prefix) + self.dag.markov_blanket(target)
        cols = set(data.columns) if isinstance(data, pd.DataFrame) else set()
        for v in mb:
            if v not in cols and v not in self._prefix:  # rows without a domain: the population answers
                raise MissingColumnError(v, f"Markov-blanket variable of {target!r}", [str(c) for c in data.columns])
        if mb:
            enc = self._encode(data, mb, on_unseen, on_unseen_domain)
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
        self._rule_out_impossible(logp, enc, data, target, holes)
        post = _normalise_log(logp, target)
        cols_idx = pd.CategoricalIndex(self.schema[target], categories=self.schema[target], name=target)
        return pd.DataFrame(post, index=index, columns=cols_idx)

    def _rule_out_impossible(self, logp: np.ndarray, enc: EncodedData, data: pd.DataFrame, target: str,
                             holes: np.ndarray) -> None:
        """Rows whose evidence has probability zero (:func:`~pybncsmooth.model.query.evidence.impossible_rows`)
        get ``-inf`` for every level (then the uniform distribution, with a warning).  The
        Markov blanket finds those whose zero lies in a factor of the target; the others
        are looked for where a table has a zero: in the factors without the target
        (complete rows) and in the rows with missing cells (whose posterior drops factors)."""
        outside = [v for v in self.nodes if v != target and target not in self.parents(v)]
        if not (outside or holes.any()) or not has_zeros(self):
            return
        codes = self._all_codes(enc, np.arange(enc.n_rows))
        more = [v for v in self.nodes if v in data.columns and v not in enc.codes and v != target]
        if more:  # the columns outside the blanket (their unseen levels count as missing)
            frame = data
            if self.transformer is not None:
                from ..data.discretize import apply_transformer

                frame = apply_transformer(self.transformer, data, "backoff")
            codes.update({v: c.astype(np.int64) for v, c in self._encode_query(frame, more, "backoff").codes.items()})
        codes[target] = np.full(enc.n_rows, -1, dtype=np.int64)
        bad = impossible_rows(self, codes, enc.n_rows, (target,))
        if bad is not None and bad.any():
            logp[bad] = -np.inf

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

    def predict(self, data: pd.DataFrame, target: str, *, on_unseen: str | None = None,
                on_unseen_domain: str | None = None) -> pd.Series:
        """Most probable level of ``target`` for each row (ties: the first level)."""
        proba = self.predict_proba(data, target, on_unseen=on_unseen, on_unseen_domain=on_unseen_domain)
        codes = np.argmax(proba.to_numpy(), axis=1)
        cat = pd.Categorical.from_codes(codes, categories=list(self.schema[target]))
        return pd.Series(cat, index=proba.index, name=target)


def _warn_domain(message: str) -> None:
    warnings.warn(message, UnseenDomainWarning, stacklevel=5)


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

