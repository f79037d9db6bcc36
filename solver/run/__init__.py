"""Many boards and whole files: the batch (``slidepdb solve FILE``) and the one command
(``slidepdb run``).

``files`` (every file a run keeps beside its answer file), ``slots`` (the workers'
slots that searches and builds share, local processes), ``cluster`` (the same on a dask
cluster, each worker sharing out its own threads), ``batch`` (boards solved, journalled
and resumed), ``journal``, ``timeline`` (sittings and the proven count against time),
``answers`` (answer files, move limits, comparisons), ``builds`` (what a run builds, each
build a job in a worker's slot; the one module of :mod:`solver` that calls
:mod:`pdb_builder.make`), ``forecast`` (what proving a board would cost), ``pipeline``
(the passes and rounds, and the limits the budget allows).
"""
