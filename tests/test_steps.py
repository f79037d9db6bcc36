"""A whole ``slidepdb run`` under a budget on a clock the test moves: the real planners,
executor, feed, journals and answer file, with each board's search simulated (it costs
the seconds the test gives it, on the fake clock).  So the planned steps, their last
starts, the full pass's limit and the rounds are checked exactly, and "the budget is
kept" with no slack: no process races the machine's clock."""

from dataclasses import replace

import pytest

from pdb_builder.board import Shape
from pdb_builder.formats import read_lines
from pdb_builder.moves import check_moves
from solver.api import SolverPool, solve_record
from solver.run.clock import FakeClock
from solver.run.files import RunFiles
from solver.run.journal import fold_earlier_form, pass_of
from solver.run.options import RunOptions
from solver.run.pipeline import Run
from solver.run.planning import START_WINDOW, reserve_for
from solver.run.steps import BOARD_SPAN, QUICK_SPAN
from solver.tuning import tuning

from .conftest import truth
from .test_inspect import walk

START = 1_000_000.0
# seconds of one thread each board's proof costs (the simulated search), in board order:
# four the quick pass proves, one the full pass proves, one a round proves, two no step proves
COSTS = [0.01, 0.01, 0.02, 0.03, 8.0, 100.0, 1e6, 1e6]
FALLBACK = 0.5  # of its limit: what the simulated fallback takes after a search that did not end


@pytest.fixture(scope="module")
def boards():
    """Eight 3x3 boards (two walled) and each one's optimal outcome, solved for real."""
    shapes = [Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4])]
    lines = ["99 99 99 99", str(len(COSTS))] + [walk(shapes[i % 4 == 3], seed=i) for i in range(len(COSTS))]
    recs = read_lines(lines, "p.txt").records
    pool = SolverPool(None, use_db=False)
    return recs, {r.index: (cost, solve_record(r, pool, fallback=False)) for r, cost in zip(recs, COSTS)}


class Machine:
    """The search of each board, simulated on ``clock``: a proof costing its seconds
    (``optimal``: index -> (seconds, its real optimal outcome)) times ``slow`` ends
    within a limit that covers it (the board's real optimal outcome); else the search
    stops at its limit having proved two moves below the optimum, and the fallback
    (where the step has it and the board has no answer yet) takes :data:`FALLBACK` of a
    limit more and answers with the optimal moves, not proven.  ``started``: (index,
    clock) of each board as it starts; ``ended`` as it ends; ``kill_at``: the count of
    boards started after which the next start is interrupted."""

    def __init__(self, clock, optimal, slow=1.0, kill_at=None):
        self.clock, self.optimal, self.slow, self.kill_at = clock, optimal, slow, kill_at
        self.started, self.ended = [], []

    def __call__(self, rec, pool, time_limit=None, node_limit=None, fallback=True, known=None, **kw):
        if len(self.started) == self.kill_at:  # Ctrl-C as this board starts
            raise KeyboardInterrupt
        self.started.append((rec.index, self.clock.now()))
        cost, true = self.optimal[rec.index]
        cost *= self.slow
        fields = dict(seconds=min(cost, time_limit))
        if cost <= time_limit:
            self.clock.advance(cost)
            out = replace(true, **fields)
        else:
            self.clock.advance(time_limit)
            below = dict(status="limit", moves=None, length=None, optimal=False, lower_bound=true.length - 2)
            out = replace(true, **below, **fields)
            if fallback and (known is None or known.answer is None):
                self.clock.advance(FALLBACK * time_limit)
                answer = dict(status="solved", moves=true.moves, length=true.length, fallback="simulated")
                out = replace(out, **answer, seconds=(1 + FALLBACK) * time_limit)
        self.ended.append((rec.index, self.clock.now()))
        return out


class Planned:
    """A step as it was planned (a frozen value), with the boards it started."""

    def __init__(self, step):
        self.step, self.started = step, []

    def __getattr__(self, name):
        return getattr(self.step, name)


def _run(boards, tmp_path, monkeypatch, budget, slow=1.0, clock=None, kill_at=None, **kw):
    """A budget run of the eight boards on one slot, every step it planned recorded as
    (step, the clock as it started), with the boards it started (``step.started``)."""
    import solver.run.slots as slots

    recs, optimal = boards
    clock = clock or FakeClock(START)
    machine = Machine(clock, optimal, slow, kill_at)
    monkeypatch.setattr(slots, "solve_record", machine)
    planned = []

    class Recorded(Run):
        def run_step(self, step):
            planned.append((Planned(step), clock.now()))
            before = len(machine.started)
            try:
                return super().run_step(step)
            finally:  # the boards this step started
                planned[-1][0].started = [i for i, _ in machine.started[before:]]

    opts = RunOptions(db_dir=tmp_path / "db", build=False, budget=budget, workers=1, quick_limit=0.5, clock=clock, **kw)
    res = Recorded(recs, RunFiles(tmp_path / "a.txt"), opts).go()
    return res, planned, machine, clock


