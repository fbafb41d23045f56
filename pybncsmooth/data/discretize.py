"""Discretisers for numeric columns, fitted on training data only.

Each is a scikit-learn transformer on data frames: numeric columns (integers
and floats, not booleans) are cut into intervals and become ordered pandas
Categoricals labelled ``"(a,b]"``; other columns pass through unchanged.
Missing values stay missing; a value that is already a bin (its label) stays that bin,
and a value that is neither a number nor a bin is refused
(:class:`~pybncsmooth.errors.UnseenLevelError`).  Cut points are learned by ``fit`` and reused by
``transform``, so test data are cut where the training data were.

* :class:`EqualWidthDiscretizer`: ``n_bins`` intervals of equal width over the
  training range (Zhang 2020, Sec. 2.7.1.1).
* :class:`EqualFrequencyDiscretizer`: cut points at the training quantiles, so
  that intervals hold about the same number of rows (Sec. 2.7.1.2); repeated
  quantiles are merged.
* :class:`MDLDiscretizer`: Fayyad & Irani's (1993) recursive entropy split with
  the minimum-description-length stopping rule (Sec. 2.7.2.1): a cut ``T`` of the
  set ``S`` (``N`` rows, ``k`` classes) is accepted iff
  ``Gain(T) > (log2(N - 1) + log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)]) / N``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, HyperparameterError, MissingColumnError, UnseenLevelError

__all__ = [
    "Discretizer",
    "EqualWidthDiscretizer",
    "EqualFrequencyDiscretizer",
    "MDLDiscretizer",
    "make_discretizer",
    "apply_transformer",
    "mdl_cut_points",
]

from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError


def _numeric_columns(X: pd.DataFrame, columns: Sequence[str] | None) -> list[str]:
    if columns is not None:
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise MissingColumnError(str(missing[0]), "column to discretise", [str(c) for c in X.columns])
        return list(columns)
    out = []
    for c in X.columns:
        dt = X[c].dtype
        if pd.api.types.is_bool_dtype(dt) or isinstance(dt, pd.CategoricalDtype):
            continue
        if pd.api.types.is_numeric_dtype(dt):
            out.append(c)
    return out


def _fmt(v: float, digits: int) -> str:
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def _labels(cuts: np.ndarray) -> list[str]:
    edges = np.concatenate(([-np.inf], cuts, [np.inf]))
    for digits in range(6, 18):
        labels = [f"({_fmt(a, digits)},{_fmt(b, digits)}]" for a, b in zip(edges[:-1], edges[1:])]
        labels[-1] = labels[-1][:-1] + ")"
        if len(set(labels)) == len(labels):
            return labels
    return [f"bin{i}" for i in range(len(edges) - 1)]  # pragma: no cover - cut points always differ


def _bin_codes(col: pd.Series, cuts: np.ndarray, labels: list[str], name: Any, on_unseen: str = "error"
               ) -> np.ndarray:
    """The bin of each value of a column: a number is cut at ``cuts`` (intervals
    ``(a, b]``), a missing value is ``-1``, and a value that is already one of the bins
    (its label, as ``schema``, ``cpt_frame`` and ``predict_proba`` show it) stays that
    bin; any other value is :class:`~pybncsmooth.errors.UnseenLevelError`, or missing
    with ``on_unseen="backoff"``."""
    raw = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
    v = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    codes = np.searchsorted(cuts, v, side="left")  # (a, b]: a value equal to a cut goes left
    codes = np.where(np.isnan(v), -1, codes)
    other = np.isnan(v) & ~col.isna().to_numpy()  # neither a number nor missing
    if other.any():
        pos = {lab: i for i, lab in enumerate(labels)}
        found = np.array([pos.get(x, -1) if isinstance(x, str) else -1 for x in raw.to_numpy(dtype=object)[other]])
        if (found < 0).any() and on_unseen != "backoff":
            bad = list(pd.unique(raw.to_numpy(dtype=object)[other][found < 0]))
            raise UnseenLevelError(
                str(name), bad, labels,
                hint="a value of a discretised column is a number, cut into the fitted bins, or one of the bins",
            )
        codes[other] = found
    return codes


class Discretizer(TransformerMixin, BaseEstimator):
    """Shared transform: cut each learned column at its cut points."""

    def _learn(  # pragma: no cover - abstract
        self, values: np.ndarray, y: np.ndarray | None, w: np.ndarray | None = None
    ) -> np.ndarray:
        raise TypeError

    def _needs_y(self) -> bool:
        return False

    def fit(self, X: pd.DataFrame, y: Any = None, sample_weight: Any = None) -> "Discretizer":
        """Learn cut points of every numeric column on its finite values (``y`` is the
        class, needed by the supervised MDL discretiser).  ``sample_weight``: one weight
        >= 0 per row; integer weights give the cut points of the repeated rows."""
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(X)
        cols = _numeric_columns(X, getattr(self, "columns", None))
        yv = None
        if self._needs_y():
            if y is None:
                raise DataError(f"{type(self).__name__} is supervised: fit it with the class (fit(X, y))")
            yv = pd.Series(np.asarray(y)).astype(str).to_numpy()
            if len(yv) != len(X):
                raise DataError(f"X has {len(X)} rows but y has {len(yv)}")
        w = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.shape != (len(X),) or not np.isfinite(w).all() or (w < 0).any():
                raise DataError(f"sample_weight must hold one finite weight >= 0 per row of X ({len(X)})")
        self.cut_points_: dict[str, np.ndarray] = {}
        for c in cols:
            v = pd.to_numeric(X[c], errors="coerce").to_numpy(dtype=np.float64)
            ok = np.isfinite(v)
            if w is not None:
                ok &= w > 0  # a row of weight 0 is not there
            learned = self._learn(v[ok], None if yv is None else yv[ok], None if w is None else w[ok])
            self.cut_points_[c] = np.asarray(learned, dtype=np.float64)
        self.feature_names_in_ = np.array([str(c) for c in X.columns], dtype=object)
        return self

    def transform(self, X: pd.DataFrame, on_unseen: str = "error") -> pd.DataFrame:
        """A copy of ``X`` with each fitted column cut into ordered Categorical bins: numbers
        cut at the cut points, bin labels kept, missing values missing, anything else an
        :class:`~pybncsmooth.errors.UnseenLevelError` naming the column and the value
        (``on_unseen="backoff"``: a missing value instead, as a query treats levels it
        does not know)."""
        if not hasattr(self, "cut_points_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(X)
        out = X.copy()
        for c, cuts in self.cut_points_.items():
            if c not in X.columns:  # a query may hold only the columns it needs
                continue
            labels = _labels(cuts)
            codes = _bin_codes(X[c], cuts, labels, c, on_unseen)
            out[c] = pd.Categorical.from_codes(codes, categories=labels, ordered=True)
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        return self.feature_names_in_

    def to_dict(self) -> dict:
        """Cut points as JSON-friendly data (for saving a fitted model)."""
        return {
            "kind": type(self).__name__,
            "params": self.get_params(),
            "cut_points": {c: v.tolist() for c, v in self.cut_points_.items()},
        }

    @staticmethod
    def from_dict(d: dict) -> "Discretizer":
        cls = {c.__name__: c for c in (EqualWidthDiscretizer, EqualFrequencyDiscretizer, MDLDiscretizer)}[d["kind"]]
        obj = cls(**d["params"])
        obj.cut_points_ = {c: np.asarray(v, dtype=np.float64) for c, v in d["cut_points"].items()}
        obj.feature_names_in_ = np.array(list(d["cut_points"]), dtype=object)
        return obj


class _BinnedDiscretizer(Discretizer):
    """Unsupervised discretisers with a number of bins."""

    def __init__(self, n_bins: int = 5, columns: Sequence[str] | None = None) -> None:
        self.n_bins = n_bins
        self.columns = columns

    def _bins(self) -> int:
        if not isinstance(self.n_bins, (int, np.integer)) or self.n_bins < 1:
            raise HyperparameterError(f"n_bins must be a positive integer, not {self.n_bins!r}")
        return int(self.n_bins)


class EqualWidthDiscretizer(_BinnedDiscretizer):
    """``n_bins`` equal-width intervals over each column's training range."""

    def _learn(self, values: np.ndarray, y: np.ndarray | None, w: np.ndarray | None = None) -> np.ndarray:
        self._bins()
        if values.size == 0 or values.min() == values.max():
            return np.zeros(0)
        return np.linspace(values.min(), values.max(), self.n_bins + 1)[1:-1]


