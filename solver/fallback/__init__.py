"""Answers when no proof: what a board gets when a limit stopped its optimal search.

``ladder`` (the policy: :func:`~solver.fallback.ladder.fallback_search`, its
steps and shares), ``beam`` (beam search), ``staged`` (tile groups placed in turn),
``polish`` (windows of an answer solved optimally).  Tables of a board's own layout
come from :func:`pdb_builder.api.layout_tables`; nothing here imports
:mod:`pdb_builder.make` (tested).
"""

SHORTER = "shorter"  # a fallback mode (``fallback=SHORTER``): a board with an answer looks for a shorter one
