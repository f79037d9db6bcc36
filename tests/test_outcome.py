"""One board's record (:class:`solver.outcome.Outcome`): its JSON at the journal and
``--json`` boundary, and journals written before the record was typed, which still load
and resume."""

import json
import shutil
from dataclasses import fields
from pathlib import Path

from click.testing import CliRunner

from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.outcome import Outcome
from solver.run.batch import run_batch
from solver.run.files import RunFiles
from solver.run.journal import read_journal

KEPT = Path(__file__).parent / "data" / "journal-2026-11-28"  # written by slidepdb before the typed record


def kept_records():
    return read_file(str(KEPT / "problems.txt")).records


def test_a_journal_written_before_the_typed_record_reads_back_the_same():
    """The kept journal (11 boards: proofs, an unsolvable board, a limit then a fallback
    answer with its iterations) reads back into the records that the code which wrote
    it read (``read-back.json``, written by that code), field for field."""
    done = read_journal(KEPT / "journal.jsonl", kept_records())
    then = json.loads((KEPT / "read-back.json").read_text())
    assert [done[i].as_json() for i in sorted(done)] == then
    assert {o.status for o in done.values()} == {"solved", "unsolvable"}
    assert sum(o.proven for o in done.values()) == 9 and all(o.more == {} for o in done.values())
    unproven = [o for o in done.values() if o.solved and not o.proven]
    assert len(unproven) == 1 and unproven[0].iterations and unproven[0].fallback


def test_a_resumed_batch_of_that_journal_solves_nothing_again(tmp_path):
    """``solve --out --resume`` on that journal: every board resumed, none solved
    again, and the answer file holds the journal's answers (each simulated)."""
    shutil.copy(KEPT / "problems.txt", tmp_path / "p.txt")
    out = tmp_path / "a.txt"
    shutil.copy(KEPT / "journal.jsonl", RunFiles(out).journal)
    r = CliRunner().invoke(main, ["solve", str(tmp_path / "p.txt"), "--out", str(out), "--resume", "--no-db"])
    assert r.exit_code == 3, r.output  # the unsolvable board
    assert "11/11 boards in" in r.output and "11 from an earlier run" in r.output, r.output
    recs = kept_records()
    done = read_journal(KEPT / "journal.jsonl", recs)
    for rec, line in zip(recs, out.read_text().split("\n")):
        o = done[rec.index]
        assert line == (o.moves if o.solved else "") and (not line or check_moves(rec.board, line).ok)
    journal = tmp_path / "j.jsonl"
    shutil.copy(KEPT / "journal.jsonl", journal)
    again = run_batch(recs, use_db=False, journal=journal, resume=True, node_limit=1)
    assert again.resumed == len(recs) and again.outcomes.keys() == done.keys()
    assert all(again.outcomes[i].as_json() == o.as_json() for i, o in done.items())


def test_a_record_round_trips_through_its_json():
    """``from_json(as_json())`` gives the record back, keys this version does not know
    included (kept in ``more`` and written again); a search's record always names its
    answer and bound, a check's only what applies."""
    o = Outcome(
        4, "3,3,123456708", "solved", length=1, moves="R", optimal=True, lower_bound=1, nodes=3, time_limit=None
    )
    o.more = {"from_a_later_version": [1, 2]}
    d = o.as_json()
    assert d["time_limit"] is None and d["from_a_later_version"] == [1, 2]
    assert Outcome.from_json(json.loads(json.dumps(d))) == o
    limit = Outcome(5, "b", "limit", "limit reached", lower_bound=7).as_json()
    assert limit["moves"] is None and limit["length"] is None and "nodes" not in limit and "time_limit" not in limit
    check = Outcome(6, "b", "valid", None, True, "parity").as_json()
    assert check == {"index": 6, "board": "b", "status": "valid", "error": None, "solvable": True, "method": "parity"}
    names = {f.name for f in fields(Outcome)}
    assert {"optimal", "lower_bound", "length", "certificate", "time_limit", "ended", "ladder_failed"} <= names
