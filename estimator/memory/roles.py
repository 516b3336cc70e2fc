"""What each linear layer does (query, key, value, output, gate, up, down…) and which ones LoRA adapts.

Checkpoints name the same matrix differently (`q_proj`, `query`, `wq`, `c_attn`, `query_key_value`,
`Wqkv`); LoRA targets given with one family's names are mapped to the role and then to the
model's own linears. A role asked of a fused matrix (`q` of Falcon's `query_key_value`) adapts
that role's share of the fused output, as LitGPT's `lora_query`/`lora_value` do; naming the fused
matrix itself adapts all of it, as PEFT does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.memory.settings import MemorySettingsError
from hubwatch.estimator.params.spec import LinearSpec, ModelSpec, StackSpec

__all__ = ["ROLES", "LoraPlan", "StackLora", "linear_role", "per_stack", "plan_lora", "stack_roles"]

ROLES = ("q", "k", "v", "qkv", "kv", "o", "gate", "up", "gate_up", "down", "router", "other")

_NAME_ROLE: dict[str, str] = {
    **dict.fromkeys(("q_proj", "query", "q", "wq", "q_lin", "q_a_proj", "q_b_proj", "lora_query"), "q"),
    **dict.fromkeys(("k_proj", "key", "k", "wk", "k_lin"), "k"),
    **dict.fromkeys(("v_proj", "value", "v", "wv", "v_lin", "lora_value"), "v"),
    **dict.fromkeys(("query_key_value", "qkv_proj", "c_attn", "wqkv", "qkv", "w_pack", "in_proj", "attn"), "qkv"),
    **dict.fromkeys(("kv_a_proj_with_mqa", "kv_b_proj", "kv_proj"), "kv"),
    **dict.fromkeys(("o_proj", "out_proj", "out_lin", "o", "proj", "attn_out"), "o"),
    **dict.fromkeys(("gate_proj", "w1", "wi_0"), "gate"),
    **dict.fromkeys(("up_proj", "w3", "wi_1", "fc1", "c_fc", "dense_h_to_4h", "fc_in", "wi", "lin1"), "up"),
    **dict.fromkeys(("gate_up_proj", "fused_gate_up"), "gate_up"),
    **dict.fromkeys(("down_proj", "w2", "fc2", "dense_4h_to_h", "fc_out", "lin2"), "down"),
    **dict.fromkeys(("router", "gate", "wg"), "router"),
}
# Names several families use for different matrices: decided by shape.
_AMBIGUOUS = {"dense", "c_proj", "wo", "gate", "proj", "w1", "w2", "fc1", "fc2", "out_proj"}

# What a target given by the user means, beyond the names above.
_GROUPS: dict[str, frozenset[str]] = {
    "attn": frozenset({"q", "k", "v", "qkv", "kv", "o"}),
    "attention": frozenset({"q", "k", "v", "qkv", "kv", "o"}),
    "mlp": frozenset({"gate", "up", "gate_up", "down"}),
    "ffn": frozenset({"gate", "up", "gate_up", "down"}),
    "head": frozenset(),  # the output head is never adapted here (it is not a block linear)
}
_FUSED: dict[str, str] = {"q": "qkv", "k": "qkv", "v": "qkv", "gate": "gate_up", "up": "gate_up"}


def _shape_role(linear: LinearSpec, stack: StackSpec) -> str:
    h, inter = stack.hidden_size, stack.intermediate_size
    att = stack.attention
    q_out = att.num_heads * att.head_dim
    kv_out = att.num_kv_heads * att.head_dim
    v_dim = att.num_heads * (att.v_head_dim or att.head_dim)
    i, o = linear.in_features, linear.out_features
    if i == h and o == q_out + 2 * kv_out:
        return "qkv"
    if i == h and inter and o == 2 * inter:
        return "gate_up"
    if o == h and inter and i == inter and i != v_dim:
        return "down"
    if o == h and i == v_dim:
        return "o"
    if i == h and inter and o == inter:
        return "up"
    if o == h and inter and i == inter:
        return "down"
    if i == h and stack.num_experts and o == stack.num_experts:
        return "router"
    return "other"


def linear_role(linear: LinearSpec, stack: StackSpec) -> str:
    """The role of one linear kind in its stack (one of ROLES)."""
    name = linear.name.rsplit(".", 1)[-1].lower()
    if name in _AMBIGUOUS or name not in _NAME_ROLE:
        by_shape = _shape_role(linear, stack)
        if by_shape != "other" or name not in _NAME_ROLE:
            return by_shape
    return _NAME_ROLE[name]


_T = TypeVar("_T")


def per_stack(fn: Callable[[StackSpec], _T]) -> Callable[[StackSpec], _T]:
    """`fn` of a (frozen) stack computed once per stack object: one estimate asks the same figures of a
    stack for every method. The value is kept in the stack's own `__dict__` (beside its fields, which
    equality, hashing and `repr` read; never a field), so it lives and goes with the stack."""
    key = f"_per_stack_{fn.__name__}"

    def cached(stack: StackSpec) -> _T:
        kept = stack.__dict__
        if key in kept:
            value: _T = kept[key]
            return value
        value = kept[key] = fn(stack)
        return value

    cached.__doc__ = fn.__doc__
    return cached


@per_stack
def stack_roles(stack: StackSpec) -> tuple[str, ...]:
    """`linear_role` of each of the stack's linears, in order."""
    return tuple(linear_role(linear, stack) for linear in stack.linears)


