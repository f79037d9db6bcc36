"""Counted nouns in messages: ``1 board``, ``2 boards``."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural (``many``, default ``word + "s"``) unless ``n`` is 1."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
