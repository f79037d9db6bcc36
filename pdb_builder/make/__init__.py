"""The build side: what makes databases (the BFS kernels, partitions built and
scored, two-bit copies, the goal table's BFS, the HDF5 writers), lists them and
verifies them.  What both sides use lives in :mod:`pdb_builder` itself.  Solving one
board never imports this package at import time (tested); two paths reach it while
they run: :mod:`solver.run` orders builds, and the fallback's tables of a walled
board's own layout, built in memory, come from :func:`pdb_builder.api.layout_tables`,
which imports the BFS at its first call."""