@frozen
class StackLora:
    """LoRA on one stack: adapted roles, trainable parameters, rank-sized outputs per token."""

    stack: str
    roles: frozenset[str]
    trainable_params: int
    rank_outputs_per_token: int  # Σ over adapted linears a token passes through of r
    adapted_inputs_per_token: int = 0  # Σ over adapted linears a token passes through of in_features
    adapted_inputs_fused_qkv: int = 0  # the same with q, k and v adapters sharing one input (LitGPT)


@frozen
class LoraPlan:
    """LoRA on a model: its rank, the targets asked for and the plan on each stack."""

    rank: int
    targets: tuple[str, ...]
    stacks: tuple[StackLora, ...]

    @property
    def trainable_params(self) -> int:
        return sum(s.trainable_params for s in self.stacks)

    def roles(self, stack: str) -> frozenset[str]:
        for s in self.stacks:
            if s.stack == stack:
                return s.roles
        return frozenset()


def _fused_share(role: str, linear: LinearSpec, stack: StackSpec) -> float:
    att = stack.attention
    if role in ("q", "k", "v"):
        part = att.num_heads * att.head_dim if role == "q" else att.num_kv_heads * att.head_dim
        return min(1.0, part / linear.out_features)
    return 0.5  # gate or up of a fused gate_up


def _linears(stack: StackSpec) -> tuple[LinearSpec, ...]:
    return stack.linears


def plan_lora(spec: ModelSpec, rank: int, targets: tuple[str, ...]) -> LoraPlan:
    """Which linears LoRA adapts for `targets`, and the trainable parameters (A: r×in, B: out×r)."""
    wanted_names: set[str] = set()
    wanted_roles: set[str] = set()
    all_linear = False
    for raw in targets:
        t = raw.strip().lower()
        if t in ("all-linear", "all_linear", "all"):
            all_linear = True
        elif t in _GROUPS:
            wanted_roles |= _GROUPS[t]
        elif t in ROLES:
            wanted_roles.add(t)
        else:
            wanted_names.add(t)
            if t in _NAME_ROLE and t not in _AMBIGUOUS:
                wanted_roles.add(_NAME_ROLE[t])
    # A fused role asked of a model with separate matrices means its parts (c_attn → q, k, v).
    for fused, parts in (("qkv", ("q", "k", "v")), ("gate_up", ("gate", "up"))):
        if fused in wanted_roles:
            wanted_roles.update(parts)
    matched: set[str] = set()
    stacks: list[StackLora] = []
    for stack in spec.stacks:
        roles: set[str] = set()
        params = 0
        outputs = 0
        inputs = 0
        qkv_inputs: dict[int, int] = {}
        stack_linears = _linears(stack)
        linear_roles = stack_roles(stack)
        for linear, role in zip(stack_linears, linear_roles):
            name = linear.name.rsplit(".", 1)[-1].lower()
            share, adapters = 0.0, 1
            if all_linear:
                share = 1.0  # every target matches: nothing to record
            elif name in wanted_names or role in wanted_roles:
                share = 1.0
                matched.update((name, role))
            else:
                # Parts of a fused matrix: one A (r×in) per part, B covering each part's share.
                fused_parts = [r for r in wanted_roles if _FUSED.get(r) == role]
                if fused_parts:
                    share = min(1.0, sum(_fused_share(r, linear, stack) for r in fused_parts))
                    adapters = len(fused_parts)
                    matched.update(fused_parts)
            if share <= 0:
                continue
            roles.add(role)
            out = max(1, round(linear.out_features * share))
            params += linear.count * rank * (adapters * linear.in_features + out)
            passes = linear.active_count if linear.active_count is not None else linear.count
            outputs += passes * rank * adapters
            inputs += passes * linear.in_features
            if role in ("q", "k", "v"):
                qkv_inputs[linear.in_features] = max(qkv_inputs.get(linear.in_features, 0), passes * linear.in_features)
        shared_inputs = inputs - sum(l.in_features * (l.active_count if l.active_count is not None else l.count)
                             for l, role in zip(stack_linears, linear_roles) if role in ("q", "k", "v")
                             and role in roles) + sum(qkv_inputs.values())
        stacks.append(StackLora(stack.name, frozenset(roles), params, outputs, inputs, shared_inputs))
    if not all_linear:
        missing = [t for t in targets if t.strip().lower() not in matched
                   and not (t.strip().lower() in _GROUPS and _GROUPS[t.strip().lower()] & matched)
                   and _NAME_ROLE.get(t.strip().lower()) not in matched
                   and not ({"qkv": {"q", "k", "v"}, "gate_up": {"gate", "up"}}.get(
                       _NAME_ROLE.get(t.strip().lower(), t.strip().lower()), set()) & matched)]
        if missing:
            names = sorted({l.name for s in spec.stacks for l in s.linears})
            raise MemorySettingsError(
                "lora_targets",
                f"{', '.join(missing)} matches no linear layer of this {spec.model_type} model "
                f"(its linears: {', '.join(names) or 'none known'})",
            )
    plan = LoraPlan(rank, targets, tuple(stacks))
    if plan.trainable_params == 0:
        raise MemorySettingsError("lora_targets", f"no linear layer of this {spec.model_type} model is known to adapt")
    return plan
