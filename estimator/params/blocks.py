"""Building blocks shared by every family: the build accumulator, layers, attention and feed-forward parts."""

from __future__ import annotations

from dataclasses import field

from hubwatch.estimator.config import Cfg
from hubwatch.estimator.frozen import mutable
from hubwatch.estimator.params.spec import AttentionSpec, LinearSpec, StackSpec
from hubwatch.estimator.params.structure import MAX_LAYER_NODES, LayerRun, Node

__all__ = ["Build", "Layer", "attention_linears", "ffn_linears", "lin", "norm_params", "transformer_dims"]


def lin(name: str, fan_in: int, fan_out: int, bias: bool = False, count: int = 1,
        active: int | None = None) -> LinearSpec:
    return LinearSpec(name, fan_in, fan_out, count, bias, active)


def norm_params(kind: str, dim: int) -> int:
    """Parameters of one normalisation layer: rms/ln_nobias keep a weight, ln a weight and a bias."""
    return {"rms": dim, "ln": 2 * dim, "ln_nobias": dim, "none": 0}.get(kind, 2 * dim)


def attention_linears(h: int, nh: int, nkv: int, hd: int, *, qkv_bias: bool, o_bias: bool,
                      fused: str = "", names: tuple[str, str, str, str] = ("q_proj", "k_proj", "v_proj", "o_proj"),
                      out_dim: int | None = None) -> list[tuple[str, LinearSpec]]:
    """Q, K, V and output projections (separate, or one fused QKV matrix named `fused`)."""
    o = (out_dim or h)
    if fused:
        qkv = [("attention", lin(fused, h, (nh + 2 * nkv) * hd, qkv_bias))]
    else:
        qkv = [("attention", lin(names[0], h, nh * hd, qkv_bias)),
               ("attention", lin(names[1], h, nkv * hd, qkv_bias)),
               ("attention", lin(names[2], h, nkv * hd, qkv_bias))]
    return qkv + [("attention", lin(names[3], nh * hd, o, o_bias))]


def ffn_linears(h: int, inter: int, *, gated: bool, bias: bool, fused_gate: str = "",
                names: tuple[str, ...] = ("gate_proj", "up_proj", "down_proj"), component: str = "feed_forward",
                count: int = 1, active: int | None = None) -> list[tuple[str, LinearSpec]]:
    """A feed-forward block: gated (GLU/SwiGLU/GEGLU: two input matrices) or plain (one)."""
    if gated and fused_gate:
        first = [(component, lin(fused_gate, h, 2 * inter, bias, count, active))]
    elif gated:
        first = [(component, lin(names[0], h, inter, bias, count, active)),
                 (component, lin(names[1], h, inter, bias, count, active))]
    else:
        first = [(component, lin(names[max(len(names) - 2, 0)], h, inter, bias, count, active))]
    return first + [(component, lin(names[-1], inter, h, bias, count, active))]


@mutable
class Layer:
    """One kind of repeated block: its linear layers (component, spec per layer) and other parameters."""

    mixer: str
    ffn: str
    linears: list[tuple[str, LinearSpec]] = field(default_factory=list)
    extra: dict[str, int] = field(default_factory=dict)

    def more(self, component: str, n: int) -> None:
        self.extra[component] = self.extra.get(component, 0) + n


