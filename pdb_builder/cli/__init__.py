"""The builder's commands: ``slidepdb build``, ``inspect`` and ``verify`` (a module
each), and the helpers both sides' commands share (:mod:`pdb_builder.cli.shared`).

They are attached to the ``slidepdb`` group in ``solver/cli/`` by :func:`register`;
this package never imports ``solver``.
"""

from __future__ import annotations

import click

from . import build, inspect, verify  # the modules (a command's function is named as its module)


def register(group: click.Group, measure=None) -> None:
    """Attach the builder's commands to ``group``; ``measure(paths, boards)``: node
    counts for ``build --collection`` (the solver's, :func:`solver.search.measure.measure`),
    handed to the command through the context's ``obj``: the builder never imports it."""
    obj = dict(group.context_settings.get("obj") or {})
    obj["measure"] = measure
    group.context_settings = {**group.context_settings, "obj": obj}
    for module in (build, inspect, verify):
        group.add_command(getattr(module, module.__name__.rsplit(".", 1)[1]))


__all__ = ["register"]
