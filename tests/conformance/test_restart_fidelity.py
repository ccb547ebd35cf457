"""A restart in the kit is a restart in Flux: the module's own helper
modules start empty (flux-core 0.88 loads a module in a new process), so
state a scheduler kept in them does not carry over and hide a fault."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conformance.findings import FAIL, PASS
from conformance.runner import Budgets, Runner

GALLERY = Path(__file__).parent / "gallery"
BUDGETS = Budgets(
    probe_wall=30.0, callback_wall=1.0, messages_per_instant=2000, memory_mb=768
)

#: A FIFO that keeps the R of the jobs it started in a module of its own
#: and, after a restart, books the running jobs from there rather than
#: from what hello reports: it loses them in Flux, where that module
#: starts empty.
LEDGER_FIFO = """
    import os, sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, {gallery!r})
    import ledger
    from _base import GalleryFifo

    class LedgerFifo(GalleryFifo):
        def hello(self, jobid, priority, userid, t_submit, R):
            known = ledger.RUNNING.get(jobid)
            if known is not None:
                self.resources.register_alloc(jobid, known)

        def alloc_success(self, msg, R, annotations=None):
            ledger.RUNNING[msg.payload["id"]] = R
            super().alloc_success(msg, R, annotations)

        def free(self, jobid, R, final=False):
            if final:
                ledger.RUNNING.pop(jobid, None)
            super().free(jobid, R, final)

    def mod_main(h, *args):
        LedgerFifo(h, *args).run()
"""


def test_state_kept_in_a_helper_module_does_not_survive_a_restart(tmp_path):
    (tmp_path / "ledger.py").write_text("RUNNING = {}\n")
    module = tmp_path / "ledger_fifo.py"
    module.write_text(textwrap.dedent(LEDGER_FIFO.format(gallery=str(GALLERY))))
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run("policy:any:restarts")
    verdicts = {f.clause: f.verdict for f in outcome.findings}
    # The restarted module books nothing for the jobs it started before
    # and gives their resources to others.  Until 2026-12-07 the second
    # load found the first one's ledger and the probe passed.
    assert verdicts["alloc.R-disjoint"] == FAIL, outcome.findings
    assert verdicts["robust.no-crash"] == PASS
