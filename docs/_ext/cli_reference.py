"""The command-line reference, generated from the program's argument parser.

``.. cli-reference:: package.module:function`` calls *function* (which
returns an :class:`argparse.ArgumentParser` with subcommands) and writes
one section per subcommand holding exactly what ``PROG COMMAND --help``
prints, preceded by the top-level ``PROG --help``.  The help text is
shown verbatim (it is plain text written for a terminal, not
reStructuredText) at a fixed width, so the page is the same on every
machine and never drifts from the program.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

#: Columns the help is formatted to (argparse reads $COLUMNS).
WIDTH = 88


@contextmanager
def _columns(width: int) -> Iterator[None]:
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands, by name, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def help_texts(
    parser: argparse.ArgumentParser, width: int = WIDTH
) -> list[tuple[str, str]]:
    """``(title, help text)`` for the program, then for each subcommand."""
    with _columns(width):
        out = [(parser.prog, parser.format_help())]
        out += [(sub.prog, sub.format_help()) for sub in subcommands(parser).values()]
    return out


def reference_rst(parser: argparse.ArgumentParser, width: int = WIDTH) -> str:
    """The reference as reStructuredText: a section and a literal block each."""
    lines: list[str] = []
    for title, text in help_texts(parser, width):
        heading = f"``{title}``"
        lines += [heading, "-" * len(heading), "", ".. code-block:: text", ""]
        lines += [f"   {line}".rstrip() for line in text.rstrip().splitlines()]
        lines.append("")
    return "\n".join(lines)


def load_parser(target: str) -> argparse.ArgumentParser:
    """Call ``module:function`` and return the parser it builds."""
    module_name, _, function = target.partition(":")
    if not function:
        raise ValueError(f"{target!r}: expected 'package.module:function'")
    return getattr(importlib.import_module(module_name), function)()


class CliReferenceDirective(Directive):
    """``.. cli-reference:: package.module:function``."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            parser = load_parser(self.arguments[0])
        except (ImportError, AttributeError, ValueError) as exc:
            raise self.error(f"cli-reference: cannot build the parser: {exc}") from exc
        container = nodes.section()
        container.document = self.state.document
        source = self.state.document.current_source or "cli-reference"
        content = StringList(reference_rst(parser).splitlines(), source=source)
        nested_parse_with_titles(self.state, content, container)
        return list(container.children)


def setup(app) -> dict:
    """Register the directive with Sphinx."""
    app.add_directive("cli-reference", CliReferenceDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
