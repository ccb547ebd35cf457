"""What a module may do on the main thread of its own process, where
flux-core 0.88 runs ``mod_main`` and the callbacks: use in callbacks what
only that thread may use (``sqlite3``, ``threading.local``), and call
``signal.signal()`` and ``asyncio.get_event_loop()``, while the mock
broker runs them on one thread of the kit's process (see
``mock_broker/runtime/module_host.py`` and ``module_process.py``)."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest
from mock_broker_helpers import elapsed, sched, whole_nodes

from mock_broker.machine import Machine

USR = (signal.SIGUSR1, signal.SIGUSR2)


def run_two_jobs(make_broker, module):
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(sched(f"main_thread_idioms.py:{module}"))
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(2)]
    b.run()
    assert [elapsed(b, b.jobs.job(j).t_end) for j in ids] == [10.0, 20.0]
    return b, link


def test_signal_handlers_a_module_sets_are_its_own(make_broker):
    before = {s: signal.getsignal(s) for s in USR}
    assert before == dict.fromkeys(USR, signal.SIG_DFL)  # what the test assumes
    b, _ = run_two_jobs(make_broker, "SignalHandlerScheduler")
    # in mod_main (its thread) and in a callback (the broker's), each call
    # answers as on a main thread, and getsignal() returns what was set
    assert b.rpc("main_thread_idioms.report") == {
        "mod_main": {"previous": "SIG_DFL", "now": "own"},
        "callback": {"previous": "SIG_DFL", "now": "SIG_IGN", "usr1": "own"},
    }
    # nothing was installed in this process, whose own calls still install
    assert {s: signal.getsignal(s) for s in USR} == before
    previous = signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    try:
        assert signal.getsignal(signal.SIGUSR2) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGUSR2, previous)


def test_a_module_gets_an_event_loop_of_its_own(make_broker):
    b, link = run_two_jobs(make_broker, "AsyncioScheduler")
    # one loop, made in mod_main, is the callbacks' loop too
    report = b.rpc("main_thread_idioms.report")
    assert report == {"results": [2, 2, 4], "same_loop": [True, True]}
    loop = link.process.loop
    assert not loop.is_closed()
    b.unload()
    assert loop.is_closed()  # its process ended

    # any other thread gets Python's own answer
    raised = []

    def other_thread():
        try:
            asyncio.get_event_loop()
        except RuntimeError as exc:
            raised.append(str(exc))

    thread = threading.Thread(target=other_thread, name="not-a-module")
    thread.start()
    thread.join()
    assert raised == ["There is no current event loop in thread 'not-a-module'."]


def test_mod_main_and_the_callbacks_share_one_thread(make_broker):
    # flux-core 0.88 runs both on the main thread of the module's process:
    # an sqlite3 connection (by default refused off the thread that opened
    # it) and threading.local data made in mod_main serve every callback.
    # (With mod_main on a thread of its own, every alloc raised
    # ProgrammingError and the module exited.)
    b, link = run_two_jobs(make_broker, "ThreadAffineScheduler")
    assert link.state == "reactor"
    report = b.rpc("main_thread_idioms.report")
    same = {"same_thread": True, "local": "mod_main"}
    assert report["allocs"] == 2
    assert report["seen"] == [same, same]
    # the broker runs on this (the main) thread, so the module does too
    assert report["main"] is True
    # a thread the module starts without saying is a daemon here: left
    # running, it must not keep the kit's process from exiting
    assert report["daemon"] is True


def test_the_kit_judges_the_threads_a_module_starts_as_a_real_broker(
    make_broker, monkeypatch
):
    from mock_broker.runtime.module_host import ModuleLink

    monkeypatch.setattr(ModuleLink, "thread_daemon", False)
    b, _ = run_two_jobs(make_broker, "ThreadAffineScheduler")
    assert b.rpc("main_thread_idioms.report")["daemon"] is False
    # the kit's own threads keep Python's rule (the creator's flag)
    assert threading.Thread(target=lambda: None).daemon is False
    daemon_parent = []

    def parent():
        daemon_parent.append(threading.Thread(target=lambda: None).daemon)

    t = threading.Thread(target=parent, daemon=True)
    t.start()
    t.join()
    assert daemon_parent == [True]


def test_a_module_may_open_a_handle_of_its_own(make_broker):
    # flux.Flux() in module code connects to the broker again, as in a
    # module's process in flux-core 0.88 (until 2026-12-07 it raised
    # ENOSYS and the module failed to load); its requests are the
    # module's, their responses come back to that handle.
    b, link = run_two_jobs(make_broker, "SecondHandleScheduler")
    ids = [j.id for j in b.jobs.jobs.values()]
    assert b.rpc("main_thread_idioms.report") == {"looked_up": ids}
    asked = [e for e in b.transcript.entries() if e.topic == "job-info.lookup"]
    answered = [
        e for e in b.transcript.entries() if e.topic == "job-info.lookup (response)"
    ]
    assert [(e.source, e.dest) for e in asked] == [(link.name, "broker")] * 2
    assert [(e.source, e.dest) for e in answered] == [("broker", link.name)] * 2


def test_a_handle_outside_module_code_is_still_refused():
    import flux

    with pytest.raises(OSError, match="no Flux broker to connect to"):
        flux.Flux()


def test_what_the_import_does_to_its_process_is_the_modules(make_broker, tmp_path):
    # flux-core 0.88 imports the module in its own process too: a handler
    # set at import is the module's (until 2026-12-07 it was installed in
    # this process, and a SIGINT handler took the host's Ctrl-C), and a
    # thread started there follows the module's rule.
    before = signal.getsignal(signal.SIGUSR2)
    assert before is signal.SIG_DFL  # what the test assumes
    module = tmp_path / "sets_at_import.py"
    module.write_text(
        "import signal, threading\n"
        "from flux.scheduler import Scheduler\n"
        "def own(signum, frame):\n"
        "    pass\n"
        "signal.signal(signal.SIGUSR2, own)\n"
        "done = threading.Event()\n"
        "started = threading.Thread(target=done.wait)\n"
        "started.start()\n"
        "def mod_main(h, *args):\n"
        "    seen = signal.getsignal(signal.SIGUSR2)\n"
        "    h.log(3, f'at run: {seen.__name__}, daemon {started.daemon}')\n"
        "    done.set()\n"
        "    Scheduler(h, *args).run()\n"
    )
    b = make_broker(Machine.uniform(1, 4))
    link = b.load(str(module))
    assert signal.getsignal(signal.SIGUSR2) is before
    assert any("at run: own, daemon True" in line for line in b.transcript.lines())
    assert link.process.signal_handlers[signal.SIGUSR2].__name__ == "own"
