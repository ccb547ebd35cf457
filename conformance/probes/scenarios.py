"""Every scenario of the library as a probe (``scenario:<stem>``).

A scenario's unmet expectations fail the clause its file names
(``clause:``); the referee judges the rest on its broker.
"""

from __future__ import annotations

from conformance.findings import Finding
from conformance.probes import Probe, ProbeContext, add_probe
from conformance.scenarios.runner import library_paths, load_scenario, run_scenario


def _make(path):
    scenario = load_scenario(path)

    def run(ctx: ProbeContext) -> list[Finding]:
        result = run_scenario(scenario, ctx.target, ctx.args, prepare=ctx.adopt)
        out = []
        if result.load_error and scenario.clause != "load.reaches-reactor":
            out.append(
                ctx.fail("load.reaches-reactor", result.load_error, result.broker)
            )
        if scenario.clause is not None:
            problems = (
                [result.load_error] if result.load_error else []
            ) + result.failures
            if problems:
                # The evidence shows the moment the first expectation failed
                # (a checkpoint's, with the answer that broke it just before),
                # not the end of the run.
                out.append(
                    ctx.fail(
                        scenario.clause,
                        "; ".join(problems),
                        result.broker,
                        result.first_unmet,
                    )
                )
        return out

    covers = (scenario.clause,) if scenario.clause else ()
    covers += ("load.reaches-reactor",)
    return Probe(
        f"scenario:{path.stem}", tuple(dict.fromkeys(covers)), run, budget=30.0
    )


for _path in library_paths():
    add_probe(_make(_path))
