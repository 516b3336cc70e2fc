"""The per-revision estimate (JSON) and the summary of how memory moved between two revisions."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings as hsettings, strategies as st
from memory_spec_builders import llama_like

from hubwatch.estimator import Estimate, analyze
from hubwatch.estimator.memory.report import _cannot_beat, estimate_revision, memory_delta_summary

KEYS = {"full_finetune", "lora", "qlora", "serve_weights", "kv_cache"}


def test_estimate_revision_from_a_config_is_json_and_complete(data_dir: Path) -> None:
    config = json.loads((data_dir / "configs" / "meta-llama__Llama-3.2-1B-Instruct" / "config.json").read_text())
    result = estimate_revision(config).memory_json()
    assert json.loads(json.dumps(result)) == result
    assert set(result["memory_gb"]) == KEYS
    assert result["settings"]["seq_len"] == 2048 and result["settings"]["lora_rank"] == 16
    names = [row["name"] for row in result["cards"]]
    assert names[:3] == ["T4", "L4", "A10G"] and "MI300X" in names
    for row in result["cards"]:
        assert {"full_finetune_batch", "lora_batch", "qlora_batch", "serve_batch"} <= set(row)
    # The same from an Analysis and from its spec.
    assert estimate_revision(analyze(config)).memory_json() == result == estimate_revision(analyze(config).spec).memory_json()
    assert estimate_revision(analyze(config)) == estimate_revision(config)
    selected = result["selected"]
    assert abs(sum(selected["terms"].values()) - selected["peak_gb"]) < 0.01


def test_delta_summary_says_what_moved_and_which_card_no_longer_fits() -> None:
    old_estimate = estimate_revision(llama_like(layers=32, hidden=4096, inter=11008, vocab=32000))
    new_estimate = estimate_revision(llama_like(layers=32, hidden=4096, inter=14336, vocab=128256, kv_heads=8))
    old, new = old_estimate.to_json(), new_estimate.to_json()
    text = memory_delta_summary(old_estimate, new_estimate)
    assert text is not None
    lines = text.splitlines()
    lora = next(line for line in lines if line.startswith("LoRA r=16 at 2048 tokens: "))
    assert f"{old['memory_gb']['lora']:.1f} → {new['memory_gb']['lora']:.1f} GB" in lora
    labels = {"full_finetune_batch": "Full fine-tune", "lora_batch": "LoRA", "qlora_batch": "QLoRA",
              "serve_batch": "Serving weights"}
    found = 0
    for key, label in labels.items():
        lost = [f"{row['name']} {row['memory_gb']:g} GB" for before, row in zip(old["cards"], new["cards"])
                if before[key] >= 1 and row[key] == 0]
        if not lost:
            continue
        found += 1
        line = next(line for line in lines if line.startswith(label + " "))
        assert line.endswith(f"no longer fits {', '.join(lost)}")
        back = memory_delta_summary(new_estimate, old_estimate)
        assert back is not None and f"now fits {', '.join(lost)}" in back
    assert found  # the bigger vocabulary and MLP push some method off some card


def test_delta_summary_is_none_when_nothing_moved() -> None:
    a = estimate_revision(llama_like(layers=8))
    assert memory_delta_summary(a, a) is None
    b = estimate_revision(llama_like(layers=8, vocab=32001))  # far below 5 %
    assert memory_delta_summary(a, b) is None
    assert memory_delta_summary(a, b, threshold_pct=0) is not None
    assert memory_delta_summary(Estimate.failed("1.1.0", "bad config"), a) is None


def test_estimate_revision_reports_a_method_the_model_cannot_run() -> None:
    from hubwatch.estimator.memory.settings import MemorySettings

    result = estimate_revision(llama_like(layers=2), MemorySettings(lora_targets=("wpe",))).to_json()
    assert "wpe matches no linear layer" in result["selected"]["error"]
    assert result["memory_gb"]["lora"] is None and result["memory_gb"]["full_finetune"] > 0
    assert all(row["lora_batch"] is None for row in result["cards"]) and result["cost"] is None
    assert MemorySettings.from_json({"lora_targets": "q_proj, v_proj"}).lora_targets == ("q_proj", "v_proj")


def _rank(usd: float | None, hours: float) -> tuple[bool, float, float]:
    """How the cost ranks a run: priced first, then USD to the cent, then hours to three decimals."""
    usd_rounded = None if usd is None else round(usd, 2)
    return (usd_rounded is None, usd_rounded or 0.0, round(hours, 3))


_FIGURE = st.floats(0.0, 1e15) | st.floats(0.0, 0.1) | st.sampled_from([0.004, 0.005, 0.0049999, 1.005, 2.675, 1e13])


@hsettings(max_examples=2000, deadline=None)
@given(st.none() | _FIGURE, _FIGURE, st.none() | _FIGURE, _FIGURE, st.floats(0.0, 0.03), st.floats(0.0, 0.003))
def test_a_run_skipped_by_the_cost_would_not_have_ranked_first(usd: float | None, hours: float,
                                                                best_usd: float | None, best_hours: float,
                                                                more_usd: float, more_hours: float) -> None:
    for u, h in ((usd, hours), (None if best_usd is None else best_usd + more_usd, best_hours + more_hours)):
        if _cannot_beat(u, h, best_usd, best_hours):
            assert not _rank(u, h) < _rank(best_usd, best_hours)
