"""The training-stack setting: each stack's defaults, the terms its options add, and their limits."""

from __future__ import annotations

import pytest
from memory_spec_builders import llama_like

from hubwatch.estimator.cards import Card, max_batch_of
from hubwatch.estimator.estimate import Estimate
from hubwatch.estimator.memory.peak import estimate_memory, memory_model
from hubwatch.estimator.memory.report import memory_report
from hubwatch.estimator.memory.settings import STACK_DEFAULTS, STACKS, MemorySettings, MemorySettingsError

# Llama-3-8B's shape: a 128k vocabulary, where the logits path is the largest term at long sequences.
LLAMA3 = llama_like(hidden=4096, inter=14336, heads=32, kv_heads=8, vocab=128256, max_pos=8192)


def test_unknown_stack_names_the_valid_ones() -> None:
    with pytest.raises(MemorySettingsError) as err:
        MemorySettings(stack="deepspeed")
    assert err.value.name == "stack"
    assert "hf, torchtune, unsloth, litgpt, axolotl" in str(err.value)
    with pytest.raises(MemorySettingsError, match="stack: unknown value"):
        MemorySettings.from_json({"stack": "Unsloth"})


@pytest.mark.parametrize("stack", STACKS)
def test_unset_settings_follow_the_stack_and_explicit_ones_win(stack: str) -> None:
    loss, implementation, checkpointing, offloading = STACK_DEFAULTS[stack]
    resolved = MemorySettings(stack=stack).resolved()
    assert (resolved.loss, resolved.implementation, resolved.grad_checkpointing) == (loss, implementation, checkpointing)
    assert resolved.activation_offloading is offloading
    mine = MemorySettings(stack=stack, loss="fp32", grad_checkpointing=not checkpointing).resolved()
    assert mine.loss == "fp32" and mine.grad_checkpointing is (not checkpointing)
    assert MemorySettings.from_json(MemorySettings(stack=stack).to_json()) == MemorySettings(stack=stack)


def test_default_stack_is_hf_and_gives_the_same_figures_as_before() -> None:
    explicit = MemorySettings(loss="fp32", implementation="transformers", grad_checkpointing=False)
    assert MemorySettings().stack == "hf"
    assert estimate_memory(LLAMA3, MemorySettings()) == estimate_memory(LLAMA3, explicit)


def test_logits_path_per_stack_at_long_sequences() -> None:
    """HF upcasts the whole logits to fp32 (the largest term at 8k tokens with a 128k vocabulary);
    torchtune upcasts one chunk at a time; LitGPT keeps bf16 chunks; Unsloth fuses the loss."""
    logits = {s: estimate_memory(LLAMA3, MemorySettings(stack=s, seq_len=8192)).term("logits") for s in STACKS}
    hf = estimate_memory(LLAMA3, MemorySettings(stack="hf", seq_len=8192, method="qlora", grad_checkpointing=True))
    assert max(hf.terms, key=lambda t: t[1])[0] == "logits"
    assert logits["hf"] == logits["axolotl"]
    assert logits["hf"] >= 12 * 128256 * 8192 * 0.99  # bf16 logits + fp32 copy + fp32 log-softmax
    assert logits["unsloth"] < logits["torchtune"] < logits["hf"]
    assert logits["litgpt"] < logits["hf"]
    assert logits["unsloth"] < 0.01 * logits["hf"]


def test_optimizer_in_backward_keeps_one_gradient_and_is_torchtune_only() -> None:
    base = MemorySettings(method="full", precision="bf16", stack="torchtune", seq_len=512)
    plain = estimate_memory(LLAMA3, base)
    in_bwd = estimate_memory(LLAMA3, base.with_(optimizer_in_backward=True))
    assert in_bwd.peak_bytes < plain.peak_bytes
    assert in_bwd.term("gradients") <= 2 * 128256 * 4096 * 1.0001  # the largest tensor (embedding/head)
    with pytest.raises(MemorySettingsError, match="optimizer_in_backward: torchtune's option"):
        MemorySettings(optimizer_in_backward=True)
    with pytest.raises(MemorySettingsError, match="grad_accumulation=1"):
        MemorySettings(stack="torchtune", optimizer_in_backward=True, grad_accumulation=4)


@pytest.mark.parametrize(("paged", "plain", "per_param"), [("paged-adamw", "adamw", 8.0),
                                                            ("paged-adamw-8bit", "adamw-8bit", 2.0)])
def test_paged_optimizer_states_go_to_host(paged: str, plain: str, per_param: float) -> None:
    settings = MemorySettings(method="full", precision="bf16", seq_len=512)
    gpu = estimate_memory(LLAMA3, settings.with_(optimizer=plain))
    host = estimate_memory(LLAMA3, settings.with_(optimizer=paged))
    assert host.term("optimizer_states") == 0.0
    assert host.host_bytes >= per_param * LLAMA3.total_params
    assert host.peak_bytes < gpu.peak_bytes
    assert host.to_json()["host_gb"] == round(host.host_bytes / 1e9, 3)


def test_activation_offloading_moves_kept_activations_to_host() -> None:
    settings = MemorySettings(stack="torchtune", seq_len=4096, grad_checkpointing=False)
    on_card = estimate_memory(LLAMA3, settings)
    offloaded = estimate_memory(LLAMA3, settings.with_(activation_offloading=True))
    assert offloaded.term("activations") < on_card.term("activations") / 4
    assert offloaded.host_bytes > 0 and on_card.host_bytes == 0
    with pytest.raises(MemorySettingsError, match="hf has no activation offloading"):
        MemorySettings(activation_offloading=True)


@pytest.mark.parametrize("stack", STACKS)
def test_terms_stay_affine_in_batch_so_the_largest_batch_is_exact(stack: str) -> None:
    for method in ("full", "lora", "qlora"):
        settings = MemorySettings(stack=stack, method=method, seq_len=1024, optimizer="paged-adamw")
        model = memory_model(LLAMA3, settings)
        p1, p2, p5 = (model.at(b).peak_bytes for b in (1, 2, 5))
        h1, h2, h5 = (model.at(b).host_bytes for b in (1, 2, 5))
        assert p5 - p1 == pytest.approx(4 * (p2 - p1), rel=1e-9) or model.at(5).moment != model.at(1).moment
        assert h5 - h1 == pytest.approx(4 * (h2 - h1), rel=1e-9, abs=1.0)
        card = Card("X", 80, 0.0, 0.0)
        best = max_batch_of(model, card)
        if best:
            assert model.at(best).required_bytes <= card.memory_bytes < model.at(best + 1).required_bytes


def test_report_carries_the_stack_and_host_memory() -> None:
    report = memory_report(LLAMA3, MemorySettings(stack="unsloth", method="qlora", seq_len=4096))
    data = report.to_json()
    assert data["settings"]["stack"] == "unsloth"
    assert data["settings"]["loss"] == "fused" and data["settings"]["activation_offloading"] is True
    qlora = next(m for m in data["methods"] if m["method"] == "qlora") if isinstance(data["methods"], list) \
        else data["methods"]["qlora"]
    assert qlora["host_gb"] > 0
    back = Estimate.from_json(data)
    assert back is not None and back.memory is not None and back.memory.settings is not None
    assert back.memory.settings.stack == "unsloth"
