"""Network structures: DAGs with ordered parents, model strings, formulas."""

from .dag import DAG
from .formula import dag_from_formulas, parse_formula
from .modelstring import parse_modelstring, r_sorted, write_modelstring

__all__ = ["DAG", "parse_modelstring", "write_modelstring", "r_sorted", "parse_formula", "dag_from_formulas"]