class Build:
    """Accumulates parameters by component, nodes and stacks while a family builder walks a config."""

    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.components: dict[str, int] = {}
        self.inactive = 0
        self.nodes: list[Node | LayerRun] = []
        self.stacks: list[StackSpec] = []
        self.failures: list[str] = []
        self.notes: list[str] = []
        self.guesses: list[str] = []  # parts of the count that are guessed (params.support)
        self.tower: str | None = None
        self.layers = 0
        self.embedding_params = 0
        self.lm_head_params = 0
        self.vocab = 0
        self.max_pos: int | None = None
        self.final_norm = False

    def add(self, component: str, n: int) -> None:
        if n:
            key = self.tower or component
            self.components[key] = self.components.get(key, 0) + n

    def guess(self, part: str, note: str | None = None) -> None:
        """Records a part of the count that is a guess (and, when given, a note for people)."""
        if part not in self.guesses:
            self.guesses.append(part)
        if note is not None and note not in self.notes:
            self.notes.append(note)

    def embed(self, name: str, rows: int, dim: int, shape: tuple[int, ...], kind: str = "embedding") -> None:
        self.add("embeddings", rows * dim)
        if self.tower is None:
            self.embedding_params += rows * dim
        self.node(name, f"{kind}[{rows}x{dim}]", shape)

    def node(self, name: str, type_: str, shape: tuple[int, ...]) -> None:
        self.nodes.append(Node(name, type_, shape))

    def check(self, ok: bool, failure: str) -> bool:
        if not ok and failure not in self.failures:
            self.failures.append(failure)
        return ok

    def divides(self, part: int, whole: int, part_name: str, whole_name: str, where: str = "") -> bool:
        """The forward-pass check that `part` divides `whole` (heads into the width, KV heads into heads, …)."""
        if part > 0 and whole % part == 0:
            return True  # (the failure is worded only when there is one)
        return self.check(False, f"{where + ': ' if where else ''}{part_name} ({part}) does not divide {whole_name} ({whole})")

    def stack(self, name: str, prefix: str, layers: list[Layer], *, hidden: int, intermediate: int,
              attention: AttentionSpec, shape: tuple[int, ...], gated: bool = False,
              num_experts: int = 0, experts_per_token: int = 0, extra_params: int = 0) -> StackSpec:
        """Adds a stack of layers (in order; identical kinds share one Layer object)."""
        # Each distinct Layer object (by identity, in order of first use) with how many layers it is.
        ids = list(map(id, layers))
        groups = {key: (layers[ids.index(key)], ids.count(key)) for key in dict.fromkeys(ids)}
        merged: dict[tuple[str, int, int, bool], list[int]] = {}
        total = extra_params
        components, tower = self.components, self.tower  # `add`, inlined: a stack adds one figure per linear
        for layer, n in groups.values():
            for comp, spec in layer.linears:
                params, count, active = spec.params, spec.count, spec.active_count
                p = params * n
                if p:
                    key = tower or comp
                    components[key] = components.get(key, 0) + p
                total += p
                act = count if active is None else active
                if act != count:
                    self.inactive += (count - act) * (params // max(count, 1)) * n
                k = (spec.name, spec.in_features, spec.out_features, spec.bias)
                acc = merged.setdefault(k, [0, 0, 0])
                acc[0] += count * n
                acc[1] += act * n
                if active is not None:
                    acc[2] = 1
            for comp, p in layer.extra.items():
                self.add(comp, p * n)
                total += p * n
        linears = tuple([LinearSpec(k[0], k[1], k[2], v[0], k[3], v[1] if v[2] else None) for k, v in merged.items()])
        short = {id(layer): (layer.mixer.split("[")[0], layer.mixer, layer.ffn.split("[")[0], layer.ffn)
                 for layer, _ in groups.values()}
        if len(groups) == 1:
            listed = (next(iter(short.values())),) * min(len(layers), MAX_LAYER_NODES)
        else:
            listed = tuple(short[id(layer)] for layer in layers[:MAX_LAYER_NODES])
        self.nodes.append(LayerRun(prefix, listed, shape))
        if len(layers) > MAX_LAYER_NODES:
            rest = len(layers) - MAX_LAYER_NODES
            self.node(f"{prefix}.{MAX_LAYER_NODES}-{len(layers) - 1}", f"repeated[{rest} layers]", shape)
        self.layers += len(layers)
        stack = StackSpec(name, len(layers), hidden, intermediate, attention, linears, num_experts,
                          experts_per_token, gated, total)
        self.stacks.append(stack)
        return stack


def transformer_dims(cfg: Cfg, b: Build, where: str = "") -> tuple[int, int, int, int]:
    """Width, depth, heads (checked against the width) and feed-forward size (4× the width when unset) of a
    plain transformer stack."""
    h, n_layers, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    b.divides(nh, h, "num_attention_heads", "hidden_size", where)
    return h, n_layers, nh, cfg.concept("ffn", minimum=1) or 4 * h
