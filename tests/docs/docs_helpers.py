"""Helpers for the docs' own tests: build a tiny Sphinx project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXT = DOCS / "_ext"


def build(
    tmp_path: Path, rst: str, extensions: list[str]
) -> subprocess.CompletedProcess:
    """Build a one-page Sphinx project holding *rst* with ``-W``; return the
    finished process (its stderr holds the warnings)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXT)!r})\nextensions = {extensions!r}\n"
    )
    (src / "index.rst").write_text(rst)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-q",
            "-W",
            "-b",
            "html",
            str(src),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
