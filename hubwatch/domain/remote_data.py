"""Bounded parsing of JSON and YAML fetched from the hub: size and nesting limits for hostile files.

Every JSON file the tracker reads from a repo (configs, tokenizer files, chat templates,
safetensors indexes) goes through `load_remote_json`, and a model card's metadata block through
`load_remote_yaml`. A file larger than `MAX_JSON_BYTES`, nested deeper than `MAX_JSON_DEPTH`, or
(YAML) whose aliases expand past `MAX_YAML_NODES` is refused with `RemoteJsonError` (a
`ValueError`), so that an upstream file can neither exhaust memory nor send the diff, the
estimator or storage into unbounded recursion. Real model files nest a handful of levels;
tokenizer.json files reach tens of megabytes.
"""

from __future__ import annotations

import json
from itertools import chain, compress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # PyYAML is imported by the first YAML read: reading a config.json needs none of it
    import yaml

__all__ = [
    "MAX_DOWNLOAD_BYTES",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_YAML_NODES",
    "RemoteJsonError",
    "load_remote_json",
    "load_remote_yaml",
]

MAX_JSON_BYTES = 64 * 1024 * 1024  # larger than any real tokenizer.json seen (≈ 35 MB)
MAX_JSON_DEPTH = 64  # real configs and tokenizers nest fewer than 10 levels
MAX_DOWNLOAD_BYTES = 2 * MAX_JSON_BYTES  # the most hubwatch downloads of one tracked file
MAX_YAML_NODES = 200_000  # a card's metadata, aliases expanded (large model-index blocks: ~10,000)


class RemoteJsonError(ValueError):
    """A remote JSON file that is not read: too large, too deeply nested, or not JSON."""


def _reject_constant(name: str) -> float:
    raise RemoteJsonError(f"non-standard JSON constant {name}")


_CONTAINERS = frozenset((dict, list))  # what `json.loads` nests: exactly these, never subclasses


def _check_shape(value: Any, limit: int, max_values: int | None) -> None:
    """Raise when containers nest deeper than `limit`, or hold more than `max_values` values in
    all (`value` as `json.loads` makes it).

    Walked one depth at a time, never recursively: each level's values are gathered and the
    containers among them picked out by type in C (`chain`, `map`, `compress`), so the Python
    work is per container, not per value. A tokenizer.json is mostly scalars (a vocabulary of
    100k+ ids, merges as strings or pairs): walking each value in Python cost about as much as
    parsing the file.
    """
    if not isinstance(value, (dict, list)):
        return
    level: list[Any] = [value]
    depth, count = 1, 0
    while level:
        if depth > limit:
            raise RemoteJsonError(f"nested deeper than {limit} levels")
        count += sum(map(len, level))
        if max_values is not None and count > max_values:
            raise RemoteJsonError(f"more than {max_values:,} values")
        values = list(chain.from_iterable([node.values() if type(node) is dict else node for node in level]))
        level = list(compress(values, map(_CONTAINERS.__contains__, map(type, values))))
        depth += 1


def load_remote_json(
    raw: bytes | str,
    *,
    reject_constants: bool = False,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    max_values: int | None = None,
) -> Any:
    """Parse one remote JSON document within the limits (a UTF-8 BOM is allowed).

    `reject_constants` refuses NaN/Infinity; `max_values` (off by default) caps the values held
    by all its objects and arrays together. Raises `RemoteJsonError` (too large, too deep, a
    refused constant), `json.JSONDecodeError` or `UnicodeDecodeError` (all `ValueError`s).
    """
    if len(raw) > max_bytes:
        raise RemoteJsonError(f"{len(raw)} bytes, more than the {max_bytes} read of a JSON file")
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    try:
        value = json.loads(text, parse_constant=_reject_constant) if reject_constants else json.loads(text)
    except RecursionError as exc:
        raise RemoteJsonError(f"nested deeper than {max_depth} levels") from exc
    _check_shape(value, max_depth, max_values)
    return value


def _yaml_size(root: yaml.Node, max_depth: int, max_nodes: int) -> None:
    """Raise when the node graph nests deeper than `max_depth`, or holds more than `max_nodes`
    nodes once every alias is expanded (an alias "bomb" is small as text, huge as a value)."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if id(node) in sizes:
            continue
        if depth > max_depth:
            raise RemoteJsonError(f"nested deeper than {max_depth} levels")
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if done:
            sizes[id(node)] = min(1 + sum(sizes[id(c)] for c in children), max_nodes + 1)
            if sizes[id(node)] > max_nodes:
                raise RemoteJsonError(f"more than {max_nodes} values once aliases are expanded")
            continue
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in children if id(child) not in sizes)


def load_remote_yaml(
    text: str,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    max_nodes: int = MAX_YAML_NODES,
) -> Any:
    """One YAML document read as `yaml.safe_load` does (plain values only, no tags constructed
    into objects), within the limits. Raises `RemoteJsonError` or `yaml.YAMLError`."""
    if len(text) > max_bytes:
        raise RemoteJsonError(f"{len(text)} characters, more than the {max_bytes} read of a YAML block")
    import yaml

    loader = yaml.SafeLoader(text)  # as yaml.safe_load reads it (deep nesting: RecursionError, caught)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError as exc:
            raise RemoteJsonError(f"nested deeper than {max_depth} levels") from exc
        if node is None:
            return None
        _yaml_size(node, max_depth, max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()
