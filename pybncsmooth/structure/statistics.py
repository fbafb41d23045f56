"""The counts classifier structure learning needs, accumulated over chunks.

NB, TAN and kDB need only :math:`n_c`, :math:`n_{x c}` per feature (mutual
information with the class) and :math:`n_{x_i x_j c}` per feature pair (conditional
mutual information given the class): one pass over the data, in chunks of any
size, in any order, merged exactly (the counts are integers).  The same object
serves a data frame in memory (one chunk), so in-memory and out-of-core learning
compute the same numbers from the same counts.

Levels first met in a later chunk are united with the earlier ones and every
table recoded onto the united, sorted levels, as the context trees are
(:class:`~pybncsmooth.counting.network.NetworkCounter`).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..data.encode import DEFAULT_MAX_LEVELS, encode
from ..data.mapreduce import reduce_chunks
from ..data.weights import chunk_weights
from ..data.schema import Schema
from ..errors import ClassRelabellingWarning, DataError, EmptyDataError, MissingColumnError, SingleLevelError
from ..options import NA_LABEL, NAPolicy
from .information import cmi_from_counts, mi_from_counts, pair_counts, pair_offsets

__all__ = ["StructureStatistics"]


class StructureStatistics:
    """Class counts, feature-class tables and feature-pair-class tables over chunks.

    Parameters
    ----------
    target, features:
        The class and the feature columns.
    na:
        ``"level"`` (a missing value is a level), ``"drop"`` (complete rows only),
        ``"error"``, or ``"pairwise"`` (each table on the rows where its variables
        are observed, bnlearn's TAN).
    pairs:
        Count feature pairs (TAN, kDB with ``k > 0``); without them only MI is available.
    schema:
        Levels known in advance; the others are inferred and united over chunks.
    weights:
        A column of every chunk holding each row's weight: the tables are then sums of
        weights (float64).
    """

    def __init__(
        self,
        target: str,
        features: Sequence[str],
        *,
        na: str = "level",
        pairs: bool = True,
        schema: Schema | None = None,
        max_levels: int = DEFAULT_MAX_LEVELS,
        weights: str | None = None,
        na_label: str = NA_LABEL,
    ) -> None:
        if na not in NAPolicy.STRUCTURE:
            raise DataError(f"na must be one of {NAPolicy.STRUCTURE} for structure learning, not {na!r}")
        self.weights = weights
        self.na_label = na_label
        self.target = target
        self.features = list(features)
        self.na = na
        self.pairs = pairs
        self.given = schema.subset([v for v in [target, *self.features] if v in schema]) if schema else Schema()
        self.max_levels = max_levels
        self.schema: Schema | None = None
        self.class_counts: np.ndarray | None = None
        self.feature_counts: list[np.ndarray] = []  # (r_f, K) per feature
        self.pair_counts: np.ndarray | None = None  # flat, layout of information.pair_offsets
        self.n_rows = 0
        self.n_dropped = 0
        self.n_missing: dict[str, int] = {}  # code -1 per variable (na="pairwise")
        self._cmi: np.ndarray | None = None
        self._mi: dict[str, float] | None = None

    # ------------------------------------------------------------------ map / reduce
    def _empty(self) -> "StructureStatistics":
        return StructureStatistics(
            self.target,
            self.features,
            na=self.na,
            pairs=self.pairs,
            schema=self.given if len(self.given) else None,
            max_levels=self.max_levels,
            weights=self.weights,
            na_label=self.na_label,
        )

    def count(self, df: pd.DataFrame) -> "StructureStatistics":
        """A new object holding the counts of the chunk ``df`` alone."""
        out = self._empty()
        variables = [self.target, *self.features]
        have = set(map(str, df.columns))
        missing = [v for v in variables if v not in have]
        if self.weights is not None and self.weights not in have:
            raise MissingColumnError(self.weights, "weights", [str(c) for c in df.columns])
        if missing:
            role = "class" if missing[0] == self.target else "feature"
            raise MissingColumnError(missing[0], role, [str(c) for c in df.columns])
        if len(df) == 0:
            return out
        if df[self.target].isna().any():  # whatever na=: a class-conditional structure needs the class
            raise DataError(f"the class {self.target!r} has missing values; drop those rows first")
        na = "available" if self.na == "pairwise" else self.na
        enc = encode(df, self.given, variables=variables, na=na, max_levels=self.max_levels, empty_ok=True,
                     na_label=self.na_label)
        if enc.n_rows == 0:  # every row of this chunk is incomplete (na="drop"): it adds nothing
            out.n_dropped = enc.n_dropped
            return out
        s = enc.schema
        c = enc[self.target].astype(np.int64)
        K = s.cardinality(self.target)
        w = chunk_weights(df, self.weights, variables, na) if self.weights is not None else None
        dt = np.int64 if w is None else np.float64
        out.schema = s
        out.n_rows, out.n_dropped = enc.n_rows, enc.n_dropped
        out.class_counts = np.bincount(c, weights=w, minlength=K).astype(dt)
        cards = s.cardinalities(self.features)
        for f, r in zip(self.features, cards):
            x = enc[f].astype(np.int64)
            ok = x >= 0
            wf = w
            if not ok.all():
                out.n_missing[f] = int((~ok).sum())
                x, cc = x[ok], c[ok]
                wf = w[ok] if w is not None else None
            else:
                cc = c
            out.feature_counts.append(np.bincount(x * K + cc, weights=wf, minlength=r * K).reshape(r, K).astype(dt))
        if self.pairs:
            out.pair_counts = pair_counts([enc[f] for f in self.features], cards, c, K, weights=w)
        return out

    def add(self, df: pd.DataFrame) -> "StructureStatistics":
        """Count one more chunk."""
        return self.merge(self.count(df))

    def merge(self, other: "StructureStatistics") -> "StructureStatistics":
        """Add another object's counts (schemas united, tables recoded onto the union)."""
        self._cmi = None
        self._mi = None
        self.n_rows += other.n_rows
        self.n_dropped += other.n_dropped
        for f, m in other.n_missing.items():
            self.n_missing[f] = self.n_missing.get(f, 0) + m
        if other.schema is None:
            return self
        if self.schema is None:
            self.schema = other.schema
            self.class_counts, self.feature_counts, self.pair_counts = (
                other.class_counts,
                other.feature_counts,
                other.pair_counts,
            )
            return self
        union = self.schema.union(other.schema)
        a, b = self._recoded(union), other._recoded(union)
        self.class_counts = a[0] + b[0]
        self.feature_counts = [x + y for x, y in zip(a[1], b[1])]
        self.pair_counts = a[2] + b[2] if self.pairs else None
        self.schema = union
        return self

    def _recoded(self, dst: Schema) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None]:
        src = self.schema
        maps = {}
        for v in [self.target, *self.features]:
            pos = {lev: i for i, lev in enumerate(dst[v])}
            maps[v] = np.array([pos[lev] for lev in src[v]], dtype=np.int64)
        K = dst.cardinality(self.target)
        mc = maps[self.target]
        dt = self.class_counts.dtype
        cls = np.zeros(K, dtype=dt)
        cls[mc] = self.class_counts
        feats = []
        for f, t in zip(self.features, self.feature_counts):
            new = np.zeros((dst.cardinality(f), K), dtype=dt)
            new[np.ix_(maps[f], mc)] = t
            feats.append(new)
        pairs = None
        if self.pairs:
            src_cards = src.cardinalities(self.features)
            dst_cards = dst.cardinalities(self.features)
            src_off, _ = pair_offsets(src_cards, src.cardinality(self.target))
            dst_off, total = pair_offsets(dst_cards, K)
            pairs = np.zeros(total, dtype=self.pair_counts.dtype)
            p = len(self.features)
            Ks = src.cardinality(self.target)
            for a in range(p):
                for b in range(a + 1, p):
                    ra, rb = src_cards[a], src_cards[b]
                    o = src_off[a * p + b]
                    block = self.pair_counts[o : o + Ks * ra * rb].reshape(Ks, ra, rb)
                    o2 = dst_off[a * p + b]
                    view = pairs[o2 : o2 + K * dst_cards[a] * dst_cards[b]].reshape(K, dst_cards[a], dst_cards[b])
                    view[np.ix_(mc, maps[self.features[a]], maps[self.features[b]])] = block
        return cls, feats, pairs

    # ------------------------------------------------------------------ results
    def check(self) -> None:
        """Data enough to learn from: rows, and a class with two observed levels."""
        if self.n_rows == 0 and self.n_dropped:
            raise EmptyDataError(
                f'no complete rows are left after na="drop" (every one of the {self.n_dropped} rows has a '
                "missing value)"
            )
        if self.schema is None or self.n_rows == 0:
            raise EmptyDataError("the data has no rows (every chunk was empty)")
        levels = self.schema[self.target]
        seen = [levels[i] for i in np.flatnonzero(self.class_counts)]
        if len(levels) < 2 or len(seen) < 2:
            raise SingleLevelError(self.target, seen if len(seen) < 2 else list(levels))

    def single_level_features(self) -> list[str]:
        """Features with fewer than two observed values (``na="level"``: a missing
        value counts as a value): they carry no information about the class."""
        out = []
        for f, t in zip(self.features, self.feature_counts):
            if np.count_nonzero(t.sum(axis=1)) < 2:
                out.append(f)
        return out

    def warn_relabellings(self, stacklevel: int = 4) -> None:
        """A feature that is the class under another name (a one-to-one relabelling on
        every row) gets a :class:`ClassRelabellingWarning`."""
        for f, t in zip(self.features, self.feature_counts):
            if self.n_missing.get(f, 0):
                continue
            nz = t > 0
            if nz.sum() and (nz.sum(axis=0) <= 1).all() and (nz.sum(axis=1) <= 1).all():
                warnings.warn(
                    f"feature {f!r} is identical to the class {self.target!r} on these {self.n_rows} rows (a "
                    "relabelling of it): the classifier's predictions will rest on it; remove it if it leaks the class",
                    ClassRelabellingWarning,
                    stacklevel=stacklevel,
                )

    def mi(self, features: Sequence[str] | None = None) -> dict[str, float]:
        """:math:`I(X; C)` per feature, in nats."""
        if self._mi is None:  # computed once for the counts as they stand (ensemble members share it)
            self._mi = {f: mi_from_counts(t) for f, t in zip(self.features, self.feature_counts)}
        feats = self.features if features is None else list(features)
        return {f: self._mi[f] for f in feats}

    def cmi(self, features: Sequence[str] | None = None) -> np.ndarray:
        """The matrix of :math:`I(X_i; X_j \\mid C)` over ``features`` (default: all)."""
        if not self.pairs:
            raise DataError("these statistics were collected without feature pairs (pairs=False)")
        if self._cmi is None:  # computed once for the counts as they stand (ensemble members share it)
            self._cmi = cmi_from_counts(
                self.pair_counts, self.schema.cardinalities(self.features), self.schema.cardinality(self.target)
            )
        full = self._cmi
        if features is None:
            return full.copy()
        idx = [self.features.index(f) for f in features]
        return full[np.ix_(idx, idx)]


def _count(stats: StructureStatistics, df: Any) -> StructureStatistics:
    return stats.count(df)


def _merge(a: StructureStatistics, b: StructureStatistics) -> StructureStatistics:
    return a.merge(b)


def collect_statistics(
    source: Any, stats: StructureStatistics, *, progress: bool | None = False
) -> StructureStatistics:
    """One pass over a :class:`~pybncsmooth.data.sources.DataSource` (map-reduce; on
    Dask's workers for a Dask DataFrame)."""

    res = reduce_chunks(source, functools.partial(_count, stats), _merge, progress=progress, desc="structure")
    if res is None:
        raise EmptyDataError("the data has no chunk")
    return res
