"""Graph facts about a board's free cells that the model and the solvability test share."""

from __future__ import annotations


def articulation_points(neighbours, region: frozenset[int]) -> frozenset[int]:
    """Cut vertices of the graph induced by ``region`` (``neighbours[c]``: the cells
    next to ``c``); Hopcroft & Tarjan 1973, iterative."""
    disc: dict[int, int] = {}
    low: dict[int, int] = {}
    cuts: set[int] = set()

    def adj(c):
        return iter([d for d in neighbours[c] if d in region])

    for root in sorted(region):
        if root in disc:
            continue
        disc[root] = low[root] = len(disc)
        root_children = 0
        stack = [(root, -1, adj(root))]
        while stack:
            v, parent, it = stack[-1]
            advanced = False
            for w in it:
                if w not in disc:
                    disc[w] = low[w] = len(disc)
                    stack.append((w, v, adj(w)))
                    advanced = True
                    break
                if w != parent:
                    low[v] = min(low[v], disc[w])
            if advanced:
                continue
            stack.pop()
            if parent >= 0:
                low[parent] = min(low[parent], low[v])
                if parent == root:
                    root_children += 1
                elif low[v] >= disc[parent]:
                    cuts.add(parent)
        if root_children >= 2:
            cuts.add(root)
    return frozenset(cuts)
