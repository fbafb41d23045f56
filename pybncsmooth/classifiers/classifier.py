"""``BNClassifier``: Bayesian network classifiers with scikit-learn's estimator contract.

The classifier's parameters are the structure, the method and every option the
``classifier`` entry point takes (:mod:`pybncsmooth.options`: ``k``, ``na``, ``domain``,
``discretize``, ``n_jobs``, ...), its signature generated from their declarations, so
an option added there is a parameter here (``get_params``, ``set_params``, ``clone``,
``GridSearchCV``) with no line of this module changed; estimator hyperparameters are
parameters too.  ``fit`` builds the :class:`~pybncsmooth.options.Options` once, checks
them before any data is read, and hands them whole to the structure builders
(:mod:`pybncsmooth.classifiers.builders`) or, for ``structure="eskdb"``, to the
ensemble (:mod:`pybncsmooth.classifiers.eskdb`).
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from ..data.discretize import MDLDiscretizer, apply_transformer, make_discretizer
from ..data.sources import as_source
from ..errors import DataError, EmptyDataError, HyperparameterError, MissingColumnError
from ..estimators import hyperparameter_names
from ..estimators.base import make_estimator
from ..options import Options, option_doc, option_specs, split_settings
from ..pipeline import DomainRole
from ..structure.learning import resolve_features
from ._inputs import class_series, feature_frame, is_source, training_frame, weights_by_position
from .builders import STRUCTURES, build_classifier_network
from ._tempering import tempered
from .eskdb import fit_eskdb

__all__ = ["BNClassifier", "STRUCTURES"]

#: the options a classifier takes, each a parameter of its own (structure first)
_OPTIONS = {n: s for n, s in option_specs("classifier").items() if n != "structure"}


def _default(name: str) -> Any:
    return Options.build("classifier").__getattribute__(name)


_DEFAULTS = {n: _default(n) for n in _OPTIONS}


class BNClassifier(ClassifierMixin, BaseEstimator):
    """A Bayesian network classifier (naive Bayes, TAN, kDB, selective kDB, ESKDB) whose
    CPTs are estimated by any pybncsmooth estimator.

    Parameters
    ----------
    structure : str or DAG
        ``"nb"``, ``"tan"`` (default), ``"kdb"``, ``"skdb"`` or ``"eskdb"`` (an
        ensemble of selective kDB classifiers with sampled attribute and parent orders,
        Zhang 2020, Ch. 4; see :mod:`pybncsmooth.classifiers.eskdb`), or a DAG to fit as
        given; every context tree branches on the class first, then on the other parents
        by decreasing CMI.  ESKDB members take ``method="hdp"``'s sweeps shared out
        (:func:`~pybncsmooth.classifiers.eskdb.member_iterations`) and
        ``method="mestimate"``'s ``m = 1 / (number of classes)`` where none is given.
    method : str or Estimator
        Estimator name (``"bayes"``, ``"mestimate"``, ``"hdp"``, ...) or object.
    **settings : option and hyperparameter values, by name
        The options (below; defaults for a classifier: ``na="level"``, missing values a
        level of their own, as Petitjean et al. 2018; ESKDB's members sum a query's
        missing cell out instead, ``sum_out_missing``) and the estimator's
        hyperparameters (``iss=``, ``m=``, ...), all settable with ``set_params`` and
        searchable with ``GridSearchCV``.  ``domain`` names a column of ``X`` (each
        row's domain, not a feature): the structure is learned on the pooled rows and
        every CPT per domain, shrunk toward the pooled one; ``predict_proba`` uses each
        row's domain.  ``on_unseen`` applies at prediction.

    Attributes
    ----------
    classes_, network_, dag_, discretizer_, feature_names_in_, n_features_in_, ignored_features_
        (for ESKDB ``network_``/``dag_`` are the first member's)
    estimators_, dags_
        ESKDB: the members' fitted networks and structures.
    exponent_
        ESKDB: the exponent every member's posterior is raised to before they are
        averaged, chosen by the ensemble's leave-one-out log loss
        (:mod:`pybncsmooth.classifiers._tempering`; 1 with ``tempering=False`` and for
        a single network).
    options_
        The :class:`~pybncsmooth.options.Options` of the fit.
    """

    def __init__(self, structure: Any = "tan", method: Any = "bayes", **settings: Any) -> None:
        options, hyper = split_settings(settings, method)
        self.structure = structure
        self.method = method
        for name in _OPTIONS:
            setattr(self, name, options.pop(name, _DEFAULTS[name]))
        self._other_options = options  # not a classifier's: refused by fit, saying what to do
        self._hyper = dict(hyper)
        for name, value in hyper.items():
            setattr(self, name, value)

    # ------------------------------------------------------------------ params
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep=deep)
        params.update(self._other_options)
        params.update(self._hyper)
        return params

    def set_params(self, **params: Any) -> "BNClassifier":
        own = set(super().get_params(deep=False))
        options, hyper = split_settings(params, params.get("method", self.method))
        for name, value in {**options, **hyper}.items():
            if name in own:
                setattr(self, name, value)
            elif name in options:
                self._other_options[name] = value
            elif name in hyperparameter_names() or name in self._hyper:
                self._hyper[name] = value
                setattr(self, name, value)
            else:
                raise ValueError(
                    f"invalid parameter {name!r} for BNClassifier; valid: {sorted(own | hyperparameter_names())}"
                )
        return self

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags

    def _options(self) -> Options:
        """The options of the parameters, checked (before any data is read)."""
        given = {n: getattr(self, n) for n in _OPTIONS}
        return Options.build("classifier", structure=self.structure, **given, **self._other_options)

    # ------------------------------------------------------------------ fitting
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
        takes two passes over the data (three for ``"skdb"``, four for ``"eskdb"``: the
        fourth finds its tempering exponent) and gives the classifier it gives on the
        data in memory."""
        options = self._options()
        estimator = make_estimator(self.method, options=options, **self._hyper)
        self.options_ = options
        if is_source(X):
            return self._fit_source(X, y, sample_weight, estimator, options)
        if isinstance(X, pd.DataFrame) and isinstance(y, str):
            if y not in X.columns:
                raise MissingColumnError(y, "class", [str(c) for c in X.columns])
            return self.fit(X.drop(columns=y), X[y], sample_weight)  # y names the class column of X
        X0 = X
        dom, X = DomainRole.of(options).split_frame(feature_frame(X))
        if len(X) == 0:
            raise EmptyDataError("X has no rows")
        y_ser = class_series(y, len(X))
        sw = weights_by_position(sample_weight, X0, X.index)
        Xd, member_mdl = self._discretized(X, y_ser, sw, options)
        domain = (options.domain, dom) if dom is not None else None
        frame, target, features, weights = training_frame(Xd, y_ser, domain, sw)
        fit_options = options.replace(weights=weights) if weights is not None else options
        self._fit_networks(frame, target, features, estimator, fit_options, member_mdl)
        return self._finish_fit([str(c) for c in X.columns], target)

    def _discretized(self, X: pd.DataFrame, y: pd.Series, sw: Any, options: Options) -> tuple[pd.DataFrame, bool]:
        """The features cut by ``discretize`` (fitted here) and whether ESKDB's members
        cut them instead, each with MDL cut points of its own (Zhang 2020, Sec. 4.2.1)."""
        self.discretizer_ = make_discretizer(options.discretize, options.n_bins)
        member_mdl = options.structure == "eskdb" and isinstance(self.discretizer_, MDLDiscretizer)
        member_mdl = member_mdl and isinstance(options.discretize, str)
        if member_mdl or self.discretizer_ is None:
            self.discretizer_ = None
            return X, member_mdl
        return self.discretizer_.fit(X, y.to_numpy(), sample_weight=sw).transform(X), False

    def _fit_source(self, X: Any, y: Any, sample_weight: Any, estimator: Any, options: Options) -> "BNClassifier":
        if not isinstance(y, str):
            raise DataError(
                "with X read in chunks (a path, a list of DataFrames, a function or a Dask DataFrame), y is the name "
                f"of the class column, not a {type(y).__name__}"
            )
        if options.discretize is not None:
            raise HyperparameterError(
                "discretize= learns cut points from the data in memory; for data read in chunks discretise the "
                "numeric columns first, or pass a DataFrame"
            )
        if sample_weight is not None and not isinstance(sample_weight, str):
            raise DataError("with X read in chunks, sample_weight is the name of the column holding the weights")
        source = as_source(X, chunksize=options.chunksize)
        columns = source.columns()
        if columns is None:
            raise EmptyDataError("the data has no chunk")
        if options.domain is not None and options.domain not in columns:
            raise MissingColumnError(options.domain, "domain", list(columns))
        features = DomainRole.of(options).features(resolve_features(columns, y, None), sample_weight)
        self.discretizer_ = None
        fit_options = options.replace(weights=sample_weight) if sample_weight is not None else options
        self._fit_networks(source, y, features, estimator, fit_options, False)
        return self._finish_fit(features, y)

    def _fit_networks(self, data: Any, target: str, features: list[str], estimator: Any, options: Options,
                      member_mdl: bool) -> None:
        """One network (every structure but ESKDB) or the ensemble's members."""
        if options.structure != "eskdb":
            source = as_source(data, chunksize=options.chunksize)
            net, dag, ignored = build_classifier_network(source, target, features, estimator, options)
            self.network_, self.dag_, self.ignored_features_ = net, dag, ignored
            self.estimators_, self.dags_, self.member_discretizers_ = [net], [dag], [None]
            self.exponent_ = 1.0
            return
        members = fit_eskdb(data, target, features, estimator, options, member_mdl=member_mdl)
        self.estimators_ = [m.network for m in members]
        self.dags_ = [m.dag for m in members]
        self.member_discretizers_ = [m.discretizer for m in members]
        self.exponent_ = members[0].exponent  # one for all members
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

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise NotFittedError("this BNClassifier is not fitted yet; call fit first")

    def _prepare(self, X: Any) -> pd.DataFrame:
        self._check_fitted()
        positional = not isinstance(X, pd.DataFrame)  # an array: columns matched by position
        X = feature_frame(X)
        if positional and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but BNClassifier is expecting {self.n_features_in_} features as input"
            )
        role = DomainRole.of(self.options_)
        dom = None
        if role and role.column in X.columns:
            dom, X = role.split_frame(X)  # without it the members answer with the population (or refuse)
        if self.discretizer_ is not None:
            X = apply_transformer(self.discretizer_, X, self.on_unseen)
        X = X.copy() if X.columns.dtype != object or dom is not None else X
        if dom is not None:
            X[self.options_.domain] = dom.to_numpy()
        X.columns = [str(c) for c in X.columns]
        return X

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class posteriors, columns in the order of ``classes_``.

        ``X`` may also be data read in chunks (a CSV/Parquet path, a list of frames, a
        function returning chunks, a Dask DataFrame): each chunk's feature columns are
        scored in turn (other columns, such as the class, are ignored) and the rows
        returned in the data's order."""
        if is_source(X):
            return self._proba_of_source(X)
        total, n = None, 0
        for p in self._member_probas(self._prepare(X)):  # ESKDB: the members' average (Zhang 2020, Algorithm 15)
            # of their tempered posteriors
            total, n = (p if total is None else total + p), n + 1
        return total / n

    def _feature_chunks(self, X: Any):
        """The feature columns of each non-empty chunk of data read in chunks."""
        self._check_fitted()
        features = [str(f) for f in self.feature_names_in_]
        domain = [self.options_.domain] if self.options_.domain is not None else []
        n = 0
        for chunk in as_source(X).chunks():
            have = set(map(str, chunk.columns))
            missing = [f for f in features if f not in have]
            if missing:
                raise MissingColumnError(missing[0], "feature", [str(c) for c in chunk.columns])
            if len(chunk):
                n += 1
                yield chunk[features + domain]
        if not n:
            raise EmptyDataError("the data to predict has no rows")

    def _proba_of_source(self, X: Any) -> np.ndarray:
        return np.vstack([self.predict_proba(chunk) for chunk in self._feature_chunks(X)])

    def staged_predict_proba(self, X: Any):
        """Class posteriors of the ensemble of the first ``1, 2, ..., n_estimators``
        members, one array per size (as scikit-learn's ``staged_predict_proba``): the
        running mean :math:`\\frac1n \\sum_{i \\le n} P_i(c \\mid x)` of the members' tempered
        posteriors (the exponent ``exponent_`` chosen for the whole ensemble).  A single
        classifier yields one array, its ``predict_proba``.  ``X`` may be data read in
        chunks, as for :meth:`predict_proba`."""
        if is_source(X):
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
        discretisation of the prepared features, raised to the ensemble's exponent
        :math:`p^\\beta / \\sum_c p_c^\\beta` (``exponent_``)."""
        members = getattr(self, "estimators_", [self.network_])
        discs = getattr(self, "member_discretizers_", None) or [None] * len(members)
        exponent = getattr(self, "exponent_", 1.0)
        sum_out = self._sums_out_missing(Xp)
        for net, disc in zip(members, discs):
            Xm = apply_transformer(disc, Xp, self.on_unseen) if disc is not None else Xp
            if sum_out:
                net = _summing_out(net)
            # on_unseen and on_unseen_domain apply at prediction: the current parameters (set_params after fit
            # included)
            p = net.predict_proba(Xm, self.target_, on_unseen=self.on_unseen,
                                  on_unseen_domain=self.on_unseen_domain).to_numpy()
            yield tempered(p, exponent)

    def _sums_out_missing(self, Xp: pd.DataFrame) -> bool:
        """Whether the members sum the missing cells of ``Xp`` out: ESKDB fitted with
        ``na="level"`` and ``sum_out_missing`` (read at prediction, as ``on_unseen``),
        and some cell missing."""
        opts = getattr(self, "options_", None)
        return bool(opts is not None and opts.structure == "eskdb" and opts.missing.name == "level"
                    and getattr(self, "sum_out_missing", True) and Xp.isna().to_numpy().any())

    def adapt(self, X: Any, y: Any, domain: Any, *, column: str | None = None,
              sample_weight: Any = None, on_unseen: str | None = None) -> "BNClassifier":
        """Add the domain ``domain`` to the fitted classifier from its rows (features ``X``,
        classes ``y``), or give an existing domain more rows, without refitting: every
        member network (one; ESKDB: each of its members) is adapted by
        :meth:`FittedNetwork.adapt`, its structure and the other domains untouched, the
        domain's tables shrunk toward the population's as much as its rows say
        (its concentration learned from them).  ``predict_proba`` then answers rows of
        that domain (the domain column of ``X``) with its tables.  Returns ``self``.

        ``X`` holds the fitted features (a data frame, or an array by position) and may
        hold the domain column, every value ``domain``; with a data frame ``y`` may name
        its class column.  ``y`` may hold a single class.  ``sample_weight``: one weight
        per row (the new counts are sums of weights).  A classifier fitted without
        ``domain=`` is the population: its domain column is then ``column`` (default
        ``"domain"``), and rows predicted without it get the population's tables (with an
        :class:`~pybncsmooth.errors.UnseenDomainWarning`).  With ``method="mle"`` the
        domain's tables are its own frequencies, exactly those a refit with its rows
        gives wherever the rows saw the parent configuration.  A feature level unseen in
        training is an error, or with ``on_unseen="backoff"`` an unobserved cell
        (default: the classifier's ``on_unseen``, as its predictions)."""
        from ._adapt import adapt_classifier

        rule = Options.build("adapt", on_unseen=self.on_unseen if on_unseen is None else on_unseen).on_unseen
        adapt_classifier(self, X, y, domain, column, sample_weight, rule)
        return self

    def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None) -> "BNClassifier":
        """Fit on batches that come one at a time (scikit-learn's incremental contract).

        The first call is ``fit`` on its batch, the structure learned there (or the DAG
        given as ``structure``) and the classes fixed: ``classes`` (all of them; sorted
        into ``classes_``), which later batches may not extend.  Every later call adds
        its rows to the counts of every member network (:meth:`FittedNetwork.update`):
        the structure, the features left out, the discretiser's cut points and ESKDB's
        tempering exponent stay those of the first call, and no earlier row is read again.  With a closed-form
        estimator (``mle``, ``bayes``, ``mestimate``, ...) the classifier equals
        ``BNClassifier(structure=clf.dag_).fit`` on all the batches; samplers resume
        from their last state.  ``X`` a data frame or an array (one batch in memory;
        with a data frame ``y`` may name its class column); ``sample_weight`` as in
        :meth:`fit`.  Returns ``self``."""
        from ._partial import partial_fit_classifier

        partial_fit_classifier(self, X, y, classes, sample_weight)
        return self

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log predict_proba(X)`` (``-inf`` only where an estimator such as ``mle``
        gives a class probability zero)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row (ties: the first class)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _summing_out(net: Any) -> Any:
    """``net`` answering queries with their missing cells summed out by exact inference
    (as a fit with ``na="drop"`` does), its tables and levels (the missing level
    included) those of the fit: a shallow copy, ``net`` itself unchanged."""
    out = copy.copy(net)
    out.options = net.options.replace(na="drop")
    return out


def _signature() -> inspect.Signature:
    """``BNClassifier``'s signature from the options' declarations: scikit-learn reads
    its parameters from it (``get_params``, ``clone``)."""
    kw = inspect.Parameter.KEYWORD_ONLY
    pos = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("self", pos),
        inspect.Parameter("structure", pos, default="tan"),
        inspect.Parameter("method", pos, default="bayes"),
        *[inspect.Parameter(n, kw, default=_DEFAULTS[n]) for n in _OPTIONS],
        inspect.Parameter("settings", inspect.Parameter.VAR_KEYWORD),
    ]
    return inspect.Signature(params)


BNClassifier.__init__.__signature__ = _signature()  # type: ignore[attr-defined]
_options_doc = "\n".join(f"    {s.name}:\n        {option_doc(s, _DEFAULTS[s.name])}" for s in _OPTIONS.values())
BNClassifier.__doc__ = BNClassifier.__doc__.replace(
    "\n    Attributes\n", "\n    Other Parameters\n    ----------------\n" + _options_doc + "\n\n    Attributes\n", 1
)
