"""Write one-off scheduler modules for the kit's tests (imported, not
collected): a module body that imports the gallery's base (``_base``) or
the mock broker tests' seed schedulers (``seed_generator``...)."""

from __future__ import annotations

import textwrap
from pathlib import Path

GALLERY = Path(__file__).parent / "gallery"
SEED_SCHEDULERS = Path(__file__).parents[1] / "mock_broker" / "schedulers"


def module_file(tmp_path: Path, name: str, body: str) -> str:
    """Write module *name* with *body* (dedented) into *tmp_path*; its path."""
    module = tmp_path / f"{name}.py"
    folders = [str(GALLERY), str(SEED_SCHEDULERS)]
    module.write_text(
        f"import sys\nsys.path[:0] = {folders!r}\n" + textwrap.dedent(body)
    )
    return str(module)
