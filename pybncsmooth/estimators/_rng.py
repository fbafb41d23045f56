"""A small, fast random number generator for the compiled samplers.

xoshiro256** (Blackman & Vigna 2018) with its state in a ``uint64[4]`` array that
each sampler owns, seeded through splitmix64; uniforms on [0, 1) from the top 53
bits; normals by the ziggurat method of Marsaglia & Tsang (2000, *J. Stat. Softw.*
5(8)) with 256 layers (one 64-bit draw and one multiplication for 99% of the draws:
the low 8 bits pick the layer, the top 53 the position; the wedges and the tail
beyond r are sampled exactly); gammas by Marsaglia & Tsang (2000, *ACM TOMS*),
with the ``U^(1/a)`` boost for shapes below one; betas as ``X / (X + Y)``.
An explicit state (rather than numba's thread-local generator) keeps every chain
reproducible from its own seed and costs about a nanosecond per uniform.

Keyed draws (common random numbers for coupled chains): ``mix64`` is splitmix64's
finaliser, a 64-bit hash; ``sweep_key(key, it)`` a sweep's key, ``keyed_uniform(k, i)``
a uniform that is a function of ``(k, i)`` alone, and ``reseed(s, k)`` a state of its
own for a decision that takes several numbers: two chains that key a decision the same
way draw the same numbers for it, however many their other decisions took.
"""

from __future__ import annotations

import math

import numpy as np
from .._jit import njit, uint64

__all__ = ["new_state", "uniform", "normal", "gamma", "gamma_dc", "gamma_int", "beta", "mix64", "keyed_uniform",
           "reseed", "sweep_key"]

_MASK = 0xFFFFFFFFFFFFFFFF


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray]:
    """Layer edges ``x[0..256]`` and densities ``f(x) = exp(-x^2 / 2)`` of the 256-layer
    ziggurat: every layer (and the base strip with the tail beyond ``r``) has area ``v``;
    ``x[0] = v / f(r)`` is the width of the base strip, ``x[1] = r``, ``x[256] = 0``."""
    r = 3.6541528853610088
    v = 0.00492867323399
    x = np.empty(257)
    x[0] = v / math.exp(-0.5 * r * r)
    x[1] = r
    for i in range(1, 255):
        x[i + 1] = math.sqrt(-2.0 * math.log(v / x[i] + math.exp(-0.5 * x[i] * x[i])))
    x[256] = 0.0
    return x, np.exp(-0.5 * x * x)


_ZX, _ZF = _ziggurat_tables()
_ZR = 3.6541528853610088


def new_state(seed: int) -> np.ndarray:
    """A xoshiro256** state seeded by splitmix64 from a non-negative integer."""
    x = int(seed) & _MASK
    out = np.empty(4, dtype=np.uint64)
    for i in range(4):
        x = (x + 0x9E3779B97F4A7C15) & _MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        out[i] = z ^ (z >> 31)
    if not out.any():  # pragma: no cover - splitmix64 never yields four zeros
        out[0] = 1
    return out


@njit(inline="always")
def _rotl(x, k):  # pragma: no cover - compiled
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(inline="always")
def _next(s):  # pragma: no cover - compiled
    result = _rotl(s[1] * uint64(5), 7) * uint64(9)
    t = s[1] << uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(inline="always")
def uniform(s):  # pragma: no cover - compiled
    """A uniform draw on [0, 1)."""
    return (_next(s) >> uint64(11)) * (1.0 / 9007199254740992.0)


@njit(nogil=True, inline="always")
def normal(s):  # pragma: no cover - compiled
    """A standard normal draw (the 256-layer ziggurat, see the module docstring)."""
    while True:
        b = _next(s)
        i = b & uint64(255)
        u = 2.0 * ((b >> uint64(11)) * (1.0 / 9007199254740992.0)) - 1.0
        z = u * _ZX[i]
        if abs(z) < _ZX[i + 1]:  # inside the layer above: under the curve
            return z
        if i == 0:  # the tail beyond r (Marsaglia 1964)
            while True:
                e1 = -math.log(1.0 - uniform(s)) / _ZR
                e2 = -math.log(1.0 - uniform(s))
                if 2.0 * e2 > e1 * e1:
                    return _ZR + e1 if u > 0 else -(_ZR + e1)
        # the wedge: accept under the density
        y = _ZF[i + 1] + uniform(s) * (_ZF[i] - _ZF[i + 1])
        if y < math.exp(-0.5 * z * z):
            return z


@njit(nogil=True, inline="always")
def gamma_dc(s, d, c):  # pragma: no cover - compiled
    """A Gamma(a, 1) draw for ``a >= 1`` given Marsaglia & Tsang's constants
    ``d = a - 1/3`` and ``c = 1 / sqrt(9 d)`` (for many draws of one shape)."""
    while True:
        x = normal(s)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(s)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return d * v
        if u > 0.0 and math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v


_GAMMA_C = np.concatenate(([0.0], 1.0 / np.sqrt(9.0 * (np.arange(1, 4097) - 1.0 / 3.0))))


@njit(nogil=True, inline="always")
def gamma_int(s, n):  # pragma: no cover - compiled
    """A Gamma(n, 1) draw for an integer ``n >= 1`` (Marsaglia & Tsang's constant from a
    table up to 4096)."""
    d = n - 1.0 / 3.0
    c = _GAMMA_C[n] if n <= 4096 else 1.0 / math.sqrt(9.0 * d)
    return gamma_dc(s, d, c)


@njit(nogil=True, inline="always")
def gamma(s, a):  # pragma: no cover - compiled
    """A Gamma(a, 1) draw (Marsaglia & Tsang; a < 1 through a + 1 and U^(1/a))."""
    boost = 1.0
    if a < 1.0:
        u = uniform(s)
        while u == 0.0:
            u = uniform(s)
        boost = math.exp(math.log(u) / a)
        a += 1.0
    d = a - 1.0 / 3.0
    return gamma_dc(s, d, 1.0 / math.sqrt(9.0 * d)) * boost


@njit(nogil=True, inline="always")
def beta(s, a, b):  # pragma: no cover - compiled
    """A Beta(a, b) draw."""
    x = gamma(s, a)
    y = gamma(s, b)
    tot = x + y
    if tot <= 0.0:  # both underflowed (tiny shapes): decide by the odds a / (a + b)
        return 1.0 if uniform(s) < a / (a + b) else 0.0
    return x / tot


@njit(nogil=True, inline="always")
def mix64(z):  # pragma: no cover - compiled
    """splitmix64's finaliser: a 64-bit hash of a ``uint64``."""
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@njit(nogil=True, inline="always")
def sweep_key(key, it):  # pragma: no cover - compiled
    """Sweep ``it``'s key from a chain's ``key`` (0: no key, the draws are not keyed);
    odd, so never 0."""
    if key == 0:
        return uint64(0)
    return mix64(uint64(key) + uint64(it) * uint64(0x9E3779B97F4A7C15)) | uint64(1)


@njit(nogil=True, inline="always")
def keyed_uniform(key, i):  # pragma: no cover - compiled
    """A uniform on [0, 1) that is a function of ``(key, i)`` alone."""
    z = mix64(key + (uint64(i) + uint64(1)) * uint64(0x9E3779B97F4A7C15))
    return (z >> uint64(11)) * (1.0 / 9007199254740992.0)


@njit(nogil=True)
def reseed(s, key):  # pragma: no cover - compiled
    """The first four words of ``s`` (a xoshiro256** state) seeded from ``key``."""
    for i in range(4):
        s[i] = mix64(key + uint64(i + 1) * uint64(0xD1B54A32D192ED03))
