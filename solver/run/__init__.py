"""Many boards and whole files: the batch (``slidepdb solve FILE``) and the one command
(``slidepdb run``).

``files`` (every file a run keeps beside its answer file), ``feed`` (the records and the
jobs they wait on, handed out as slots free up), ``slots`` and ``lanes`` (the workers'
slots that searches and builds share, local processes), ``cluster`` (the same on a dask
cluster, each worker sharing out its own threads), ``batch`` (boards solved, journalled
and resumed), ``journal`` (each journal and the input it names), ``sittings`` (the
sittings of a run: the budget across them), ``timeline`` (the proven count against
time), ``answer_file`` (answer files, move limits, comparisons), ``builds`` (what a run
builds, each build a job in a worker's slot; the one module of :mod:`solver` that orders
builds: the fallback's in-memory layout tables reach the BFS too, through
:func:`pdb_builder.api.layout_tables`), ``forecast`` (what proving a board would cost),
``options`` (the run's options, result and budget arithmetic), ``answer_pass`` (every
board an answer first, under a budget), ``pipeline`` (the passes and rounds),
``outputs`` (each output written on its own).
"""
