"""flux-core's own tests of its Python schedulers, with the module swapped.

flux-core 0.88's sharness tests t2306 (``sched-fifo``) and t2307
(``sched-backfill``) are run with only the module name changed: t2306
against schedkit-fifo, t2307 against schedkit-easy and
schedkit-conservative.  The copy is generated at test time in the
flux-core tree's ``t/`` folder (sharness runs a test from there) and
removed afterwards; nothing of flux-core is kept in this project.

Needs a flux-core 0.88 source tree built with its test helpers
(``build-flux-core.sh --with-tests``), named by the environment variable
``FLUX_CORE_SRC``; skipped, with the reason, without one.  The modules are
found by name through the module folder ``flux-schedkit site-config``
writes (``FLUX_MODULE_PATH_PREPEND``), with no ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from realflux import broker_env, site_folder

CASES = [
    ("t2306-sched-fifo.t", "sched-fifo", "fifo"),
    ("t2307-sched-backfill.t", "sched-backfill", "easy"),
    ("t2307-sched-backfill.t", "sched-backfill", "conservative"),
]


def _flux_core_tests() -> Path:
    src = os.environ.get("FLUX_CORE_SRC")
    if not src:
        pytest.skip(
            "FLUX_CORE_SRC is not set: name a flux-core 0.88 source tree built "
            "with its test helpers (build-flux-core.sh --with-tests)"
        )
    tests = Path(src) / "t"
    if (
        not (tests / "sharness.sh").is_file()
        or not (Path(src) / "src/cmd/flux").exists()
    ):
        pytest.skip(f"FLUX_CORE_SRC={src} is not a built flux-core tree with t/")
    return tests


@pytest.mark.parametrize("script, upstream, policy", CASES)
def test_flux_core_sharness_passes_with_the_module_swapped(
    tmp_path, script, upstream, policy
):
    tests = _flux_core_tests()
    original = (tests / script).read_text()
    ours = f"schedkit-{policy}"
    swapped = original.replace(upstream, ours)
    assert swapped.count(ours) >= 10 and "sched-simple" in swapped
    name = f"{script.split('-')[0]}-{ours}.t"
    copy = tests / name
    trash = tests / f"trash directory.{name[:-2]}"
    copy.write_text(swapped)
    copy.chmod(0o755)
    try:
        result = subprocess.run(
            ["sh", name, "--verbose"],
            cwd=tests,
            env=broker_env(site_folder(tmp_path)),
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        copy.unlink()
        shutil.rmtree(trash, ignore_errors=True)
    failed = re.findall(r"^not ok \d+ - .*$", result.stdout, re.MULTILINE)
    assert not failed, "\n".join(failed) + "\n" + result.stdout[-4000:]
    assert re.search(r"^# passed all \d+ test\(s\)$", result.stdout, re.MULTILINE), (
        result.stdout[-4000:] + result.stderr[-2000:]
    )
