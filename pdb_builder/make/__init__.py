"""The build side: what makes databases (the BFS kernels, partitions built and
scored, two-bit copies), lists them and verifies them.  The solver never imports
this package (tested); what both sides use lives in :mod:`pdb_builder` itself."""