class EqualFrequencyDiscretizer(_BinnedDiscretizer):
    """Cut points at the ``1/n_bins, 2/n_bins, ...`` training quantiles (repeats merged)."""

    def _learn(self, values: np.ndarray, y: np.ndarray | None, w: np.ndarray | None = None) -> np.ndarray:
        self._bins()
        if values.size == 0:
            return np.zeros(0)
        p = np.arange(1, self.n_bins) / self.n_bins
        q = np.quantile(values, p) if w is None else weighted_quantile(values, w, p)
        cuts = np.unique(q)
        return cuts[cuts < values.max()]


class MDLDiscretizer(Discretizer):
    """Fayyad & Irani's supervised MDL discretisation (fit needs the class).

    With ``random_state`` (an int or a numpy Generator) the cut points are sampled
    instead of chosen (Zhang 2020, Sec. 4.2.1, Algorithms 10-11; see
    :func:`mdl_cut_points`): the stochastic discretisation of ESKDB's members.
    """

    def __init__(self, columns: Sequence[str] | None = None, random_state: Any = None) -> None:
        self.columns = columns
        self.random_state = random_state

    def _needs_y(self) -> bool:
        return True

    def fit(self, X: pd.DataFrame, y: Any = None, sample_weight: Any = None) -> "MDLDiscretizer":
        self._rng = None if self.random_state is None else np.random.default_rng(self.random_state)
        return super().fit(X, y, sample_weight)  # type: ignore[return-value]

    def _learn(self, values: np.ndarray, y: np.ndarray | None, w: np.ndarray | None = None) -> np.ndarray:
        assert y is not None
        return mdl_cut_points(values, y, rng=getattr(self, "_rng", None), weights=w)


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of a count matrix."""
    tot = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tot > 0, counts / np.where(tot > 0, tot, 1), 0.0)
        logs = np.where(p > 0, np.log2(np.where(p > 0, p, 1)), 0.0)
    return -(p * logs).sum(axis=-1)


def weighted_quantile(values: np.ndarray, w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``np.quantile(values, p)`` (linear interpolation) of the data in which each value
    is repeated ``w`` times; real weights generalise it (the order statistic at position
    ``h`` is the value whose cumulative weight first exceeds ``h``)."""
    order = np.argsort(values, kind="stable")
    v, cw = values[order], np.cumsum(np.asarray(w, dtype=np.float64)[order])
    N = cw[-1]
    h = (N - 1.0) * np.asarray(p, dtype=np.float64)
    lo = np.floor(h)

    def stat(k: np.ndarray) -> np.ndarray:
        return v[np.minimum(np.searchsorted(cw, k, side="right"), len(v) - 1)]

    a, b = stat(lo), stat(lo + 1.0)
    return a + (h - lo) * (b - a)


