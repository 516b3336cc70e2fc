"""The layer graph: nodes with output shapes, the layer count and the forward-pass check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["MAX_LAYER_NODES", "Node", "Structure"]

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


@dataclass(frozen=True)
class Structure:
    """The layer graph at one input shape and whether a forward pass can run at all."""

    layers: int
    forward_pass_ok: bool
    failures: tuple[str, ...]
    nodes: tuple[Node, ...]
    input_shape: tuple[int, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "layers": self.layers,
            "forward_pass_ok": self.forward_pass_ok,
            "failures": list(self.failures),
            "input_shape": list(self.input_shape),
            "nodes": [n.to_json() for n in self.nodes],
        }
