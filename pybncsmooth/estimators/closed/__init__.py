r"""The closed forms: :mod:`.classical` (``mle``, ``bayes``, ``mestimate``, evaluated
cell by cell), :mod:`.flat` (the same formulas over every tree node of a network at
once, on the counting's flat arrays), :mod:`._stacked` (many trees' levels stacked), and the
kernels :mod:`._kernels` with their NumPy twins :mod:`._numpy` for a process that has not
loaded numba yet."""