@dataclass
class _Segment:
    """The candidate cuts of one segment ``[lo, hi)`` of the sorted values: split
    positions ``pos`` (between distinct values), the class counts left and right of each,
    their entropies, the weighted mean entropy ``e`` of each split, the segment's rows
    ``n``, entropy ``ent_s`` and number of classes present ``k``."""

    pos: np.ndarray
    left: np.ndarray
    right: np.ndarray
    ent_l: np.ndarray
    ent_r: np.ndarray
    e: np.ndarray
    n: float
    ent_s: float
    k: int

    def deltas(self) -> np.ndarray:
        """The MDL criterion's :math:`\\Delta` of every candidate (Fayyad & Irani 1993)."""
        k1 = (self.left > 0).sum(axis=1)
        k2 = (self.right > 0).sum(axis=1)
        return np.log2(3.0**self.k - 2) - (self.k * self.ent_s - k1 * self.ent_l - k2 * self.ent_r)

    def excess(self) -> np.ndarray:
        """Each candidate's gain beyond its MDL threshold (negative: rejected)."""
        return (self.ent_s - self.e) - (np.log2(self.n - 1) + self.deltas()) / self.n


def _segment(v: np.ndarray, cum: np.ndarray, wcum: np.ndarray, lo: int, hi: int) -> _Segment | None:
    """The candidates of ``[lo, hi)`` (``None`` when there is none: fewer than two rows,
    or a single distinct value)."""
    n = wcum[hi - 1] - (wcum[lo - 1] if lo > 0 else 0)  # rows (summed weights) of the segment
    if n < 2:
        return None
    pos = np.arange(lo + 1, hi)
    pos = pos[v[pos] != v[pos - 1]]
    if pos.size == 0:
        return None
    base = cum[lo - 1] if lo > 0 else np.zeros(cum.shape[1], dtype=np.int64)
    total = cum[hi - 1] - base
    left = cum[pos - 1] - base
    right = total - left
    nl = (wcum[pos - 1] - (wcum[lo - 1] if lo > 0 else 0)).astype(np.float64)
    ent_l, ent_r = _entropy(left), _entropy(right)
    e = (nl * ent_l + (n - nl) * ent_r) / n
    return _Segment(pos, left, right, ent_l, ent_r, e, n, float(_entropy(total[None, :])[0]), int((total > 0).sum()))


