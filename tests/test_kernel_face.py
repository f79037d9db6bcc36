"""The kernel's public face: what other modules use of it is what it lists (``__all__``),
and its state vector is read and written by name through one view
(:class:`solver.search.state.Slots`), never indexed elsewhere."""

import ast
import re
from pathlib import Path

SOLVER = Path(__file__).resolve().parents[1] / "solver"


def _kernel_names_used() -> set[str]:
    """Every name another module takes from the kernel: ``from ...kernel import x`` and
    ``K.x`` / ``ida_kernel.x`` / ``self.K.x`` on a module imported as the kernel."""
    used: set[str] = set()
    for path in SOLVER.rglob("*.py"):
        if path.name == "kernel.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {"K"}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("kernel"):
                used.update(a.name for a in node.names)
            if isinstance(node, ast.ImportFrom) and node.module in (None, "search") and node.level:
                aliases.update(a.asname for a in node.names if a.name == "kernel" and a.asname)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                base = node.value
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if name in aliases:
                    used.add(node.attr)
    return used


def test_every_name_taken_from_the_kernel_is_on_its_public_face():
    from solver.search import kernel

    used = _kernel_names_used()
    assert used and used <= set(kernel.__all__), sorted(used - set(kernel.__all__))
    assert all(hasattr(kernel, name) for name in kernel.__all__)


def test_the_view_holds_the_kernels_slots_in_its_order():
    from solver.search import kernel
    from solver.search.state import SLOTS, STATE_SIZE, new_state, slots

    assert STATE_SIZE == kernel.STATE_SIZE == len(SLOTS)
    assert [getattr(kernel, f"S_{name.upper()}") for name in SLOTS] == list(range(STATE_SIZE))
    state = new_state()
    v = slots(state)
    v.nodes, v.lo2 = 7, 9
    assert state[kernel.S_NODES] == 7 and state[kernel.S_LO2] == 9 and v.nodes == 7


def test_no_module_but_the_kernel_and_its_view_indexes_the_state_vector():
    named = {
        path.relative_to(SOLVER).as_posix()
        for path in SOLVER.rglob("*.py")
        if re.search(r"\bS_[A-Z0-9_]+\b", path.read_text(encoding="utf-8"))
    }
    assert named <= {"search/kernel.py", "search/state.py"}, named
