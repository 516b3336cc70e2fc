"""Bad memory settings are rejected with a message naming the setting and what is allowed."""

from __future__ import annotations

import pytest
from memory_spec_builders import llama_like

from hubwatch.estimator.cards import card_by_name, parse_cards
from hubwatch.estimator.cost import RunShape
from hubwatch.estimator.memory.peak import estimate_memory
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError


@pytest.mark.parametrize(
    ("changes", "name", "text"),
    [
        ({"lora_rank": 0}, "lora_rank", "at least 1"),
        ({"batch": -1}, "batch", "at least 1"),
        ({"batch": 0}, "batch", "at least 1"),
        ({"seq_len": 0}, "seq_len", "at least 1"),
        ({"batch": 2.5}, "batch", "whole number"),
        ({"batch": True}, "batch", "whole number"),
        ({"method": "dpo"}, "method", "full, lora, qlora, serve"),
        ({"precision": "fp8"}, "precision", "amp-bf16, bf16, fp32"),
        ({"optimizer": "lion"}, "optimizer", "adamw, adamw-8bit, sgd"),
        ({"serve_dtype": "int2"}, "serve_dtype", "bf16, int8, int4"),
        ({"lora_targets": ()}, "lora_targets", "at least one"),
        ({"lora_targets": ("",)}, "lora_targets", "empty"),
        ({"headroom": 0.5}, "headroom", "between 1.0 and 10.0"),
    ],
)
def test_bad_settings_are_rejected(changes: dict[str, object], name: str, text: str) -> None:
    with pytest.raises(MemorySettingsError) as info:
        MemorySettings(**changes)  # type: ignore[arg-type]
    assert info.value.name == name
    assert text in str(info.value)


def test_unknown_card_and_bad_custom_card() -> None:
    with pytest.raises(MemorySettingsError, match="unknown card 'V100'.*T4"):
        card_by_name("V100")
    with pytest.raises(MemorySettingsError, match="NAME:GB"):
        parse_cards("MINE:lots")
    assert [c.name for c in parse_cards("t4, h100,MINE:48")] == ["T4", "H100-80GB", "MINE"]


def test_lora_target_that_matches_nothing_names_the_model_linears() -> None:
    with pytest.raises(MemorySettingsError, match="wpe matches no linear layer.*q_proj"):
        estimate_memory(llama_like(layers=2), MemorySettings(lora_targets=("wpe",)))


def test_bad_run_shape() -> None:
    with pytest.raises(MemorySettingsError, match="utilisation"):
        RunShape(utilisation=0)
    with pytest.raises(MemorySettingsError, match="samples"):
        RunShape(samples=0)


def test_settings_json_round_trip_and_unknown_keys() -> None:
    s = MemorySettings(method="qlora", lora_targets=("q_proj", "v_proj"), grad_checkpointing=True)
    assert MemorySettings.from_json(s.to_json()) == s
    with pytest.raises(MemorySettingsError, match="unknown setting"):
        MemorySettings.from_json({"rank": 4})
