"""Words in messages: counted nouns (``1 board``, ``2 boards``) and sizes in bytes."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural (``many``, default ``word + "s"``) unless ``n`` is 1."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def human_bytes(n: int) -> str:
    """``n`` bytes in the largest unit under 1024 of it: ``1.4 GB``, ``512 B``."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def seconds_text(s: float) -> str:
    """A number of seconds rounded for people: ``8.2 s`` under 10, ``60 s`` above."""
    return f"{s:.1f} s" if s < 10 else f"{s:,.0f} s"
