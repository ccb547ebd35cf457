"""Where the reference schedulers shipped with flux-schedkit live."""

from __future__ import annotations

from pathlib import Path

#: Policy name -> module file name, inside the ``schedulers/<policy>`` folder.
REFERENCE_SCHEDULERS: dict[str, str] = {
    "fifo": "schedkit-fifo.py",
    "easy": "schedkit-easy.py",
    "conservative": "schedkit-conservative.py",
}


def schedulers_dir() -> Path:
    """The installed ``schedulers/`` folder (package ``flux_schedkit_schedulers``)."""
    import flux_schedkit_schedulers

    return Path(next(iter(flux_schedkit_schedulers.__path__))).resolve()


def reference_path(policy: str) -> Path:
    """Absolute path of the module file of reference scheduler *policy*.

    Raises:
        KeyError: *policy* is not one of :data:`REFERENCE_SCHEDULERS`.
        FileNotFoundError: the module file is missing from the installation.
    """
    if policy not in REFERENCE_SCHEDULERS:
        raise KeyError(
            f"unknown scheduler {policy!r}: choose one of "
            + ", ".join(REFERENCE_SCHEDULERS)
        )
    path = schedulers_dir() / policy / REFERENCE_SCHEDULERS[policy]
    if not path.is_file():
        raise FileNotFoundError(f"{policy}: {path} is missing from this installation")
    return path
