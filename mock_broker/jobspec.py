"""Build RFC 14 (version 1) jobspecs the way ``flux submit`` would.

``make_jobspec(nodes=2, slots=4, cores=2)`` is ``flux submit -N2 -n4 -c2``:
with ``nodes``, ``slots`` is the total task count and is spread evenly over
the nodes (it must divide); without ``nodes`` the request is slot-only.
"""

from __future__ import annotations


def make_jobspec(
    nodes: int | dict | None = None,
    slots: int = 1,
    cores: int = 1,
    gpus: int = 0,
    duration: float = 0.0,
    exclusive: bool | None = None,
    constraints: dict | None = None,
    command: tuple[str, ...] = ("app",),
    name: str | None = None,
) -> dict:
    """Return a V1 jobspec.

    Args:
        nodes: node count (int or RFC 14 range dict), or None for slot-only.
        slots: total number of task slots.
        cores: cores per slot.
        gpus: GPUs per slot.
        duration: time limit in seconds (0 means none).
        exclusive: mark the node level exclusive (``--exclusive``).
        constraints: RFC 31 constraint (``attributes.system.constraints``).
    """
    if slots < 1 or cores < 1 or gpus < 0:
        raise ValueError("slots and cores must be >= 1 and gpus >= 0")
    slot_with = [{"type": "core", "count": cores}]
    if gpus:
        slot_with.append({"type": "gpu", "count": gpus})
    if nodes is None:
        slot = {"type": "slot", "count": slots, "label": "task", "with": slot_with}
        resources = [slot]
    else:
        if isinstance(nodes, int):
            if nodes < 1 or slots % nodes:
                raise ValueError(f"{slots} slots do not spread over {nodes} nodes")
            per_node = slots // nodes
        else:
            per_node = 1
        slot = {"type": "slot", "count": per_node, "label": "task", "with": slot_with}
        node = {"type": "node", "count": nodes, "with": [slot]}
        if exclusive is not None:
            node["exclusive"] = exclusive
        resources = [node]
    system: dict = {"duration": float(duration)}
    if constraints:
        system["constraints"] = constraints
    if name:
        system["job"] = {"name": name}
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": list(command), "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": system},
    }
