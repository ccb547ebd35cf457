"""Sequence diagrams drawn as SVG at build time from a short text description.

The ``sequence-diagram`` directive takes the diagram's caption as its
argument and one statement per line as its content::

    .. sequence-diagram:: A job is allocated

       participants: job-manager, scheduler
       job-manager -> scheduler: sched.alloc {"id": 1}
       note scheduler: the base class queues the request
       scheduler --> job-manager: alloc response type=0 (SUCCESS)
       == the job runs ==

Statements:

- ``participants: A, B, ...``: the lifelines, left to right; must come
  first, once.
- ``A -> B: text``: a request or one-way message (solid line).
- ``A --> B: text``: a response (dashed line).
- ``note A: text`` or ``note A, B: text``: a note over one lifeline or
  spanning from A to B.
- ``== text ==``: a divider across the diagram (a phase, time passing).
- Blank lines and lines starting with ``#`` are ignored.

The option ``:scenario: NAME`` names the scenario of the conformance
kit's library that shows the same exchange (``flux-schedkit run NAME``);
the caption says so, and the docs' tests check that the diagram's
requests appear in that order in the scenario's transcript.

The picture is plain SVG text, written into the HTML page: no network, no
external program, and the same description always gives the same bytes.
A malformed description is an error naming the source file's line and what
is wrong with it (``-W`` builds then fail).
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from dataclasses import dataclass
from xml.sax.saxutils import escape

from docutils import nodes
from docutils.parsers.rst import Directive, directives

#: Pixels between two lifelines.
COLUMN = 250
#: Left and right margin, the width of a lifeline's head box, and how far
#: a note reaches either side of the lifelines it covers.
MARGIN = 130
HEAD_WIDTH = 150
NOTE_REACH = 115
HEAD_HEIGHT = 30
#: Height of one line of text, and the width of one character (an
#: over-estimate for 12 px text, so wrapped labels never overflow).
LINE = 15
CHAR = 7.0
#: Vertical room a message or note takes beyond its lines of text.
ROW_PAD = 14


class DiagramError(ValueError):
    """A malformed description; *line* is 1-based within the description."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Message:
    """An arrow from lifeline *source* to lifeline *dest*."""

    source: int
    dest: int
    text: str
    response: bool


@dataclass(frozen=True)
class Note:
    """A note over lifelines *first* to *last* (indices, first <= last)."""

    first: int
    last: int
    text: str


@dataclass(frozen=True)
class Divider:
    """A labelled line across the whole diagram."""

    text: str


@dataclass(frozen=True)
class Diagram:
    """A parsed description: lifeline names and the rows, top to bottom."""

    participants: list[str]
    rows: list[Message | Note | Divider]


_ARROW = re.compile(
    r"^(?P<src>[^:>-][^:>]*?)\s*(?P<arrow>-->|->)\s*(?P<dst>[^:]+?)\s*:\s*(?P<text>.*)$"
)
_NOTE = re.compile(r"^note\s+(?P<who>[^:]+?)\s*:\s*(?P<text>.*)$")
_DIVIDER = re.compile(r"^==\s*(?P<text>.*?)\s*==$")
_PARTICIPANTS = re.compile(r"^participants\s*:\s*(?P<names>.*)$")


def parse(text: str) -> Diagram:
    """Parse a description into a :class:`Diagram`.

    Raises:
        DiagramError: naming the first malformed line.
    """
    participants: list[str] | None = None
    index: dict[str, int] = {}
    rows: list[Message | Note | Divider] = []

    def lookup(name: str, number: int) -> int:
        if name not in index:
            known = ", ".join(participants or [])
            raise DiagramError(number, f"unknown participant {name!r} (known: {known})")
        return index[name]

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PARTICIPANTS.match(line)
        if match:
            if participants is not None:
                raise DiagramError(number, "participants are already declared")
            participants = [n.strip() for n in match["names"].split(",")]
            if len(participants) < 2 or not all(participants):
                raise DiagramError(
                    number, "declare at least two participants, comma separated"
                )
            if len(set(participants)) != len(participants):
                raise DiagramError(number, "a participant is declared twice")
            index = {name: i for i, name in enumerate(participants)}
            continue
        if participants is None:
            raise DiagramError(
                number, "the first statement must be 'participants: A, B, ...'"
            )
        match = _DIVIDER.match(line)
        if match:
            rows.append(Divider(match["text"]))
            continue
        match = _NOTE.match(line)
        if match:
            who = [n.strip() for n in match["who"].split(",")]
            if len(who) > 2 or not match["text"].strip():
                raise DiagramError(
                    number, "a note is 'note A: text' or 'note A, B: text'"
                )
            ends = sorted(lookup(n, number) for n in who)
            rows.append(Note(ends[0], ends[-1], match["text"].strip()))
            continue
        match = _ARROW.match(line)
        if match:
            source = lookup(match["src"].strip(), number)
            dest = lookup(match["dst"].strip(), number)
            if source == dest:
                raise DiagramError(number, "a message needs two different participants")
            rows.append(
                Message(source, dest, match["text"].strip(), match["arrow"] == "-->")
            )
            continue
        raise DiagramError(
            number,
            f"cannot read {line!r}: expected 'A -> B: text', 'A --> B: text', "
            "'note A: text' or '== text =='",
        )
    if participants is None:
        raise DiagramError(1, "the description is empty")
    if not rows:
        raise DiagramError(len(text.splitlines()) or 1, "the diagram has no messages")
    return Diagram(participants, rows)


def _wrap(text: str, width_px: float) -> list[str]:
    return textwrap.wrap(
        text, max(8, int(width_px / CHAR)), break_on_hyphens=False
    ) or [""]


