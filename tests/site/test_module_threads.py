"""Threads a Python module leaves behind, in a real broker and in the kit.

flux-core 0.88 runs each Python module in a process of its own
(``flux module-python-exec``).  After ``flux module remove`` that process
exits unless a thread of the module that is no daemon keeps running: an
idle thread pool or a daemon thread does not hold it.  The conformance kit
must judge the same files the same way (``robust.no-stray-threads``).
Skipped, with the reason, without a flux-core 0.88 ``flux``.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from realflux import broker_env, require_flux, site_folder

from conformance.findings import FAIL
from conformance.runner import Budgets, Runner

#: Module bodies: what mod_main starts before the scheduler runs.
STARTS = {
    "idle_pool": "pool = ThreadPoolExecutor(2)\npool.submit(len, []).result()\n",
    "daemon_thread": 'threading.Thread(target=_forever, name="exporter", daemon=True)'
    ".start()\n",
    "plain_thread": 'threading.Thread(target=_forever, name="queue-stats").start()\n',
}

#: In the instance: load the module, remove it, and say whether its
#: process outlived it (then end that process).
SCRIPT = r"""
flux module remove sched-simple
flux module load {path}
pid=$(pgrep -f "module-python-exec.* {path}$")
flux module remove {name}
for i in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
done
if kill -0 "$pid" 2>/dev/null; then echo lingers; kill -9 "$pid"; else echo exited; fi
"""


#: flux-core's guide's minimal scheduler (flux imports only: the broker's
#: own Python runs these files).
SEED = Path(__file__).parents[1] / "mock_broker" / "schedulers"


def _module(tmp_path, name: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import sys, threading, time\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        f"sys.path.insert(0, {str(SEED)!r})\n"
        "from seed_minimal import SimpleScheduler\n\n"
        "def _forever():\n"
        "    while True:\n"
        "        time.sleep(0.05)\n\n"
        "def mod_main(h, *args):\n"
        + textwrap.indent(STARTS[name], "    ")
        + "    SimpleScheduler(h, *args).run()\n"
    )
    return str(path)


@pytest.mark.parametrize("name", sorted(STARTS))
def test_the_kit_judges_a_modules_threads_as_a_real_broker(tmp_path, name):
    flux = require_flux()
    path = _module(tmp_path, name)
    result = subprocess.run(
        [flux, "start", "-s1", "sh", "-c", SCRIPT.format(path=path, name=name)],
        env=broker_env(site_folder(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lingers = result.stdout.split()[-1] == "lingers"
    assert lingers == (name == "plain_thread"), result.stdout
    budgets = Budgets(probe_wall=20.0, callback_wall=1.0, memory_mb=1024)
    with Runner(path, [], budgets=budgets) as runner:
        outcome = runner.run("scenario:cancel-pending-job")
    stray = [
        f
        for f in outcome.findings
        if f.clause == "robust.no-stray-threads" and f.verdict == FAIL
    ]
    assert bool(stray) == lingers, outcome.findings
