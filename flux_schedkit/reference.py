"""Where the reference schedulers shipped with flux-schedkit live."""

from __future__ import annotations

from pathlib import Path

#: Policy name -> module file name, inside the ``schedulers/<policy>`` folder.
REFERENCE_SCHEDULERS: dict[str, str] = {
    "fifo": "schedkit-fifo.py",
    "easy": "schedkit-easy.py",
    "conservative": "schedkit-conservative.py",
}


def reference_spec(name: str) -> tuple[str, int | None]:
    """``(policy, depth)`` of a reference scheduler named as the benchmark
    scripts name them: ``fifo``, ``easy``, ``conservative``, or
    ``conservative:N`` for reservation depth *N* >= 1 (*depth* None: the
    scheduler's default).

    Raises:
        ValueError: any other name; the message lists the accepted ones.
    """
    policy, colon, depth = name.partition(":")
    if policy in REFERENCE_SCHEDULERS and not colon:
        return policy, None
    if policy == "conservative" and depth.isascii() and depth.isdigit():
        if int(depth) >= 1:
            return policy, int(depth)
    raise ValueError(
        f"unknown scheduler {name!r}: choose "
        + ", ".join(REFERENCE_SCHEDULERS)
        + " or conservative:N (N >= 1)"
    )


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
