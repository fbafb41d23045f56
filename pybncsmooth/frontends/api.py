"""``pybncsmooth.fit``: the front door.  What the user typed is dispatched to the fit
pipeline (:func:`pybncsmooth.pipeline.fit_network`) or, for a classifier formula with
``structure=`` or ``discretize=``, to the classifier builders
(:func:`pybncsmooth.classifiers.formula.fit_classifier_formula`)."""

from __future__ import annotations

from typing import Any

from ..classifiers.formula import fit_classifier_formula
from ..data.encode import DEFAULT_MAX_LEVELS, NAPolicy
from ..data.schema import NA_LABEL
from ..estimators.base import Estimator
from ..model.network import FittedNetwork
from ..pipeline import fit_network

__all__ = ["fit"]


def fit(
    spec: Any,
    data: Any,
    /,
    method: str | Estimator = "bayes",
    *,
    structure: str | None = None,
    k: int | None = None,
    discretize: Any = None,
    n_bins: int = 5,
    root: str | None = None,
    domain: str | None = None,
    na: NAPolicy = "error",
    random_state: Any = None,
    chunksize: int | None = None,
    max_levels: int = DEFAULT_MAX_LEVELS,
    na_label: str = NA_LABEL,
    progress: bool | None = None,
    weights: Any = None,
    **hyper: Any,
) -> FittedNetwork:
    """Fit the parameters of a discrete Bayesian network.

    Pipeline: data frame -> codes + schema -> one context tree per node ->
    estimator -> :class:`FittedNetwork`.

    Parameters
    ----------
    spec:
        The structure: a bnlearn model string ``"[A][B|A][C|A:B]"``, per-node
        formulas ``["B ~ A", "C ~ A + B"]``, a :class:`DAG`, a network file
        (``.bif``/``.dsc``/``.net``/``.rds``/``.pbn``, whose levels then fix the
        data's), a fitted network, or a ``networkx.DiGraph``.  A node's parent
        order is the branching order of its context tree.
    data:
        A pandas DataFrame of categorical columns; a path to a CSV or Parquet file,
        read in chunks of ``chunksize`` rows (default: about two million values a
        chunk, so that memory does not grow with the file); a list of DataFrame
        chunks, a function returning an iterable of them, or a one-shot iterator
        (counted one at a time; the same result as the concatenation); or a Dask
        DataFrame, counted per partition on Dask's workers and merged (map-reduce).
        Levels first met in a later chunk are united with the earlier ones (the
        result is the same as one pass over the whole data); with a network file
        fixing the levels, a level it does not declare is an error naming the level,
        the column and the chunk.
    method:
        ``"mle"``, ``"bayes"`` (BDeu, ``iss``), ``"mestimate"`` (``m``), ``"hdp"``
        (hierarchical Dirichlet process: ``iterations``, ``burn_in``, ``tying``,
        ``n_chains``, ...), ``"hmd"`` (hierarchical Multinomial-Dirichlet by
        variational inference: ``s``, ``alpha0``, ``iss``, ``compat="bnlearn"``,
        ``tol``, ``max_iter``), or an estimator object.  See
        :func:`pybncsmooth.available_methods`.
    structure, k, root:
        With a classifier formula ``"Class ~ ."`` (or ``"Class ~ A + B"``): learn a
        ``"nb"``, ``"tan"`` (``root``), ``"kdb"`` or ``"skdb"`` (``k``) structure on
        ``data`` first; the result is the model :class:`BNClassifier` builds.
    discretize, n_bins:
        ``"mdl"``, ``"equal_frequency"`` or ``"equal_width"`` (or a transformer)
        for numeric columns, fitted on ``data`` (MDL uses the class of the
        formula); the fitted network applies it to the data it is queried with.
    domain:
        A column naming the domain of each row (user, site, year, ...): every node's
        context tree then splits on it last, below the node's parents, so that a
        domain's table for a parent configuration shrinks toward that configuration
        pooled over the domains: the pooled levels are the estimator's fit without
        the domain, a domain's leaf the posterior mean of
        :math:`\\mathrm{Dir}(s_D \\hat\theta_y)`, with one concentration
        :math:`s_D` per node learned by marginal likelihood (alike domains pool
        completely, different ones keep their own counts; ``mle`` never pools).
        A configuration a domain never saw, a domain level with no rows and a domain
        unseen in training get the pooled tables.  ``method="hmd",
        domain_model="joint"`` (implied by ``iss=`` and ``compat="bnlearn"``) is
        paper 001's Sec. 5 model on the joint cells with the domain split first,
        bnlearn's ``hdir``.  ``group=`` is accepted as bnlearn's name for it.  A
        structure that already has this column as a root parent of every node
        (bnlearn's grouped layout) is accepted.  With a classifier formula and
        ``structure=``, the structure is learned on the pooled rows.  A fitted
        network takes a new domain without refitting: :meth:`FittedNetwork.adapt`.
    na:
        Missing values: ``"error"`` (default), ``"level"`` (a level of its own),
        ``"drop"`` (drop incomplete rows), ``"available"`` (each node uses the rows
        where it and its parents are observed, as bnlearn's ``bn.fit``), ``"em"``
        (EM from the available-case fit: expected counts of the missing cells, the
        estimator as M-step; for ``hdp`` and ``hls-bayes`` data augmentation, the
        missing cells drawn and the samplers' posterior means averaged) or
        ``"hard-em"`` (bnlearn's: each row's most probable completion).  EM's
        settings go in ``**hyper``: ``em_tol`` (relative change of the observed-data
        log-likelihood, default 1e-6), ``em_max_iter`` (default 100), and for data
        augmentation ``em_draws`` (blocks averaged, default 10) and ``em_burn``
        (blocks discarded first, default 2); see :mod:`pybncsmooth.pipeline.em`.  They
        are checked whatever ``na`` is (a policy without EM ignores valid ones).
    random_state:
        Seed or ``numpy.random.Generator`` for stochastic estimators.
    progress:
        Progress bars: over chunks (Dask: partitions) while counting, and the
        estimator's own where it has one (HDP's sweeps); ``None`` (default): no bar
        over chunks, the estimator's default.
    weights:
        Row weights, finite numbers >= 0: an array with one per row (data in memory;
        a pandas Series is aligned with the rows by index) or the name of a column of
        the data (any source).  Every count becomes a sum
        of weights (integer weights equal repeated rows, except with ``na="em"`` for
        ``hdp`` and ``hls-bayes``, whose data augmentation draws the missing cells of a
        weighted row once: the same posterior, other draws).  Their total must be at
        most 1e12 (:data:`~pybncsmooth.data.weights.MAX_TOTAL_WEIGHT`): the smoothing
        estimators weigh a prior of a few rows against the counts, which double
        precision no longer resolves beyond that; rescale larger ones.  ``hdp`` and ``hls-bayes``,
        whose samplers need whole counts, take integer weights only.  With a
        classifier formula the structure's statistics are weighted too (not with
        ``structure="skdb"``).
    **hyper:
        Hyperparameters of the method (``iss=``, ``m=``, ...); unknown names raise
        :class:`~pybncsmooth.errors.HyperparameterError`.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="bayes", iss=1)
    >>> round(float(net.cpt("A")[1]), 7)
    0.0084983
    """
    if structure is not None or discretize is not None:
        return fit_classifier_formula(
            spec,
            data,
            method=method,
            structure=structure,
            k=k,
            discretize=discretize,
            n_bins=n_bins,
            root=root,
            domain=domain,
            na=na,
            random_state=random_state,
            chunksize=chunksize,
            progress=progress,
            weights=weights,
            **hyper,
        )
    return fit_network(
        spec,
        data,
        method,
        weights=weights,
        domain=domain,
        na=na,
        random_state=random_state,
        chunksize=chunksize,
        max_levels=max_levels,
        na_label=na_label,
        progress=progress,
        **hyper,
    )
