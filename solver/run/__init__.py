"""Many boards and whole files: the batch (``slidepdb solve FILE``) and the one command
(``slidepdb run``), in five layers (each module imports only from the layers below it).

1. ``steps`` (a step and what it gave, as values), ``clock`` (the one clock), ``files``
   (every file a run keeps beside its answer file), ``journal`` (each journal and the
   input it names), ``answer_file`` (answer files, move limits, comparisons),
   ``forecast`` (what proving a board would cost), ``settings`` (what a run and its
   batches are both asked), ``sittings`` (the budget across
   sittings), ``feed`` (a step's boards and the builds they wait on), ``lanes`` (thread
   grants), ``warm`` (a cold worker's kernels), ``outputs`` (each output on its own).
2. ``drive`` (the loop both executors share), ``builds`` (what a run builds, each build a
   job in a worker's slot; the one module of :mod:`solver` that orders builds).
3. ``slots`` (local worker processes), ``cluster`` (a dask cluster), ``planning`` (the
   quick pass, full pass and rounds planned, and the budget's arithmetic),
   ``answer_pass`` (the answer and shortening steps planned), ``options`` (the run's
   options and result), ``timeline`` (the proven count against time).
4. ``batch`` (one step's boards solved, journalled and resumed).
5. ``pipeline`` (the run: plan a step, run it, record it).
"""