def _choose(seg: _Segment, rng: np.random.Generator | None, first: bool) -> tuple[int | None, bool]:
    """The cut of a segment and whether to recurse on its sides: the best split if MDL
    accepts it; with ``rng`` (Zhang 2020, Algorithm 11) one drawn in proportion to its
    excess, or on the first call, when none qualifies, one in proportion to its gain
    (kept without recursion); ``(None, False)``: no cut."""
    if rng is None:
        b = int(np.argmin(seg.e))
        excess = seg.ent_s - seg.e[b] - (np.log2(seg.n - 1) + seg.deltas()[b]) / seg.n
        return (b, True) if excess > 0 else (None, False)
    excess = np.maximum(seg.excess(), 0.0)
    if excess.sum() > 0:
        return int(rng.choice(len(excess), p=excess / excess.sum())), True
    g = np.maximum(seg.ent_s - seg.e, 0.0)
    if first and g.sum() > 0:  # at least one cut point (Algorithm 11, lines 16-24)
        return int(rng.choice(len(g), p=g / g.sum())), False
    return None, False


def _class_cumsums(values: np.ndarray, y: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """The sorted values, the cumulative class counts (or weights) along them and their
    row sums."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    _, yc = np.unique(np.asarray(y)[order], return_inverse=True)
    K = int(yc.max()) + 1 if len(yc) else 1
    if weights is None:
        onehot = np.zeros((len(v), K), dtype=np.int64)
        onehot[np.arange(len(v)), yc] = 1
    else:
        onehot = np.zeros((len(v), K))
        onehot[np.arange(len(v)), yc] = np.asarray(weights, dtype=np.float64)[order]
    cum = np.cumsum(onehot, axis=0)
    return v, cum, cum.sum(axis=1)


def mdl_cut_points(
    values: np.ndarray, y: np.ndarray, rng: np.random.Generator | None = None, weights: np.ndarray | None = None
) -> np.ndarray:
    """Cut points of Fayyad & Irani's (1993) MDL discretisation of ``values`` given classes ``y``.

    Candidate cuts are the midpoints between consecutive distinct values; the
    best cut minimises the class entropy of the two sides, and is kept while the
    MDL criterion accepts it (then both sides are split recursively).

    With ``rng``, the randomised version of Zhang (2020), Algorithm 11: among the
    candidates whose gain exceeds their MDL threshold, one is drawn with probability
    proportional to the excess; if none qualifies on the first call, one cut is drawn
    proportionally to the gain (so that a member of an ensemble keeps at least one cut
    point), and the recursion stops.

    ``weights``: one per value; integer weights give the cuts of the repeated values
    (the counts of the criterion become sums of weights).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 and weights is None:
        return np.zeros(0)
    v, cum, wcum = _class_cumsums(values, y, weights)
    cuts: list[float] = []
    stack = [(0, len(v))]
    first = True
    while stack:
        lo, hi = stack.pop()
        seg = _segment(v, cum, wcum, lo, hi)
        if seg is None:
            continue
        b, recurse = _choose(seg, rng, first)
        first = False
        if b is not None:
            s = int(seg.pos[b])
            cuts.append((v[s - 1] + v[s]) / 2.0)
            if recurse:
                stack.append((lo, s))
                stack.append((s, hi))
    return np.array(sorted(cuts))


def apply_transformer(transformer: Any, X: pd.DataFrame, on_unseen: str = "error") -> pd.DataFrame:
    """``transformer.transform(X)``, a discretiser's told what to do with a value that is
    neither a number nor one of its bins (``on_unseen``); another transformer (the
    user's own) transforms as it does."""
    if isinstance(transformer, Discretizer):
        return transformer.transform(X, on_unseen=on_unseen)
    return transformer.transform(X)


def make_discretizer(spec: Any, n_bins: int = 5) -> Any:
    """A discretiser from ``"mdl"``, ``"equal_frequency"``, ``"equal_width"`` or an object."""
    if spec is None:
        return None
    if isinstance(spec, str):
        key = spec.lower().replace("-", "_")
        if key == "mdl":
            return MDLDiscretizer()
        if key in ("equal_frequency", "quantile", "ef"):
            return EqualFrequencyDiscretizer(n_bins=n_bins)
        if key in ("equal_width", "uniform", "ew"):
            return EqualWidthDiscretizer(n_bins=n_bins)
        raise HyperparameterError(f"unknown discretiser {spec!r}; use 'mdl', 'equal_frequency' or 'equal_width'")
    if hasattr(spec, "fit") and hasattr(spec, "transform"):
        return spec
    raise HyperparameterError(f"discretize must be a name or a transformer, not {type(spec).__name__}")
