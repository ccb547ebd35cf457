"""The table ``benchmarks/real_flux_schedbench.py`` prints from its rounds
(the rounds need a real Flux; the arithmetic and the layout do not)."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "real_flux_schedbench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("real_flux_schedbench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runs(*pairs):
    return [
        {"throughput": t, "sched_cpu": c, "broker_cpu": 10.0, "wall": 9.0}
        for t, c in pairs
    ]


def test_ratios_pair_rounds_in_order():
    bench = _bench()
    ours = _runs((200, 1.0), (300, 0.6))
    upstream = _runs((250, 1.0), (250, 1.0))
    cpu, cpu_worst, tput, tput_worst = bench._ratios(ours, upstream)
    assert cpu == 0.8  # 1.6 s against 2.0 s
    assert cpu_worst == 1.0  # round 1
    assert tput == 1.0  # 250 against 250 jobs/s
    assert tput_worst == 0.8  # round 1: 200 against 250


def test_the_floor_gets_its_own_row_against_the_same_upstream(capsys):
    bench = _bench()
    results = {
        ("fifo", "8"): {
            "schedkit-fifo": _runs((250, 0.9), (250, 0.9)),
            "sched-fifo": _runs((250, 1.2), (250, 1.2)),
            bench.FLOOR: _runs((250, 1.05), (250, 1.05)),
        }
    }
    bench._report(
        results, types.SimpleNamespace(jobs=2000, nodes=4, cores=64, rounds=2)
    )
    out = capsys.readouterr().out
    rows = {
        line[:20].strip(): line.split()[-4:]
        for line in out.splitlines()
        if line.endswith("x")
    }
    assert rows["fifo"][0] == "0.75x"
    assert rows["fifo (minimal)"][0] == "0.88x"
    assert "python-minimal" in out and "minimal scheduler" in out


def test_the_floor_is_flux_pythons_minimal_example():
    bench = _bench()
    text = bench.FLOOR_FILE.read_text()
    assert bench.FLOOR_FILE.is_file() and "class SimpleScheduler(Scheduler)" in text
