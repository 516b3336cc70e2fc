"""Memory terms the published long-context runs call for (issue 35), each checked where it can fail.

- PEFT's k-bit preparation (stack hf/axolotl QLoRA): non-quantised parameters in fp32 and so an fp32
  residual stream; torchtune/Unsloth/LitGPT keep them in bf16.
- `loss="fp32-shifted"`: transformers' loss up to 4.49 takes a shifted fp32 copy of the logits.
- Runs Unsloth's README measured at the card's limit under Hugging Face + FA2 must not be "fits".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubwatch.estimator import analyze
from hubwatch.estimator.cards import Card, fits
from hubwatch.estimator.memory.peak import estimate_memory, kbit_upcasts
from hubwatch.estimator.memory.activations import logits_bytes_per_token
from hubwatch.estimator.memory.kv import block_linear_params
from hubwatch.estimator.memory.settings import MemorySettings
from hubwatch.estimator.params.spec import ModelSpec

CONFIGS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "configs"


def _llama3_8b() -> ModelSpec:
    return analyze(json.loads((CONFIGS / "meta-llama__Meta-Llama-3-8B" / "config.json").read_text())).spec


def _hf_long_context(seq_len: int) -> MemorySettings:
    # Unsloth's README table: Llama 3.1 8B, 4-bit QLoRA r=32 on all linear layers, batch 1, Hugging
    # Face + FA2 (PEFT's fp32 adapters under bf16 autocast, 8-bit AdamW, checkpointing on), 2024.
    return MemorySettings(method="qlora", batch=1, seq_len=seq_len, lora_rank=32, precision="amp-bf16",
                          optimizer="adamw-8bit", grad_checkpointing=True, stack="hf", loss="fp32-shifted")


@pytest.mark.parametrize(("seq_len", "card_gb"), [(932, 12), (2551, 16), (5789, 24), (12264, 40), (15502, 48),
                                                  (28454, 80)])
def test_hf_qlora_at_its_measured_limit_is_not_fits(seq_len: int, card_gb: float) -> None:
    est = estimate_memory(_llama3_8b(), _hf_long_context(seq_len))
    assert not fits(est, Card("card", card_gb, 0.0, 0.0)), f"{seq_len} tokens on {card_gb} GB ran at the limit"
    # ...and not by a wild margin: the run did fit the card's memory before the allocator's reserve.
    assert est.peak_bytes <= card_gb * 1e9


def test_kbit_preparation_upcasts_what_is_not_quantised() -> None:
    spec = _llama3_8b()
    hf = _hf_long_context(2048)
    tt = hf.with_(stack="torchtune", loss="chunked-fp32", precision="bf16")
    assert kbit_upcasts(hf) and not kbit_upcasts(tt) and not kbit_upcasts(hf.with_(stack="unsloth"))
    assert not kbit_upcasts(hf.with_(stack="hf", implementation="unsloth"))
    rest = spec.total_params - block_linear_params(spec)
    with_upcast = estimate_memory(spec, hf)
    # Unsloth's model code under the same settings skips the preparation: 2 bytes less per parameter
    # of the embedding, the untied head and the norms, the adapters and NF4 blocks the same.
    without = estimate_memory(spec, hf.with_(implementation="unsloth"))
    assert with_upcast.term("weights") - without.term("weights") == pytest.approx(2 * rest)
    assert estimate_memory(spec, hf.with_(stack="axolotl")).term("weights") == with_upcast.term("weights")
    # The fp32 residual stream: each checkpointed layer input 2 bytes wider per channel.
    lora = estimate_memory(spec, hf.with_(method="lora"))
    stack = spec.text_stack
    widened = 2.0 * stack.hidden_size * stack.num_layers * 2048
    assert with_upcast.term("activations") - lora.term("activations") == pytest.approx(widened, rel=0.02)


def test_shifted_fp32_loss_keeps_a_second_fp32_copy() -> None:
    spec = _llama3_8b()
    v = spec.vocab_size
    peak, kept = logits_bytes_per_token(spec, compute_bytes=2, loss="fp32-shifted")
    assert peak == 14 * v and kept == 4 * v  # bf16 logits + fp32 copy + shifted copy + log-softmax
    current, _ = logits_bytes_per_token(spec, compute_bytes=2, loss="fp32")
    assert current == 12 * v
    settings = _hf_long_context(4096)
    assert estimate_memory(spec, settings).term("logits") > estimate_memory(spec, settings.with_(loss="fp32")).term("logits")
