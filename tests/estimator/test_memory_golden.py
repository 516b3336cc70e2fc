"""Golden figures for real configs, each derivable by hand (or published by PEFT) from the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubwatch.estimator import analyze
from hubwatch.estimator.memory.peak import estimate_memory
from hubwatch.estimator.memory.kv import NF4_BYTES_PER_PARAM, kv_cache_bytes
from hubwatch.estimator.memory.roles import plan_lora
from hubwatch.estimator.memory.settings import MemorySettings
from hubwatch.estimator.params.spec import ModelSpec


def spec_of(data_dir: Path, name: str) -> ModelSpec:
    return analyze(json.loads((data_dir / "configs" / name / "config.json").read_text())).spec


def test_llama2_lora_trainable_params_match_peft(data_dir: Path) -> None:
    spec = spec_of(data_dir, "meta-llama__Llama-2-7b-hf")
    # PEFT prints these for Llama-2-7b: r=8 on q_proj,v_proj and r=16 on all linear layers.
    assert plan_lora(spec, 8, ("q_proj", "v_proj")).trainable_params == 4_194_304
    assert plan_lora(spec, 16, ("all-linear",)).trainable_params == 39_976_960


def test_aliases_map_across_architectures(data_dir: Path) -> None:
    falcon = spec_of(data_dir, "tiiuae__falcon-7b")
    # q and v of Falcon's fused query_key_value (71 query heads, 1 KV head of 64): A is r×4544 each,
    # B covers the query share (4544) and the value share (64) of the fused output.
    r = 8
    expected = 32 * r * ((4544 + 4544) + (4544 + 64))
    assert plan_lora(falcon, r, ("q_proj", "v_proj")).trainable_params == expected
    gpt2 = spec_of(data_dir, "openai-community__gpt2")
    # "mlp" on GPT-2 is c_fc (768→3072) and the MLP's c_proj (3072→768), not the attention's c_proj.
    assert plan_lora(gpt2, 4, ("mlp",)).trainable_params == 12 * 4 * 2 * (768 + 3072)


def test_serving_weights_and_kv_cache_by_hand(data_dir: Path) -> None:
    llama2 = spec_of(data_dir, "meta-llama__Llama-2-7b-hf")
    serve = estimate_memory(llama2, MemorySettings(method="serve", seq_len=4096, batch=1))
    assert serve.term("weights") == 2 * 6_738_415_616
    # MHA: 2 (k, v) × 32 layers × 32 heads × 128 × 2 bytes × 4096 tokens.
    assert serve.term("kv_cache") == 2 * 32 * 32 * 128 * 2 * 4096
    llama31 = spec_of(data_dir, "meta-llama__Llama-3.1-8B-Instruct")
    assert kv_cache_bytes(llama31, batch=4, seq_len=8192) == 2 * 32 * 8 * 128 * 2 * 8192 * 4  # GQA: 8 KV heads


def test_mla_caches_the_latent(data_dir: Path) -> None:
    spec = spec_of(data_dir, "deepseek-ai__DeepSeek-R1")
    # 61 layers × (kv_lora_rank 512 + rope 64) × 2 bytes per token.
    assert kv_cache_bytes(spec, batch=1, seq_len=1000) == 61 * 576 * 2 * 1000


def test_hybrid_sliding_and_cross_attention(data_dir: Path) -> None:
    gemma3 = spec_of(data_dir, "google__medgemma-27b-it")
    seq = 32_768
    full_layers, sliding_layers = 62 // 6, 62 - 62 // 6  # every sixth layer is global
    per_token = 2 * 16 * 128 * 2
    assert kv_cache_bytes(gemma3, batch=1, seq_len=seq) == per_token * (full_layers * seq + sliding_layers * 1024)
    t5 = spec_of(data_dir, "google__flan-t5-base")
    # Decoder self-attention plus cross-attention over an encoder output as long as the input.
    assert kv_cache_bytes(t5, batch=1, seq_len=512) == 2 * (2 * 12 * 12 * 64 * 2 * 512)
    bert = spec_of(data_dir, "google-bert__bert-base-uncased")
    assert kv_cache_bytes(bert, batch=8, seq_len=512) == 0


def test_full_finetune_model_states_per_recipe(data_dir: Path) -> None:
    spec = spec_of(data_dir, "microsoft__phi-2")
    p = spec.total_params
    step = {"amp-bf16": 16, "bf16": 8, "fp32": 16}  # weights + grads + AdamW m, v (bytes/param)
    for precision, per_param in step.items():
        est = estimate_memory(spec, MemorySettings(method="full", precision=precision, seq_len=8))
        at_step = dict(est.moments)["optimizer step"]
        assert at_step == pytest.approx(per_param * p, rel=1e-9)
    est = estimate_memory(spec, MemorySettings(method="full", optimizer="adamw-8bit", precision="bf16", seq_len=8))
    assert dict(est.moments)["optimizer step"] == pytest.approx((2 + 2 + 2) * p, rel=1e-3)


def test_qlora_base_is_nf4_with_double_quant_constants(data_dir: Path) -> None:
    spec = spec_of(data_dir, "meta-llama__Llama-2-7b-hf")
    linear = sum(l.params for l in spec.text_stack.linears)
    rest = spec.total_params - linear
    est = estimate_memory(spec, MemorySettings(method="qlora", precision="bf16", stack="torchtune"))
    adapters = 2 * est.trainable_params
    assert est.term("weights") == pytest.approx(NF4_BYTES_PER_PARAM * linear + 2 * rest + adapters)
    # transformers + PEFT's k-bit preparation: the same NF4 blocks, the rest upcast to fp32.
    hf = estimate_memory(spec, MemorySettings(method="qlora", precision="bf16", stack="hf"))
    assert hf.term("weights") == pytest.approx(NF4_BYTES_PER_PARAM * linear + 4 * rest + adapters)
    assert NF4_BYTES_PER_PARAM == pytest.approx(0.5 + 1 / 64 + 4 / (64 * 256))


def test_default_sequence_is_capped_by_the_model_context(data_dir: Path) -> None:
    gpt2 = spec_of(data_dir, "openai-community__gpt2")  # n_positions 1024
    assert estimate_memory(gpt2, MemorySettings()).seq_len == 1024
    llama = spec_of(data_dir, "meta-llama__Llama-3.1-8B-Instruct")
    assert estimate_memory(llama, MemorySettings()).seq_len == 2048
