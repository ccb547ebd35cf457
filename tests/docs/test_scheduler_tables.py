"""docs/site.rst's tables of module arguments and statistics match the code.

The tables are written for administrators, with reasons beside each
default; this test keeps them true: every argument a reference scheduler
accepts has a row whose default cell shows each scheduler's default, every
row names a real argument, and every statistic a reference scheduler
reports is either in the Statistics table or one of flux-python's own.
"""

from __future__ import annotations

import importlib.util
import inspect
import re

import pytest
from docs_helpers import DOCS
from flux.scheduler import Scheduler

from flux_sched_base import args as argsmod
from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path
from mock_broker.machine import Machine

#: flux-python's own module arguments (flux.scheduler.Scheduler.__init__).
BUILTIN = {"queue-depth", "log-level", "pool-class"}


def section(page: str, title: str) -> str:
    """The text of section *title* of docs/PAGE, up to the next section."""
    text = (DOCS / page).read_text()
    start = text.index(f"\n{title}\n{'-' * len(title)}\n")
    rest = text[start + 2 * len(title) + 3 :]
    following = re.search(r"\n[^\n]+\n-{3,}\n", rest)
    return rest[: following.start()] if following else rest


def table_rows(text: str) -> dict[str, str]:
    """First cell (without markup) -> second cell, of a list-table."""
    rows = {}
    for match in re.finditer(r"\* - ``([^`]+)``\n\s+- (.*?)\n\s+- ", text, re.S):
        rows[match[1]] = " ".join(match[2].split())
    return rows


def scheduler_class(policy: str) -> type:
    path = reference_path(policy)
    spec = importlib.util.spec_from_file_location(f"docs_check_{policy}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (cls,) = [
        c
        for c in vars(module).values()
        if inspect.isclass(c) and c.__module__ == module.__name__
    ]
    return cls


def arguments(policy: str) -> dict[str, str]:
    """Argument name -> default as a user would type it."""
    cls = scheduler_class(policy)
    out = {
        "queue-depth": str(cls.queue_depth),
        "log-level": "info",
        "pool-class": "Rv1SummaryPool",
    }
    for opt in argsmod.collect(cls.__mro__):
        out[opt.name] = argsmod.format_value(opt.default)
    return out


def test_every_argument_has_a_row_showing_each_default():
    rows = {
        name.split("=")[0]: cell
        for name, cell in table_rows(section("site.rst", "Arguments")).items()
    }
    accepted: dict[str, dict[str, str]] = {}
    for policy in REFERENCE_SCHEDULERS:
        for name, default in arguments(policy).items():
            accepted.setdefault(name, {})[policy] = default
    assert set(rows) == set(accepted)
    for name, defaults in accepted.items():
        cell = rows[name]
        for policy, default in defaults.items():
            assert default in cell, (name, policy, default, cell)
        if len(defaults) == 1:
            (only,) = defaults
            assert f"({only} only)" in cell, (name, cell)
        elif len(set(defaults.values())) > 1:
            for policy in defaults:
                assert policy in cell, (name, policy, cell)


@pytest.mark.parametrize("policy", list(REFERENCE_SCHEDULERS))
def test_every_statistic_is_documented(make_broker, policy):
    broker = make_broker(Machine.uniform(2, 4))
    broker.load(str(reference_path(policy)), [])
    broker.run_until(1)
    stats = broker.stats()
    text = section("site.rst", "Statistics")
    documented = set(re.findall(r"``([a-z_]+)``", text))
    upstream = inspect.getsource(Scheduler.stats_get)
    own_args = {o.attribute for o in argsmod.collect(scheduler_class(policy).__mro__)}
    for key in stats:
        assert key in documented or f'"{key}"' in upstream or key in own_args, key
    # And the table names nothing that no scheduler reports.
    table = table_rows(text)
    for cell in table:
        for key in re.findall(r"[a-z_]+", cell):
            assert key in stats, key
