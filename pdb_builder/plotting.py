"""matplotlib for ``--plot`` (``inspect``'s histograms, ``run``'s timeline): loaded
only when a plot is asked for, drawing to files, and the file's name checked before
any work."""

from __future__ import annotations

from pathlib import Path

from .errors import SlidepdbError


def pyplot():
    """matplotlib's pyplot drawing to files, or a clear error when it is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SlidepdbError(
            "--plot needs matplotlib: pip install 'slidepdb[plot]' (or .venv/bin/pip install matplotlib)"
        ) from None
    return plt


def plot_format_fault(path) -> str | None:
    """Why matplotlib cannot write a plot named ``path`` (it takes the format from the
    name's suffix), or None when it can."""
    pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in kinds:
        return None
    said = f"format {suffix!r}" if suffix else "no suffix"
    return f"{said}: name a file ending in .png, .pdf or .svg (matplotlib writes {', '.join(sorted(kinds))})"
