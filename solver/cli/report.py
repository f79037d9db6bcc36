"""What the commands print: each board's line or JSON object, the progress line, and
the closing tables (per size, move limits, comparisons) with the exit code."""

from __future__ import annotations

import json
from dataclasses import dataclass

import click

from pdb_builder.cli.shared import format_table
from pdb_builder.errors import EXIT_INTERRUPTED, EXIT_LIMIT, EXIT_OUTPUT
from pdb_builder.words import plural

from ..outcome import rank


def where(boards, index: int) -> str:
    return f"{boards.source}:{index}" if boards.source != "<argument>" else "board"


def show(out, boards, as_json: bool, human, improved: bool = False) -> None:
    """One outcome: its JSON object, or its error on stderr and ``human(out)`` on
    stdout.  ``improved``: a later, better outcome of a board shown before (a round's
    retry), marked so (``"improved": true``; ``improved:`` before the line)."""
    if as_json:
        click.echo(json.dumps({**out.as_json(), **({"improved": True} if improved else {})}))
        return
    if out.error:
        click.echo(f"{out.status}: {where(boards, out.index)}: {out.error}", err=True)
    line = human(out)
    if line is not None:
        click.echo(f"improved: {line}" if improved else line)


def progressive(boards, as_json: bool, human):
    """``on_outcome`` for a run over ``boards``: each board shown, and on a terminal the
    boards bar below (:class:`solver.cli.progress.Progress`) or, for one board, the live
    line of its search (``on_outcome.search``, for :func:`solver.run.batch.run_batch`)."""
    from .progress import Progress, SearchLine

    bar = Progress(len(boards.records))
    line = SearchLine() if len(boards.records) == 1 else None
    if line is not None and not line.enabled:
        line = None

    shown: dict[int, tuple] = {}  # index -> rank of the outcome shown

    def on_outcome(out):
        if line is not None:
            line.close()
        was, now = shown.get(out.index), rank(out)
        if was is not None and now <= was:
            return  # a retry that found no more: the board's line stands
        shown[out.index] = now
        on_outcome.improved += was is not None
        bar.clear()
        show(out, boards, as_json, human, improved=was is not None)
        bar.update(out)

    def close():  # before the summary
        bar.close()
        if line is not None:
            line.close()

    on_outcome.close = close
    on_outcome.improved = 0  # boards shown again, improved
    on_outcome.search = line
    return on_outcome


def emit(outcomes, boards, as_json: bool, human) -> int:
    """Print each outcome; return the highest exit code."""
    code = 0
    for out in outcomes:
        code = max(code, out.exit_code)
        show(out, boards, as_json, human)
    return code


def human_solved(boards):
    def human(out):
        if out.status != "solved":
            return None
        if out.optimal:
            tag = f"optimal: {out.proof}" if out.proof else "optimal"
        else:
            parts = ["not proven optimal", out.fallback]
            if out.lower_bound is not None:
                parts.append(f"lower bound {out.lower_bound}")
            tag = ", ".join(p for p in parts if p)
        if out.contradiction:
            tag += ", contradiction (below)"
        moves = "1 move" if out.length == 1 else f"{out.length} moves"
        return f"{where(boards, out.index)}: {moves} ({tag}, {out.nodes} nodes, {out.seconds:.2f} s): {out.moves}"

    return human


@dataclass(frozen=True)
class Outputs:
    """What a solve or run command writes besides its lines: the per-board report, the
    answer files compared against, JSON lines on stdout (then the tables go to
    stderr), the answer file."""

    report_path: object = None
    compare_paths: tuple = ()
    as_json: bool = False
    out_path: object = None


def tables_left_out(outcomes) -> list[str]:
    """One line for each database file the searches left out (damaged, foreign, not
    readable: ``tables_left_out`` of the outcomes), with why and how many boards went
    on without it."""
    seen: dict[str, list] = {}
    for o in outcomes:
        for name, why in (o.tables_left_out or {}).items():
            seen.setdefault(name, [why, 0])[1] += 1
    return [
        f"{name} left out ({why}): {plural(n, 'board')} solved without it; "
        "slidepdb verify checks it, slidepdb build --overwrite builds it again"
        for name, (why, n) in sorted(seen.items())
    ]


