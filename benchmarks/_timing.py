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
