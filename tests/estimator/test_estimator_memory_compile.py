"""torch.compile's loss (`compile=True`, torchtune `compile: True`): the compiled cross-entropy keeps
its input and the log-sum-exp, not a log-softmax — the term torchtune's published peaks call for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubwatch.estimator import analyze
from hubwatch.estimator.memory.peak import estimate_memory
from hubwatch.estimator.memory.activations import logits_bytes_per_token
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.params.spec import ModelSpec

CONFIGS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "configs"


def _llama32_3b() -> ModelSpec:
    return analyze(json.loads((CONFIGS / "meta-llama__Llama-3.2-3B" / "config.json").read_text())).spec


def test_compiled_chunked_loss_keeps_compute_dtype_chunks_only() -> None:
    spec = _llama32_3b()
    v = spec.vocab_size
    eager = logits_bytes_per_token(spec, compute_bytes=2, loss="chunked-fp32")
    compiled = logits_bytes_per_token(spec, compute_bytes=2, loss="chunked-fp32", compiled=True)
    assert compiled[0] == pytest.approx(2 * v * 9 / 8) and compiled[1] == pytest.approx(2 * v)
    assert compiled[0] < eager[0] and compiled[1] < eager[1]
    # The non-chunked loss reads the fp32 logits the model made: fp32 copy and its gradient.
    assert logits_bytes_per_token(spec, compute_bytes=2, loss="fp32", compiled=True) == (8 * v, 4 * v)
    # Paths that do not upcast are left alone.
    for loss in ("chunked", "fused"):
        assert logits_bytes_per_token(spec, compute_bytes=2, loss=loss, compiled=True) == \
            logits_bytes_per_token(spec, compute_bytes=2, loss=loss)


def test_torchtune_compile_row_of_the_readme() -> None:
    # torchtune README 'Optimization flags', Llama 3.2 3B full fine-tune, batch 2, packed 4096, AdamW,
    # no checkpointing: 60.0 GiB eager, 51.0 GiB with compile (64.4 / 54.8 GB).
    base = MemorySettings(method="full", batch=2, seq_len=4096, precision="bf16", optimizer="adamw",
                          stack="torchtune", loss="fp32", grad_checkpointing=False)
    eager = estimate_memory(_llama32_3b(), base).peak_bytes / 1e9
    compiled = estimate_memory(_llama32_3b(), base.with_(compile=True)).peak_bytes / 1e9
    assert eager == pytest.approx(64.42, rel=0.2) and compiled == pytest.approx(54.76, rel=0.2)
    assert compiled < eager
    with pytest.raises(MemorySettingsError, match="compile"):
        MemorySettings(compile="yes")  # type: ignore[arg-type]
