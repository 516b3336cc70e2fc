"""The calibration mechanisms of the memory model: QLoRA's retained 4-bit inputs, FSDP, accumulation, LitGPT's head."""

from __future__ import annotations

import pytest
from memory_spec_builders import llama_like

from hubwatch.estimator.memory.peak import estimate_memory
from hubwatch.estimator.memory.activations import quantized_inputs_per_token
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError

LITGPT_QLORA = MemorySettings(method="qlora", precision="bf16", loss="chunked", implementation="litgpt",
                              nf4_keeps_inputs=True, nf4_double_quant=False, seq_len=512)


def test_quantized_inputs_are_the_distinct_linear_inputs_of_each_layer() -> None:
    spec = llama_like(layers=4, hidden=256, inter=704, heads=8, kv_heads=2, vocab=1000)
    # Per layer: two norm outputs (q/k/v share one, gate/up the other), the attention output, the
    # MLP activation; plus the final norm's output read by the head. bf16: 2 bytes each.
    expected = 2 * (4 * (256 + 256 + 256 + 704) + 256)
    assert quantized_inputs_per_token(spec, compute_bytes=2, head=True) == expected
    assert quantized_inputs_per_token(spec, compute_bytes=2, head=False) == expected - 2 * 256


@pytest.mark.parametrize("batch", [1, 2, 8])
def test_retained_qlora_inputs_grow_with_tokens(batch: int) -> None:
    spec = llama_like(layers=8, hidden=512, inter=1376, heads=8, kv_heads=8, vocab=32000)
    one = estimate_memory(spec, LITGPT_QLORA.with_(batch=1))
    many = estimate_memory(spec, LITGPT_QLORA.with_(batch=batch))
    loss_one = dict(one.moments)["loss"]
    loss_many = dict(many.moments)["loss"]
    per_token = quantized_inputs_per_token(spec, compute_bytes=2, head=True)
    # The loss moment carries the previous micro-batch's inputs on top of this one's activations.
    retained_one = per_token * 512
    assert loss_many - loss_one >= retained_one * (batch - 1)
    if one.moment == "loss":
        assert one.term("previous_step_inputs") == pytest.approx(retained_one)


def test_no_retained_inputs_without_old_bitsandbytes_or_outside_litgpt() -> None:
    spec = llama_like(layers=8, hidden=512, inter=1376, heads=8, kv_heads=8, vocab=32000)
    for settings in (LITGPT_QLORA.with_(nf4_keeps_inputs=False), LITGPT_QLORA.with_(implementation="transformers"),
                     LITGPT_QLORA.with_(method="lora")):
        est = estimate_memory(spec, settings)
        assert est.term("previous_step_inputs") == 0.0
    with_retained = estimate_memory(spec, LITGPT_QLORA)
    without = estimate_memory(spec, LITGPT_QLORA.with_(nf4_keeps_inputs=False))
    assert with_retained.peak_bytes > without.peak_bytes


@pytest.mark.parametrize("shards", [2, 4, 8])
def test_fsdp_states_per_card_fall_with_shards(shards: int) -> None:
    spec = llama_like(layers=16, hidden=1024, inter=2816, heads=16, kv_heads=16, vocab=32000)
    base = MemorySettings(method="full", precision="bf16", seq_len=256, loss="chunked", implementation="litgpt")
    one = estimate_memory(spec, base)
    split = estimate_memory(spec, base.with_(shards=shards))
    assert split.term("optimizer_states") == pytest.approx(one.term("optimizer_states") / shards)
    # Weights: 1/N, plus two gathered layers and the root unit (embedding + head) held whole.
    layer = spec.stacks[0].params / spec.stacks[0].num_layers
    outside = spec.total_params - spec.stacks[0].params
    expected = 2 * spec.total_params / shards + 2 * 2 * layer + 2 * outside * (1 - 1 / shards)
    assert split.term("weights") == pytest.approx(expected)
    assert split.peak_bytes < one.peak_bytes


def test_accumulation_keeps_earlier_gradients_alive() -> None:
    spec = llama_like(layers=8, hidden=1024, inter=2816, heads=16, kv_heads=16, vocab=32000)
    base = MemorySettings(method="full", precision="bf16", seq_len=512, batch=2, loss="chunked")
    single = estimate_memory(spec, base)
    acc = estimate_memory(spec, base.with_(grad_accumulation=4))
    grads = 2.0 * spec.total_params
    assert dict(acc.moments)["loss"] - dict(single.moments)["loss"] == pytest.approx(grads)
    assert acc.peak_bytes > single.peak_bytes


def test_fsdp_accumulation_keeps_unsharded_gradients() -> None:
    spec = llama_like(layers=8, hidden=1024, inter=2816, heads=16, kv_heads=16, vocab=32000)
    base = MemorySettings(method="full", precision="bf16", seq_len=512, loss="chunked", shards=4)
    acc = estimate_memory(spec, base.with_(grad_accumulation=2))
    # FSDP no_sync: every card accumulates the full gradients, not its quarter.
    assert dict(acc.moments)["loss"] - dict(estimate_memory(spec, base).moments)["loss"] == pytest.approx(
        2.0 * spec.total_params)


def test_litgpt_unties_a_tied_head() -> None:
    tied = llama_like(layers=4, hidden=512, inter=1376, heads=8, kv_heads=8, vocab=50000, tied=True)
    lora = MemorySettings(method="lora", precision="bf16", seq_len=128, loss="chunked")
    hf = estimate_memory(tied, lora)
    lit = estimate_memory(tied, lora.with_(implementation="litgpt"))
    assert lit.term("weights") - hf.term("weights") == pytest.approx(2.0 * 50000 * 512)
    untied = llama_like(layers=4, hidden=512, inter=1376, heads=8, kv_heads=8, vocab=50000, tied=False)
    assert estimate_memory(untied, lora.with_(implementation="litgpt")).term("weights") == pytest.approx(
        estimate_memory(untied, lora).term("weights"))


def test_grad_accumulation_setting_is_validated() -> None:
    with pytest.raises(MemorySettingsError, match="grad_accumulation"):
        MemorySettings(grad_accumulation=0)
    assert MemorySettings.from_json({"grad_accumulation": 4}).grad_accumulation == 4


def test_litgpt_adamw_step_allocates_a_parameter_sized_list() -> None:
    spec = llama_like(layers=8, hidden=1024, inter=2816, heads=16, kv_heads=16, vocab=32000)
    base = MemorySettings(method="full", precision="bf16", seq_len=64, loss="chunked")
    fused = dict(estimate_memory(spec, base).moments)["optimizer step"]
    foreach = dict(estimate_memory(spec, base.with_(implementation="litgpt")).moments)["optimizer step"]
    assert foreach - fused == pytest.approx(2.0 * spec.total_params)
    # Sharded: the step works on each card's shard only.
    split = estimate_memory(spec, base.with_(implementation="litgpt", shards=4))
    assert dict(split.moments)["optimizer step"] < foreach
