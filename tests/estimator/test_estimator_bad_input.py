"""Bad configs raise ConfigError naming the key; nothing crashes or hangs."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubwatch.estimator import ConfigError, Manifest, analyze

LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
         "intermediate_size": 512, "vocab_size": 1000}


@pytest.mark.parametrize("config", [None, [], "config", 42, 3.5])
def test_not_a_dict(config: Any) -> None:
    with pytest.raises(ConfigError) as exc:
        analyze(config)
    assert exc.value.key == "config"


@pytest.mark.parametrize("missing", ["hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size"])
def test_missing_key_is_named(missing: str) -> None:
    cfg = {k: v for k, v in LLAMA.items() if k != missing}
    with pytest.raises(ConfigError) as exc:
        analyze(cfg)
    assert missing in str(exc.value)


@pytest.mark.parametrize("key,value", [
    ("num_hidden_layers", 10**12), ("hidden_size", -4), ("vocab_size", "lots"), ("num_attention_heads", 0),
    ("intermediate_size", 1.5), ("num_hidden_layers", True), ("vocab_size", float("inf")), ("hidden_size", [256]),
    ("num_key_value_heads", -1), ("tie_word_embeddings", "yes"), ("text_config", 7),
])
def test_wrong_values_name_the_key(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as exc:
        analyze({**LLAMA, key: value})
    assert exc.value.key == key


def test_huge_but_valid_layer_count_is_fast_and_node_list_capped() -> None:
    start = time.perf_counter()
    a = analyze({**LLAMA, "num_hidden_layers": 100_000})
    assert time.perf_counter() - start < 5
    assert a.structure.layers == 100_000
    assert len(a.structure.nodes) < 1000


@pytest.mark.parametrize("config,key", [
    ({"model_type": "t5", "d_model": 64, "num_heads": 4, "num_layers": 2, "vocab_size": 10,
      "num_decoder_layers": 10**11}, "num_decoder_layers"),
    ({"model_type": "bart", "d_model": 64, "encoder_attention_heads": 4, "encoder_layers": 10**9, "vocab_size": 10},
     "encoder_layers"),
    ({"model_type": "albert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "num_hidden_groups": 10**9}, "num_hidden_groups"),
    ({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 10**7, "vocab_size": 10}, "n_layer"),
])
def test_absurd_depth_under_any_name_is_refused(config: dict[str, Any], key: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ConfigError) as exc:
        analyze(config)
    assert exc.value.key == key and time.perf_counter() - start < 1


def test_bad_seq_len_and_side_configs() -> None:
    with pytest.raises(ConfigError):
        analyze(LLAMA, seq_len=0)
    with pytest.raises(ConfigError):
        analyze(LLAMA, generation_config=[])  # type: ignore[arg-type]


@pytest.mark.parametrize("headers", [
    "x", {"a.safetensors": 5}, {"a.safetensors": {"w": {"dtype": "F16", "shape": [-1]}}},
    {"a.safetensors": {"w": {"dtype": 3, "shape": [2]}}},
])
def test_bad_manifest(headers: Any) -> None:
    with pytest.raises(ConfigError):
        Manifest.from_safetensors_headers(headers)


def test_bad_index() -> None:
    with pytest.raises(ConfigError) as exc:
        Manifest.from_index({"metadata": {"total_size": "big"}})
    assert "total_size" in exc.value.key


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
                    max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(list(LLAMA) + ["num_key_value_heads", "head_dim", "layer_types",
                                                      "text_config", "vision_config", "model_type", "n_embd",
                                                      "num_local_experts", "kv_lora_rank", "sliding_window"]),
                       JSON, max_size=8))
def test_random_json_never_crashes(overrides: dict[str, Any]) -> None:
    try:
        analyze({**LLAMA, **overrides}, seq_len=16)
    except ConfigError:
        pass
