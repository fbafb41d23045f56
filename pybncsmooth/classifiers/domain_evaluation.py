"""Is pooling worth it, and for which domains? Pooled, separate and hierarchical fits
of one structure compared domain by domain.

Two schemes:

* ``"within"``: in every domain a share of the rows (``test_size``) is held out, the
  rest trains every setting; each domain's held-out rows are scored;
* ``"lodo"``: leave one domain out: the other domains train the population, then
  ``k`` rows of the left-out domain (``k`` on a grid) adapt it and its remaining rows
  are scored (the same rows for every ``k``).  Hierarchical settings add the domain
  with :meth:`FittedNetwork.adapt` (no refit), pooled settings refit on the other
  domains plus the ``k`` rows, separate settings fit the ``k`` rows alone.

The score is the held-out log-likelihood per row (of the whole row, or with ``target``
the class: its log probability given the other columns, plus the RMSE over classes and
the log loss).  Beside the score of a hierarchical setting in the ``lodo`` scheme stand
what the adapted domain learned: its concentration ``s_domain`` (the geometric mean over
the nodes of each node's posterior geometric mean of :math:`s_D`), ``shrinkage`` (its
prior's weight in its tables, averaged over the nodes), ``p_new`` (the posterior
probability that a node's table is a type of its own, averaged over the nodes) and
``like`` (the fitted domain whose table it most likely copies, in the node where a copy
is likeliest: :meth:`FittedNetwork.domain_report`).  A hierarchical setting's
``regret`` is how far its score falls behind the better of the pooled and separate
settings in that domain (negative: ahead of both); adapt's aim is a regret of at most
0.01 nats/row in every domain, averaged over draws of its rows (``n_draws``).
Win-draw-loss over domains with the two-tailed sign test compares two settings;
:meth:`DomainEvaluation.summary` gives the mean and the worst regret and the share of
domains where each hierarchical setting beats every pooled and separate one.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.levels import level_codes
from ..errors import DataError, HyperparameterError, MissingColumnError, UnseenDomainWarning
from ..estimators.base import make_estimator
from ..model.network import FittedNetwork
from ..options import Options, split_settings
from ..pipeline import fit_network
from ..validation import check_int, check_probability, progress_bar
from .comparison import sign_test
from .crossval import categorize
from .metrics import log_loss, rmse

__all__ = ["evaluate_domains", "DomainEvaluation", "default_domain_settings"]

_MODES = ("pooled", "separate", "domain")


def default_domain_settings(method: str = "hmd") -> dict[str, dict[str, Any]]:
    """Pooled and hierarchical fits of ``method`` and separate BDeu fits (``iss = 1``)."""
    return {
        "pooled": {"mode": "pooled", "method": method},
        "separate": {"mode": "separate", "method": "bayes", "iss": 1.0},
        "hierarchical": {"mode": "domain", "method": method},
    }


class DomainEvaluation:
    """The tidy results of :func:`evaluate_domains` and what to read off them.

    ``results`` has one row per scheme, setting (and its ``mode``), domain, ``k``
    (``lodo``; -1 for ``within``) and repetition, with ``n_test`` and the scores
    (``loglik``: mean held-out log-likelihood per row, higher is better; with a target
    also ``rmse`` and ``log_loss``, lower is better); a hierarchical setting's rows hold
    its ``regret`` (the better pooled or separate ``loglik`` minus its own), its
    ``lodo`` rows the adapted domain's learned ``s_domain``, ``shrinkage``, ``p_new``
    and ``like`` (see the module documentation)."""

    def __init__(self, results: pd.DataFrame, target: str | None) -> None:
        self.results = results
        self.target = target

    def summary(self, by_domain: bool = False) -> pd.DataFrame:
        """Scores averaged over domains (weighted by held-out rows) per scheme, ``k`` and
        setting, and for the hierarchical settings the ``regret`` to the better of pooled
        and separate averaged over the domains (and repetitions and draws), its worst
        (``max_regret``: of one draw), the share of domain-draws more than 0.01 nats/row
        behind (``over_001``), the largest of the domains' regrets averaged over their
        draws and repetitions (``max_domain_regret``; with ``n_draws=1`` the worst domain's
        mean over repetitions) and ``beats_both``: the share of domains where the
        setting's score (``loglik``, summed over repetitions and draws) is above that of
        every pooled and every separate setting.  ``by_domain=True``: one row per
        scheme, ``k``, setting and domain (its scores and regret averaged over its
        repetitions and draws, ``max_regret`` its worst draw, ``n_draws`` how many)."""
        if by_domain:
            return self._by_domain()
        r = self.results.dropna(subset=["loglik"])
        cols = [c for c in ("loglik", "rmse", "log_loss") if c in r]
        w = r[cols].multiply(r["n_test"], axis=0)
        keys = [r["scheme"], r["k"], r["setting"]]
        g = w.groupby(keys, sort=False).sum()
        n = r.groupby(["scheme", "k", "setting"], sort=False)["n_test"].sum()
        out = g.divide(n, axis=0).join(n)
        if "regret" in r:
            reg = r["regret"].groupby(keys, sort=False)
            out["regret"], out["max_regret"] = reg.mean(), reg.max()
            out["over_001"] = (r["regret"] > 0.01).where(r["regret"].notna()).groupby(keys, sort=False).mean()
            per = r.groupby(["scheme", "k", "setting", "domain"], sort=False, observed=True)["regret"].mean()
            out["max_domain_regret"] = per.groupby(level=[0, 1, 2], sort=False).max()
        out["beats_both"] = [self._beats_both(*key) for key in out.index]
        return out

    def _by_domain(self) -> pd.DataFrame:
        """:meth:`summary` per domain: scores and regret averaged over repetitions and
        draws, the worst draw's regret, the number of draws scored."""
        r = self.results.dropna(subset=["loglik"])
        cols = [c for c in ("loglik", "rmse", "log_loss", "regret") if c in r]
        g = r.groupby(["scheme", "k", "setting", "domain"], sort=False, observed=True)
        out = g[cols].mean()
        if "regret" in r:
            out["max_regret"] = g["regret"].max()
        out["n_draws"] = g.size()
        return out.sort_index()

    def _beats_both(self, scheme: str, k: int, setting: str) -> float:
        """The share of domains where ``setting`` (a hierarchical one) scores above every
        pooled and separate setting (``nan`` for those, or when none is there)."""
        r = self.results[(self.results["scheme"] == scheme) & (self.results["k"] == k)]
        if "mode" not in r or (r.loc[r["setting"] == setting, "mode"] != "domain").all():
            return np.nan
        tot = r.assign(s=r["loglik"] * r["n_test"]).groupby(["setting", "domain"], observed=True)["s"].sum()
        rivals = sorted(set(r.loc[r["mode"] != "domain", "setting"]))
        own = tot[setting]
        if not rivals or own.empty:
            return np.nan
        beat = np.ones(len(own), dtype=bool)
        for other in rivals:
            theirs = tot[other].reindex(own.index)
            beat &= (own - theirs).to_numpy() > 1e-12
        return float(beat.mean())

    def win_draw_loss(self, a: str, b: str, *, scheme: str = "within", k: int | None = None,
                      metric: str = "loglik") -> dict[str, Any]:
        """Domains where setting ``a`` scores better than ``b`` (summed over repetitions),
        ties, worse, and the two-tailed sign test's p-value.  ``metric``: ``"loglik"``,
        or with a target ``"rmse"`` and ``"log_loss"`` (a metric the results lack is a
        :class:`~pybncsmooth.errors.HyperparameterError` listing those they have)."""
        r = self.results[self.results["scheme"] == scheme]
        if scheme == "lodo":
            if k is None:
                raise HyperparameterError("give k= (rows of the left-out domain) for scheme='lodo'")
            r = r[r["k"] == k]
        for name in (a, b):
            if name not in set(r["setting"]):
                raise HyperparameterError(f"no setting {name!r} in the results; have {sorted(set(r['setting']))}")
        have = [m for m in ("loglik", "rmse", "log_loss") if m in r.columns]
        if metric not in have:
            need_target = self.target is None and metric in ("rmse", "log_loss")
            why = " (rmse and log_loss need target=)" if need_target else ""
            raise HyperparameterError(f"no metric {metric!r} in the results{why}; available: {', '.join(have)}")
        tot = r.assign(s=r[metric] * r["n_test"]).groupby(["setting", "domain"], observed=True)["s"].sum()
        da, db = tot[a], tot[b]
        common = da.index.intersection(db.index)
        diff = (da[common] - db[common]).to_numpy()
        if metric != "loglik":
            diff = -diff
        wins, losses = int((diff > 1e-12).sum()), int((diff < -1e-12).sum())
        draws = len(diff) - wins - losses
        return {"wins": wins, "draws": draws, "losses": losses, "p_value": sign_test(wins, losses)}

    def plot(self, ax: Any = None, metric: str = "loglik") -> Any:
        """Learning curves of the ``lodo`` scheme: the score against ``k`` per setting."""
        import matplotlib.pyplot as plt

        s = self.summary().reset_index()
        s = s[s["scheme"] == "lodo"]
        if s.empty:
            raise DataError("no leave-one-domain-out results to plot (lodo=False)")
        ax = ax or plt.subplots(figsize=(5, 3.5))[1]
        for name, g in s.groupby("setting", sort=False):
            ax.plot(g["k"], g[metric], marker="o", label=name)
        ax.set_xlabel("rows of the left-out domain (k)")
        ax.set_ylabel("held-out log-likelihood per row" if metric == "loglik" else metric)
        ax.legend()
        return ax


