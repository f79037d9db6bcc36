"""Exit codes and error types shared by every ``slidepdb`` command.

The exit codes are a contract (README "Exit codes"): scripts rely on them, and
``tests/test_cli.py`` produces each one.  With several boards, every board is
processed and the process exits with the highest code any board produced.
"""

EXIT_OK = 0  # success
EXIT_INTERNAL = 1  # internal error, or a database that is missing, damaged or foreign
EXIT_BAD_INPUT = 2  # bad input or usage
EXIT_UNSOLVABLE = 3  # an unsolvable board
EXIT_LIMIT = 4  # a time or node limit stopped a board without an answer, or move limits kept it out of the file
EXIT_BAD_MOVES = 5  # a move string that is illegal or does not reach the goal
EXIT_OUTPUT = 6  # an output file could not be written (the others were)
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM (128 + SIGINT, as shells report it)
EXIT_CLOSED_PIPE = 141  # standard output closed by its reader (128 + SIGPIPE): stops quietly

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_INTERNAL: "internal or database error",
    EXIT_BAD_INPUT: "bad input or usage",
    EXIT_UNSOLVABLE: "an unsolvable board",
    EXIT_LIMIT: "a limit stopped a board without an answer (a time or node limit, or the file's move limits)",
    EXIT_BAD_MOVES: "a move string that is illegal or does not reach the goal",
    EXIT_OUTPUT: "an output file could not be written (the others were; each is named)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C or SIGTERM): finished answers kept, --resume goes on",
    EXIT_CLOSED_PIPE: "standard output was closed (e.g. piped into head): stopped quietly",
}


class SlidepdbError(Exception):
    """Base class: a message meant for the user, one line, and an exit code."""

    exit_code = EXIT_INTERNAL


class BoardError(SlidepdbError, ValueError):
    """A board, size, goal or move string that cannot be read."""

    exit_code = EXIT_BAD_INPUT


class OptionsError(SlidepdbError, ValueError):
    """An option of the Python API out of its range (a time limit of -1, no threads, an
    unknown goal); the CLI checks its options itself (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class BadMovesError(SlidepdbError, ValueError):
    """A move string with a move off the board or into a wall, or an unknown letter."""

    exit_code = EXIT_BAD_MOVES


class DiskFullError(SlidepdbError, OSError):
    """The disk of an output ran out of room while it was written: the user's condition,
    not a fault; nothing was published (:func:`pdb_builder.atomic.atomic_path`)."""

    exit_code = EXIT_OUTPUT


class DatabaseError(SlidepdbError):
    """A database file that is missing, damaged, foreign or too new (``path``: which
    one, where the raiser knows)."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str = "", path=None):
        super().__init__(message)
        self.path = None if path is None else str(path)


class DatabaseGone(DatabaseError):
    """A database file that is not there (any more): a folder's listing is a moment's
    view, and a file listed may be removed before it is opened."""
