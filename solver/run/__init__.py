"""Many boards and whole files: the batch (``slidepdb solve FILE``) and the one command
(``slidepdb run``).

``files`` (every file a run keeps beside its answer file), ``slots`` (the workers'
slots that searches and builds share, local processes or a dask cluster), ``batch``
(boards solved, journalled and resumed), ``journal``, ``timeline`` (sittings and the
proven count against time), ``answers`` (answer files, move limits, comparisons),
``plan`` (what a run builds and the limits its budget allows), ``pipeline`` (the
passes and rounds).  The one place in :mod:`solver` that orders builds
(:mod:`pdb_builder.make`).
"""
