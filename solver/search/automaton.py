"""When a search deepens its pruning automaton (:mod:`pdb_builder.automaton` says what
the automaton is, how it is learnt and how it is checked).

A search starts with the deepest automaton its searcher has and is given a deeper one
between iterations once the searcher's searches have generated enough nodes that the
build is a small part of their work (a board solved in a millisecond never waits for
one).  The decision counts nodes, not seconds, so a search's node counts are the same on
any machine and any number of threads; only a time limit too near for the build holds it
back.
"""

from __future__ import annotations

from pdb_builder.automaton import (  # noqa: F401 - the search's names for them
    PRUNED,
    Automaton,
    automaton_for,
    build_automaton,
    neighbour_arrays,
    undo_only,
)
from pdb_builder.board import Shape

FIRST_DEEPER = 6  # the first automaton after the undo-only one
DEPTH_STEP = 2  # each deeper one forbids strings this much longer
MAX_PRUNE_DEPTH = 16
# 16 bytes a state: at most 128 MB an automaton, and about 1.1 GB while it is learnt (140 bytes
# a state at its peak: 1.6 GB for the wall-free 6x6's 11.4 M states of depth 14, so that one
# stays at depth 12; a walled 6x6 layout's depth 14 has 2-3 M)
MAX_STATES = 8_000_000
STEP_GROWTH = 5.0  # an automaton two moves deeper against this one: states (4.2x-4.7x measured)
FIRST_STATES = 200  # states a free cell to expect of the first deeper one
STATE_NODES = 10  # a state costs about what ten nodes of search cost (1 us against 0.1 us)
STATE_SECONDS = 2e-6  # and at most this many seconds
UPGRADE_AFTER = 10.0  # searched this many times the next one's expected cost: build it


def deeper(shape: Shape, current: Automaton, searched: int, left: float | None = None) -> Automaton | None:
    """An automaton deeper than ``current`` once ``searched`` nodes generated on
    ``shape`` make its build worth it (at most a tenth of their cost, and of the
    ``left`` seconds of a search's time limit), else None."""
    depth = FIRST_DEEPER if current.depth < FIRST_DEEPER else current.depth + DEPTH_STEP
    if depth > MAX_PRUNE_DEPTH or current.states * STEP_GROWTH > MAX_STATES:
        return None
    states = FIRST_STATES * len(shape.free_cells) if current.depth < FIRST_DEEPER else current.states * STEP_GROWTH
    if searched < UPGRADE_AFTER * STATE_NODES * states:
        return None
    if left is not None and left < UPGRADE_AFTER * STATE_SECONDS * states:
        return None
    return automaton_for(shape, depth)
