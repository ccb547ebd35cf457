"""Every file and command of docs/tutorial.rst, run as the page shows them.

The page is read as a sequence of blocks:

- a ``code-block`` with a ``:caption:`` is a file the reader writes: it is
  written under that name (a later block with the same caption replaces
  it, as the reader replaces the file);
- a ``code-block:: console`` holds commands (``$ `` lines; a here-document
  runs to its terminator) each followed by the output it must print.  An
  output line ``...`` stands for any number of lines, ``...`` inside a line
  for any text; lines must otherwise follow each other exactly.  A command
  without ``$?`` in it must succeed.

One test per section of the page (``~~~`` titles), each in a fresh folder
holding every file written up to that point, so the sections run in
parallel.  Commands that run ``flux`` itself need flux-core 0.88 on PATH
and are skipped without it; the replay commands need the KTH trace of the
shared traces folder (``../shared/traces`` beside the repository).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial.rst"
TRACES = ROOT.parent / "shared" / "traces"
WANTED_FLUX = "0.88."


@dataclass
class Command:
    text: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    section: str
    caption: str | None  # a file to write
    body: str
    commands: list[Command] = field(default_factory=list)


def _blocks(text: str) -> list[Block]:
    """The captioned and console code blocks of the page, in order."""
    lines = text.splitlines()
    blocks, section, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and re.fullmatch(r"~{3,}", lines[i + 1]):
            section = line.strip()
        match = re.fullmatch(r"\.\. code-block:: (\S+)", line)
        i += 1
        if not match:
            continue
        options = {}
        while i < len(lines) and re.match(r"   :(\w+):", lines[i]):
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key] = value.strip()
            i += 1
        body = []
        while i < len(lines) and (lines[i].startswith("   ") or not lines[i].strip()):
            body.append(lines[i][3:])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        block = Block(section, options.get("caption"), "\n".join(body) + "\n")
        if match.group(1) == "console":
            block.commands = _commands(body)
        if block.caption or block.commands:
            blocks.append(block)
    return blocks


def _commands(body: list[str]) -> list[Command]:
    commands: list[Command] = []
    lines = iter(body)
    for line in lines:
        if line.startswith("$ "):
            text = line[2:]
            heredoc = re.search(r"<<\s*'?(\w+)'?", text)
            if heredoc:
                for more in lines:
                    text += "\n" + more
                    if more == heredoc.group(1):
                        break
            commands.append(Command(text))
        else:
            commands[-1].expected.append(line)
    return commands


BLOCKS = _blocks(PAGE.read_text(encoding="utf-8"))
SECTIONS = list(dict.fromkeys(b.section for b in BLOCKS if b.commands))


def _pattern(expected: list[str]) -> re.Pattern:
    """Expected lines as a regex: ``...`` alone is any lines, else any text."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = (re.escape(p) for p in line.rstrip().split("..."))
            parts.append("[^\n]*".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts))


def _real_flux() -> str | None:
    """Why flux commands cannot run here, or None if they can."""
    if shutil.which("flux") is None:
        return "no flux on PATH"
    try:
        out = subprocess.run(
            ["flux", "version"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"flux version failed: {exc}"
    if WANTED_FLUX not in out:
        return f"flux on PATH is not flux-core {WANTED_FLUX}x"
    return None


def _needs(command: str) -> str | None:
    """What a command needs beyond flux-schedkit, or None."""
    words = re.findall(r"[\w.-]+", command)
    if "flux" in words:
        return "flux"
    if "KTH-SP2-1996-2.1-cln.swf.gz" in words:
        return "trace"
    return None


def _run(command: Command, folder: Path, env: dict) -> None:
    proc = subprocess.run(
        ["bash", "-c", command.text],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    output = (
        proc.stdout
        if proc.stdout.endswith("\n") or not proc.stdout
        else proc.stdout + "\n"
    )
    if "$?" not in command.text:
        assert proc.returncode == 0, f"$ {command.text}\n{output}"
    if command.expected:
        assert _pattern(command.expected).search(output), (
            f"$ {command.text}\nexpected (... = anything):\n"
            + "\n".join(command.expected)
            + f"\n\ngot:\n{output}"
        )


@pytest.mark.parametrize("section", SECTIONS)
def test_tutorial_section(section, tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # flux-schedkit as the reader has it: the environment's scripts first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    env.pop("PYTHONPATH", None)
    kth = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if kth.is_file():
        (tmp_path / kth.name).symlink_to(kth)
    ran = 0
    for block in BLOCKS:
        if block.caption:
            (tmp_path / block.caption).write_text(block.body, encoding="utf-8")
        if block.section != section:
            continue
        for command in block.commands:
            need = _needs(command.text)
            if need == "flux" and (why := _real_flux()):
                pytest.skip(f"needs flux-core {WANTED_FLUX}x: {why}")
            if need == "trace" and not kth.is_file():
                pytest.skip(f"needs the KTH trace in {TRACES}")
            _run(command, tmp_path, env)
            ran += 1
    assert ran, f"no command ran in section {section!r}"


def test_the_page_is_read_whole():
    # A block the reader sees but the test would not run is a test gap.
    text = PAGE.read_text(encoding="utf-8")
    shown = len(re.findall(r"^\.\. code-block:: ", text, re.MULTILINE))
    assert shown == len(BLOCKS)
    assert {b.caption for b in BLOCKS if b.caption} >= {
        "fifo.py",
        "queue.yaml",
        "easy.py",
        "backfill.yaml",
        "hybrid.py",
    }
    assert sum(len(b.commands) for b in BLOCKS) >= 12
