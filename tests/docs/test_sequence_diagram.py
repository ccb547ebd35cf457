"""The sequence-diagram extension: parsing, SVG output, and the directive."""

from __future__ import annotations

import re

import pytest
import sequence_diagram as sd
from docs_helpers import DOCS, build

from conformance.scenarios.runner import library_paths, run_scenario
from flux_schedkit.reference import reference_path

GOOD = """\
participants: job-manager, scheduler, KVS
# a comment
job-manager -> scheduler: sched.alloc {"id": 1}
note scheduler: queued
scheduler -> KVS: kvs.commit
KVS --> scheduler: {}
scheduler --> job-manager: type=0 SUCCESS
== later ==
note job-manager, KVS: spans all three
"""


def test_parse_reads_every_statement():
    diagram = sd.parse(GOOD)
    assert diagram.participants == ["job-manager", "scheduler", "KVS"]
    kinds = [type(row).__name__ for row in diagram.rows]
    assert kinds == [
        "Message",
        "Note",
        "Message",
        "Message",
        "Message",
        "Divider",
        "Note",
    ]
    first, _, _, reply, _, _, span = diagram.rows
    assert (first.source, first.dest, first.response) == (0, 1, False)
    assert first.text == 'sched.alloc {"id": 1}'
    assert (reply.source, reply.dest, reply.response) == (2, 1, True)
    assert (span.first, span.last) == (0, 2)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a -> b: x", 1, "first statement must be 'participants"),
        ("participants: a, b\na -> c: x", 2, "unknown participant 'c'"),
        ("participants: a, b\n\na -> a: x", 3, "two different participants"),
        ("participants: a, b\na => b: x", 2, "cannot read 'a => b: x'"),
        ("participants: a, a", 1, "declared twice"),
        ("participants: a", 1, "at least two participants"),
        ("participants: a, b\nparticipants: a, b", 2, "already declared"),
        ("participants: a, b\nnote a, b, a: x", 2, "a note is"),
        ("participants: a, b", 1, "no messages"),
        ("", 1, "empty"),
    ],
)
def test_malformed_description_names_the_line(text, line, words):
    with pytest.raises(sd.DiagramError) as caught:
        sd.parse(text)
    assert caught.value.line == line
    assert words in caught.value.message


def test_svg_is_deterministic_and_holds_every_label():
    diagram = sd.parse(GOOD)
    svg = sd.render_svg(diagram)
    assert svg == sd.render_svg(sd.parse(GOOD))
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    for label in [
        "job-manager",
        "KVS",
        "sched.alloc {&quot;id&quot;: 1}",
        "later",
        "queued",
    ]:
        assert label.replace("&quot;", '"') in svg or label in svg
    # One arrow per message, dashed for the two responses.
    assert svg.count("marker-end=") == 4
    assert len(re.findall(r'stroke-dasharray="6,4" marker-end', svg)) == 2


def test_long_labels_wrap_inside_the_picture():
    text = "participants: a, b\na -> b: " + "word " * 80
    svg = sd.render_svg(sd.parse(text))
    width = int(re.search(r'width="(\d+)"', svg)[1])
    assert svg.count('class="m"') > 3  # wrapped over several lines
    assert width == 2 * sd.MARGIN + sd.COLUMN


def test_directive_renders_inline_svg_with_caption(tmp_path):
    rst = "Page\n====\n\n.. sequence-diagram:: The caption\n\n   " + GOOD.replace(
        "\n", "\n   "
    )
    done = build(tmp_path, rst, ["sequence_diagram"])
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "out" / "index.html").read_text()
    assert html.count("<svg ") == 1
    assert "The caption" in html


def test_malformed_description_fails_the_build_naming_the_line(tmp_path):
    rst = (
        "Page\n====\n\n"  # lines 1-3
        ".. sequence-diagram:: Broken\n\n"  # lines 4-5
        "   participants: a, b\n"  # line 6
        "   a -> b: fine\n"  # line 7
        "   b -> nobody: oops\n"  # line 8
    )
    done = build(tmp_path, rst, ["sequence_diagram"])
    assert done.returncode != 0
    assert "index.rst:8:" in done.stderr
    assert "description line 3: unknown participant 'nobody'" in done.stderr


def docs_diagrams() -> list[tuple[str, str | None, str]]:
    """(page, scenario option, description) of every diagram in docs/."""
    out = []
    for page in sorted(DOCS.glob("*.rst")):
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            if not line.startswith(".. sequence-diagram::"):
                continue
            scenario, body = None, []
            for more in lines[i + 1 :]:
                if more and not more.startswith("   "):
                    break
                if not body and more.startswith("   :scenario:"):
                    scenario = more.split(":scenario:", 1)[1].strip()
                    continue
                body.append(more[3:])
            out.append((page.name, scenario, "\n".join(body)))
    return out


def test_every_diagram_in_the_docs_parses():
    diagrams = docs_diagrams()
    assert len(diagrams) >= 6
    for _, _, body in diagrams:
        sd.parse(body)


def request_topics(diagram: sd.Diagram) -> list[str]:
    """The RFC topics of the diagram's requests, in order."""
    topics = []
    for row in diagram.rows:
        if isinstance(row, sd.Message) and not row.response:
            first = row.text.split()[0]
            if re.fullmatch(r"[a-z-]+\.[a-z-]+", first):
                topics.append(first)
    return topics


@pytest.mark.parametrize(
    ("scenario", "body"),
    [(s, b) for _, s, b in docs_diagrams() if s],
    ids=[s for _, s, _ in docs_diagrams() if s],
)
def test_diagram_requests_appear_in_its_scenarios_transcript(scenario, body):
    topics = request_topics(sd.parse(body))
    assert topics
    path = next(p for p in library_paths() if p.stem == scenario)
    result = run_scenario(path, str(reference_path("easy")))
    try:
        assert result.passed, result.reasons()
        sent = iter(
            e.topic for e in result.broker.transcript.entries() if e.kind == "msg"
        )
        for topic in topics:  # a subsequence: each in order after the last
            assert any(t == topic for t in sent), (scenario, topic, topics)
    finally:
        result.broker.close()


def test_unknown_scenario_fails_the_build(tmp_path):
    rst = (
        "Page\n====\n\n"
        ".. sequence-diagram:: Broken\n"
        "   :scenario: no-such-scenario\n\n"
        "   participants: a, b\n"
        "   a -> b: fine\n"
    )
    done = build(tmp_path, rst, ["sequence_diagram"])
    assert done.returncode != 0
    assert "index.rst:4:" in done.stderr
    assert "no scenario 'no-such-scenario' in the library" in done.stderr
