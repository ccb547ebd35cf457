"""The command-line reference page is generated from the argument parser."""

from __future__ import annotations

import os

import cli_reference
from docs_helpers import DOCS, build

from flux_schedkit.cli import COMMANDS, build_parser


def test_every_subcommand_has_a_section_with_its_options():
    parser = build_parser()
    rst = cli_reference.reference_rst(parser)
    for name, sub in cli_reference.subcommands(parser).items():
        assert f"``flux-schedkit {name}``" in rst
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in rst, (name, flag)
    assert list(cli_reference.subcommands(parser)) == list(COMMANDS)


def test_help_text_is_verbatim_at_a_fixed_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    texts = dict(cli_reference.help_texts(build_parser()))
    replay = texts["flux-schedkit replay"]
    assert max(len(line) for line in replay.splitlines()) <= cli_reference.WIDTH
    assert (
        replay == dict(cli_reference.help_texts(build_parser()))["flux-schedkit replay"]
    )
    assert os.environ["COLUMNS"] == "200"  # restored


def test_docs_page_uses_the_directive_and_builds(tmp_path):
    page = (DOCS / "cli.rst").read_text()
    assert ".. cli-reference:: flux_schedkit.cli:build_parser" in page
    done = build(tmp_path, page, ["cli_reference"])
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "out" / "index.html").read_text()
    for name in COMMANDS:
        assert f"flux-schedkit {name}" in html