def _scores(net: FittedNetwork, test: pd.DataFrame, target: str | None) -> dict[str, float]:
    if target is None:
        return {"loglik": float(net.logpdf(test).mean())}
    proba = net.predict_proba(test, target).to_numpy()
    # the classes as the network names its levels (every class of the data is one: categorize)
    y = level_codes(test[target].to_numpy(dtype=object), tuple(net.levels(target)))
    with np.errstate(divide="ignore"):
        ll = float(np.mean(np.log(proba[np.arange(len(y)), y])))
    return {"loglik": ll, "rmse": rmse(proba, y), "log_loss": log_loss(proba, y)}


def _fit(spec: Any, train: pd.DataFrame, setting: Mapping[str, Any], domain: str, seed: Any, options: Options
         ) -> FittedNetwork:
    """One setting's fit on ``train``: its method and hyperparameters, its options (the
    call's with the setting's own over them, checked by :func:`_setting_options`) and
    the repetition's seed."""
    own, hyper = split_settings({k: v for k, v in setting.items() if k not in ("mode", "method")},
                               setting.get("method", "hmd"))
    opts = _setting_options(options, own).replace(random_state=seed)
    if setting["mode"] == "domain":
        opts = opts.replace(domain=domain)
    est = make_estimator(setting.get("method", "hmd"), options=opts, **hyper)
    data = train if setting["mode"] == "domain" else train.drop(columns=domain)
    return fit_network(spec, data, est, opts)


