"""Counting: one context tree per node."""

from .context_tree import ContextTree, TreeLevel, count_tree, merge_trees
from .network import NetworkCounter, count_network

__all__ = ["ContextTree", "TreeLevel", "count_tree", "merge_trees", "count_network", "NetworkCounter"]
