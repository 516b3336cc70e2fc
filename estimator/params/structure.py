"""The layer graph: nodes with output shapes, the layer count and the forward-pass check."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from hubwatch.estimator.frozen import frozen

__all__ = ["MAX_LAYER_NODES", "LayerRun", "Node", "NodeList", "Structure"]

# Per stack, layers listed one by one up to this many; the rest become one summary node.
MAX_LAYER_NODES = 256


class Node(NamedTuple):
    """One module of the model: its dotted name, its kind and its output shape (batch excluded).

    Immutable like the frozen dataclasses elsewhere; a NamedTuple because a model has hundreds of them.
    """

    name: str
    type: str
    output_shape: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "type": self.type, "output_shape": list(self.output_shape)}


@frozen
class LayerRun:
    """Per-layer nodes of one stack, kept compact until someone reads them: for each listed layer its
    (mixer name, mixer type, ffn name, ffn type)."""

    prefix: str
    layers: tuple[tuple[str, str, str, str], ...]
    shape: tuple[int, ...]

    def expand(self) -> Iterator[Node]:
        for i, (m_name, m_type, f_name, f_type) in enumerate(self.layers):
            yield Node(f"{self.prefix}.{i}.{m_name}", m_type, self.shape)
            if f_type:
                yield Node(f"{self.prefix}.{i}.{f_name}", f_type, self.shape)


class NodeList(Sequence[Node]):
    """An immutable sequence of nodes, expanded from layer runs on first use (estimates rarely read them)."""

    __slots__ = ("_parts", "_nodes")

    def __init__(self, parts: Sequence[Node | LayerRun]) -> None:
        self._parts = tuple(parts)
        self._nodes: tuple[Node, ...] | None = None

    def _all(self) -> tuple[Node, ...]:
        if self._nodes is None:
            out: list[Node] = []
            for part in self._parts:
                if isinstance(part, LayerRun):
                    out.extend(part.expand())
                else:
                    out.append(part)
            self._nodes = tuple(out)
        return self._nodes

    @overload
    def __getitem__(self, index: int) -> Node: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Node, ...]: ...

    def __getitem__(self, index: int | slice) -> Node | tuple[Node, ...]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Node]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NodeList):
            return self._all() == other._all()
        return isinstance(other, tuple) and self._all() == other

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"NodeList({len(self)} nodes)"


@frozen
class Structure:
    """The layer graph at one input shape and whether a forward pass can run at all."""

    layers: int
    forward_pass_ok: bool
    failures: tuple[str, ...]
    nodes: Sequence[Node]
    input_shape: tuple[int, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "layers": self.layers,
            "forward_pass_ok": self.forward_pass_ok,
            "failures": list(self.failures),
            "input_shape": list(self.input_shape),
            "nodes": [n.to_json() for n in self.nodes],
        }
