"""What a checkpoint will run next, read from its own channels: the
nodes whose trigger channels hold a value they have not seen (as
``StateSnapshot.next`` says, without the graph)."""

from __future__ import annotations

from typing import Any


def node_channels(payload: dict[str, Any]) -> frozenset[str]:
    """Node names a format-1 checkpoint's trigger channels may be named after."""
    if payload.get("format") not in (1, None):
        return frozenset()
    seen = payload.get("seen")
    names = set(seen) if isinstance(seen, dict) else set()
    values = payload.get("values")
    if isinstance(values, dict):  # a node writes its own name to its channel
        names |= {k for k, v in values.items() if k == v}
    return frozenset(names - {"__input__", "__interrupt__", "__start__"})


def next_nodes(payload: dict[str, Any]) -> list[str]:
    """The nodes a checkpoint will run: each whose trigger channel holds a
    value at a version the node has not seen, and each ``Send``'s node. A
    trigger names its node (``branch:to:N``, ``start:N``, ``join:...:N``);
    in format 1 a node's own channel triggers the nodes that read it."""
    values = payload.get("values") or {}
    versions = payload.get("versions") or {}
    got = payload.get("seen")
    seen: dict[str, Any] = got if isinstance(got, dict) else {}
    nodes = node_channels(payload)
    found: list[str] = []
    for channel in values:
        if channel == "__start__":
            readers = ["__start__"]
        elif channel.startswith("join:"):
            # a barrier: it triggers once every node it names has written it
            _, names, node = channel.split(":", 2) if channel.count(":") >= 2 else ("", "", "")
            got = values[channel] if isinstance(values[channel], list) else []
            readers = [node] if node and set(names.split("+")) <= set(map(str, got)) else []
        elif channel.startswith(("branch:", "start:")):
            readers = [channel.rsplit(":", 1)[-1]]
        elif channel in nodes:
            readers = [n for n, saw in seen.items() if isinstance(saw, dict) and channel in saw]
        else:
            continue
        for node in readers:
            saw = seen.get(node)
            unseen = not isinstance(saw, dict) or saw.get(channel) != versions.get(channel)
            if unseen and node not in found and node not in ("__input__", "__interrupt__"):
                found.append(node)
    sends = values.get("__pregel_tasks")
    for packet in sends if isinstance(sends, list) else []:
        sent = packet[0] if isinstance(packet, list) and packet else None
        if isinstance(sent, str) and sent not in found:
            found.append(sent)
    return found
