r"""How a multi-domain fit pools its domains, below every estimator: :mod:`._leaf_stats`
(the domains' leaves of a node reduced to what their concentration's evidence needs),
:mod:`.pooling` (the posterior of a node's domain concentration and the shrinkage of each
domain toward the population, with the compiled moments :mod:`._kernels`) and :mod:`.prior`
(the prior a new domain starts from: the fitted domains as atoms and the population's
spread).  What a fitted network does with them (adapting a new domain, the overlay of
its tables, the report) is :mod:`pybncsmooth.model.domains`."""
