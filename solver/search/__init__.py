"""The proof engine: IDA* on admissible estimates, one board at a time.

``searcher``
(:class:`~solver.search.searcher.Searcher`: a shape's arrays, the iterations, the
time and node limits), ``kernel`` (the compiled IDA* slice), ``state`` (what a
search returns, its root and the kernel's stack, built in one place), ``automaton``
(the duplicate move strings the search never completes), ``threads`` (one iteration
on many threads), ``first_nodes`` (a process's first nodes in plain Python),
``heuristic`` and ``tables`` (estimates and the database files behind them),
``limits`` (a board's time and nodes, and stop requests), ``measure`` (node counts
for ``build --collection``).

Never imports :mod:`pdb_builder.make` (tested): solving never compiles the build side.
"""
