"""Network structures learned from data: bnlearn's scores and score-based searches
(hill climbing, tabu search), the hierarchical BHD score of data sets from related
domains, comparisons of structures (CPDAG, structural Hamming distance), and these
scores as pgmpy structure scores (``pgmpy_score``, pgmpy optional)."""

from .graphs import CPDAG, compare, cpdag, shd
from .pgmpy_score import pgmpy_score
from .scores import score
from .search import hc, tabu

__all__ = ["score", "hc", "tabu", "cpdag", "shd", "compare", "CPDAG", "pgmpy_score"]
