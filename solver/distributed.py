"""The one door to a dask.distributed cluster, for a run's boards
(:mod:`solver.run.cluster`) and for one board's windows (:mod:`solver.search.processes`):
checking an address, connecting (one timeout: dask's own
``distributed.comm.timeouts.connect``, which ``dask.config.set`` or the environment
variable ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT`` changes), the workers and their
threads as the scheduler records them, and one error for all of it
(:class:`~pdb_builder.errors.OptionsError`, exit 2).  dask is imported only here, and
only when a cluster is asked for."""

from __future__ import annotations

from contextlib import contextmanager

from pdb_builder.errors import OptionsError

NEEDS_DASK = "--scheduler needs dask.distributed: pip install 'slidepdb[dask]'"


def check_address(address: str) -> str:
    """``address`` read as dask reads it (``tcp://host:8786``, ``host:8786``); an
    OptionsError saying what is wrong, before any work."""
    try:
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise OptionsError(NEEDS_DASK) from None
    try:
        scheme, where = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(where)
    except (ValueError, TypeError) as exc:
        raise OptionsError(f"--scheduler {address!r}: {exc} (expected e.g. tcp://host:8786)") from None
    return address


@contextmanager
def connected(scheduler):
    """A ``distributed.Client`` of ``scheduler`` (an address, or a Client: used as it is)
    for the block; one opened here is closed at its end.  OptionsError when dask is not
    installed or the scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise OptionsError(NEEDS_DASK) from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    try:
        client = Client(scheduler)  # (timeout: distributed.comm.timeouts.connect)
    except (OSError, ValueError) as exc:
        raise OptionsError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
    try:
        yield client
    finally:
        client.close()


def workers(client) -> dict:
    """The scheduler's record of every worker (address -> its facts: ``nthreads``,
    ``memory_limit``, ...)."""
    import inspect

    every = {"n_workers": -1} if "n_workers" in inspect.signature(client.scheduler_info).parameters else {}
    return client.scheduler_info(**every).get("workers", {})  # (some versions gave 5 unless told)


def worker_threads(record: dict) -> int:
    """How many tasks a cluster runs at once: the threads of the workers in its record
    (:func:`workers`) together, at least 1."""
    return max(sum(int(w.get("nthreads") or 1) for w in record.values()), 1)
