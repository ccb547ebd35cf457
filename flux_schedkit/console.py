"""The terminal side of long-running commands: interrupts, closed pipes
and progress bars.

:func:`guarded` turns Ctrl-C and a closed output pipe (``| head``) into a
one-line message and an exit status instead of a traceback.
:class:`ProgressBars` shows rich progress bars on stderr when stderr is a
terminal, and nothing otherwise (piped, redirected, under CI), so output
that a program reads is never mixed with them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def say(command: str, text: str, prog: str = "flux-schedkit") -> None:
    """Print ``flux-schedkit COMMAND: TEXT`` on stderr (if it is open);
    ``flux-schedkit: TEXT`` when *command* is empty (no subcommand).
    *prog* names another program (a benchmark script)."""
    who = f"{prog} {command}" if command else prog
    try:
        print(f"{who}: {text}", file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        pass  # stderr went away too (2>&1 | head): nothing left to tell


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of a
    closed pipe does not print a traceback of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def guarded(command: str, body: Callable[[], int], prog: str = "flux-schedkit") -> int:
    """Run *body* and return its exit status; Ctrl-C gives
    :data:`EXIT_INTERRUPTED` (130) and a closed output pipe
    :data:`EXIT_FAILED` (1), each with a one-line message (see :func:`say`
    for *prog*)."""
    try:
        status = body()
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except KeyboardInterrupt:
        say(command, "interrupted", prog)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        say(command, "output closed early (broken pipe)", prog)
        return EXIT_FAILED


class ProgressBars:
    """Progress bars on stderr, shown only on a terminal.

    Use as a context manager; :meth:`add` gives a callback taking the
    number of items done.  *enabled* False (``--no-progress``) or a stderr
    that is not a terminal shows nothing and costs nothing.
    """

    def __init__(self, enabled: bool = True, console=None):
        self._progress = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = console or Console(stderr=True)
        if not console.is_terminal:
            return
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )

    @property
    def shown(self) -> bool:
        """True if the bars are drawn."""
        return self._progress is not None

    def __enter__(self) -> ProgressBars:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()

    def add(self, description: str, total: int) -> Callable[[int], None]:
        """A new bar of *total* items; returns ``update(done)``."""
        if self._progress is None:
            return _ignore
        progress = self._progress
        # The clock of a bar starts with its first update (a replay that
        # waits for a free process has not started).
        task = progress.add_task(description, total=total, start=False)
        started = []

        def update(done: int) -> None:
            if not started:
                started.append(True)
                progress.start_task(task)
            progress.update(task, completed=done)

        return update


def _ignore(_done: int) -> None:
    pass


__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "ProgressBars",
    "guarded",
    "say",
]
