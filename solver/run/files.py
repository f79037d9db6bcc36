"""Every file a run keeps beside its answer file, named in one place.

For an answer file ``ANSWERS`` (``--out``): ``ANSWERS.answer.jsonl`` and
``ANSWERS.quick.jsonl`` (the journals of the answer pass and the quick pass,
``slidepdb run``), ``ANSWERS.progress.jsonl`` (the journal of a
batch or of the full pass and its rounds), ``ANSWERS.sittings`` (each sitting's
start and end, and the figures a run planned once: :class:`solver.run.sittings.Sittings`),
``ANSWERS.built`` (the database files the run built, a name a line: those it may remove
to stay under its disk limit, :meth:`solver.run.builds.Builds.make_room`) and
``ANSWERS.timeline.csv`` (the proven count against running time).
"""

from __future__ import annotations

from pathlib import Path


class RunFiles:
    def __init__(self, answers):
        self.answers = Path(answers)

    def _beside(self, suffix: str) -> Path:
        return self.answers.with_name(self.answers.name + suffix)

    @property
    def answer_journal(self) -> Path:
        return self._beside(".answer.jsonl")

    @property
    def quick_journal(self) -> Path:
        return self._beside(".quick.jsonl")

    @property
    def journal(self) -> Path:
        return self._beside(".progress.jsonl")

    @property
    def sittings(self) -> Path:
        return self._beside(".sittings")

    @property
    def built(self) -> Path:
        return self._beside(".built")

    @property
    def timeline(self) -> Path:
        return self._beside(".timeline.csv")

    def kept(self) -> dict[str, Path]:
        """Every file kept beside the answer file, by what it is."""
        return {
            "journal": self.journal,
            "answer journal": self.answer_journal,
            "quick journal": self.quick_journal,
            "sittings": self.sittings,
            "list of built databases": self.built,
            "timeline": self.timeline,
        }
