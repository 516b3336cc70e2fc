"""Checkpoint counts from safetensors headers or an index, and the explained delta."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, strategies as st

from hubwatch.estimator import Manifest, analyze

CFG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 1000,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


def headers(config: dict[str, Any], *, lm_head: bool = True, extra_layer: bool = False) -> dict[str, Any]:
    """A safetensors header set for the tiny Llama above (shapes as transformers saves them)."""
    h, kv, ffn, v = 64, 2 * 16, 128, 1000
    t: dict[str, Any] = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    layers = config["num_hidden_layers"] + (1 if extra_layer else 0)
    for i in range(layers):
        p = f"model.layers.{i}."
        t |= {p + "self_attn.q_proj.weight": [h, h], p + "self_attn.k_proj.weight": [kv, h],
              p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.o_proj.weight": [h, h],
              p + "mlp.gate_proj.weight": [ffn, h], p + "mlp.up_proj.weight": [ffn, h],
              p + "mlp.down_proj.weight": [h, ffn], p + "input_layernorm.weight": [h],
              p + "post_attention_layernorm.weight": [h]}
    if lm_head:
        t["lm_head.weight"] = [v, h]
    half = dict(list(t.items())[: len(t) // 2])
    rest = dict(list(t.items())[len(t) // 2:])
    return {f"model-0000{i}.safetensors": {"__metadata__": {"format": "pt"},
                                            **{k: {"dtype": "BF16", "shape": s, "data_offsets": [0, 0]} for k, s in part.items()}}
            for i, part in enumerate((half, rest), 1)}


def test_headers_match_derived_exactly() -> None:
    a = analyze(CFG, manifest=Manifest.from_safetensors_headers(headers(CFG)))
    assert a.params.checkpoint == a.params.derived
    assert a.params.delta_pct == 0.0 and a.params.explanation == ""


def test_untied_head_missing_from_checkpoint_is_explained() -> None:
    a = analyze(CFG, manifest=Manifest.from_weights_json(headers(CFG, lm_head=False)))
    assert a.params.checkpoint == a.params.derived - 64 * 1000
    assert a.params.delta_pct is not None and a.params.delta_pct < -1
    assert "untied LM head" in a.params.explanation


def test_extra_layers_are_explained() -> None:
    a = analyze(CFG, manifest=Manifest.from_safetensors_headers(headers(CFG, extra_layer=True)))
    assert a.params.checkpoint is not None and a.params.checkpoint > a.params.derived
    assert "layers beyond" in a.params.explanation


def test_tower_referenced_but_not_inlined() -> None:
    cfg = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
           "text_config": {**CFG, "model_type": "llama"},
           "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "num_attention_heads": 4,
                             "num_hidden_layers": 2, "intermediate_size": 128, "image_size": 32, "patch_size": 8}}
    a = analyze(cfg, manifest=Manifest.from_safetensors_headers(headers(CFG)))
    assert "vision_tower" in a.params.explanation and "not inlined" in a.params.explanation


def test_index_total_size_with_dtype() -> None:
    derived = analyze(CFG).params.derived
    index = {"metadata": {"total_size": derived * 2}, "weight_map": {"lm_head.weight": "model-00001.safetensors"}}
    a = analyze(CFG, manifest=Manifest.from_index(index))  # dtype from the config's torch_dtype
    assert a.params.checkpoint == derived
    assert Manifest.from_index(index, dtype="F32").params() == derived // 2


def test_quantized_checkpoint_is_explained() -> None:
    h = headers(CFG)
    for part in h.values():
        for name, info in part.items():
            if name != "__metadata__" and "proj" in name:
                info["dtype"], info["shape"] = "U8", [info["shape"][0], info["shape"][1] // 2]
    a = analyze(CFG, manifest=Manifest.from_safetensors_headers(h))
    assert "quantized" in a.params.explanation


def test_llava_1_5_style_named_tower_counted_and_missing_from_checkpoint_explained() -> None:
    cfg = {**CFG, "architectures": ["LlavaLlamaForCausalLM"], "model_type": "llava_llama",
           "mm_vision_tower": "openai/clip-vit-large-patch14-336", "mm_hidden_size": 1024,
           "mm_projector_type": "mlp2x_gelu"}
    a = analyze(cfg)
    tower = a.params.by_component["vision_tower"]
    assert tower == 303_507_456  # CLIP ViT-L/14 at 336 px without projection
    assert a.params.by_component["projector"] == 1024 * 64 + 64 + 64 * 64 + 64
    b = analyze(cfg, manifest=Manifest.from_safetensors_headers(headers(CFG)))
    assert b.params.checkpoint is not None and b.params.checkpoint < b.params.derived
    assert "vision_tower" in b.params.explanation and "not inlined" in b.params.explanation
    unknown = analyze({**cfg, "mm_vision_tower": "some/private-tower"})
    assert "vision_tower" not in unknown.params.by_component
    assert any("not counted" in n for n in unknown.notes)


def test_a_pooler_and_head_swap_under_one_percent_is_explained() -> None:
    """jina-embeddings-v2-base-en: the config names JinaBertForMaskedLM (an MLM head, no pooler), the
    checkpoint is a BertModel (a pooler, no MLM head): 0.02% apart, and the explanation says why."""
    import json
    from pathlib import Path

    config = json.loads((Path(__file__).parent.parent / "data" / "configs" / "jinaai__jina-embeddings-v2-base-en"
                         / "config.json").read_text())
    derived = analyze(config).params
    h = config["hidden_size"]
    head = dict(derived.by_component)["head"]
    body = derived.derived - head  # everything but the MLM head, stored as one tensor here
    tensors = {"embeddings.word_embeddings.weight": [body], "pooler.dense.weight": [h, h], "pooler.dense.bias": [h]}
    manifest = Manifest.from_safetensors_headers(
        {"model.safetensors": {k: {"dtype": "F32", "shape": s, "data_offsets": [0, 0]} for k, s in tensors.items()}})
    a = analyze(config, manifest=manifest)
    assert a.params.checkpoint == body + h * h + h == 137_368_320  # the published total (tests/data/configs/truth.tsv)
    assert a.params.delta_pct is not None and abs(a.params.delta_pct) < 1
    why = a.params.explanation
    assert "checkpoint stores a pooler (pooler.dense.weight …, 590,592 params)" in why
    assert f"counts a task head (LM/MLM head or classifier) ({head:,} params) the checkpoint does not store" in why
    assert f"together {a.params.checkpoint - a.params.derived:+,} params" in why


_NAME_PARTS = st.sampled_from(["lm_head", "pooler", "cls", "score", "classifier", "qa_outputs", "seq_relationship",
                               "model", "layers", "0", "weight", "bias", "", "a\nb", "x.pooler", "lm_headx"])


@given(st.lists(st.lists(_NAME_PARTS, min_size=1, max_size=4).map(".".join), max_size=8))
def test_group_tensors_are_those_each_name_search_finds(names: list[str]) -> None:
    # The groups (pooler, task head) are found by one scan of the names joined a line each; it must
    # pick the very tensors a search of each name picks, in order, newlines in names included.
    from hubwatch.estimator.manifest import _GROUPS, Tensor

    manifest = Manifest(tensors=tuple(Tensor(n, "F16", (2,)) for n in names))
    for _, _, pattern in _GROUPS:
        one_by_one = re.compile(pattern.pattern.removeprefix("(?m)"))
        assert manifest.matching(pattern) == [t for t in manifest.tensors if one_by_one.search(t.name)]
