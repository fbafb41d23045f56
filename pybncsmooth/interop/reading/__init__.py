r"""What the text readers share: :mod:`.tokens` (the tokenizer), :mod:`.grammar`
(DSC and NET declarations), :mod:`.numbers` (number lists, compiled in
:mod:`._number_kernels`, with NumPy twins :mod:`._number_twins`) and :mod:`.build` (a
:class:`~pybncsmooth.model.network.FittedNetwork` assembled from what a file declares)."""