def _setting_options(options: Options, own: Mapping[str, Any]) -> Options:
    """The options of one setting: the call's (``options``), the setting's ``own`` over
    them, built and checked at the ``evaluate_domains`` entry point as the call's were
    (an option it does not take, such as ``structure`` or ``on_unseen_domain``, is
    refused naming it)."""
    if not own:
        return options
    return Options.build("evaluate_domains", **{**options.explicit(), **own})


def _check_settings(settings: Mapping[str, Mapping[str, Any]], options: Options) -> None:
    if not settings:
        raise HyperparameterError("settings is empty")
    for name, s in settings.items():
        if not isinstance(s, Mapping) or s.get("mode") not in _MODES:
            raise HyperparameterError(
                f"setting {name!r} needs mode= one of {_MODES} (and method=, hyperparameters), not {s!r}"
            )
        own, hyper = split_settings({k: v for k, v in s.items() if k not in ("mode", "method")})
        try:
            _setting_options(options, own)
            make_estimator(s.get("method", "hmd"), **hyper)
        except HyperparameterError as e:
            raise HyperparameterError(f"setting {name!r}: {e}") from None


def _within(spec, data, domain, settings, target, test_size, rng, seed, rep, options) -> list[dict]:
    rows = []
    groups = data.groupby(domain, observed=True).indices
    test_mask = np.zeros(len(data), dtype=bool)
    for idx in groups.values():
        n_test = int(round(test_size * len(idx)))
        if len(idx) >= 2:
            test_mask[rng.choice(idx, min(max(n_test, 1), len(idx) - 1), replace=False)] = True
    train, test = data[~test_mask], data[test_mask]
    for name, s in settings.items():
        if s["mode"] == "separate":
            nets = {}
            for d, ix in train.groupby(domain, observed=True).indices.items():
                nets[d] = _fit(spec, train.iloc[ix], dict(s, mode="pooled"), domain, seed, options)
        else:
            net = _fit(spec, train, s, domain, seed, options)
        for d, ix in test.groupby(domain, observed=True).indices.items():
            te = test.iloc[ix]
            if s["mode"] == "separate":
                if d not in nets:
                    continue
                sc = _scores(nets[d], te.drop(columns=domain), target)
            elif s["mode"] == "pooled":
                sc = _scores(net, te.drop(columns=domain), target)
            else:
                sc = _scores(net, te, target)
            rows.append({"scheme": "within", "setting": name, "mode": s["mode"], "domain": d, "k": -1,
                         "repeat": rep, "draw": 0, "n_test": len(te), **sc})
    return rows