def _x(column: int) -> float:
    return MARGIN + column * COLUMN


def _text(x: float, y: float, line: str, anchor: str = "middle", cls: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}"{attrs}>{escape(line)}</text>'


def render_svg(diagram: Diagram) -> str:
    """The diagram as a standalone SVG document (deterministic text)."""
    width = 2 * MARGIN + (len(diagram.participants) - 1) * COLUMN
    # Marker ids are page-global in inline SVG: derive them from the content.
    key = hashlib.sha256(repr(diagram).encode()).hexdigest()[:10]
    body: list[str] = []
    y = HEAD_HEIGHT + 20
    for row in diagram.rows:
        if isinstance(row, Message):
            lo, hi = sorted((row.source, row.dest))
            lines = _wrap(row.text, (hi - lo) * COLUMN - 20)
            for i, line in enumerate(lines):
                body.append(
                    _text((_x(lo) + _x(hi)) / 2, y + 12 + i * LINE, line, cls="m")
                )
            y += len(lines) * LINE + 6
            dash = ' stroke-dasharray="6,4"' if row.response else ""
            body.append(
                f'<line x1="{_x(row.source):.0f}" y1="{y:.0f}" x2="{_x(row.dest):.0f}" '
                f'y2="{y:.0f}" stroke="#222" stroke-width="1.4"{dash} '
                f'marker-end="url(#arrow-{key})"/>'
            )
            y += ROW_PAD
        elif isinstance(row, Note):
            left = _x(row.first) - NOTE_REACH
            right = _x(row.last) + NOTE_REACH
            lines = _wrap(row.text, right - left - 16)
            height = len(lines) * LINE + 10
            body.append(
                f'<rect x="{left:.0f}" y="{y:.0f}" width="{right - left:.0f}" '
                f'height="{height:.0f}" fill="#fff8d6" stroke="#b39b34"/>'
            )
            for i, line in enumerate(lines):
                body.append(_text(left + 8, y + 17 + i * LINE, line, "start", "n"))
            y += height + ROW_PAD
        else:
            body.append(
                f'<line x1="10" y1="{y + 8:.0f}" x2="{width - 10}" y2="{y + 8:.0f}" '
                'stroke="#7a7a7a" stroke-dasharray="2,3"/>'
            )
            label_w = len(row.text) * CHAR + 16
            body.append(
                f'<rect x="{(width - label_w) / 2:.0f}" y="{y - 2:.0f}" '
                f'width="{label_w:.0f}" height="20" fill="#eef1f5" stroke="#7a7a7a"/>'
            )
            body.append(_text(width / 2, y + 12, row.text, cls="d"))
            y += 20 + ROW_PAD
    bottom = y + 6
    height = bottom + HEAD_HEIGHT + 10
    heads: list[str] = []
    for i, name in enumerate(diagram.participants):
        x = _x(i)
        heads.append(
            f'<line x1="{x:.0f}" y1="{HEAD_HEIGHT + 10}" x2="{x:.0f}" y2="{bottom:.0f}" '
            'stroke="#888" stroke-dasharray="4,4"/>'
        )
        for top in (10, bottom):
            heads.append(
                f'<rect x="{x - HEAD_WIDTH / 2:.0f}" y="{top:.0f}" width="{HEAD_WIDTH}" '
                f'height="{HEAD_HEIGHT}" rx="4" fill="#e3ecf7" stroke="#3b5b85"/>'
            )
            heads.append(_text(x, top + 20, name, cls="h"))
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
            f'viewBox="0 0 {width} {height:.0f}" class="sequence-diagram" role="img" style="max-width:100%;height:auto">',
            "<style>text{font:12px sans-serif;fill:#111}"
            " .m{font:12px monospace} .h{font-weight:bold} .d{font-style:italic}</style>",
            f'<rect width="{width}" height="{height:.0f}" fill="#fff"/>',
            f'<defs><marker id="arrow-{key}" viewBox="0 0 10 10" refX="10" refY="5" '
            'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker></defs>',
            *heads,
            *body,
            "</svg>",
        ]
    )


def library_names() -> set[str]:
    """Names of the scenarios in the conformance kit's library."""
    from conformance.scenarios.runner import library_paths

    return {path.stem for path in library_paths()}


class SequenceDiagramDirective(Directive):
    """``.. sequence-diagram:: CAPTION`` followed by the description."""

    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"name": directives.unchanged, "scenario": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        try:
            diagram = parse("\n".join(self.content))
        except DiagramError as exc:
            # content_offset is the 0-based source line before the content.
            source_line = self.content_offset + exc.line
            error = self.state_machine.reporter.error(
                f"sequence-diagram: description line {exc.line}: {exc.message}",
                line=source_line,
            )
            return [error]
        scenario = self.options.get("scenario")
        if scenario is not None and scenario not in library_names():
            error = self.state_machine.reporter.error(
                f"sequence-diagram: no scenario {scenario!r} in the library "
                f"(known: {', '.join(sorted(library_names()))})",
                line=self.lineno,
            )
            return [error]
        figure = nodes.figure(classes=["sequence-diagram"])
        figure += nodes.raw("", render_svg(diagram), format="html")
        caption = self.arguments[0] if self.arguments else ""
        if scenario is not None:
            caption = f"{caption} (scenario {scenario})".strip()
        if caption:
            figure += nodes.caption("", caption)
        self.add_name(figure)
        return [figure]


def setup(app) -> dict:
    """Register the directive with Sphinx."""
    app.add_directive("sequence-diagram", SequenceDiagramDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
