"""Sphinx configuration for the flux-schedkit documentation."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Let autodoc import the project from a source checkout, installed or not.
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT))

# Modules that import ``flux.*`` need the pure-Python substitute for
# flux-python's native layer.  If it cannot be installed, say why and carry
# on: the pages that do not need it still build, and autodoc reports the
# modules it could not import.
try:
    from mock_broker import flux_substitute

    flux_substitute.install()
except Exception as exc:  # report anything; never abort the build here
    print(
        f"WARNING: flux-python substitute not installed ({exc!r}); "
        "autodoc may fail to import modules that import flux.*",
        file=sys.stderr,
    )

project = "flux-schedkit"
author = "the flux-schedkit developers"
copyright = "the flux-schedkit developers"
release = "0.1.0"

# The project's own extensions live in docs/_ext (see docs/README.md).
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    # The command-line reference, generated from flux_schedkit.cli's parser.
    "cli_reference",
    # RFC 27 sequence diagrams drawn as SVG from a text description.
    "sequence_diagram",
    # The Gantt pictures of policies.rst, replayed from docs/workloads/.
    "policy_pictures",
]

exclude_patterns = ["_build", "_generated", "README.md", "workloads"]

autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
}
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "flux-schedkit"

# The clause catalogue is generated from the kit's registry at every build,
# so docs/clauses.rst can never drift from conformance/clauses.yaml.
_generated = Path(__file__).resolve().parent / "_generated"
_generated.mkdir(exist_ok=True)
from conformance.catalogue import catalogue_rst, gallery_index  # noqa: E402

_gallery = gallery_index(ROOT / "tests" / "conformance" / "gallery")
(_generated / "clauses-table.rst").write_text(catalogue_rst(_gallery), encoding="utf-8")