def _lodo(spec, data, domain, settings, target, k_grid, rng, seed, rep, options, bar, n_draws=1) -> list[dict]:
    rows = []
    kmax = max(k_grid)
    for d, idx in data.groupby(domain, observed=True).indices.items():
        if len(idx) <= kmax:
            continue  # too few rows to adapt from kmax and keep a test set
        perms = [rng.permutation(idx) for _ in range(n_draws)]
        others = data[data[domain] != d]
        for name, s in settings.items():
            pop = _fit(spec, others, s, domain, seed, options) if s["mode"] == "domain" else None
            for draw, perm in enumerate(perms):
                adapt_pool, te = data.iloc[perm[:kmax]], data.iloc[perm[kmax:]]
                te_nodes = te.drop(columns=domain)
                for k in k_grid:
                    sc = _lodo_score(spec, s, pop, others, adapt_pool.iloc[:k], te_nodes, d, domain, target, seed,
                                     options)
                    if sc is not None:
                        rows.append({"scheme": "lodo", "setting": name, "mode": s["mode"], "domain": d,
                                     "k": int(k), "repeat": rep, "draw": draw, "n_test": len(te), **sc})
        if bar is not None:
            bar.update(1)
    return rows


def _lodo_score(spec, s, pop, others, ad, te_nodes, d, domain, target, seed, options) -> dict | None:
    """One setting's scores on the left-out domain ``d`` given ``k = len(ad)`` of its
    rows (``None``: a separate fit from no row)."""
    k = len(ad)
    if s["mode"] == "separate":
        if k == 0:
            return None
        return _scores(_fit(spec, ad, dict(s, mode="pooled"), domain, seed, options), te_nodes, target)
    if s["mode"] == "pooled":
        return _scores(_fit(spec, pd.concat([others, ad]), s, domain, seed, options), te_nodes, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenDomainWarning)
        extra = {"weights": options.weights} if options.weights is not None else {}
        adapted = pop.adapt(ad.drop(columns=domain), d, **extra) if k else None
        one = adapted.for_domain(d) if k else pop.for_domain(d)
    return {**_scores(one, te_nodes, target), **_learned(adapted, d)}


