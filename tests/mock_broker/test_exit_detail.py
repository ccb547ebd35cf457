"""A scheduler that raises is reported with its own file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mock_broker_helpers import sched, whole_nodes

from mock_broker.machine import Machine
from mock_broker.runtime.module_host import (
    describe_raised,
    exception_text,
    where_raised,
)

RAISING = Path(sched("raising.py"))


def line_of(text: str) -> int:
    """The line of raising.py that contains *text*."""
    lines = RAISING.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def crash(make_broker, cls: str):
    broker = make_broker(Machine.uniform(1, 4))
    broker.load(sched(f"raising.py:{cls}"))
    broker.jobs.submit(whole_nodes(1), runtime=10)
    broker.run()
    assert broker.scheduler is None, "the module should have exited"
    return broker


def exit_note(broker) -> str:
    return next(
        e.text
        for e in broker.transcript.entries()
        if e.kind == "event" and e.text.startswith("module exited:")
    )


def test_a_callback_exception_caught_by_flux_python_is_located(make_broker):
    # flux-python's alloc handler logs the exception and stops the reactor
    # with a bare error; the report still names the line that raised.
    broker = crash(make_broker, "RaisesInAlloc")
    where = f"{RAISING}:{line_of('no such key')} in alloc"
    assert exit_note(broker) == (
        f"module exited: reactor exited with error after KeyError: 'queue' at {where}"
    )
    assert broker.last_exit_detail.endswith(where)
    # The evidence traceback is the callback's, not mod_main's.
    assert f'"{RAISING}", line {line_of("no such key")}, in alloc' in (
        broker.last_exit_traceback
    )
    violation = broker.observer.violations[0]
    assert violation.kind == "module-exited" and where in violation.text


def test_the_line_is_the_schedulers_even_when_a_library_raised(make_broker):
    broker = crash(make_broker, "RaisesBelowItsOwnCode")
    where = f"{RAISING}:{line_of('json.loads')} in schedule"
    assert exit_note(broker).startswith("module exited: JSONDecodeError: ")
    assert exit_note(broker).endswith(f" at {where}")


def test_where_raised_prefers_the_modules_file_then_the_innermost_frame():
    def inner():
        json.loads("{")

    with pytest.raises(ValueError) as info:
        inner()
    exc = info.value
    this = str(Path(__file__))
    assert where_raised(exc, this).startswith(f"{this}:")
    assert where_raised(exc, this).endswith(" in inner")
    # No frame in the named file: the innermost frame of all (json's).
    assert "json" in where_raised(exc, "/no/such/file.py")
    assert where_raised(ValueError("x"), this) == ""  # never raised
    assert describe_raised(ValueError("x"), this) == "ValueError: x"


UNPRINTABLE = "Unprintable (its message could not be read: str() raised ValueError)"


def test_an_exception_whose_str_raises_is_described_by_its_type(make_broker):
    broker = crash(make_broker, "UnprintableInSchedule")
    where = f"{RAISING}:{line_of('raise Unprintable()  # in schedule')} in schedule"
    assert exit_note(broker) == f"module exited: {UNPRINTABLE} at {where}"
    violation = broker.observer.violations[0]
    assert violation.kind == "module-exited"
    assert violation.text.endswith(f"exited: {UNPRINTABLE} at {where}")


def test_flux_pythons_handler_failing_on_such_an_exception_is_reported(make_broker):
    # flux-python's alloc handler formats the exception to log it, and its
    # __str__ raises there: the module exits with that error, as it would
    # on a real broker, and the kit describes it.
    broker = crash(make_broker, "UnprintableInAlloc")
    where = f"{RAISING}:{line_of('no str for you')} in __str__"
    assert exit_note(broker) == f"module exited: ValueError: no str for you at {where}"


class _OddText(Exception):
    def __init__(self, raises: type[BaseException]):
        self.raises = raises

    def __str__(self):
        raise self.raises


def test_an_exception_whose_text_cannot_be_read_is_named_all_the_same():
    assert exception_text(ValueError("x")) == "ValueError: x"
    assert exception_text(ValueError()) == "ValueError"
    assert exception_text(_OddText(RuntimeError)) == (
        "_OddText (its message could not be read: str() raised RuntimeError)"
    )
    # Ctrl-C goes through, unless SIGINT is ignored (the kit's worker)
    with pytest.raises(KeyboardInterrupt):
        exception_text(_OddText(KeyboardInterrupt))
    assert exception_text(_OddText(KeyboardInterrupt), ctrl_c=False) == (
        "_OddText (its message could not be read: str() raised KeyboardInterrupt)"
    )
