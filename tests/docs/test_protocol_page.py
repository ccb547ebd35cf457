"""docs/protocol.rst's numbers and clause names match the code they describe."""

from __future__ import annotations

import errno
import re

import flux.scheduler as upstream
from docs_helpers import DOCS

from conformance.clauses import load_clauses
from mock_broker.flux_substitute import constants

PAGE = (DOCS / "protocol.rst").read_text()


def rows(title: str) -> list[tuple[str, str]]:
    """(number, name) of the list-table under the definition *title*."""
    block = PAGE[PAGE.index(title) :]
    table = block.index(".. list-table::")
    block = block[: block.index("\n\n", block.index("* - ", table))]
    found = re.findall(r"\* - (\d+)\n\s+- (\S+)", block)
    assert found, title
    return found


def test_errnum_names_are_the_linux_values():
    for number, name in rows("Error numbers"):
        assert getattr(errno, name) == int(number), name


def test_alloc_response_types_are_flux_pythons():
    for number, name in rows("Alloc response types"):
        assert getattr(upstream, f"_ALLOC_{name}") == int(number), name


def test_job_states_are_fluxs():
    for number, name in rows("Job states"):
        assert getattr(constants, f"FLUX_JOB_STATE_{name}") == int(number), name


#: RPC topics the page names that look like clause ids.
TOPICS = {"feasibility.check"}


def test_every_clause_named_exists():
    clauses = set(load_clauses())
    named = set(re.findall(r"``([a-z]+\.[a-zA-Z-]+)``", PAGE))
    families = {c.split(".")[0] for c in clauses}
    named = {n for n in named if n.split(".")[0] in families} - TOPICS
    assert named, "the page names clauses"
    assert named <= clauses, named - clauses
