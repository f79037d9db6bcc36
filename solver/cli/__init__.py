"""The ``slidepdb`` command: a thin click layer over the library.

The group, its error handling and exit are here; the commands in ``solve`` (check,
solve) and ``run``, their shared options in ``options``, what they print in
``report``; ``build``, ``inspect`` and ``verify`` come from :mod:`pdb_builder.cli`, and the
helpers both sides share from :mod:`pdb_builder.cli.shared`.

Results go to stdout (``--json``: one object per board per line), logs and
progress to stderr.  Exit codes are listed in ``pdb_builder.errors`` and the
README; with several boards the highest code any board produced wins.
"""

import logging
import os
import sys

import click

from pdb_builder import __version__
from pdb_builder.cli import register as register_builder
from pdb_builder.cli.shared import EXIT_HELP
from pdb_builder.errors import EXIT_CLOSED_PIPE, EXIT_INTERNAL, EXIT_INTERRUPTED, SlidepdbError

from ..search.limits import stop_settled
from . import run, show, solve


class SlidepdbGroup(click.Group):
    """Turns library errors into one-line messages with their exit codes, and click's
    usage errors (a bad option, a missing argument) into one line too: the command and
    the fault, with where the help is (click prints four: usage, hint, blank, error)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else (prog_name or "slidepdb")
            click.echo(f"error: {command}: {exc.format_message()} (see {command} --help)", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)  # an Exit's code (--help, ctx.exit), or a command's end

    def make_context(self, info_name, args, parent=None, **extra):
        argv = list(args)  # the words as typed: what a refusal tells the user to type instead
        ctx = super().make_context(info_name, args, parent=parent, **extra)
        ctx.meta["argv"] = argv
        return ctx

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SlidepdbError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # e.g. `slidepdb check FILE | head -1`: stop quietly, as Unix tools do
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the exit's flush of stdout must not fail again
            ctx.exit(EXIT_CLOSED_PIPE)  # 128 + SIGPIPE, what a shell reports for a tool the signal stopped
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - last resort: no traceback for users
            from ..search.limits import stopping

            if stopping():  # an interrupt a library turned into another exception
                click.echo("interrupted", err=True)
                ctx.exit(EXIT_INTERRUPTED)
            if os.environ.get("SLIDEPDB_DEBUG"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc} (set SLIDEPDB_DEBUG=1 for a traceback)", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=SlidepdbGroup, epilog=EXIT_HELP)
@click.version_option(__version__, prog_name="slidepdb")
@click.option("-v", "--verbose", count=True, help="More messages on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
def main(verbose, quiet):
    """Pattern databases and optimal solving for sliding-tile puzzles, walls included."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr, force=True)
    stop_on_sigterm()


def entry() -> None:
    """The ``slidepdb`` command: :func:`main`, then an exit that skips tearing the
    interpreter down (freeing every module, array and compiled kernel one by one:
    about 0.14 s after a file of boards) once nothing is left to finish: the exit
    handlers have run (logging, multiprocessing), stdout and stderr are flushed and
    no other thread is alive; otherwise Python's usual exit."""
    import atexit
    import threading

    try:
        main(prog_name="slidepdb")
        code = 0
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int):  # None: success; a message: printed, status 1 (as sys.exit does)
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if code == EXIT_INTERRUPTED:
        stop_settled()  # the answers are written: a late signal must not change the exit code
    if threading.active_count() > 1 or not hasattr(atexit, "_run_exitfuncs"):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed pipe or stream: nothing more can be written to it
    os._exit(code)


def stop_on_sigterm() -> None:
    """SIGTERM (batch schedulers, ``kill``) stops like Ctrl-C: finished answers are kept.
    Background jobs of a non-interactive shell ignore SIGINT, so this is how they stop.
    Both go through :func:`solver.search.limits.request_stop`, which remembers the stop."""
    import signal
    import threading

    from ..search.limits import request_stop

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, request_stop)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where a shell ignores it
            signal.signal(signal.SIGINT, request_stop)


main.add_command(solve.check)
main.add_command(solve.solve)
main.add_command(run.run)
main.add_command(show.show)


def _measure(paths, boards):
    from ..search.measure import measure

    return measure(paths, boards)


register_builder(main, measure=_measure)


if __name__ == "__main__":
    main()
