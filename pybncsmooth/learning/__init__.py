"""Network structures learned from data: bnlearn's scores and score-based searches
(hill climbing, tabu search), the hierarchical BHD score of data sets from related
domains, and comparisons of structures (CPDAG, structural Hamming distance)."""

from .graphs import CPDAG, compare, cpdag, shd
from .scores import score
from .search import hc, tabu

__all__ = ["score", "hc", "tabu", "cpdag", "shd", "compare", "CPDAG"]
