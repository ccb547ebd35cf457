"""The sequence-diagram extension: parsing, SVG output, and the directive."""

from __future__ import annotations

import re

import pytest
import sequence_diagram as sd
from docs_helpers import DOCS, build

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


def test_every_diagram_in_the_docs_parses():
    found = 0
    for page in sorted(DOCS.glob("*.rst")):
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            if not line.startswith(".. sequence-diagram::"):
                continue
            body = []
            for more in lines[i + 1 :]:
                if more and not more.startswith("   "):
                    break
                body.append(more[3:])
            sd.parse("\n".join(body))
            found += 1
    assert found >= 6
