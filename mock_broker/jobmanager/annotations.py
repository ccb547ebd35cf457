"""RFC 27 annotation merging, as flux-core's job-manager applies it.

An update is merged recursively into the job's annotations; a JSON null
deletes the key, and an object left empty by deletions disappears too.  An
empty result is None (the job has no annotations).
"""

from __future__ import annotations

import copy


def _merge(target: dict, update: dict) -> None:
    for key, value in update.items():
        if isinstance(value, dict):
            current = target.get(key)
            if not isinstance(current, dict):
                current = {}
                target[key] = current
            _merge(current, value)
            if not current:
                del target[key]
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(value)


def merge_annotations(current: dict | None, update: dict) -> dict | None:
    """Return *current* with *update* merged in (None if nothing is left)."""
    result = current if current is not None else {}
    _merge(result, update)
    return result or None
