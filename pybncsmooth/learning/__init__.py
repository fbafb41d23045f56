"""Network structures learned from data: bnlearn's scores and score-based searches
(hill climbing, tabu search), the hierarchical BHD score of data sets from related
domains, and comparisons of structures (CPDAG, structural Hamming distance)."""

from .scores import score

__all__ = ["score"]
