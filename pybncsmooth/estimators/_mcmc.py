"""Shared pieces of the MCMC estimators (``hdp``, ``hls-bayes``): seeds and R-hat."""

from __future__ import annotations

import sys
import zlib
from typing import Any, Mapping

import numpy as np

from ..validation import entropy_of

__all__ = ["entropy_of", "chain_seed", "split_rhat", "progress_bar"]


def chain_seed(entropy: int | None, name: str, chain: int) -> int:
    """A 64-bit seed for one tree (named) and chain: independent streams whatever the
    order or the threads in which trees are sampled."""
    key = zlib.crc32(name.encode("utf-8"))
    ss = np.random.SeedSequence(entropy, spawn_key=(key, chain))
    return int(ss.generate_state(1, np.uint64)[0])


def split_rhat(draws: np.ndarray) -> float:
    """Largest split-R-hat over the columns of ``draws`` (chains x draws x entries).

    Each chain is cut in two halves; constant entries count as converged.
    """
    m, n, _ = draws.shape
    half = n // 2
    if half < 2:
        return float("nan")
    seqs = np.concatenate([draws[:, :half], draws[:, half : 2 * half]], axis=0)  # (2m, half, p)
    means = seqs.mean(axis=1)
    W = seqs.var(axis=1, ddof=1).mean(axis=0)
    B = half * means.var(axis=0, ddof=1)
    var_plus = (half - 1) / half * W + B / half
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(np.where(W > 0, var_plus / W, 1.0))
    return float(np.nanmax(r)) if r.size else float("nan")


def progress_bar(progress: bool | None, total: int, trees: Mapping[str, Any], desc: str) -> Any:
    """A tqdm bar of ``total`` sweeps, or None.  ``progress=None``: shown for long fits
    (sweeps x mean tree nodes above 5e6) at a terminal."""
    show = progress
    if show is None:
        work = total * sum(t.n_nodes for t in trees.values()) / max(len(trees), 1)
        show = sys.stderr.isatty() and work > 5e6
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc=desc, unit="sweep", leave=False)
