"""What a fitted network keeps for :meth:`FittedNetwork.update` (:class:`FitState`), and
the function the update runs (registered by :mod:`pybncsmooth.pipeline.update`, which
the model layer may not import)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..counting.context_tree import ContextTree

__all__ = ["FitState", "register_updater", "updater"]

_UPDATER: list[Callable[..., Any]] = []


def register_updater(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Make ``fn(net, rows, options)`` the function :meth:`FittedNetwork.update` calls."""
    _UPDATER[:] = [fn]
    return fn


@dataclass(frozen=True, eq=False)
class FitState:
    """What a fitted network keeps, beyond its context trees and estimates, so that
    :meth:`FittedNetwork.update` gives what a refit on all the rows gives.

    Attributes
    ----------
    given:
        The variables whose levels a network file fixed (new rows' levels are matched
        to them, never added).
    complete:
        ``na="em"`` / ``"hard-em"``: every node's context tree of the *complete* rows
        (no missing cell among the variables of the fit), whose E-step is the identity.
    patterns, pattern_weights, pattern_variables:
        ``na="em"`` / ``"hard-em"``: the incomplete rows, compressed to their distinct
        patterns of codes (``(m, V)``, ``-1`` a missing cell, columns
        ``pattern_variables``) with their summed weights: the E-step of an update runs
        over them and the new rows' patterns, never over the old rows again.
    """

    given: tuple[str, ...] = ()
    complete: Mapping[str, ContextTree] | None = None
    patterns: np.ndarray | None = None
    pattern_weights: np.ndarray | None = None
    pattern_variables: tuple[str, ...] = field(default_factory=tuple)

    @property
    def has_em(self) -> bool:
        """Whether the state holds the incomplete rows of an EM fit."""
        return self.complete is not None


def updater() -> Callable[..., Any]:
    """The registered update function."""
    if not _UPDATER:  # pragma: no cover - importing pybncsmooth registers it
        raise RuntimeError("pybncsmooth.pipeline is not imported: no update function is registered")
    return _UPDATER[0]
