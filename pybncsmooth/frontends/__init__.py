"""Front ends: the Python API (``fit``) and the command line.  They check what the
user typed and call the fit pipeline (:mod:`pybncsmooth.pipeline`) or the classifier
builders (:mod:`pybncsmooth.classifiers`)."""

from .api import fit

__all__ = ["fit"]
