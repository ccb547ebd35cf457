"""The reference schedulers in a real Flux instance, selected by config.

Skipped, with the reason, when no flux-core 0.88 ``flux`` is available
(see :mod:`realflux`).  Each test starts one single-broker instance whose
broker config selects a scheduler through the modprobe entries written by
``flux-schedkit site-config``, runs a small workload, and reads the
module's ``flux module stats``.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from realflux import broker_env, require_flux, site_folder

# Runs inside the instance: which modules provide sched and feasibility, a
# small workload (a 2-core job, then six 1-core jobs with time limits, one
# of them impossible), and the scheduler's statistics.
WORKLOAD = r"""
set -e
flux module list | awk '$NF ~ /sched|feasibility/ {print "provider", $1, $NF}'
flux submit -n2 -t 10s sleep 1 >/dev/null
flux submit --cc=1-6 -n1 -t 1m true >/dev/null
if flux submit -n1 -c 99 true 2>/dev/null; then :; fi
flux queue drain
echo "stats $(flux module stats {name} | tr -d '\n')"
"""


def _run_instance(tmp_path, name: str, script: str) -> list[str]:
    """Run *script* in a single-broker instance whose config selects the
    scheduler *name* (through ``flux-schedkit site-config``'s files);
    its output lines (the test fails if the instance does)."""
    flux = require_flux()
    site = site_folder(tmp_path)
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "sched.toml").write_text(f'[modules.alternatives]\nsched = "{name}"\n')
    result = subprocess.run(
        [flux, "start", "-s1", f"--config-path={conf}", "sh", "-c", script],
        env=broker_env(site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.splitlines()


@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
def test_instance_selects_scheduler_by_config_and_reports_stats(tmp_path, policy):
    name = f"schedkit-{policy}"
    lines = _run_instance(tmp_path, name, WORKLOAD.replace("{name}", name))
    providers = [line.split()[1:] for line in lines if line.startswith("provider ")]
    # one module serves both services: sched-simple was not loaded as well
    assert providers == [[name, "feasibility,sched"]], providers
    stats = json.loads(next(line[6:] for line in lines if line.startswith("stats ")))
    assert stats["pending_jobs"] == 0 and stats["running_jobs"] == 0
    assert stats["jobs_started"] == 7
    assert stats["jobs_denied"] == 1
    assert stats["passes_completed"] >= 1
    assert 0 < stats["mean_pass_time"] <= stats["max_pass_time"]
    assert stats["last_pass_time"] > 0


# Runs inside the instance: a job holding every core of the one node, then
# two one-slot jobs queued behind it (fifo's forecast places them in one
# sweep); prints their records as JSON once both carry an estimate.
ESTIMATES = r"""
set -e
ncores=$(flux resource list -no {ncores})
a=$(flux submit -n1 -c $ncores -t 100s sleep 300)
flux job wait-event -t 60 $a start >/dev/null
b=$(flux submit -n1 -c $ncores -t 50s true)
c=$(flux submit -n1 -c 1 -t 20s true)
for i in $(seq 1 150); do
    if [ -n "$(flux jobs -no '{annotations.sched.t_estimate}' $c)" ]; then break; fi
    sleep 0.2
done
echo "jobs $(flux jobs --json $a $b $c | tr -d '\n')"
echo "stats $(flux module stats schedkit-fifo | tr -d '\n')"
flux cancel --all >/dev/null 2>&1 || true
flux queue drain
"""


def test_fifo_estimates_one_slot_jobs_behind_a_blocked_head(tmp_path):
    lines = _run_instance(tmp_path, "schedkit-fifo", ESTIMATES)
    jobs = json.loads(next(line[5:] for line in lines if line.startswith("jobs ")))
    a, b, c = sorted(jobs["jobs"], key=lambda job: job["t_submit"])
    estimate = {
        job["id"]: job.get("annotations", {}).get("sched", {}).get("t_estimate")
        for job in (b, c)
    }
    # b takes every core when a reaches its limit; c, behind it, when b
    # reaches its own.
    assert estimate[b["id"]] == pytest.approx(a["expiration"], abs=1e-3)
    assert estimate[c["id"]] == pytest.approx(a["expiration"] + 50.0, abs=1e-3)
    stats = json.loads(next(line[6:] for line in lines if line.startswith("stats ")))
    assert stats["reserved_jobs"] == 2
