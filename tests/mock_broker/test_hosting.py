"""Hosting scheduler modules: the seed example runs, and every way a module
can fail to load gives one ModuleLoadError naming the module and the cause."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
from pathlib import Path

import pytest
from mock_broker_helpers import SEED, elapsed, sched, whole_nodes

from mock_broker.machine import Machine
from mock_broker.runtime import load_check
from mock_broker.runtime.broker import GC_THRESHOLD
from mock_broker.runtime.load_check import refused_args
from mock_broker.runtime.module_host import ModuleLoadError

# -- the minimal scheduler of flux-core's guide *Writing a Python Scheduler* --


def test_seed_minimal_runs_three_jobs_on_two_nodes(make_broker):
    b = make_broker(Machine.uniform(2, 4))
    link = b.load(SEED)
    assert link.name == "seed_minimal"
    assert list(b.modules) == ["seed_minimal"]
    assert b.scheduler is link  # it registered the "sched" service
    ids = [b.jobs.submit(whole_nodes(1, duration=100), runtime=50) for _ in range(3)]
    b.run()
    jobs = [b.jobs.job(j) for j in ids]
    assert [j.state for j in jobs] == ["INACTIVE"] * 3
    assert [j.result for j in jobs] == ["completed"] * 3
    assert [elapsed(b, j.t_run) for j in jobs] == [0.0, 0.0, 50.0]
    assert [elapsed(b, j.t_end) for j in jobs] == [50.0, 50.0, 100.0]
    # the third starts at exactly the virtual time the first ends, on its node
    assert jobs[2].t_run == jobs[0].t_end
    assert jobs[2].R["execution"]["R_lite"] == jobs[0].R["execution"]["R_lite"]
    # The guide's loop answers with R as the pool makes it, without its
    # times: flux-core 0.88 would enforce no time limit on these jobs.
    assert b.observer.kinds() == ["R-times-wrong"] * 3
    assert all(j.R["execution"]["expiration"] == 0 for j in jobs)


def test_a_run_raises_the_collector_threshold_only_while_it_runs(make_broker):
    seen = []
    b = make_broker(Machine.uniform(2, 4))
    b.load(SEED)
    b.jobs.submit(whole_nodes(1, duration=100), runtime=50)
    before = gc.get_threshold()
    b.at(b.now + 10, lambda: seen.append(gc.get_threshold()))
    b.run()
    assert seen == [(max(before[0], GC_THRESHOLD), *before[1:])]
    assert gc.get_threshold() == before


def test_module_startup_sequence_is_the_rfc27_one(make_broker):
    b = make_broker(Machine.uniform(2, 4))
    b.load(SEED)
    requests = [
        e.topic
        for e in b.transcript.entries()
        if e.kind == "msg" and e.source == "seed_minimal" and "(" not in e.topic
    ]
    assert requests == [
        "service.add",
        "service.add",
        "resource.acquire",
        "job-manager.sched-hello",
        "job-manager.sched-ready",
    ]
    assert b.services["sched"] is b.services["feasibility"] is b.scheduler


# -- load failures ----------------------------------------------------------


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def load_error(b, target, args=()) -> str:
    with pytest.raises(ModuleLoadError) as info:
        b.load(target, args)
    assert b.modules == {}
    assert b.scheduler is None
    return str(info.value)


def test_missing_file(make_broker, tmp_path):
    b = make_broker()
    missing = str(tmp_path / "no_such_sched.py")
    assert load_error(b, missing) == f"{missing}: No such file or directory"


def test_a_directory_or_a_device_named_py_is_refused_unread(make_broker, tmp_path):
    # /dev/zero behind a .py name would never end reading; a FIFO would
    # wait for a writer: neither is opened.
    folder = tmp_path / "folder.py"
    folder.mkdir()
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.py"
    zero.symlink_to("/dev/zero")
    b = make_broker()
    assert load_error(b, str(folder)) == f"{folder}: Is a directory"
    assert load_error(b, str(fifo)) == f"{fifo}: not a regular file"
    assert load_error(b, str(zero)) == f"{zero}: not a regular file"


def test_a_file_without_the_py_suffix_is_not_a_python_module(make_broker, tmp_path):
    # A scheduler written to a file named without .py (a copy, a config
    # file given by mistake): refused by name, as flux module load would.
    other = tmp_path / "sched-notes"
    other.write_text("def mod_main(h, *args):\n    pass\n")
    b = make_broker()
    said = load_error(b, str(other))
    assert said == f"{other}: not a Python module (no .py suffix)"


def test_syntax_error(make_broker, tmp_path):
    path = write(
        tmp_path,
        "typo_sched.py",
        """\
        from flux.scheduler import Scheduler

        class Typo(Scheduler)
            pass
        """,
    )
    text = load_error(make_broker(), path)
    assert text.startswith("typo_sched: syntax error in ")
    assert path in text
    assert "line 3" in text


def test_a_file_with_null_bytes_is_a_syntax_error_without_a_line(make_broker, tmp_path):
    # A binary file saved as .py: the parser names no line ("line None").
    path = tmp_path / "binary_sched.py"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00binary")
    text = load_error(make_broker(), str(path))
    assert text == (
        f"binary_sched: syntax error in {path}: "
        "source code string cannot contain null bytes"
    )


def test_import_error_names_the_module_and_exception(make_broker, tmp_path):
    path = write(tmp_path, "needs_dep.py", "import no_such_dependency_xyz\n")
    text = load_error(make_broker(), path)
    assert text.startswith("needs_dep: error importing ")
    assert "ModuleNotFoundError" in text
    assert "no_such_dependency_xyz" in text


@pytest.mark.parametrize(
    "source, said",
    [
        (
            "from flux.kvs import KVSDir\n",
            "flux.kvs.KVSDir is part of flux-python 0.88.0, but flux-schedkit's "
            "mock broker does not stand in for it: this module cannot be hosted "
            "without Flux (load it into a real instance)",
        ),
        (
            "import flux.kvs\nflux.kvs.KVSDir\n",
            "flux.kvs.KVSDir is part of flux-python 0.88.0, but",
        ),
        (
            "from flux.kvs import NoSuchThing\n",
            "cannot import name 'NoSuchThing' from 'flux.kvs' (flux-python "
            "0.88.0 has no such name either)",
        ),
    ],
    ids=["from-import", "attribute", "not-in-flux-python"],
)
def test_a_flux_name_the_substitute_lacks_is_told_in_flux_pythons_terms(
    make_broker, tmp_path, source, said
):
    # Python's own words would name the stand-in's module and file.
    path = write(tmp_path, "uses_kvsdir.py", source)
    text = load_error(make_broker(), path)
    assert text.startswith(f"uses_kvsdir: error importing {path}: {said}")
    assert "flux_substitute" not in text


def test_a_load_that_fails_after_one_that_ran_here_says_what_differs(
    make_broker, tmp_path
):
    """What a load left in the process (a port its thread still holds,
    here a flag) is gone in flux-core 0.88, where each load is a new
    process: a later load that fails says so; a first one does not."""
    flag = f"_schedkit_test_port_{id(tmp_path)}"
    body = f"""
        import sys
        from seed_minimal import SimpleScheduler
        def mod_main(h, *args):
            if getattr(sys, {flag!r}, False):
                raise OSError(98, "Address already in use")
            setattr(sys, {flag!r}, True)
            SimpleScheduler(h, *args).run()
        """
    first, other = write(tmp_path, "exporter.py", body), write(tmp_path, "x.py", body)
    sys.path.insert(0, str(Path(SEED).parent))
    try:
        b = make_broker(Machine.uniform(2, 4), seed=1)
        b.load(first)
        b.unload()
        assert load_error(b, first) == (
            "exporter: [Errno 98] Address already in use (a load of it ran "
            "earlier in this process, and what that load left here stays, a "
            "bound port or a thread; flux-core 0.88 starts each load in a new "
            "process)"
        )
        # Another file, never run here, fails on the same flag: no hint.
        assert load_error(b, other) == "x: [Errno 98] Address already in use"
    finally:
        sys.path.remove(str(Path(SEED).parent))
        delattr(sys, flag)


def test_a_file_that_cannot_be_imported_twice_in_one_process_loads_again(
    make_broker, tmp_path
):
    """flux-core 0.88 imports a module in a new process at each load; here
    loads share one, so an import that changed the process (a registry that
    refuses a second registration) would fail every load after the first.
    Such a load gets the first import, and the transcript says so."""
    flag = f"_schedkit_test_registered_{id(tmp_path)}"
    path = write(
        tmp_path,
        "registers.py",
        f"""
        import sys
        if getattr(sys, {flag!r}, False):
            raise ValueError("Duplicated timeseries in CollectorRegistry")
        setattr(sys, {flag!r}, True)
        from seed_minimal import mod_main
        """,
    )
    sys.path.insert(0, str(Path(SEED).parent))
    try:
        b = make_broker(Machine.uniform(2, 4), seed=1)
        b.load(path)
        b.restart_scheduler()
        assert b.scheduler.running
        notes = [e.text for e in b.transcript.entries() if "again" in e.text]
        assert notes == [
            f"module load registers: importing {path} again in this process "
            "raised ValueError: Duplicated timeseries in CollectorRegistry; its "
            "first import here is loaded instead (flux-core 0.88 imports a "
            "module in a new process at each load)"
        ]
        job = b.jobs.submit(whole_nodes(1))
        b.run_for(1.0)
        assert b.jobs.job(job).state == "RUN"
        # A file that never imported is still refused.
        other = write(tmp_path, "never.py", "raise ValueError('never')\n")
        assert load_error(make_broker(), other).startswith("never: error importing")
    finally:
        sys.path.remove(str(Path(SEED).parent))
        delattr(sys, flag)


def test_an_import_error_whose_str_raises_is_still_one_line(make_broker, tmp_path):
    path = write(
        tmp_path,
        "unprintable.py",
        "class Weird(Exception):\n"
        "    def __str__(self):\n"
        "        raise ValueError('no str for you')\n"
        "raise Weird()\n",
    )
    assert load_error(make_broker(), path) == (
        f"unprintable: error importing {path}: Weird (its message could not be "
        "read: str() raised ValueError)"
    )


def test_no_entry_point(make_broker, tmp_path):
    path = write(tmp_path, "empty_sched.py", "X = 1\n")
    assert (
        load_error(make_broker(), path)
        == "empty_sched: no mod_main() or BrokerModule subclass found"
    )


def test_several_classes_and_no_mod_main(make_broker):
    text = load_error(make_broker(), sched("hosting_faults.py"))
    assert text.startswith("hosting_faults: multiple BrokerModule subclasses found (")
    assert "RaisesInInit" in text and "define mod_main()" in text


def test_single_subclass_without_mod_main_is_the_entry_point(make_broker, tmp_path):
    path = write(
        tmp_path,
        "lone_sched.py",
        """\
        import flux.scheduler

        class Lone(flux.scheduler.Scheduler):
            pass
        """,
    )
    b = make_broker()
    link = b.load(path)
    assert link.name == "lone_sched" and b.scheduler is link


def test_imported_base_class_counts_as_a_second_subclass(make_broker, tmp_path):
    # Upstream resolve_entry_point() behaviour, reproduced: the imported
    # Scheduler is itself a BrokerModule subclass in the module namespace.
    path = write(
        tmp_path,
        "two_sched.py",
        """\
        from flux.scheduler import Scheduler

        class Lone(Scheduler):
            pass
        """,
    )
    assert load_error(make_broker(), path) == (
        "two_sched: multiple BrokerModule subclasses found (Scheduler, Lone); "
        "define mod_main()"
    )


def test_unknown_argument_is_refused_by_the_base_class(make_broker):
    text = load_error(
        make_broker(), sched("hosting_faults.py:ParsesOwnArgs"), ["bogus=1"]
    )
    assert text == (
        "hosting_faults: unknown argument 'bogus=1': "
        "built-in options are queue-depth, log-level, pool-class"
    )


def test_own_and_builtin_arguments_are_accepted(make_broker):
    b = make_broker()
    link = b.load(
        sched("hosting_faults.py:ParsesOwnArgs"),
        ["weight=3", "queue-depth=4", "log-level=debug"],
    )
    assert link.args == ["weight=3", "queue-depth=4", "log-level=debug"]
    ready = [
        e.to_dict()["payload"]
        for e in b.transcript.entries()
        if e.topic == "job-manager.sched-ready"
    ]
    assert ready == [{"mode": "limited", "limit": 4}]


def test_seed_scheduler_without_init_does_not_check_arguments(make_broker):
    # Upstream behaviour, reproduced: Scheduler.__init_subclass__ installs
    # the unknown-argument check only on classes that define __init__, so
    # the minimal scheduler of flux-core's guide *Writing a Python
    # Scheduler* loads with an argument nobody reads.
    b = make_broker()
    link = b.load(SEED, ["bogus=1"])
    assert link.running and b.scheduler is link


def test_invalid_builtin_argument(make_broker):
    assert load_error(make_broker(), SEED, ["queue-depth=0"]) == (
        "seed_minimal: queue-depth='0' is invalid: "
        "expected a positive integer or 'unlimited'"
    )


def test_exception_in_init(make_broker):
    text = load_error(make_broker(), sched("hosting_faults.py:RaisesInInit"))
    assert text == (
        "hosting_faults: RuntimeError: cannot read policy file /etc/policy.toml"
    )


# -- refused arguments: the caller's error, told from a module's own fault ------


def test_arguments_a_module_refuses_are_told_by_its_own_message():
    assert refused_args(SEED, ["queue-depth=0"]) == (
        "seed_minimal: queue-depth='0' is invalid: "
        "expected a positive integer or 'unlimited'"
    )


def test_arguments_the_module_takes_or_none_are_not_refused():
    assert refused_args(SEED, ["queue-depth=4"]) is None
    assert refused_args(SEED, []) is None


def test_a_module_that_fails_even_without_arguments_refuses_nothing():
    # Its load error is its own fault, not the arguments'.
    target = sched("hosting_faults.py:RaisesInInit")
    assert load_check.load_error(target, ["queue-depth=0"]) is not None
    assert load_check.load_error(target) is not None
    assert refused_args(target, ["queue-depth=0"]) is None


def test_module_that_returns_before_running(make_broker):
    assert (
        load_error(make_broker(), sched("hosting_faults.py:QuitsAtOnce"))
        == "hosting_faults: exited"
    )


def test_a_keyboard_interrupt_the_module_raises_is_its_exit(make_broker, tmp_path):
    # mod_main runs on the host's thread: only a Ctrl-C of the user stops
    # the host (flux-schedkit run: "interrupted", exit 130); one the module
    # raises is a module exit like any other exception.
    module = tmp_path / "interrupts.py"
    module.write_text("def mod_main(h, *args):\n    raise KeyboardInterrupt\n")
    assert load_error(make_broker(), str(module)) == (
        "interrupts: KeyboardInterrupt: KeyboardInterrupt"
    )


def test_missing_class(make_broker):
    target = sched("seed_minimal.py:NoSuchClass")
    assert load_error(make_broker(), target) == (
        f"seed_minimal: no class 'NoSuchClass' in {sched('seed_minimal.py')}"
    )


def test_empty_class_name(make_broker):
    assert load_error(make_broker(), SEED + ":") == (
        f"{SEED}:: empty class name after ':'"
    )


def test_missing_dotted_module(make_broker):
    assert load_error(make_broker(), "no_such_pkg_xyz.sched") == (
        "no_such_pkg_xyz.sched: module not found (No module named 'no_such_pkg_xyz')"
    )


def test_load_twice(make_broker):
    b = make_broker()
    b.load(SEED)
    with pytest.raises(
        ModuleLoadError, match="^seed_minimal: module is already loaded$"
    ):
        b.load(SEED)


# -- the forms a module can be named by --------------------------------------


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An importable package ``tsched_pkg`` holding ``policy.py``."""
    pkg = tmp_path / "tsched_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "policy.py").write_text(Path(SEED).read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "tsched_pkg.policy"


def run_one_job(b) -> str:
    jid = b.jobs.submit(whole_nodes(1), runtime=5)
    b.run()
    return b.jobs.job(jid).result


def test_load_dotted_module(make_broker, package):
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(package)
    assert link.name == "policy"
    assert run_one_job(b) == "completed"


def test_load_dotted_module_with_class(make_broker, package):
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(f"{package}:SimpleScheduler")
    assert link.name == "policy"
    assert run_one_job(b) == "completed"


def test_load_path_with_class(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(sched("broken.py:Placing"))
    assert link.name == "broken"
    assert run_one_job(b) == "completed"
    assert b.observer.violations == []


def test_load_with_explicit_name(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(SEED, name="sched-mine")
    assert link.name == "sched-mine" and list(b.modules) == ["sched-mine"]
    assert b.stats("sched-mine")["sched_passes"] == 0
    assert run_one_job(b) == "completed"
