"""Timing helper shared by the benchmark scripts."""

from __future__ import annotations

import atexit
import time
from collections.abc import Callable
from typing import Any


#: (what was timed, its first call's seconds, its warm best) of every :func:`best_time`
#: of the process, printed when the script ends where the two differ by more than 1.5x
_FIRST_CALLS: list[tuple[str, float, float]] = []


def _print_first_calls() -> None:
    slow = [(what, first, warm) for what, first, warm in _FIRST_CALLS if warm > 0 and first / warm > 1.5]
    if not slow:
        return
    print("\nfirst call against warm, where they differ by more than 1.5x (the first call of each in this process, after what the script ran before it; "
          "bench_cold.py times fresh processes):")
    for what, first, warm in slow:
        print(f"  {what}: first call {first:.4f} s, warm {warm:.4f} s ({first / warm:.1f}x)")


atexit.register(_print_first_calls)


def best_time(fn: Callable[[], Any], repeat: int = 3, label: str | None = None) -> float:
    """Best wall-clock seconds of ``repeat`` calls of ``fn`` after one warm-up call: a
    *warm* time (kernels loaded, caches filled).  The warm-up call is timed too, and the
    script prints it beside the warm time at its end where the two differ by more than
    1.5x (``label`` names the timing there); ``bench_cold.py`` times cold calls in fresh
    processes."""
    _, first, warm = first_and_warm(fn, repeat)  # the first call warms up kernels and caches
    what = label or getattr(fn, "__qualname__", "a call")
    if what.endswith("<lambda>"):  # name a lambda by where it was written
        code = getattr(fn, "__code__", None)
        what = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}" if code else what
    _FIRST_CALLS.append((what, first, warm))
    return warm


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
