"""Every file a run keeps beside its answer file, named in one place.

For an answer file ``ANSWERS`` (``--out``): ``ANSWERS.progress.jsonl`` (the journal: a
line a board a step ended, naming the step, ``slidepdb run``; or a batch's),
``ANSWERS.sittings`` (each sitting's start and end, and the figures a run planned once:
:class:`solver.run.sittings.Sittings`), ``ANSWERS.built`` (the database files the run
built, a name and the file's inode a line: those it may remove to stay under its disk limit,
:meth:`solver.run.builds.Builds.make_room`) and ``ANSWERS.timeline.csv`` (the proven
count against running time).  A run journalled before its lines named their step kept
the answer pass's and the quick pass's apart, in ``ANSWERS.answer.jsonl`` and
``ANSWERS.quick.jsonl`` (:attr:`RunFiles.earlier_journals`): a resume folds them into
the journal (:func:`solver.run.journal.fold_earlier_form`).
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path


class RunFiles:
    def __init__(self, answers):
        self.answers = Path(answers)

    def _beside(self, suffix: str) -> Path:
        return self.answers.with_name(self.answers.name + suffix)

    @property
    def journal(self) -> Path:
        return self._beside(".progress.jsonl")

    @property
    def earlier_journals(self) -> dict[str, Path]:
        """The journals of the three-file form, by the steps that wrote them: the answer
        pass's (its answer and shortening steps) and the quick pass's; the full pass's
        and the rounds' lines were in :attr:`journal`, which they still are."""
        return {"answer": self._beside(".answer.jsonl"), "quick": self._beside(".quick.jsonl")}

    def journals(self) -> list[Path]:
        """The journal and the journals of the three-file form that exist."""
        return [p for p in (self.journal, *self.earlier_journals.values()) if p.exists()]

    @property
    def sittings(self) -> Path:
        return self._beside(".sittings")

    @property
    def built(self) -> Path:
        return self._beside(".built")

    @property
    def timeline(self) -> Path:
        return self._beside(".timeline.csv")

    @property
    def lock(self) -> Path:
        return self._beside(".lock")

    def kept(self) -> dict[str, Path]:
        """Every file kept beside the answer file, by what it is."""
        return {
            "journal": self.journal,
            **{f"{step} journal (three-file form)": path for step, path in self.earlier_journals.items()},
            "sittings": self.sittings,
            "list of built databases": self.built,
            "timeline": self.timeline,
            "lock": self.lock,
        }


@contextmanager
def owning(answers):
    """Own the answer file ``answers`` and every file kept beside it for the block: an
    OS lock on ``ANSWERS.lock`` (:func:`pdb_builder.locks.hold`), released when the
    block ends or the process dies, however.  Another process that owns it now: a
    :class:`~pdb_builder.errors.BoardError` (exit 2) at once, naming it.  Re-entrant:
    the command line owns the file before it reads what an earlier run left, and the
    run it calls owns it again."""
    import logging

    from pdb_builder.errors import BoardError
    from pdb_builder.locks import Busy, hold_where_possible

    def unlockable(exc) -> None:
        logging.getLogger("slidepdb.run").warning("%s: another run on the same --out is not kept out", exc)

    with ExitStack() as stack:
        try:
            stack.enter_context(hold_where_possible(RunFiles(answers).lock, on_unlockable=unlockable))
        except Busy as busy:
            raise BoardError(
                f"{answers}: another run is writing it now ({busy.holder or 'a process of this machine'}); "
                "wait for it to end, or give another --out"
            ) from None
        except OSError as exc:  # a folder that takes no new file: said before any work
            raise BoardError(f"{answers}: cannot lock it ({exc.strerror or exc}); give another --out") from None
        yield
