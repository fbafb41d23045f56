"""Reports on a :class:`~pybncsmooth.FittedNetwork`: its per-node summary, the domains'
deviations from the population, and plots."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from ..errors import UnknownNodeError
from ..validation import check_draws, check_probability
from .cpd import DomainLastCPD, TreeCPD
from .plotting import plot_cpt, plot_shrinkage

__all__ = ["ReportingMixin"]


class ReportingMixin:
    """``summary``, ``node_summary``, ``domain_report``, plots (part of :class:`FittedNetwork`)."""

    @property
    def n_params(self) -> int:
        """Free parameters of the dense tables (``sum (r - 1) q``; per domain for multi-domain fits)."""
        return sum(c.n_params for c in self._cpds.values())

    def summary(self, *, alpha: float = 0.1, nodes: str | Sequence[str] | None = None, draws: int = 500,
                random_state: Any = 0) -> Any:
        """The fit's summary as statisticians know it from statsmodels: a
        :class:`statsmodels.iolib.summary.Summary` (``as_text()``, ``as_html()``,
        ``as_latex()``, ``as_csv()``; ``print`` shows its text, a notebook its HTML).

        A header (rows used and dropped, missing cells and how they were treated, the
        estimator, its hyperparameters, the options given, domains, and the
        diagnostics of the inference: ``hdp``'s and ``hls-bayes``'s largest R-hat
        (several chains) and the smallest effective number of draws of their recorded
        hyperparameters (Geyer 1992's initial positive sequence), ``hmd``'s and
        ``hls``'s iterations, EM's iterations or data augmentation's blocks), the
        nodes' table (:meth:`node_summary`), then for every node (``nodes``: those, or
        the one node it names)
        each entry's estimate, standard deviation, ``1 - alpha`` interval
        (:meth:`cpt_frame`, from ``draws`` draws seeded by ``random_state`` where it
        draws) and the training rows of its parent configuration, and notes saying
        what the intervals are (credible, confidence or bootstrap).  A network read
        from a file shows its tables without intervals.
        """
        from .summary import network_summary

        check_probability("alpha", alpha)
        check_draws(draws, 1 - alpha)
        return network_summary(self, alpha=alpha, nodes=nodes, draws=draws, random_state=random_state)

    def node_summary(self) -> pd.DataFrame:
        """One row per node: levels, parents, parent configurations (possible and
        observed), context-tree nodes, rows counted, free parameters and, for
        multi-chain HDP fits, the split-R-hat of the leaf estimates; for iterative
        fits (``hmd``, ``hls``, ``hdp`` with ``iterations="auto"``), the iterations run
        and whether they converged, and for ``iterations="auto"`` the largest
        Monte-Carlo standard error of an entry (``<NA>`` where a quantity does not
        apply, e.g. for tables read from a file).  A fit with ``na="em"`` /
        ``"hard-em"`` keeps its iterations, convergence and observed-data
        log-likelihood trace in ``node_summary().attrs["em"]``.  :meth:`summary` shows
        it in a statsmodels ``Summary`` with the estimates and their intervals."""
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

    def domain_report(self, *, level: float = 0.9, draws: int = 200, random_state: Any = 0) -> pd.DataFrame:
        """Per domain and node, how the domain's CPT differs from the population's: KL
        and Jensen-Shannon divergences weighted by the domain's own parent
        configurations, an interval for JS from the estimator's uncertainty (``level``,
        ``draws``), the domain's rows and its mean shrinkage weight toward the
        population; see :mod:`pybncsmooth.model.domains.report`.  An estimator without
        posterior sds (``mle``, ``hgs``, ``mbranch``, ``hls``) gives no interval: the
        report then has no interval columns, and ``attrs["intervals"]`` says why.
        ``draws`` is 0 (no interval) or at least 2 / (1 - level) (20 at 90%);
        ``random_state`` seeds the draws.
        The divergences are finite whatever the draws (a draw's value that underflows
        to zero gives a divergence of zero, not an infinite or undefined one)."""
        from .domains.report import domain_report

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
