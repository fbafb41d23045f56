"""``pybncsmooth.fit``: the front door.  The keyword arguments are split once into
options (:mod:`pybncsmooth.options`, checked into one :class:`~pybncsmooth.options.Options`)
and the method's hyperparameters (checked by building the estimator); both go whole to
the fit pipeline (:func:`pybncsmooth.pipeline.fit_network`) or, for a classifier
formula with ``structure=`` or ``discretize=``, to the classifier builders
(:func:`pybncsmooth.classifiers.formula.fit_classifier_formula`)."""

from __future__ import annotations

from typing import Any

from ..estimators.base import Estimator, make_estimator
from ..model.network import FittedNetwork
from ..options import Options, option_doc, option_specs, split_settings
from ..pipeline import fit_network

__all__ = ["fit"]


def fit(spec: Any, data: Any, /, method: str | Estimator = "bayes", **settings: Any) -> FittedNetwork:
    """Fit the parameters of a discrete Bayesian network.

    Pipeline: data frame -> codes + schema -> one context tree per node ->
    estimator -> :class:`FittedNetwork`.

    Parameters
    ----------
    spec : str, list of str, DAG, path, FittedNetwork or networkx.DiGraph
        The structure: a bnlearn model string ``"[A][B|A][C|A:B]"``, per-node
        formulas ``["B ~ A", "C ~ A + B"]``, a :class:`DAG`, a network file
        (``.bif``/``.dsc``/``.net``/``.rds``/``.pbn``, whose levels then fix the
        data's), a fitted network, or a ``networkx.DiGraph``.  A node's parent
        order is the branching order of its context tree.  With ``structure=`` (or
        ``discretize=`` alone: naive Bayes) a classifier formula ``"Class ~ ."`` (or
        ``"Class ~ A + B"``): the structure is learned on ``data`` first, the model
        :class:`BNClassifier` builds.
    data : DataFrame, path, list or iterator of DataFrames, callable or Dask DataFrame
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
    method : str or Estimator
        ``"mle"``, ``"bayes"`` (BDeu, ``iss``), ``"mestimate"`` (``m``), ``"hdp"``
        (hierarchical Dirichlet process: ``iterations``, ``burn_in``, ``tying``,
        ``n_chains``, ...), ``"hmd"`` (hierarchical Multinomial-Dirichlet: ``s``,
        ``alpha0``, ``iss``, ``compat="bnlearn"``, ``tol``, ``max_iter``), ``"hls"``,
        ``"hls-bayes"``, ``"hgs"``, ``"mbranch"``, or an estimator object.  See
        :func:`pybncsmooth.available_methods` and ``pybncsmooth methods``.
    **settings : option and hyperparameter values, by name
        The options of the fit (below; each declared once in
        :mod:`pybncsmooth.options`) and the method's hyperparameters (``iss=``, ``m=``,
        ...; a name that is neither raises
        :class:`~pybncsmooth.errors.HyperparameterError`).  ``group=`` is accepted as
        bnlearn's name for ``domain``.

        With ``domain=`` every node's context tree splits on the domain column last,
        below the node's parents, so that a domain's table for a parent configuration
        shrinks toward that configuration pooled over the domains: a domain's leaf is
        the posterior mean of :math:`\\mathrm{Dir}(s_D \\hat\\theta_y)`, with one
        concentration :math:`s_D` per node learned by marginal likelihood (alike
        domains pool completely, different ones keep their own counts; ``mle`` never
        pools).  ``method="hmd", domain_model="joint"`` (implied by ``iss=`` and
        ``compat="bnlearn"``) is Azzimonti, Corani & Zaffalon (2019), Sec. 5, bnlearn's
        ``hdir``.  A fitted network takes a new domain without refitting:
        :meth:`FittedNetwork.adapt`.

        With ``na="em"`` / ``"hard-em"`` the CPTs come from EM over the missing cells
        from the available-case fit, the estimator as M-step (``em_tol``,
        ``em_max_iter``); for ``hdp`` and ``hls-bayes`` ``na="em"`` is data
        augmentation (``em_draws`` blocks averaged after ``em_burn``); see
        :mod:`pybncsmooth.pipeline.em`.

        ``weights``: every count becomes a sum of weights (integer weights equal
        repeated rows, except with ``na="em"`` for ``hdp`` and ``hls-bayes``); their
        total must be at most 1e12
        (:data:`~pybncsmooth.data.weights.MAX_TOTAL_WEIGHT`); a pandas Series is
        aligned with the rows by index.

    Examples
    --------
    >>> import pybncsmooth as bs
    >>> df = bs.load_dataset("asia")
    >>> net = bs.fit("[A][S][T|A][L|S][B|S][D|B:E][E|T:L][X|E]", df, method="bayes", iss=1)
    >>> round(float(net.cpt("A")[1]), 7)
    0.0084983
    """
    given, hyper = split_settings(settings, method)
    options = Options.build("fit", **given)
    estimator = make_estimator(method, options=options, **hyper)
    classifier = options.structure is not None or (
        options.discretize is not None and isinstance(spec, str) and spec.count("~") == 1 and "[" not in spec
    )
    if classifier:
        from ..classifiers.formula import fit_classifier_formula  # scikit-learn, imported when first used

        return fit_classifier_formula(spec, data, estimator, options)
    return fit_network(spec, data, estimator, options)


def _options_section() -> str:
    """The docstring's "Other Parameters": every option ``fit`` takes, from its declaration."""
    lines = ["", "    Other Parameters", "    ----------------"]
    for spec in option_specs("fit").values():
        default = Options.build("fit").__getattribute__(spec.name)
        lines.append(f"    {spec.name}:")
        lines.append(f"        {option_doc(spec, default)}")
    return "\n".join(lines) + "\n"


fit.__doc__ = fit.__doc__.replace("\n    Examples\n", _options_section() + "\n    Examples\n", 1)
