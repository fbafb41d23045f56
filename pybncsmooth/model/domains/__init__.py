r"""The domain level of a fitted network, in the order data flows: :mod:`._network`
(what a network does with a domain it never saw), :mod:`.adapt` (a new domain adapted from a
few rows, node by node: :mod:`._node`, :mod:`._urn`), :mod:`.overlay` (the adapted domain's
tables laid over the fitted ones) and :mod:`.report` (how far each domain departs from the
population).  The pooling they build on is :mod:`pybncsmooth.estimators.domains`."""
