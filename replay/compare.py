"""Several schedulers on one workload, each replay in a process of its own.

:func:`compare` replays one :class:`~replay.workload.ReplayInput` through
every scheduler given, at most *processes* at a time
(:class:`concurrent.futures.ProcessPoolExecutor`, started with ``spawn``
so no lock or thread of the calling process is inherited), and returns
their JSON results (:func:`replay.results.document`) in the order given.
Replays are deterministic, so running them side by side changes no
figure but the wall times.

Workers ignore Ctrl-C; the calling process gets it, and :func:`compare`
then ends the workers before letting the interrupt go on.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_mod
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from dataclasses import dataclass

from replay.workload import ReplayInput

#: How many progress messages a worker sends over a whole replay, at most.
PROGRESS_STEPS = 200


@dataclass(frozen=True)
class Entry:
    """One scheduler to replay: its label, module and module arguments."""

    label: str
    module: str
    args: tuple[str, ...] = ()


class ReplayFailed(RuntimeError):
    """A replay could not run (its module did not load); names the entry."""


# -- in the worker processes --------------------------------------------------

_progress_queue = None


def _worker_init(progress_queue) -> None:
    """Ignore Ctrl-C (the parent ends the workers) and keep the queue."""
    global _progress_queue
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _progress_queue = progress_queue


def _replay_one(index: int, entry: Entry, source: ReplayInput, seed: int, watch):
    """Replay *source* through *entry*; the JSON result or an error text."""
    from mock_broker.runtime.module_host import ModuleLoadError
    from replay.results import document
    from replay.runner import replay

    total = len(source.workload.jobs)
    step = max(1, total // PROGRESS_STEPS)
    last = [-step]

    def progress(done: int) -> None:
        if _progress_queue is not None and (done - last[0] >= step or done == total):
            last[0] = done
            _progress_queue.put((index, done))

    try:
        result, broker = replay(
            entry.module,
            source.workload,
            source.machine,
            list(entry.args),
            label=entry.label,
            seed=seed,
            watch=watch,
            unix_start_time=source.trace.unix_start_time,
            progress=progress,
        )
    except ModuleLoadError as exc:
        return f"{entry.label}: the scheduler did not load: {exc}"
    broker.close()
    return document(result, source)


# -- in the calling process ---------------------------------------------------------


def compare(
    entries: Sequence[Entry],
    source: ReplayInput,
    *,
    processes: int = 2,
    seed: int = 0,
    watch: Callable | None = None,
    progress: Sequence[Callable[[int], None]] | None = None,
) -> list[dict]:
    """Replay *source* through every entry; their JSON results, in order.

    *watch* (picklable, for example ``Referee.attach``) watches each
    broker; *progress*, one callback per entry, gets the number of jobs
    ended so far.

    Raises:
        ReplayFailed: an entry's module did not load.
    """
    context = multiprocessing.get_context("spawn")
    updates = context.Queue() if progress else None
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(processes, len(entries))),
        mp_context=context,
        initializer=_worker_init,
        initargs=(updates,),
    )
    try:
        futures = [
            pool.submit(_replay_one, k, entry, source, seed, watch)
            for k, entry in enumerate(entries)
        ]
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            _drain(updates, progress)
        _drain(updates, progress)
        results = [future.result() for future in futures]
    except BaseException:
        _end_workers(pool)
        raise
    pool.shutdown()
    for result in results:
        if isinstance(result, str):
            raise ReplayFailed(result)
    return results


def _drain(updates, progress) -> None:
    """Pass every progress message waiting in *updates* on."""
    if updates is None:
        return
    while True:
        try:
            index, done = updates.get_nowait()
        except queue_mod.Empty:
            return
        progress[index](done)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop *pool* now: running replays are killed, queued ones dropped.
    (``terminate_workers`` comes only with Python 3.14.)"""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


__all__ = ["Entry", "ReplayFailed", "compare"]
