"""Timing helper shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_time(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall-clock seconds of ``repeat`` calls of ``fn`` after one warm-up call: a
    *warm* time (kernels loaded, caches filled); ``bench_cold.py`` times the cold call."""
    fn()  # warm-up (compiled kernels, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def first_and_warm(fn: Callable[[], Any], repeat: int = 2) -> tuple[Any, float, float]:
    """``fn``'s result, the seconds of its *first* call in this process and the best of
    ``repeat`` calls after it (*warm*).  The first call is *cold* only if nothing before
    it in the process loaded the same kernels: the scripts print it as "first call" and
    say what ran before; ``bench_cold.py`` times true cold calls in fresh processes."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return out, first, min(times)


def cold_warm_label(first: float, warm: float) -> str:
    """``"first call X s, warm Y s"``, with the ratio when they differ by more than 1.5x."""
    text = f"first call {first:.2f} s, warm {warm:.2f} s"
    if warm > 0 and first / warm > 1.5:
        text += f" ({first / warm:.1f}x)"
    return text
