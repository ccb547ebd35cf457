"""Declarative module arguments, validated when the module is loaded.

``flux module load sched.py name=value ...`` hands the arguments to the
scheduler's ``__init__``.  :class:`flux.scheduler.Scheduler` consumes the
built-in ones (``queue-depth=``, ``log-level=``, ``pool-class=``) and leaves
the rest in ``self._pending_args``; whatever is still there when the leaf
class's ``__init__`` returns is rejected with an error, so ``flux module
load`` fails on a typo.

A scheduler declares its own arguments as :class:`Option` objects::

    from flux_sched_base.args import Option, count_or_unlimited

    class MyScheduler(PlanningScheduler):
        options = (
            Option("reservation-depth", "reservation_depth", 64,
                   count_or_unlimited(minimum=1),
                   "number of queued jobs that hold a reservation"),
        )

:class:`~flux_sched_base.scheduler.PlanningScheduler` collects the options
of every class in the MRO, calls :func:`consume` on ``self._pending_args``
and sets one attribute per option.  A bad value raises :class:`ValueError`
naming the argument and the accepted values, which makes the load fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: The value of a count given as ``unlimited``.
UNLIMITED = math.inf


@dataclass(frozen=True)
class Option:
    """One ``name=value`` module argument.

    Attributes:
        name: the argument name as typed on the command line.
        attribute: the scheduler attribute that receives the parsed value.
        default: the value when the argument is not given (not parsed).
        parse: turns the text after ``=`` into the value; raises
            :class:`ValueError` (its message says what is accepted).
        help: one line for documentation and error messages.
    """

    name: str
    attribute: str
    default: Any
    parse: Callable[[str], Any]
    help: str = ""


def count_or_unlimited(minimum: int = 0) -> Callable[[str], float]:
    """Parser for ``N`` (an integer >= *minimum*) or ``unlimited``.

    ``unlimited`` becomes :data:`UNLIMITED` (``math.inf``), so that the
    value compares naturally with counts.
    """

    def parse(text: str) -> float:
        if text == "unlimited":
            return UNLIMITED
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise ValueError(f"expected an integer >= {minimum} or 'unlimited'")
        return value

    return parse


def choice(*values: str) -> Callable[[str], str]:
    """Parser accepting exactly one of *values*."""

    def parse(text: str) -> str:
        if text not in values:
            raise ValueError(f"expected one of {', '.join(values)}")
        return text

    return parse


def format_value(value: Any) -> str:
    """Render a parsed value the way a user would type it."""
    if value == UNLIMITED:
        return "unlimited"
    return str(value)


def consume(pending: list[str], options: Iterable[Option]) -> dict[str, Any]:
    """Parse the arguments in *pending* that match *options*.

    Recognised arguments are removed from *pending* (in place); the rest are
    left for the base class to reject.  Returns ``{attribute: value}`` for
    every option, defaults included.  A later occurrence of an argument
    overrides an earlier one, as with the built-in arguments.

    Raises:
        ValueError: an option is given without ``=VALUE`` or with a value its
            parser refuses; the message names the argument and the accepted
            values.
    """
    by_name = {opt.name: opt for opt in options}
    values = {opt.attribute: opt.default for opt in by_name.values()}
    remaining = []
    for arg in pending:
        name, sep, text = arg.partition("=")
        opt = by_name.get(name)
        if opt is None:
            remaining.append(arg)
            continue
        if not sep:
            raise ValueError(f"{name}: needs a value ({name}=VALUE); {opt.help}")
        try:
            values[opt.attribute] = opt.parse(text)
        except ValueError as exc:
            raise ValueError(f"{name}={text!r} is invalid: {exc}") from None
    pending[:] = remaining
    return values


def collect(classes: Sequence[type]) -> list[Option]:
    """The :class:`Option` objects declared in ``options`` by *classes*.

    *classes* is an MRO; an option declared by a subclass replaces one of
    the same name declared by a base class.
    """
    seen: dict[str, Option] = {}
    for cls in reversed(list(classes)):
        for opt in cls.__dict__.get("options", ()):
            seen[opt.name] = opt
    return list(seen.values())
