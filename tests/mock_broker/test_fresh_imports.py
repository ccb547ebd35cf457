"""Each load of a scheduler imports its own helper modules afresh, as the
new process flux-core 0.88 starts for each load does
(:mod:`mock_broker.runtime.fresh_imports`)."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

from sortedcontainers import sortedlist

from flux_sched_base import counts
from mock_broker.machine import Machine
from mock_broker.runtime import fresh_imports, reactor
from mock_broker.runtime.broker import MockBroker

#: A module body that records each load in a helper module's global list
#: and logs how many loads that helper has seen.
_RECORDS_LOADS = """
    from flux.scheduler import Scheduler
    {import_helper}

    MINE = []

    def mod_main(h, *args):
        MINE.append(1)
        state.LOADS.append(1)
        h.log(3, f"module {{len(MINE)}}, loads seen: {{len(state.LOADS)}}")
        Scheduler(h, *args).run()
"""


def _records_loads_beside(folder, helper: str):
    """A module file in *folder* recording its loads in the module *helper*
    beside it."""
    module = folder / "sched.py"
    module.write_text(
        textwrap.dedent(
            _RECORDS_LOADS.format(
                import_helper="import os, sys\n"
                "    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
                f"    import {helper} as state"
            )
        )
    )
    return module


def _logged_loads(broker) -> list[str]:
    return [line for line in broker.transcript.lines() if "loads seen" in line]


def _restart_twice(target: str, **kw) -> MockBroker:
    broker = MockBroker(Machine.uniform(2, 4), **kw)
    broker.load(target)
    broker.run_until(1)
    broker.restart_scheduler()
    broker.run_until(2)
    broker.restart_scheduler()
    broker.run_until(3)
    return broker


def test_a_helper_beside_the_file_starts_empty_at_each_load(tmp_path):
    (tmp_path / "state_beside.py").write_text("LOADS = []\n")
    module = _records_loads_beside(tmp_path, "state_beside")
    broker = _restart_twice(str(module))
    try:
        # Until 2026-12-07 the second load got the first one's helper:
        # "loads seen: 2", then 3.
        seen = _logged_loads(broker)
        assert len(seen) == 3 and all(s.endswith("loads seen: 1") for s in seen), seen
    finally:
        broker.close()
        sys.modules.pop("state_beside", None)


def test_a_dotted_module_and_its_package_run_afresh_at_each_load(tmp_path, monkeypatch):
    package = tmp_path / "freshpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "state.py").write_text("LOADS = []\n")
    (package / "sched.py").write_text(
        textwrap.dedent(
            _RECORDS_LOADS.format(import_helper="from freshpkg import state")
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        broker = _restart_twice("freshpkg.sched")
        try:
            # The module itself ran again from its first line, as did its
            # helper (until 2026-12-07: "module 2, loads seen: 2", then 3).
            seen = _logged_loads(broker)
            assert len(seen) == 3
            assert all(s.endswith("module 1, loads seen: 1") for s in seen), seen
        finally:
            broker.close()
    finally:
        for name in [n for n in sys.modules if n.startswith("freshpkg")]:
            del sys.modules[name]


def test_a_helper_that_refuses_a_second_import_keeps_the_first(tmp_path):
    # A helper registering itself in a process-wide registry (a metrics
    # collector, say) raises when imported twice in one process: the
    # load falls back on the first import, which keeps its own helper.
    (tmp_path / "registers.py").write_text(
        textwrap.dedent(
            """
            import builtins
            if getattr(builtins, "_schedkit_test_registered", False):
                raise RuntimeError("already registered in this process")
            builtins._schedkit_test_registered = True
            LOADS = []
            """
        )
    )
    module = _records_loads_beside(tmp_path, "registers")
    import builtins

    try:
        broker = _restart_twice(str(module))
        try:
            seen = _logged_loads(broker)
            assert [s[-1] for s in seen] == ["1", "2", "3"], seen
            notes = [line for line in broker.transcript.lines() if "again" in line]
            assert notes and "its first import here is loaded instead" in notes[0]
            assert sys.modules["registers"].LOADS == [1, 1, 1]
        finally:
            broker.close()
    finally:
        sys.modules.pop("registers", None)
        if hasattr(builtins, "_schedkit_test_registered"):
            del builtins._schedkit_test_registered


def test_a_library_the_module_imports_is_kept(tmp_path):
    # The standard library and installed packages are not the module's
    # own code (many cannot be imported twice in one process).
    sys.modules.pop("colorsys", None)
    module = tmp_path / "sched.py"
    module.write_text(
        textwrap.dedent(
            """
            import builtins
            import colorsys
            from flux.scheduler import Scheduler

            builtins.__dict__.setdefault("_schedkit_seen", []).append(colorsys)

            def mod_main(h, *args):
                Scheduler(h, *args).run()
            """
        )
    )
    import builtins

    try:
        _restart_twice(str(module)).close()
        seen = builtins._schedkit_seen
        assert len(seen) == 3 and seen[0] is seen[1] is seen[2]
    finally:
        builtins.__dict__.pop("_schedkit_seen", None)


def test_the_projects_packages_are_never_the_modules_own(tmp_path):
    # A scheduler file in the project's checkout (its directory holds the
    # project's packages): their modules stay, whatever imported them.
    owns = fresh_imports._owner(str(Path(reactor.__file__).parents[2] / "x.py"))
    assert not owns("mock_broker.runtime.reactor", reactor)
    assert not owns("flux_sched_base.counts", counts)
    # Installed libraries, even in a virtual environment inside the checkout.
    assert not owns("sortedcontainers.sortedlist", sortedlist)
    assert owns(
        "helper",
        types.SimpleNamespace(
            __file__=str(Path(reactor.__file__).parents[2] / "helper.py")
        ),
    )