@pytest.mark.parametrize("budget", [600.0, 250.0])
def test_a_budget_run_plans_its_steps_to_the_millisecond(boards, tmp_path, monkeypatch, budget):
    res, planned, machine, clock = _run(boards, tmp_path, monkeypatch, budget)
    deadline, reserve = START + budget, reserve_for(budget)
    end = deadline - reserve
    assert reserve == min(tuning().reserve, budget / 10)
    kinds = [s.kind for s, _ in planned]
    assert kinds[0] == "answer" and kinds.index("quick") < kinds.index("full") < kinds.index("round")
    # every step's last start: the budget's end less the span of its limit, exactly
    span = {id(step): BOARD_SPAN if step.fallback else QUICK_SPAN for step, _ in planned}
    for step, _ in planned:
        if step.kind in ("quick", "full", "round") and not step.last:
            assert step.last_start == deadline - reserve - span[id(step)] * step.seconds
    # the full pass's limit: half of what was left as it was planned, over its boards
    full, at = next((s, t) for s, t in planned if s.kind == "full")
    assert res.full_limit == full.seconds == round(min(60.0, max(5.0, 0.5 * (end - at) / len(full.boards))), 1)
    # the rounds: 2^k times the full pass's limit, then the last what the budget has left
    rounds = [(s, t) for s, t in planned if s.kind == "round"]
    assert [s.number for s, _ in rounds] == list(range(1, len(rounds) + 1))
    for step, at in rounds:
        if step.last:
            assert step.seconds == (end - START_WINDOW * reserve / tuning().reserve - at) / span[id(step)]
        else:
            assert step.seconds == res.full_limit * 2**step.number
    assert rounds[-1][0].last
    # no board started past its step's last start, and the budget was kept exactly
    starts = dict()
    for step, t in planned:
        for i, began in machine.started:
            if began >= t:
                starts.setdefault((i, t), (step, began))
    assert all(step.last_start is None or began <= step.last_start for step, began in starts.values())
    assert max(t for _, t in machine.ended) <= end and clock.now() <= deadline
    _every_board_answered_and_valid(boards, res, tmp_path)
    # the quick pass proves four, the full pass one, a round one (given the time); no limit covers the last two
    proven = [True] * 6 if budget == 600.0 else [True] * 5 + [False]
    assert [res.outcomes[r.index].proven for r in boards[0]] == proven + [False] * 2


def test_a_busy_machine_is_a_slower_clock_and_every_board_is_answered(boards, tmp_path, monkeypatch):
    """Searches half again as slow (another program takes the cores): fewer proofs, the
    same promises, exactly."""
    res, planned, machine, clock = _run(boards, tmp_path, monkeypatch, 600.0, slow=1.5)
    assert max(t for _, t in machine.ended) <= START + 600.0 - reserve_for(600.0) and clock.now() <= START + 600.0
    _every_board_answered_and_valid(boards, res, tmp_path)


def test_a_short_budget_answers_first_and_starts_nothing_it_cannot_end(boards, tmp_path, monkeypatch):
    """60 s: 6 s kept back; the answer steps answer every board, and no board ends past 54 s."""
    res, planned, machine, clock = _run(boards, tmp_path, monkeypatch, 60.0)
    assert planned[0][0].kind == "answer" and res.answer[1] == len(COSTS)
    assert max(t for _, t in machine.ended) <= START + 60.0 - reserve_for(60.0)
    _every_board_answered_and_valid(boards, res, tmp_path)


def test_without_a_budget_the_steps_are_the_passes_alone(boards, tmp_path, monkeypatch):
    """No budget: no answer steps and no rounds; the quick pass at its limit, the full
    pass at the default limit, with no last start."""
    res, planned, machine, clock = _run(boards, tmp_path, monkeypatch, None, time_limit=20.0)
    assert [(s.kind, s.seconds, s.last_start) for s, _ in planned] == [("quick", 0.5, None), ("full", 20.0, None)]
    assert [res.outcomes[r.index].proven for r in boards[0]] == [True] * 5 + [False] * 3


