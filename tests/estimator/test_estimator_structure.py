"""Layer graph, forward-pass check and the JSON shape other components read."""

from __future__ import annotations

import json
from pathlib import Path

from hubwatch.estimator import ESTIMATOR_VERSION, analyze

CONFIGS = Path(__file__).parent.parent / "data" / "configs"


def load(name: str) -> dict[str, object]:
    return json.loads((CONFIGS / name / "config.json").read_text())


def test_to_json_has_the_contract_keys() -> None:
    out = analyze(load("meta-llama__Llama-3.2-1B-Instruct")).to_json()
    assert {"model", "revision", "family", "custom_code", "params", "structure", "findings"} <= set(out)
    assert {"derived", "checkpoint", "delta_pct", "active", "by_component"} <= set(out["params"])
    assert {"layers", "forward_pass_ok", "nodes"} <= set(out["structure"])
    assert set(out["structure"]["nodes"][0]) == {"name", "type", "output_shape"}
    json.dumps(out)
    assert ESTIMATOR_VERSION


def test_nodes_and_shapes_follow_the_input() -> None:
    a = analyze(load("meta-llama__Llama-3.2-1B-Instruct"), seq_len=128)
    assert a.structure.layers == 16 and a.structure.forward_pass_ok
    assert a.structure.nodes[0].output_shape == (128, 2048)
    assert a.structure.nodes[-1].name == "lm_head" and a.structure.nodes[-1].output_shape == (128, 128256)
    assert any("gqa 32/8" in n.type for n in a.structure.nodes)


def test_families_are_recognised() -> None:
    expect = {"google-bert__bert-base-uncased": "encoder", "google__flan-t5-base": "encoder-decoder",
              "google__vit-base-patch16-224": "vision", "openai__clip-vit-base-patch32": "composite",
              "google__medgemma-27b-it": "composite", "openai-community__gpt2": "decoder"}
    for name, family in expect.items():
        assert analyze(load(name)).family == family, name


def test_vision_shapes_count_patches_and_class_token() -> None:
    a = analyze(load("google__vit-base-patch16-224"))
    assert any(n.output_shape == (197, 768) for n in a.structure.nodes)


def test_forward_pass_failures_are_named() -> None:
    cfg = {"model_type": "llama", "hidden_size": 100, "num_attention_heads": 3, "num_key_value_heads": 2,
           "num_hidden_layers": 2, "vocab_size": 10, "layer_types": ["full_attention"]}
    a = analyze(cfg)
    assert not a.structure.forward_pass_ok
    text = " ".join(a.structure.failures)
    assert "does not divide hidden_size" in text and "num_key_value_heads (2)" in text and "layer_types" in text
    gpt2 = analyze(load("openai-community__gpt2"), seq_len=4096)
    assert any("learned position table" in f for f in gpt2.structure.failures)


def test_sliding_and_hybrid_layers_reach_the_spec() -> None:
    gemma = analyze(load("google__medgemma-27b-it")).spec.text_stack.attention
    assert gemma.layer_types.count("full") == 10 and gemma.sliding_window == 1024
    lfm = analyze(load("LiquidAI__LFM2-1.2B")).spec.text_stack.attention
    assert lfm.layer_types.count("none") == 10
    ds = analyze(load("deepseek-ai__DeepSeek-R1")).spec
    assert ds.text_stack.attention.kv_lora_rank == 512 and ds.text_stack.num_experts == 256


def test_unknown_architecture_gets_a_generic_estimate_and_says_so() -> None:
    cfg = {"model_type": "brand_new_lm", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
           "intermediate_size": 512, "vocab_size": 1000, "rms_norm_eps": 1e-6, "hidden_act": "silu"}
    a = analyze(cfg)
    assert a.family == "decoder" and any("unknown architecture" in n for n in a.notes)
    assert a.params.derived > 2 * 1000 * 256
