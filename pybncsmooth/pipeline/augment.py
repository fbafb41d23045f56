r"""Data augmentation for the samplers that take whole counts (``hdp``, ``hls-bayes``)
with ``na="em"``.

EM's expected counts are fractional; these estimators' Gibbs samplers need integer
counts.  So the missing cells are *drawn* instead (Tanner and Wong's data augmentation,
one imputation step per block of sweeps):

1. start from the available-case fit :math:`\hat\theta_0`;
2. block :math:`b = 1, 2, \dots`: draw one completion of every incomplete row from its
   posterior :math:`P(x_M \mid x_O, \hat\theta_{b-1})` (exact: forward filtering,
   backward sampling on the row's junction tree, :mod:`._em_kernels`), count the
   completed rows, and run the estimator's sampler on those counts (its own chain,
   seeded per block: its burn-in, then ``iterations`` sweeps); :math:`\hat\theta_b` is
   that block's posterior mean;
3. the answer is the average of :math:`\hat\theta_b` over the ``em_draws`` blocks after
   the first ``em_burn``: the posterior mean over every recorded sweep of every kept
   block, so over the draws of the missing cells as well as over the sampler's state.
   Its posterior standard deviations combine the blocks' by the law of total variance,
   and its posterior draws (intervals, queries, ``sample_parameters``) are the equal
   mixture of the blocks' posteriors, each given its completed counts
   (:class:`~pybncsmooth.estimators.posterior.MixturePosterior`; each block's recorded
   states thinned to ``1 / em_draws`` of them, so that the mixture keeps about what one
   fit keeps): the data-augmentation posterior of the parameters given the observed
   cells.

What is computed differs from textbook data augmentation in one respect: the next
imputation uses the block's posterior *mean* rather than one posterior draw of the
parameters, and each block's chain starts afresh on its completed counts (the
samplers keep no state across count changes).  The trees of every block share the
nodes of the first E-step's expected-count trees (every configuration some completion
can reach), so the blocks' estimates are averaged node by node; the fitted network's
trees hold the average completed counts.  ``info["em"]`` keeps each block's
observed-data log-likelihood (under the estimate the block's imputation used).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..counting.context_tree import ContextTree
from ..errors import DataError
from ..estimators.base import Estimator, TreeEstimate
from ..estimators.posterior import MixturePosterior
from ..model.network import FittedNetwork
from ..validation import entropy_of
from .em import EStep

__all__ = ["run_augmentation"]


def _leaf_counts(skeleton: ContextTree, drawn: ContextTree) -> np.ndarray:
    """The counts of ``drawn`` at the leaves of ``skeleton`` (every leaf of ``drawn`` is one)."""
    configs, counts = drawn.leaf_table()
    level, node, _ = skeleton.find(configs)
    if len(level) and (level != skeleton.depth).any():
        raise DataError(
            f"a drawn completion of {skeleton.child!r} reached a configuration with no expected count "
            "(probabilities below floating-point range)"
        )
    out = np.zeros((skeleton.n_leaves, skeleton.child_card), dtype=np.asarray(counts).dtype)
    np.add.at(out, node, counts)
    return out


class _Average:
    """Running sums of the blocks' estimates, node by node (probabilities, their squares,
    the estimates' own variances and those of a configuration backing off to each node),
    the completed counts, and each block's posterior with its counts (thinned so that
    the mixture keeps about the states one fit keeps)."""

    def __init__(self, blocks: int) -> None:
        self.n = 0
        self.blocks = blocks
        self.first: dict[str, TreeEstimate] = {}
        self.sums: dict[str, list[list[np.ndarray]]] = {}
        self.counts: dict[str, np.ndarray] = {}
        self.parts: dict[str, list[tuple[Any, np.ndarray]]] = {}

    def add(self, estimates: dict[str, TreeEstimate], counts: dict[str, np.ndarray]) -> None:
        for name, est in estimates.items():
            zeros = [np.zeros_like(p) for p in est.probs]
            var = [s * s for s in est.sd] if est.sd is not None else zeros
            unseen = [s * s for s in est.unseen_sd] + [var[-1]] if est.unseen_sd is not None else var
            parts = [list(est.probs), [p * p for p in est.probs], var, unseen]
            if est.fallback is not None:
                parts.append([est.fallback, est.fallback_sd if est.fallback_sd is not None else est.fallback * 0])
            if self.n == 0:
                self.first[name] = est
                self.sums[name] = [[a.astype(float).copy() for a in part] for part in parts]
                self.counts[name] = counts[name].astype(float)
                self.parts[name] = []
            else:
                for acc, part in zip(self.sums[name], parts):
                    for a, b in zip(acc, part):
                        a += b
                self.counts[name] += counts[name]
            if est.posterior is not None:
                k = -(-est.posterior.n_states // self.blocks)
                self.parts[name].append((est.posterior.thin(k), counts[name]))
        self.n += 1

    def estimates(self, info: dict[str, Any]) -> dict[str, TreeEstimate]:
        out = {}
        for name, (p1, p2, var, unseen, *fb) in self.sums.items():
            mean = tuple(a / self.n for a in p1)
            spread = [b / self.n - m * m for m, b in zip(mean, p2)]  # the blocks' means around theirs
            sd = tuple(np.sqrt(np.maximum(v / self.n + w, 0.0)) for v, w in zip(var, spread))
            usd = tuple(np.sqrt(np.maximum(v / self.n + w, 0.0)) for v, w in zip(unseen[:-1], spread[:-1]))
            first = self.first[name]
            extra: dict[str, Any] = {}
            if fb:
                extra = {"fallback": fb[0][0] / self.n, "fallback_sd": fb[0][1] / self.n}
            parts = self.parts[name]
            post = MixturePosterior(*zip(*parts)) if len(parts) == self.n and parts else None
            out[name] = TreeEstimate(
                mean, first.unseen, {**first.info, **info}, sd=sd if first.sd is not None else None,
                fallback_from=first.fallback_from, unseen_sd=usd if first.unseen_sd is not None else None,
                posterior=post, **extra,
            )
        return out



def run_augmentation(
    net: FittedNetwork,
    estep: EStep,
    trees: dict[str, ContextTree],
    estimator: Estimator,
    estimate: Callable[..., FittedNetwork],
    assemble: Callable[[dict[str, ContextTree], dict[str, TreeEstimate]], FittedNetwork],
    *,
    draws: int,
    burn: int,
    progress: bool | None = False,
) -> FittedNetwork:
    """Data augmentation from the available-case fit ``net`` (see the module docstring).

    ``estep``: the E-step pass over the data; ``estimate(trees, estimator=...)`` fits a
    block; ``assemble(trees, estimates)`` builds the network of the averaged estimates."""
    names = list(trees)
    expected, _ = estep(net, 0, desc="E-step")
    skeleton = dict(zip(names, expected.trees()))
    if all(skeleton[n] == trees[n] for n in names):  # complete data (the same nodes and counts): the plain fit
        net.info["em"] = {"iterations": 0, "converged": True, "loglik_trace": [], "hard": False,
                          "augmentation": {"draws": 0, "burn": 0}}
        return net
    entropy = entropy_of(estimator.random_state)
    if entropy is None:
        entropy = int(np.random.SeedSequence().entropy % (2**63))
    avg = _Average(draws)
    trace: list[float] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=burn + draws, desc=f"data augmentation ({estimator.name})", unit="block", leave=False)
    try:
        for b in range(burn + draws):
            seeds = np.random.SeedSequence(entropy, spawn_key=(0xDA, b)).generate_state(2, np.uint64)
            drawn, loglik = estep(net, 2, seed=int(seeds[0]), desc=f"imputation {b + 1}")
            trace.append(loglik)
            counts = {n: _leaf_counts(skeleton[n], t) for n, t in zip(names, drawn.trees())}
            block = {n: skeleton[n].with_leaf_counts(counts[n]) for n in names}
            net = estimate(block, estimator=estimator.with_settings(progress=False, random_state=int(seeds[1])))
            if b >= burn:
                avg.add({n: net.cpd(n).estimate for n in names}, counts)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    info = {"augmentation_blocks": draws, "augmentation_burn": burn}
    mean_trees = {n: skeleton[n].with_leaf_counts(avg.counts[n] / avg.n) for n in names}
    out = assemble(mean_trees, avg.estimates(info))
    out.info["em"] = {"iterations": burn + draws, "converged": True, "loglik_trace": trace, "hard": False,
                      "augmentation": {"draws": draws, "burn": burn}}
    return out