def _every_board_answered_and_valid(boards, res, tmp_path):
    """Every line of the answer file reaches its board's goal; a proven one is as long
    as an independent search says is optimal."""
    recs, _ = boards
    lines = (tmp_path / "a.txt").read_text().splitlines()
    assert len(lines) == len(recs) and all(lines)
    for rec, moves in zip(recs, lines):
        assert check_moves(rec.board, moves).ok
        if res.outcomes[rec.index].proven:
            assert len(moves) == truth(rec)


def _three_files(files: RunFiles) -> None:
    """The journal written again in the three-file form: the answer pass's lines and the
    quick pass's each in a file of their own, the full pass's left in the journal, no
    line naming its step."""
    import json

    head, *lines = [json.loads(x) for x in files.journal.read_text().splitlines()]
    paths = {**files.earlier_journals, "full": files.journal}
    for of, path in paths.items():
        mine = [{k: v for k, v in d.items() if k != "step"} for d in lines if pass_of(d["step"]) == of]
        path.write_text("".join(json.dumps(d) + "\n" for d in [head, *mine]))


@pytest.mark.parametrize("form", ["one journal", "three files"])
def test_a_killed_run_resumes_with_the_budget_it_had_left_and_solves_nothing_twice(boards, tmp_path, monkeypatch, form):
    """Killed as the full pass's third board starts, resumed 1000 s later: the second
    sitting has the budget less what the first ran, exactly; no board a step journalled
    is solved by that step again; every board is answered.  Each journal line names the
    step that ended its board.  So it goes from the journal, and from the same lines in
    the three-file form (folded into one journal as the run resumes)."""
    import json

    budget, clock = 600.0, FakeClock(START)
    first, planned, machine, _ = _run(boards, tmp_path, monkeypatch, budget, clock=clock, kill_at=14)
    assert first.interrupted and planned[-1][0].kind == "full"
    ended = {s.kind: set(s.started) for s, _ in planned}  # (a killed board never ends: it is not started)
    assert len(ended["full"]) == 2
    files = RunFiles(tmp_path / "a.txt")
    lines = [json.loads(x) for x in files.journal.read_text().splitlines()[1:]]
    assert [(d["step"], d["index"]) for d in lines] == [(s.tag, i) for s, _ in planned for i in s.started]
    if form == "three files":
        _three_files(files)
    ran = clock.now() - START
    clock.advance(1000.0)  # down: not counted
    back = clock.now()
    res, planned, machine, _ = _run(boards, tmp_path, monkeypatch, budget, clock=clock, resume=True)
    assert files.journals() == [files.journal]
    assert not res.interrupted and [s.kind for s, _ in planned][:3] == ["answer", "quick", "full"]
    for step, _ in planned[:3]:  # each goes on with the boards its journal lacks
        assert not set(step.started) & ended[step.kind]
        assert set(step.started) == {r.index for r in step.boards} - ended[step.kind]
    assert max(t for _, t in machine.ended) <= back + (budget - ran) - reserve_for(budget)
    _every_board_answered_and_valid(boards, res, tmp_path)


def test_a_fold_killed_before_it_removed_the_three_files_folds_nothing_twice(tmp_path):
    """The three-file form folded into the journal; the old files back as a kill right
    after the journal was replaced leaves them: a second fold removes them and adds no line."""
    import json

    files = RunFiles(tmp_path / "a.txt")
    head = {"input": {"boards": 2, "sha256": "0" * 16}}
    answer, quick = {"index": 3, "status": "solved"}, {"index": 4, "status": "limit"}
    files.journal.write_text(json.dumps(head) + "\n" + json.dumps({"index": 4, "status": "limit"}) + "\n")
    olds = {"answer": [head, answer], "quick": [head, quick]}
    for of, ds in olds.items():
        files.earlier_journals[of].write_text("".join(json.dumps(d) + "\n" for d in ds))
    kept = {of: files.earlier_journals[of].read_text() for of in olds}
    assert fold_earlier_form(files.journal, files.earlier_journals) == 2
    folded = files.journal.read_text()
    assert [json.loads(x) for x in folded.splitlines()] == [
        head,
        {"index": 4, "status": "limit"},
        {**answer, "step": "answer"},
        {**quick, "step": "quick"},
        {"folded": sorted(p.name for p in files.earlier_journals.values())},
    ]
    assert files.journals() == [files.journal]
    for of, text in kept.items():  # a kill before they were removed
        files.earlier_journals[of].write_text(text)
    assert fold_earlier_form(files.journal, files.earlier_journals) == 0
    assert files.journal.read_text() == folded and files.journals() == [files.journal]
