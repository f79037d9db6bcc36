"""The run's planning on hand-made states (:func:`solver.run.next_step.next_step`): each
kind of step, the last start, a resume; no clock, no files, no processes."""

from dataclasses import replace

import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_lines
from pdb_builder.storage import pdb_filename
from solver.outcome import Outcome
from solver.run.answer_pass import ANSWER_GROWTH, AnswerLimit
from solver.run.next_step import RunState, next_step, wants_journal
from solver.run.options import RunOptions
from solver.run.planning import DEFAULT_TIME_LIMIT, Budget, UntilEnd
from solver.run.steps import BOARD_SPAN, BatchResult

from .naive import bfs_distances

NOW = 10_000.0


def _records(count=3):
    """``count`` 3x3 boards, the farthest from the goal first."""
    shape = Shape.devquiz(3, 3, [])
    dist = bfs_distances(shape)
    cells = sorted(dist, key=lambda c: -dist[c])[:count]
    return read_lines([Board(shape, c).to_devquiz() for c in cells], "b.txt").records


def _state(recs, budget=None, **opts):
    opts = RunOptions(db_dir="db-never-read", build=False, **opts)
    return RunState(tuple(recs), opts, 2, Budget(budget) if budget else Budget(), 1e6, spans=((NOW, NOW),))


def _out(rec, status="solved", length=20, bound=18, **kw):
    """An outcome of ``rec``: an answer of ``length`` moves (none unless solved), proven
    where the bound reaches it."""
    moves = "R" * length if status == "solved" else None
    optimal = moves is not None and bound >= length
    return (
        Outcome(
            rec.index,
            rec.text,
            status,
            moves=moves,
            length=length if moves else None,
            lower_bound=bound,
            optimal=optimal,
        )
        if not kw
        else replace(_out(rec, status, length, bound), **kw)
    )


def _ran(state, step, outcomes=(), given=None, interrupted=False, **known):
    """``state`` after ``step`` ran and gave ``outcomes`` (each kept as the loop keeps it)."""
    best = {**state.best, **{o.index: o for o in outcomes}}
    result = BatchResult({o.index: o for o in outcomes}, interrupted=interrupted, given=given or {})
    final = dict(state.final)
    if step.kind in ("full", "round"):
        final.update({o.index: o for o in outcomes})
    return replace(state, best=best, final=final, ran=(*state.ran, (step, result)), **known)


def test_without_a_budget_the_quick_pass_then_the_full_pass_and_nothing_after():
    recs = _records()
    state = _state(recs)
    quick = next_step(state, NOW)
    assert quick.kind == "quick" and quick.boards == recs and quick.last_start is None and quick.fallback is False
    assert next_step(state, NOW) == quick and state.ran == ()  # a value of the state alone
    state = _ran(state, quick, [_out(recs[0], "limit", bound=20)])
    assert wants_journal(state)
    full = next_step(state, NOW + 5)
    assert full.kind == "full" and full.time_limit == DEFAULT_TIME_LIMIT and full.marks == ()
    state = _ran(state, full, [_out(r, length=20, bound=19) for r in recs])
    assert next_step(state, NOW + 50) is None  # no budget: no rounds


def test_under_a_budget_the_answer_steps_come_first_and_retry_the_unanswered_with_longer_limits():
    recs = _records()
    state = _state(recs, budget=NOW + 600)
    first = next_step(state, NOW)
    assert first.kind == "answer" and first.number == 1 and first.retry == [] and first.known is None
    assert isinstance(first.time_limit, AnswerLimit) and first.fallback is True
    end = state.budget.end()
    assert first.last_start == pytest.approx(end - BOARD_SPAN * 0.05)  # a board given the least limit ends in time
    # one board left unanswered after 0.3 s: the next step retries it alone, its limit grown
    given = {r.index: 0.3 for r in recs}
    state = _ran(state, first, [_out(recs[0]), _out(recs[1]), _out(recs[2], "limit", bound=16)], given)
    second = next_step(state, NOW + 10)
    assert second.kind == "answer" and second.number == 2 and second.boards == [recs[2]]
    assert second.retry == [recs[2].index] and second.time_limit.fixed == {recs[2].index: ANSWER_GROWTH * 0.3}
    # all answered: no shortening without move limits, so the quick pass, on the boards not proven
    state = _ran(state, second, [_out(recs[2], length=22, bound=22)], {recs[2].index: 1.2})
    state = replace(state, final={recs[2].index: state.best[recs[2].index]})
    quick = next_step(state, NOW + 20)
    assert quick.kind == "quick" and quick.boards == recs[:2]
    assert quick.known[recs[0].index].answer == 20 and quick.rate == state.rate  # (no board told its core share)


def test_the_answer_steps_stop_where_no_board_would_end_in_time():
    recs = _records()
    state = _state(recs, budget=NOW + 600)
    late = state.budget.end() - BOARD_SPAN * 0.05 + 1  # a board given 0.05 s would end after the budget
    step = next_step(state, late)
    assert step.kind == "quick" and step.last_start < late  # the quick pass, whose boards cannot start either