def _learned(adapted: FittedNetwork | None, d: Any) -> dict[str, Any]:
    """What the adapted domain ``d`` learned: its concentration (the geometric mean over
    the nodes of each node's posterior geometric mean; ``nan`` from no row), its prior's
    weight in its tables averaged over the nodes (1 from no row), the probability that
    it is a type of its own (each node chooses: averaged over the nodes) and the fitted
    domain it most likely copies (in the node where a copy is likeliest)."""
    if adapted is None:
        return {"s_domain": np.nan, "shrinkage": 1.0, "p_new": np.nan, "like": None}
    rep = adapted.domain_report(draws=0)
    rep = rep[rep["domain"] == d]
    if not len(rep):
        return {"s_domain": np.nan, "shrinkage": np.nan, "p_new": np.nan, "like": None}
    with np.errstate(divide="ignore"):
        s = float(np.exp(np.mean(np.log(rep["s_domain"].to_numpy()))))
    best = int(np.argmax(rep["p_like"].fillna(-1.0).to_numpy()))
    return {"s_domain": s, "shrinkage": float(rep["shrinkage"].mean()), "p_new": float(rep["p_new"].mean()),
            "like": rep["like"].iloc[best]}


def _with_regret(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with a hierarchical row's ``regret``: the best ``loglik`` of the pooled
    and separate settings in the same scheme, ``k``, domain and repetition minus its own
    (``nan`` for those settings, or without any)."""
    if results.empty:
        return results
    keys = ["scheme", "k", "domain", "repeat", "draw"]
    rivals = results[results["mode"] != "domain"].groupby(keys, observed=True)["loglik"].max().rename("_best")
    out = results.join(rivals, on=keys)
    out["regret"] = np.where(out["mode"] == "domain", out["_best"] - out["loglik"], np.nan)
    return out.drop(columns="_best")


def _check_k_grid(k_grid: Any, lodo: bool) -> list[int]:
    """The rows the left-out domain adapts from: whole numbers >= 0, sorted; at least
    one for the leave-one-domain-out scheme."""
    if isinstance(k_grid, (str, bytes)) or not hasattr(k_grid, "__iter__"):
        raise HyperparameterError(
            f"k_grid must be a sequence of whole numbers >= 0, such as (0, 5, 20), not {k_grid!r}"
        )
    grid = sorted({check_int("k", k, low=0) for k in k_grid})
    if lodo and not grid:
        raise HyperparameterError(
            "k_grid is empty: the leave-one-domain-out scheme needs at least one k (or lodo=False)"
        )
    return grid


def _check_domain_sizes(data: pd.DataFrame, domain: str, k_grid: list[int], lodo: bool) -> None:
    """At least two domains; with ``lodo``, one with more rows than the largest ``k``
    (``k`` to adapt from and one to score)."""
    sizes = data.groupby(domain, observed=True).size()
    if len(sizes) < 2:
        only = f": {sizes.index[0]!r}" if len(sizes) else ""
        raise DataError(
            f"evaluate_domains compares fits across domains and needs at least two domains; {domain!r} has "
            f"{'one' if len(sizes) else 'none'}{only}"
        )
    if lodo and k_grid and sizes.max() <= k_grid[-1]:
        raise DataError(
            f"no domain has more than {k_grid[-1]} rows (the largest k): leave-one-domain-out adapts from k rows and "
            f"scores the rest; the largest, {sizes.idxmax()!r}, has {int(sizes.max())}. Lower k_grid or pass lodo=False"
        )


def evaluate_domains(
    structure: Any,
    data: pd.DataFrame,
    domain: str,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    /,
    *,
    method: str = "hmd",
    target: str | None = None,
    test_size: float = 0.3,
    k_grid: Sequence[int] = (0, 5, 20, 50),
    lodo: bool = True,
    repeats: int = 1,
    n_draws: int = 1,
    random_state: Any = 0,
    **options: Any,
) -> DomainEvaluation:
    """Pooled, separate and hierarchical fits of ``structure`` compared per domain
    (see the module documentation for the two schemes).

    ``settings``: name -> ``{"mode": "pooled" | "separate" | "domain", "method": ...,
    hyperparameters}`` (default :func:`default_domain_settings` of ``method``).
    ``structure`` is anything :func:`pybncsmooth.fit` takes as a given structure (a
    model string, formulas, a DAG: learn a classifier's first with
    :func:`pybncsmooth.learn_structure`); ``target`` scores one node (a classifier's
    class) instead of the whole row.  Reproducible for a given ``random_state``.

    The data need two domains or more; ``k_grid`` at least one ``k`` (unless
    ``lodo=False``) and a domain with more rows than the largest ``k``: otherwise a
    :class:`~pybncsmooth.errors.DataError` or
    :class:`~pybncsmooth.errors.HyperparameterError` says which.  Domains with no more
    rows than the largest ``k`` are left out of the ``lodo`` scheme.  ``n_draws``: in
    the ``lodo`` scheme, the draws of each left-out domain's adapting rows (each scored
    on the rest of its rows; the population fitted once per domain): ``summary()``
    then gives each domain's regret averaged over them (``by_domain=True``: per domain).

    ``**options``: the options of the ``evaluate_domains`` entry point
    (:mod:`pybncsmooth.options`) every fit takes: ``na`` (default ``"error"``),
    ``max_levels``, ``weights`` (a column's name: the rows are split),
    EM's settings, ``n_jobs``, ``progress`` (a bar over the domains); a setting's own
    (``{"mode": "pooled", "method": "bayes", "na": "drop"}``) take precedence.
    """
    opts = Options.build("evaluate_domains", random_state=random_state, **options)
    if opts.weights is not None and not isinstance(opts.weights, str):
        raise HyperparameterError(
            "evaluate_domains splits the rows by domain: give the weights as the name of a column of the data"
        )
    if not isinstance(data, pd.DataFrame):
        raise DataError("evaluate_domains needs the data as a DataFrame (it splits rows per domain)")
    if domain not in data.columns:
        raise MissingColumnError(domain, "domain", [str(c) for c in data.columns])
    if target is not None and target not in data.columns:
        raise MissingColumnError(target, "target", [str(c) for c in data.columns])
    settings = dict(settings) if settings is not None else default_domain_settings(method)
    _check_settings(settings, opts)
    test_size = check_probability("test_size", test_size)
    repeats = check_int("repeats", repeats, low=1)
    n_draws = check_int("n_draws", n_draws, low=1)
    k_grid = _check_k_grid(k_grid, lodo)
    if data[domain].isna().any():
        raise DataError(f"the domain column {domain!r} has missing values: every row needs its domain")
    if target is not None and data[target].isna().any():
        raise DataError(f"the target {target!r} has missing values: drop those rows first (they cannot be scored)")
    _check_domain_sizes(data, domain, k_grid, lodo)
    # every level of the data declared, as Categoricals declare theirs: a class or a feature level that some
    # domains or folds lack is a level of every fit (scored by its smoothed probability, never refused or misread)
    data = categorize(data, exclude=[domain] + ([opts.weights] if isinstance(opts.weights, str) else []),
                      integers=True, max_levels=opts.max_levels)  # the nodes' limit (not the domain column's)
    rs = opts.random_state
    rng = np.random.default_rng(rs if not isinstance(rs, np.random.RandomState) else rs.randint(2**31))
    n_dom = data[domain].nunique()
    bar = progress_bar(opts.progress, repeats * (1 + (n_dom if lodo else 0)), "domains")
    rows: list[dict] = []
    try:
        for rep in range(repeats):
            seed = int(rng.integers(2**31))
            rows += _within(structure, data, domain, settings, target, test_size, rng, seed, rep, opts)
            if bar is not None:
                bar.update(1)
            if lodo:
                rows += _lodo(structure, data, domain, settings, target, k_grid, rng, seed, rep, opts, bar, n_draws)
    finally:
        if bar is not None:
            bar.close()
    return DomainEvaluation(_with_regret(pd.DataFrame(rows)), target)
