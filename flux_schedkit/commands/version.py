"""Print the flux-schedkit version and the flux-python it is pinned to.

The first line is the flux-schedkit version; the second is the installed
flux-python version, followed by the version the distribution pins.  Both
come from the installed package metadata, so a source tree that was never
installed reports "not installed".
"""

from __future__ import annotations

import argparse
import re
from importlib import metadata

DISTRIBUTION = "flux-schedkit"
FLUX_PYTHON = "flux-python"

_PIN = re.compile(r"^flux-python\s*==\s*(?P<version>[^\s;,]+)", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``version`` takes no options."""


def run(args: argparse.Namespace) -> int:
    """Print the two version lines; always succeeds."""
    print(f"{DISTRIBUTION} {_installed(DISTRIBUTION)}")
    pin = pinned_flux_python()
    pin_text = f"pinned =={pin}" if pin else "pin unknown"
    print(f"{FLUX_PYTHON} {_installed(FLUX_PYTHON)} ({pin_text})")
    return 0


def pinned_flux_python() -> str | None:
    """Return the exact flux-python version flux-schedkit requires, if known."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return None
    for requirement in requirements:
        match = _PIN.match(requirement.strip())
        if match:
            return match.group("version")
    return None


def _installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