def test_answers_over_the_move_limits_are_shortened_longest_over_their_bound_first():
    recs = _records()
    state = _state(recs, budget=NOW + 600, limits=(10, 10, 10, 10))
    first = next_step(state, NOW)
    outs = [_out(recs[0], length=50, bound=18), _out(recs[1], length=22, bound=20), _out(recs[2], length=24, bound=24)]
    state = _ran(state, first, outs, {r.index: 0.1 for r in recs})
    shorten = next_step(state, NOW + 5)  # (50 moves of R: over the limit of 10)
    assert shorten.kind == "shorten" and shorten.number == 1 and shorten.retry[0] == recs[0].index
    state = _ran(state, shorten, [])
    again = next_step(state, NOW + 6)
    assert again.kind != "shorten" or recs[0].index not in again.retry  # none twice


def test_the_full_pass_plans_its_limit_under_a_budget_once_and_a_resumed_sitting_keeps_it():
    recs = _records()
    state = _state(recs, budget=NOW + 3600, answers_first=False)
    quick = next_step(state, NOW)
    assert quick.kind == "quick"
    state = _ran(state, quick, [_out(r, "limit", bound=16) for r in recs])
    full = next_step(state, NOW + 10)
    (name, planned), *_ = full.marks
    assert name == "limit" and full.time_limit == planned and full.last_start == state.budget.last_start(planned)
    resumed = replace(state, marks={"limit": 7.5})
    assert next_step(resumed, NOW + 10).time_limit == 7.5 and next_step(resumed, NOW + 10).marks == ()


def test_a_resumed_full_pass_skips_what_its_journal_holds_unless_retry_names_it():
    recs = _records()
    done = {recs[0].index: _out(recs[0], length=20, bound=18, time_limit=60.0)}
    for retry, again in ((None, []), ("unproven", [recs[0].index])):
        state = _state(recs, retry=retry)
        state = _ran(state, next_step(state, NOW), [], journal_full=done, tries={recs[0].index: 1})
        full = next_step(state, NOW)
        # (retried: after the boards never tried, the fewest attempts first; else the batch takes it from the journal)
        assert full.retry == again and full.boards[-1 if again else 0] == recs[0]
        assert full.known[recs[0].index].answer == 20  # what the journal found, known to the search


def test_rounds_double_the_limit_until_the_last_takes_what_is_left():
    recs = _records()
    state = _state(recs, budget=NOW + 10_000, answers_first=False, time_limit=10.0)
    state = _ran(state, next_step(state, NOW), [])
    full = next_step(state, NOW)
    assert full.time_limit == 10.0
    unproven = [_out(r, length=24, bound=20, time_limit=10.0) for r in recs]
    after_full = _ran(state, full, unproven)
    first = next_step(after_full, NOW + 100)
    assert first.kind == "round" and first.number == 1 and first.time_limit == 20.0 and not first.last
    assert first.fallback is False  # every board has an answer: the proof alone
    assert first.notes and first.notes[0].startswith("round 1: 3 boards at 20 s")
    # near the budget's end: the last round, each board what is left as it starts
    last = next_step(after_full, state.budget.end() - 40)
    assert last.last and isinstance(last.time_limit, UntilEnd) and last.time_limit.end == state.budget.end()
    assert next_step(_ran(after_full, last, unproven), state.budget.end() - 10) is None  # nothing after the last
    assert next_step(_ran(state, full, unproven, interrupted=True), NOW + 100) is None  # an interrupt ends the run
    proven = [_out(r, length=20, bound=20, time_limit=10.0) for r in recs]
    assert next_step(_ran(state, full, proven), NOW + 100) is None  # nothing left to prove


def test_an_automatic_budget_is_twice_the_running_time_the_full_pass_ended_at():
    recs = _records()
    opts = RunOptions(db_dir="db-never-read", build=False, budget="auto", time_limit=10.0)
    state = RunState(tuple(recs), opts, 2, Budget(), 1e6, spans=((NOW, NOW),))
    state = _ran(state, next_step(state, NOW), [])
    full = next_step(state, NOW)
    after = _ran(state, full, [_out(r, length=24, bound=20, time_limit=10.0) for r in recs])
    assert next_step(after, NOW + 100) is None  # no mark: no budget for rounds
    step = next_step(replace(after, marks={"passes": 100.0}), NOW + 100)
    assert step.kind == "round" and step.last_start <= NOW + 200  # the budget ends at twice the passes' 100 s


def test_builds_are_planned_where_the_budget_leaves_time_for_them_and_never_where_it_is_spent():
    recs = _records()
    opts = RunOptions(db_dir="db-never-read", memory_limit=8 << 20, layout_memory=8 << 20, answers_first=False)
    state = RunState(tuple(recs), opts, 2, Budget(NOW + 3600, 5.0), 1e6, spans=((NOW, NOW),))
    assert next_step(state, NOW).plans  # an empty folder: the 3x3 table to build
    files = frozenset(pdb_filename(p.shape, q.name) for p in next_step(state, NOW).plans for q in p.partitions)
    there = next_step(replace(state, folder=files), NOW)
    assert there.plans == []  # (each plan's file in the folder: nothing to build)
    spent = state.budget.end() - 1.0  # less left than a build's start
    quick = next_step(state, spent)
    assert quick.kind == "quick" and quick.plans == []
    assert next_step(_ran(state, quick, []), spent).plans == []
