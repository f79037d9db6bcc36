"""Atomic publication of files: write a temporary file in the target folder,
flush it to disk, then ``os.replace`` it over the final name (as pooch does).
A killed process leaves at most a ``*.tmp`` file, never a half-written final file;
the temporary name carries the host and process id, so the next write of the same
file removes what a dead writer on this host left (a live one's file is kept: two
writers of one file each finish, and the last rename wins)."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path, suffix: str = ".tmp", need: int | None = None):
    """Yield a temporary path beside ``path``; on success it replaces ``path``.  A disk
    that runs out of room meanwhile raises :class:`~pdb_builder.errors.DiskFullError`,
    one line naming the folder and the room ``path`` needs (``need`` bytes, where the
    writer knows it), and the temporary file goes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path, suffix)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}-{os.getpid()}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a published file gets the usual mode
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) and "No space left" not in str(exc):
            raise
        raise _disk_full(path, Path(tmp), need) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _disk_full(path: Path, tmp: Path, need: int | None):
    from .errors import DiskFullError
    from .words import human_bytes

    try:
        wrote = tmp.stat().st_size
        free = shutil.disk_usage(path.parent).free + wrote  # once the temporary file goes
    except OSError:
        wrote, free = 0, None
    needs = f"about {human_bytes(need)}" if need else f"more than the {human_bytes(wrote)} written"
    has = f", {human_bytes(free)} free" if free is not None else ""
    return DiskFullError(
        f"{path.parent}: no room on its disk for {path.name} (it needs {needs}{has}): nothing was written; "
        "make room there, or give another --db-dir"
    )


_HOST = socket.gethostname().replace(".", "_").replace("-", "_") or "host"
UNNAMED_STALE_SECONDS = 3600  # a temporary file of unknown writer untouched this long is taken as stale


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _stale(tmp: Path, name: str) -> tuple[bool, str]:
    """Whether the temporary file ``tmp`` of the file ``name`` was left by a dead writer
    (one killed on this host; one of no known writer untouched for
    :data:`UNNAMED_STALE_SECONDS`), and its writer as ``HOST-PID`` ('' if unknown)."""
    writer = tmp.name[len(name) + 2 :].split(".", 1)[0]
    host, _, pid = writer.rpartition("-")
    if host and pid.isdecimal():
        return host == _HOST and not _alive(int(pid)), writer
    return time.time() - tmp.stat().st_mtime > UNNAMED_STALE_SECONDS, ""


def remove_stale(path, suffix: str = ".tmp") -> list[Path]:
    """Remove the temporary files of ``path`` that writers killed on this host left
    (and those of no known writer untouched for :data:`UNNAMED_STALE_SECONDS`)."""
    path = Path(path)
    removed = []
    for tmp in path.parent.glob(f".{path.name}.*{suffix}"):
        try:
            if _stale(tmp, path.name)[0]:
                tmp.unlink()
                removed.append(tmp)
        except FileNotFoundError:  # its writer finished meanwhile
            continue
    return removed


def unfinished(folder, ext: str = ".h5", suffix: str = ".tmp") -> list[tuple[str, Path, bool, str]]:
    """The temporary files in ``folder`` of ``*ext`` files not published yet: (the
    file's name, the temporary file, whether its writer is gone, the writer as
    ``HOST-PID``), by name.  A live writer's is a write under way (a build); a dead
    one's is removed by the next write of that file (:func:`remove_stale`)."""
    out = []
    for tmp in sorted(Path(folder).glob(f".*{ext}.*{suffix}")):
        name = tmp.name[1 : tmp.name.index(ext + ".") + len(ext)]
        try:
            gone, writer = _stale(tmp, name)
        except FileNotFoundError:  # published meanwhile
            continue
        out.append((name, tmp, gone, writer))
    return out


def write_text_atomic(path, text: str) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
