"""The run's layers (solver/run/__init__.py): no chain of its modules importing one
another is more than five long, and the planners and the loop's values stay below the
executors."""

from pathlib import Path

from .conftest import script_module

RUN = Path(__file__).resolve().parents[1] / "solver" / "run"
MAX_DEPTH = 5


def test_the_run_is_five_layers_deep_at_most():
    depth = script_module("import_depth")
    found = depth.chains(depth.imports(RUN))
    deepest = max(found.values(), key=len)
    assert len(deepest) <= MAX_DEPTH, " -> ".join(deepest)
    assert found["pipeline"][0] == "pipeline" and len(found["pipeline"]) == len(deepest)  # the loop on top


def test_the_values_and_the_planners_import_no_executor():
    depth = script_module("import_depth")
    graph = depth.imports(RUN)
    assert graph["steps"] == set() and graph["clock"] == set() and graph["feed"] == set() and graph["lanes"] == set()
    executors = {"batch", "slots", "cluster", "drive", "pipeline"}
    for planner in ("next_step", "plans", "planning", "answer_pass", "options"):
        reached, todo = set(), [planner]
        while todo:  # every module the planner imports, directly or not
            for dep in graph[todo.pop()] - reached:
                reached.add(dep)
                todo.append(dep)
        assert not reached & executors, (planner, reached & executors)


def test_the_depth_counts_every_import_also_one_inside_a_function():
    depth = script_module("import_depth")
    assert "warm" in depth.imports(RUN)["slots"]  # slots imports warm inside functions only
