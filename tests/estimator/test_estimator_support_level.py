"""The level follows the evidence: a whole sub-config that no builder opened leaves a tower out of the count,
so the estimate is `unsupported`, naming that key, rather than an unbounded `approximate`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubwatch.estimator import ConfigError, analyze, support

ZOO = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "transformers_zoo.json").read_text())["rows"]


def test_an_unread_vision_tower_is_unsupported_and_named() -> None:
    row = next(r for r in ZOO if r["architecture"] == "Phi4MultimodalForCausalLM" and not r["overrides"])
    with pytest.raises(ConfigError) as caught:
        analyze(row["config"])
    assert "vision_config" in str(caught.value)


def test_the_same_decoder_without_the_tower_still_has_a_number() -> None:
    row = next(r for r in ZOO if r["architecture"] == "Phi4MultimodalForCausalLM" and not r["overrides"])
    text_only = {k: v for k, v in row["config"].items() if k != "vision_config"}
    assert analyze(text_only).params.derived > 0


PERTURBED = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "transformers_perturbed.json")
                       .read_text())["rows"]


@pytest.mark.parametrize(("architecture", "key"), [
    ("DeepseekV4ForCausalLM", "o_lora_rank"),  # a low-rank output path no builder models
    ("DoryForCausalLM", "n_input_layers"),  # a layer count beside num_hidden_layers (+43%)
])
def test_a_guessed_architecture_with_an_unread_depth_width_or_expert_count_is_unsupported(
        architecture: str, key: str) -> None:
    for row in (r for r in ZOO + PERTURBED if r["architecture"] == architecture and "params" in r):
        with pytest.raises(ConfigError) as caught:
            analyze(row["config"])
        assert caught.value.key == key


def test_a_narrow_unread_width_stays_a_bounded_guess() -> None:
    # AXK2's rank-16 gated norm is under an eighth of the model's width: approximate, within 1% at the defaults
    row = next(r for r in ZOO if r["architecture"] == "AXK2ForCausalLM" and not r["overrides"])
    a = analyze(row["config"])
    assert a.params.support.level == "approximate"
    assert "gated_norm_rank" in a.params.support.guessed[-1]


def test_no_approximate_estimate_is_off_by_more_than_25_percent_on_either_sweep() -> None:
    for row in (r for r in ZOO + PERTURBED if "params" in r):
        try:
            a = analyze(row["config"])
        except ConfigError:
            continue
        if a.params.support.level == "approximate":
            assert abs(a.params.derived - row["params"]) <= 0.25 * row["params"], (row["architecture"],
                                                                                row["overrides"])


def test_a_model_described_in_unopened_sub_configs_names_one_of_them() -> None:
    # BLT keeps its sizes in encoder/decoder/global/patcher configs: the reason is those parts, not hidden_size
    row = next(r for r in ZOO if r["architecture"] == "BltForCausalLM" and not r["overrides"])
    with pytest.raises(ConfigError) as caught:
        analyze(row["config"])
    assert caught.value.key == "decoder_config"
    assert "hidden_size" in caught.value.problem


def _keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [k for k, v in value.items() for k in (k, *_keys(v))]
    return [k for item in value for k in _keys(item)] if isinstance(value, list) else []


_ROOT = Path(__file__).parents[2]
_CONFIG_KEYS = sorted({k for path in [*(_ROOT / "tests" / "data").rglob("*.json"),
                                      *(_ROOT / "benchmarks" / "data").rglob("*.json")]
                       for k in _keys(json.loads(path.read_bytes()))})
_MATCHERS = ("_STRUCTURAL", "_INERT", "_DEPTH", "_WIDTH", "_NOT_WIDTH")


@pytest.mark.parametrize("name", _MATCHERS)
def test_the_key_words_answer_as_their_regex_on_every_bundled_config_key(name: str) -> None:
    words = getattr(support, name)
    regex = re.compile(words.pattern)
    assert len(_CONFIG_KEYS) > 5000
    differ = [k for k in _CONFIG_KEYS if words.search(k) != bool(regex.search(k))]
    assert differ == []
    assert any(words.search(k) for k in _CONFIG_KEYS) and not all(words.search(k) for k in _CONFIG_KEYS)


# Keys made of the words' own pieces, with the edges a regex treats apart (a final newline, a prefix
# or suffix alone, a word inside another).
_PIECES = st.sampled_from(["_", "\n", "n", "num", "d", "bias", "use", "id", "s", "dim", "layer", "norm", "size",
                           "expert", "rank", "mode", "embedding", "multiplier", "hidden", "dtype", "x", "ü"])


@given(st.sampled_from(_MATCHERS), st.lists(_PIECES, max_size=6).map("".join))
def test_the_key_words_answer_as_their_regex_on_any_key(name: str, key: str) -> None:
    words = getattr(support, name)
    assert words.search(key) == bool(re.search(words.pattern, key))


@pytest.mark.parametrize("pattern", ["a.b", "x?", "", "a||b", "^", "(a)", "ü"])
def test_the_key_words_refuse_what_only_a_regex_could_match(pattern: str) -> None:
    with pytest.raises(ValueError, match="only words"):
        support._Words(pattern)