def finish_run(
    boards, outcomes, outputs: Outputs, *, head, left_out, interrupted, extra_tables=(), failed_outputs=()
) -> int:
    """Report, tables (per size, move limits, comparisons) and the exit code of a solve
    or run, written as ``outputs`` say.  ``failed_outputs``: the outputs not written so
    far (:class:`~solver.run.outputs.OutputFailure`); the report is written on its own
    too, and each output not written is named last (exit code 6)."""
    from ..run.answer_file import COMPARISON_HEADERS, MOVE_HEADERS, compare, comparison_rows, move_rows
    from ..run.batch import SUMMARY_HEADERS, answers_of, summary_rows, write_report
    from ..run.outputs import write_each

    code = 0
    outcomes = dict(outcomes)
    failed = list(failed_outputs)
    report = outputs.report_path
    if report:
        write_each(failed, "--report", report, lambda: write_report(report, outcomes.values()))
    for o in outcomes.values():
        code = max(code, o.exit_code)
    answers = {i: m for i, m in answers_of(outcomes).items() if i not in left_out}
    text = []
    if len(boards.records) > 1:
        text += [head, format_table(summary_rows(outcomes.values()), SUMMARY_HEADERS)]
        for title, table in extra_tables:
            text += [title, table]
        if boards.limits is not None or left_out:
            text += [
                "move limits (the file's first line)" if boards.limits else "moves",
                format_table(move_rows(answers.values(), boards.limits), MOVE_HEADERS),
            ]
        if left_out:
            text.append(
                f"{plural(len(left_out), 'answer')} left out of {outputs.out_path} to stay within the move limits: "
                + ", ".join(where(boards, i) for i in sorted(left_out)[:10])
                + (" ..." if len(left_out) > 10 else "")
                + f" (exit {EXIT_LIMIT}: those boards have no answer in the file)"
            )
    if left_out:
        code = max(code, EXIT_LIMIT)
    comps = [compare(p, boards.records, answers, outcomes) for p in outputs.compare_paths]
    if comps:
        text += ["against other answer files", format_table(comparison_rows(comps), COMPARISON_HEADERS)]
        for c in comps:
            for prob in c.problems[:5]:
                text.append(f"  {prob}")
    if text:
        click.echo("\n".join(text), err=outputs.as_json)
    for line in tables_left_out(outcomes.values()):
        click.echo(f"warning: {line}", err=True)
    for line in [o.contradiction for o in outcomes.values() if o.contradiction] + [
        p for c in comps for p in c.contradictions
    ]:
        click.echo(f"error: {line}", err=True)
        code = max(code, 1)
    for f in failed:
        click.echo(f"error: {f}", err=True)
        code = max(code, EXIT_OUTPUT)
    if interrupted:
        click.echo(
            f"interrupted: {plural(len(outcomes), 'board')} finished"
            + (f"; rerun with --resume to continue {outputs.out_path}" if outputs.out_path else ""),
            err=True,
        )
        return EXIT_INTERRUPTED
    return code


def reopened_text(count: int) -> str:
    what = "their tables changed or are gone since, or their lines do not name them (answers kept, solved again)"
    return f"{plural(count, 'journalled proof')} reopened: {what}"


def tell_build(item) -> None:
    """A build of ``slidepdb run`` told on stderr: as it is planned
    (:class:`~solver.run.builds.Plan`) and as it ends (a ``BuildReport``)."""
    from pdb_builder.make.building import BuildReport

    from .options import log

    if isinstance(item, BuildReport):
        log.warning("  %s %s: %s, %.1f s", item.shape, item.name, item.status, item.seconds)
    else:
        log.warning(
            "building %s database %s (%s, %s entries, %s)",
            item.role,
            item.shape.key,
            " + ".join(p.name for p in item.partitions),
            f"{item.entries:,}",
            plural(item.boards, "board"),
        )


def run_notes(res, total: float, improved: int) -> list[tuple[str, str]]:
    """The lines under ``slidepdb run``'s summary: the time of each step (``res``: its
    :class:`~solver.run.options.RunResult`; ``total``: the sitting's seconds), the tables
    removed for room, the builds skipped, given up, stopped or failed, and how many
    boards' lines were shown again (``improved``)."""
    from pdb_builder.words import human_bytes

    extra = [("time (s)", format_table(res.phase_rows(total), ["step", "what", "seconds"]))]
    if res.removed_tables:
        room = human_bytes(sum(size for _, size in res.removed_tables))
        removed = f"{len(res.removed_tables)} databases this run built removed ({room})"
        extra.append(("", f"{removed}: their boards were proven; room under --disk-limit"))
    if res.skipped_builds:  # (a plan that two passes skipped: once)
        skipped = {(p.shape.key, p.partitions[0].name) for p in res.skipped_builds}
        extra.append(("", f"{len(skipped)} layout databases not built: over --disk-limit"))
    for f in res.failed_builds:  # (solver.run.builds.BuildFailed)
        what = f"{f.shape_key} {f.partition}"
        if f.how == "late":
            extra.append(("", f"build given up: {what}: {f.reason}; its boards were solved without it"))
        elif f.how == "stopped":
            extra.append(("", f"build stopped: {what}: the time budget ran out before it ended"))
        else:
            extra.append(("", f"build failed: {what}: {f.reason} (its boards were solved without it)"))
    if improved:
        extra.append(
            (
                "",
                f"improved: {plural(improved, 'line')} of boards shown again, a later pass or round found more "
                "(an answer, a shorter one, a proof)",
            )
        )
    reopened = sum(b.reopened for b in (res.quick, res.full) if b is not None)
    if reopened:
        extra.append(("", reopened_text(reopened)))
    return extra
