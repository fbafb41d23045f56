"""``BNClassifier``: Bayesian network classifiers with scikit-learn's estimator contract.

The wrapper checks what the user passes (features, classes, options), then hands the
fit to the structure builders (:mod:`pybncsmooth.classifiers.builders`) or, for
``structure="eskdb"``, to the ensemble (:mod:`pybncsmooth.classifiers.eskdb`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d

from ..data.discretize import MDLDiscretizer, make_discretizer
from ..data.sources import as_source
from ..errors import DataError, EmptyDataError, HyperparameterError, MissingColumnError, SingleLevelError
from ..estimators import hyperparameter_names
from ..estimators.base import Estimator
from ..structure.learning import resolve_features
from ..validation import (
    CLASSIFIER_NA_POLICIES,
    check_choice,
    check_int,
    check_n_jobs,
    check_na,
    check_random_state,
)
from ._inputs import _NAN_OK, _is_source, _is_text, check_structure_options, split_domain, weights_by_position
from ..data.weights import WEIGHT_COLUMN, check_weights
from .builders import STRUCTURES, build_classifier_network
from .eskdb import EskdbOptions, fit_eskdb

__all__ = ["BNClassifier", "STRUCTURES"]


class BNClassifier(ClassifierMixin, BaseEstimator):
    """A Bayesian network classifier (naive Bayes, TAN, kDB, selective kDB) whose
    CPTs are estimated by any pybncsmooth estimator.

    Parameters
    ----------
    structure:
        ``"nb"``, ``"tan"``, ``"kdb"``, ``"skdb"`` or ``"eskdb"`` (an ensemble of
        selective kDB classifiers with sampled attribute and parent orders, thesis 002
        Ch. 4; see :mod:`pybncsmooth.classifiers.eskdb`); every context tree branches
        on the class first, then on the other parents by decreasing CMI.
    k:
        Non-class parents per feature for kDB; the largest ``k`` tried by SkDB and by
        each ESKDB member (default 1 for kDB and SkDB, 5 for ESKDB as thesis 002, at most the
        number of features).
    n_estimators:
        ESKDB members (default 10, the thesis's); only with ``structure="eskdb"``.  Where
        none is given, ``method="hdp"`` members share out the thesis's 1000 sweeps, at
        least 100 each (:func:`~pybncsmooth.classifiers.eskdb.member_iterations`), and
        ``method="mestimate"`` takes ``m = 1 / (number of classes)`` (thesis 002, Table 4).
    order_sampling, parent_sampling:
        ESKDB's two stochasticities (default both on); off: members sort attributes by
        MI, respectively take the ``k`` earlier attributes of highest CMI.
    method:
        Estimator name (``"bayes"``, ``"mestimate"``, ``"mle"``, ...) or object.
    na:
        Missing values: ``"level"`` (a value of its own, as paper 000), ``"drop"``,
        ``"error"``; ``"pairwise"`` (or ``"available"``) learns the structure by
        pairwise deletion (as bnlearn's TAN) and counts each CPT on its observed rows;
        ``"em"`` / ``"hard-em"`` learn it so and fit the CPTs by EM (nb, tan, kdb).
    discretize:
        ``None``, ``"mdl"``, ``"equal_frequency"``, ``"equal_width"`` or a fitted-on-
        training transformer, applied to numeric columns.
    n_bins:
        Bins of the unsupervised discretisers.
    root:
        TAN root (default: the first feature).
    on_unseen:
        A level unseen in training at prediction: ``"error"`` or ``"backoff"``.
    random_state:
        Passed to stochastic estimators.
    domain:
        A column of ``X`` naming each row's domain (site, user, year; not a feature):
        the structure is learned on the pooled rows and every CPT is fitted per domain,
        shrunk toward the pooled one as much as the data say (see
        :func:`pybncsmooth.fit`); ``predict_proba`` uses each row's domain (an unseen
        one gets the pooled tables, with :class:`~pybncsmooth.errors.UnseenDomainWarning`).
        ESKDB: every member's structure is learned on the pooled rows, its CPTs per
        domain (one more pass over the data per member).
    **hyper:
        Hyperparameters of the estimator (``iss=``, ``m=``, ...), also settable
        with ``set_params`` and searchable with ``GridSearchCV``.

    Attributes
    ----------
    classes_, network_, dag_, discretizer_, feature_names_in_, n_features_in_, ignored_features_
        (for ESKDB ``network_``/``dag_`` are the first member's)
    estimators_, dags_
        ESKDB: the members' fitted networks and structures.
    """

    def __init__(
        self,
        structure: str = "tan",
        k: int | None = None,
        method: str | Estimator = "bayes",
        na: str = "level",
        discretize: Any = None,
        n_bins: int = 5,
        root: str | None = None,
        on_unseen: str = "error",
        random_state: Any = None,
        n_estimators: int | None = None,
        order_sampling: bool = True,
        parent_sampling: bool = True,
        domain: str | None = None,
        **hyper: Any,
    ) -> None:
        self.domain = domain
        self.n_estimators = n_estimators
        self.order_sampling = order_sampling
        self.parent_sampling = parent_sampling
        self.structure = structure
        self.k = k
        self.method = method
        self.na = na
        self.discretize = discretize
        self.n_bins = n_bins
        self.root = root
        self.on_unseen = on_unseen
        self.random_state = random_state
        self._hyper = dict(hyper)
        for name, value in hyper.items():
            setattr(self, name, value)

    # ------------------------------------------------------------------ params
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep=deep)
        params.update(self._hyper)
        return params

    def set_params(self, **params: Any) -> "BNClassifier":
        own = set(super().get_params(deep=False))
        known = hyperparameter_names()
        for name, value in params.items():
            if name in own:
                setattr(self, name, value)
            elif name in known or name in self._hyper:
                self._hyper[name] = value
                setattr(self, name, value)
            else:
                raise ValueError(f"invalid parameter {name!r} for BNClassifier; valid: {sorted(own | known)}")
        return self

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ fitting
    def _frame(self, X: Any) -> pd.DataFrame:
        """A data frame of the features.  Data frames pass as they are (categoricals
        keep their levels); anything else goes through scikit-learn's ``check_array``
        (dense, 2-d, at least one row and column, numbers kept as numbers: a numeric
        array needs ``discretize=``) with columns ``x0, x1, ...``."""
        if isinstance(X, pd.DataFrame):
            return X
        arr = check_array(X, accept_sparse=False, dtype=None, **_NAN_OK)
        df = pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])
        # an object array holding numbers is numeric data (discretisers see numbers)
        return df.infer_objects() if arr.dtype == object else df

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "BNClassifier":
        """Learn the structure and the CPTs from features ``X`` and classes ``y``.

        ``sample_weight``: finite weights >= 0, one per row, at most 1e12 in total (a Series
        is aligned by index with a DataFrame ``X``; data read in chunks: the weights column's
        name), summed by the discretiser, structure statistics, selective kDB's losses and CPTs;
        integer weights equal repeated rows (not with ``na="em"`` for ``hdp``/``hls-bayes``).

        With ``X`` a data frame, ``y`` may name its class column.  ``X`` may also be
        data read in chunks, in bounded memory: a CSV or Parquet path,
        a list of DataFrames, a function returning an iterable of them, or a Dask
        DataFrame (counted per partition on Dask's workers); ``y`` is then the name of
        the class column and every other column is a feature.  Structure learning
        takes two passes over the data (three for ``"skdb"`` and ``"eskdb"``) and gives
        the classifier it gives on the data in memory."""
        self._check_options()
        if _is_source(X):
            return self._fit_source(X, y, sample_weight)
        if isinstance(X, pd.DataFrame) and isinstance(y, str):
            if y not in X.columns:
                raise MissingColumnError(y, "class", [str(c) for c in X.columns])
            return self.fit(X.drop(columns=y), X[y], sample_weight)  # y names the class column of X
        if y is None:
            raise ValueError("BNClassifier requires y to be passed, but the target y is None")
        sample_weight = weights_by_position(sample_weight, X)
        X = self._frame(X)
        dom_col, X = split_domain(X, self.domain)
        if len(X) == 0:
            raise EmptyDataError("X has no rows")
        if isinstance(y, (pd.api.extensions.ExtensionArray, pd.Index)):
            y = pd.Series(y)  # nullable integers, booleans, Categoricals keep their type as a Series does
        if not isinstance(y, pd.Series):
            y = column_or_1d(np.asarray(y, dtype=object) if _is_text(y) else y, warn=True)
            check_classification_targets(y)
        y_ser = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
        if y_ser.nunique(dropna=True) < 2:
            only = y_ser.dropna().unique()[:1].tolist()
            raise SingleLevelError(
                "y",
                only,
                f"y has 1 class ({only[0]!r}); a classifier needs at least two classes" if only else "y has no classes",
            )
        if len(y_ser) != len(X):
            raise DataError(f"X has {len(X)} rows but y has {len(y_ser)}")
        if y_ser.isna().any():
            raise DataError("y has missing values; drop those rows first")
        target = str(y_ser.name) if y_ser.name is not None else "class"
        while target in X.columns:
            target = "_" + target
        self.discretizer_ = make_discretizer(self.discretize, self.n_bins)
        # ESKDB with MDL: every member samples cut points of its own (thesis 002 Sec. 4.2.1)
        member_mdl = self.structure == "eskdb" and isinstance(self.discretize, str) and self.discretizer_ is not None
        member_mdl = member_mdl and isinstance(self.discretizer_, MDLDiscretizer)
        if member_mdl:
            self.discretizer_ = None
        sw = None if sample_weight is None else check_weights(sample_weight, X.index, "sample_weight")
        Xd = X
        if self.discretizer_ is not None:
            Xd = self.discretizer_.fit(X, y_ser.to_numpy(), sample_weight=sw).transform(X)
        frame = Xd.reset_index(drop=True).copy()
        if isinstance(y_ser.dtype, pd.CategoricalDtype):
            frame[target] = pd.Categorical(y_ser.to_numpy(), categories=y_ser.cat.categories)
        else:
            frame[target] = y_ser.to_numpy()
        features = [str(c) for c in Xd.columns]
        frame.columns = [*features, target]
        if dom_col is not None:
            frame[self.domain] = dom_col
        weights = None
        if sw is not None:
            frame[WEIGHT_COLUMN] = sw
            weights = WEIGHT_COLUMN
        self._check_ensemble_options()
        if self.structure == "eskdb":
            self._fit_ensemble(frame, target, features, member_mdl, weights)
            return self._finish_fit([str(c) for c in X.columns], target)
        self._fit_single(frame, target, features, weights)
        return self._finish_fit([str(c) for c in X.columns], target)

    def _fit_source(self, X: Any, y: Any, sample_weight: Any = None) -> "BNClassifier":
        if not isinstance(y, str):
            raise DataError(
                "with X read in chunks (a path, a list of DataFrames, a function or a Dask DataFrame), y is the name "
                f"of the class column, not a {type(y).__name__}"
            )
        if self.discretize is not None:
            raise HyperparameterError(
                "discretize= learns cut points from the data in memory; for data read in chunks discretise the "
                "numeric columns first, or pass a DataFrame"
            )
        source = as_source(X)
        columns = source.columns()
        if columns is None:
            raise EmptyDataError("the data has no chunk")
        if sample_weight is not None and not isinstance(sample_weight, str):
            raise DataError("with X read in chunks, sample_weight is the name of the column holding the weights")
        # every other column
        features = [f for f in resolve_features(columns, y, None) if f not in (self.domain, sample_weight)]
        if self.domain is not None and self.domain not in columns:
            raise MissingColumnError(self.domain, "domain", list(columns))
        self._check_ensemble_options()
        self.discretizer_ = None
        if self.structure == "eskdb":
            self._fit_ensemble(source, y, features, False, sample_weight)
        else:
            self._fit_single(source, y, features, sample_weight)
        return self._finish_fit(features, y)

    def _fit_single(self, data: Any, target: str, features: list[str], weights: str | None = None) -> None:
        """One network (every structure but ESKDB) from a frame or a data source."""
        self.network_, self.dag_, self.ignored_features_ = build_classifier_network(
            data,
            target,
            structure=self.structure,
            k=self._k(len(features)),
            method=self.method,
            na=self.na,
            root=self.root,
            random_state=self.random_state,
            features=features,
            domain=self.domain,
            weights=weights,
            **self._hyper,
        )
        self.estimators_ = [self.network_]
        self.dags_ = [self.dag_]
        self.member_discretizers_ = [None]

    def _check_options(self) -> None:
        """The options every structure takes, checked before any data is read (the
        structure's own, ``k`` against the features, the estimator's hyperparameters
        are checked where they are used)."""
        check_na(self.na, CLASSIFIER_NA_POLICIES, what="BNClassifier")
        check_choice("on_unseen", self.on_unseen, ("error", "backoff"))
        check_random_state(self.random_state)
        check_int("k", self.k, low=0, optional=True)
        check_int("n_bins", self.n_bins, low=1)
        if "n_jobs" in self._hyper:
            check_n_jobs(self._hyper["n_jobs"])

    def _k(self, n_features: int) -> int:
        """``k``, or the structure's default: 5 for ESKDB (the thesis's), at most the
        number of features; 1 otherwise.  A ``k`` the user gave is checked as given."""
        if self.k is not None:
            return self.k
        return min(5, n_features) if self.structure == "eskdb" else 1

    def _check_ensemble_options(self) -> None:
        check_structure_options(self)

    def _fit_ensemble(
        self, data: Any, target: str, features: list[str], member_mdl: bool, weights: str | None = None
    ) -> None:
        """ESKDB's members (see :func:`pybncsmooth.classifiers.eskdb.fit_eskdb`)."""
        skdb = {n: self._hyper[n] for n in ("skdb_m", "skdb_loss") if n in self._hyper}
        opts = EskdbOptions(
            n_estimators=10 if self.n_estimators is None else self.n_estimators,
            k=self._k(len(features)),
            method=self.method,
            na=self.na,
            random_state=self.random_state,
            order_sampling=self.order_sampling,
            parent_sampling=self.parent_sampling,
            n_jobs=self._hyper.get("n_jobs"),
            hyper={n: v for n, v in self._hyper.items() if n not in skdb},
            domain=self.domain,
            weights=weights,
            **skdb,
        )
        members = fit_eskdb(data, target, features, opts, member_mdl=member_mdl)
        self.estimators_ = [m.network for m in members]
        self.dags_ = [m.dag for m in members]
        self.member_discretizers_ = [m.discretizer for m in members]
        # the features no member uses
        self.ignored_features_ = [f for f in features if all(f in m.ignored for m in members)]
        self.network_, self.dag_ = self.estimators_[0], self.dags_[0]

    def _finish_fit(self, features: list[str], target: str) -> "BNClassifier":
        self.target_ = target
        # the classes keep y's type (numbers stay numbers), as scikit-learn's classifiers
        levels = list(self.network_.levels(target))
        classes = np.asarray(levels)
        self.classes_ = classes if classes.dtype.kind in "biufU" else np.array(levels, dtype=object)
        self.feature_names_in_ = np.array(features, dtype=object)
        self.n_features_in_ = len(features)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise NotFittedError("this BNClassifier is not fitted yet; call fit first")

    def _prepare(self, X: Any) -> pd.DataFrame:
        self._check_fitted()
        positional = not isinstance(X, pd.DataFrame)  # an array: columns matched by position
        X = self._frame(X)
        if positional and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but BNClassifier is expecting {self.n_features_in_} features as input"
            )
        dom, X = split_domain(X, getattr(self, "domain", None))
        if self.discretizer_ is not None:
            X = self.discretizer_.transform(X)
        X = X.copy() if X.columns.dtype != object or dom is not None else X
        if dom is not None:
            X[self.domain] = dom.to_numpy()
        X.columns = [str(c) for c in X.columns]
        return X

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class posteriors, columns in the order of ``classes_``.

        ``X`` may also be data read in chunks (a CSV/Parquet path, a list of frames, a
        function returning chunks, a Dask DataFrame): each chunk's feature columns are
        scored in turn (other columns, such as the class, are ignored) and the rows
        returned in the data's order."""
        if _is_source(X):
            return self._proba_of_source(X)
        total, n = None, 0
        for p in self._member_probas(self._prepare(X)):  # ESKDB: the members' average (thesis 002, Algorithm 15)
            total, n = (p if total is None else total + p), n + 1
        return total / n

    def _feature_chunks(self, X: Any):
        """The feature columns of each non-empty chunk of data read in chunks."""
        self._check_fitted()
        features = [str(f) for f in self.feature_names_in_]
        n = 0
        for chunk in as_source(X).chunks():
            have = set(map(str, chunk.columns))
            missing = [f for f in features if f not in have]
            if missing:
                raise MissingColumnError(missing[0], "feature", [str(c) for c in chunk.columns])
            if len(chunk):
                n += 1
                yield chunk[features + ([self.domain] if self.domain is not None else [])]
        if not n:
            raise EmptyDataError("the data to predict has no rows")

    def _proba_of_source(self, X: Any) -> np.ndarray:
        return np.vstack([self.predict_proba(chunk) for chunk in self._feature_chunks(X)])

    def staged_predict_proba(self, X: Any):
        """Class posteriors of the ensemble of the first ``1, 2, ..., n_estimators``
        members, one array per size (as scikit-learn's ``staged_predict_proba``): the
        running mean :math:`\\frac1n \\sum_{i \\le n} P_i(c \\mid x)`.  A single
        classifier yields one array, its ``predict_proba``.  ``X`` may be data read in
        chunks, as for :meth:`predict_proba`."""
        if _is_source(X):
            per_chunk = [list(self.staged_predict_proba(chunk)) for chunk in self._feature_chunks(X)]
            for stage in zip(*per_chunk):
                yield np.vstack(stage)
            return
        total = None
        for i, p in enumerate(self._member_probas(self._prepare(X)), start=1):
            total = p if total is None else total + p
            yield total / i

    def _member_probas(self, Xp: pd.DataFrame):
        """Each member's class posteriors (a single classifier: one member), on its own
        discretisation of the prepared features."""
        members = getattr(self, "estimators_", [self.network_])
        discs = getattr(self, "member_discretizers_", None) or [None] * len(members)
        for net, disc in zip(members, discs):
            Xm = disc.transform(Xp) if disc is not None else Xp
            yield net.predict_proba(Xm, self.target_, on_unseen=self.on_unseen).to_numpy()

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log predict_proba(X)`` (``-inf`` only where an estimator such as ``mle``
        gives a class probability zero)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row (ties: the first class)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
