"""Hypothesis properties of the memory model: monotone in every size, LoRA ≤ full, batch fits exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings as hsettings, strategies as st
from memory_spec_builders import llama_like

from hubwatch.estimator.cards import Card, fits, max_batch
from hubwatch.estimator.memory.peak import estimate_memory, kbit_upcasts
from hubwatch.estimator.memory.kv import block_linear_params
from hubwatch.estimator.memory.settings import MemorySettings

METHODS = ("full", "lora", "qlora", "serve")


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    heads = draw(st.sampled_from([4, 8, 16]))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    layers = draw(st.integers(1, 48))
    window = draw(st.none() | st.integers(16, 8192))
    pattern = draw(st.sampled_from(["full", "sliding", "hybrid"])) if window else "full"
    types = {"full": (), "sliding": ("sliding",) * layers,
             "hybrid": tuple("full" if i % 6 == 5 else "sliding" for i in range(layers))}[pattern]
    return {
        "layers": layers,
        "layer_types": types,
        "sliding_window": window,
        "hidden": heads * head_dim,
        "heads": heads,
        "kv_heads": draw(st.sampled_from([h for h in (1, 2, 4, heads) if heads % h == 0])),
        "inter": draw(st.integers(64, 20_000)),
        "vocab": draw(st.integers(1000, 260_000)),
    }


settings_strategy = st.builds(
    MemorySettings,
    batch=st.integers(1, 64),
    seq_len=st.integers(1, 32_768),
    lora_rank=st.integers(1, 16),
    lora_targets=st.sampled_from([("all-linear",), ("q_proj", "v_proj"), ("attn",), ("mlp",)]),
    precision=st.sampled_from(["amp-bf16", "bf16", "fp32"]),
    optimizer=st.sampled_from(["adamw", "adamw-8bit", "sgd"]),
    grad_checkpointing=st.booleans(),
    attention=st.sampled_from(["sdpa", "eager"]),
    loss=st.sampled_from(["fp32", "chunked"]),
    serve_dtype=st.sampled_from(["bf16", "int8", "int4"]),
)


@given(specs(), settings_strategy, st.sampled_from(METHODS), st.integers(1, 64))
def test_memory_never_falls_as_batch_grows(dims: dict[str, Any], s: MemorySettings, method: str, more: int) -> None:
    spec = llama_like(**dims)
    assert estimate_memory(spec, s.with_(batch=s.batch + more), method).peak_bytes >= estimate_memory(spec, s, method).peak_bytes


@given(specs(), settings_strategy, st.sampled_from(METHODS), st.integers(1, 4096))
def test_memory_never_falls_as_sequence_grows(dims: dict[str, Any], s: MemorySettings, method: str, more: int) -> None:
    spec = llama_like(**dims)
    seq = s.seq_len or 2048
    longer = estimate_memory(spec, s.with_(seq_len=seq + more), method).peak_bytes
    assert longer >= estimate_memory(spec, s.with_(seq_len=seq), method).peak_bytes


@given(specs(), settings_strategy, st.sampled_from(("lora", "qlora")), st.integers(1, 64))
def test_memory_never_falls_as_rank_grows(dims: dict[str, Any], s: MemorySettings, method: str, more: int) -> None:
    spec = llama_like(**dims)
    bigger = estimate_memory(spec, s.with_(lora_rank=s.lora_rank + more), method)
    smaller = estimate_memory(spec, s, method)
    assert bigger.peak_bytes >= smaller.peak_bytes
    assert bigger.trainable_params > smaller.trainable_params


@given(specs(), settings_strategy, st.sampled_from(METHODS), st.integers(1, 8), st.integers(1, 4096),
       st.integers(0, 100_000))
def test_memory_never_falls_as_parameters_grow(dims: dict[str, Any], s: MemorySettings, method: str, layers: int,
                                               inter: int, vocab: int) -> None:
    small = llama_like(**dims)
    grown = llama_like(**{**dims, "layers": dims["layers"] + layers, "inter": dims["inter"] + inter,
                          "vocab": dims["vocab"] + vocab})
    assert grown.total_params > small.total_params
    assert estimate_memory(grown, s, method).peak_bytes >= estimate_memory(small, s, method).peak_bytes


@st.composite
def real_proportions(draw: st.DrawFn) -> dict[str, Any]:
    """Models shaped like real ones: hidden ≥ 512 and an MLP at least as wide as the hidden size."""
    heads = draw(st.sampled_from([8, 16, 32]))
    head_dim = draw(st.sampled_from([64, 128]))
    dims = draw(specs())
    hidden = heads * head_dim
    return {**dims, "hidden": hidden, "heads": heads,
            "kv_heads": draw(st.sampled_from([h for h in (1, 2, 4, heads) if heads % h == 0])),
            "inter": draw(st.integers(hidden, 4 * hidden))}


@given(real_proportions(), settings_strategy, st.integers(1, 4), st.integers(1, 1024))
def test_lora_needs_no_more_than_full_and_qlora_weights_no_more_than_lora(
    dims: dict[str, Any], s: MemorySettings, batch: int, seq_len: int
) -> None:
    spec = llama_like(**dims)
    # LoRA is low-rank: r well below the matrices' sides (a rank near them is not LoRA any more).
    # LoRA on every matrix keeps what a full fine-tune keeps plus r values per matrix and token, so
    # a toy model fed far more tokens than it has parameters can need more (fp32 adapters keep one
    # input copy each); the strategy keeps to real proportions and at most 4,096 tokens per step.
    s = s.with_(batch=batch, seq_len=seq_len,
                lora_rank=max(1, min(s.lora_rank, min(dims["hidden"], dims["inter"]) // 16)))
    # LoRA's extra activations (r values per adapted matrix, 7 per layer, up to 4 bytes) must stay
    # below the gradients and optimizer states a full fine-tune keeps (≥ 2 bytes per parameter).
    assert batch * seq_len * 7 * s.lora_rank * 4 * dims["layers"] <= 2 * spec.total_params
    full = estimate_memory(spec, s, "full")
    lora = estimate_memory(spec, s, "lora")
    qlora = estimate_memory(spec, s, "qlora")
    assert lora.peak_bytes <= full.peak_bytes
    assert lora.trainable_params < full.trainable_params
    # PEFT's k-bit preparation (stack hf/axolotl) holds the non-quantised parameters in fp32, so a
    # QLoRA base may outweigh the bf16 LoRA base by at most those 2 extra bytes per parameter.
    linear = block_linear_params(spec)
    upcast = 2 * (spec.total_params - linear) if kbit_upcasts(s) else 0
    assert qlora.term("weights") <= lora.term("weights") + upcast


@hsettings(max_examples=60)
@given(specs(), settings_strategy, st.sampled_from(METHODS), st.floats(1, 400))
def test_a_cards_batch_fits_and_the_next_does_not(dims: dict[str, Any], s: MemorySettings, method: str, gb: float) -> None:
    spec = llama_like(**dims)
    card = Card("X", gb, 100, 1.0)
    batch = max_batch(spec, s, method, card, cap=512)
    if batch == 0:
        assert not fits(estimate_memory(spec, s.with_(batch=1), method), card)
        return
    assert fits(estimate_memory(spec, s.with_(batch=batch), method), card)
    if batch < 512:
        assert not fits(estimate_memory(spec, s.with_(batch=batch + 1), method), card)


@given(specs(), settings_strategy, st.sampled_from(METHODS))
def test_terms_add_up_to_the_peak_and_peak_is_the_largest_moment(dims: dict[str, Any], s: MemorySettings, method: str) -> None:
    est = estimate_memory(llama_like(**dims), s, method)
    assert all(v >= 0 for _, v in est.terms)
    assert abs(est.peak_bytes - max(v for _, v in est.moments)) <= 1e-6 * est.peak_bytes
    assert est.required_bytes == est.peak_bytes * s.headroom + s.framework_overhead_gb * 1e9
