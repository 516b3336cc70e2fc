"""`hubwatch estimate`: config paths, folders with a manifest, hub targets, several targets, JSON shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main

CARD_KEYS = {"name", "memory_gb", "full_finetune_batch", "lora_batch", "qlora_batch", "serve_batch"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def config_path(data_dir: Path, name: str) -> str:
    return str(data_dir / "configs" / name / "config.json")


def test_config_path_prints_a_table(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, config_path(data_dir, "meta-llama__Llama-3.2-1B-Instruct"))
    assert code == 0
    for text in ("LoRA r=16", "QLoRA r=16", "serve weights", "KV cache", "A10G 24 GB", "MI300X 192 GB", "cost"):
        assert text in out


def test_json_shape(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, config_path(data_dir, "microsoft__phi-2"), "--json", "--method", "full",
                       "--precision", "bf16", "--batch", "2", "--seq-len", "512", "--grad-checkpointing")
    assert code == 0
    (entry,) = json.loads(out)
    assert entry["target"].endswith("config.json")
    assert entry["params"]["derived"] == 2_779_683_840  # from the analysis (part 1)
    assert set(entry["memory_gb"]) == {"full_finetune", "lora", "qlora", "serve_weights", "kv_cache"}
    selected = entry["selected"]
    assert selected["method"] == "full" and selected["batch"] == 2 and selected["seq_len"] == 512
    assert selected["peak_gb"] == entry["memory_gb"]["full_finetune"]
    assert abs(sum(selected["terms"].values()) - selected["peak_gb"]) < 0.01
    assert selected["required_gb"] > selected["peak_gb"]  # headroom only in the fit figure
    assert [c["name"] for c in entry["cards"]][0] == "T4" and all(CARD_KEYS <= set(c) for c in entry["cards"])
    assert entry["cost"]["hours"] > 0 and entry["cost"]["method"] == "full"
    assert entry["assumptions"] and entry["settings"]["grad_checkpointing"] is True


def test_folder_with_index_and_several_targets_one_bad(capsys: pytest.CaptureFixture[str], data_dir: Path,
                                                       tmp_path: Path) -> None:
    folder = tmp_path / "llama"
    folder.mkdir()
    shutil.copy(config_path(data_dir, "meta-llama__Llama-2-7b-hf"), folder / "config.json")
    index = {"metadata": {"total_size": 2 * 6_738_415_616},
             "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                            "lm_head.weight": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, _ = run(capsys, str(folder), str(bad), config_path(data_dir, "openai-community__gpt2"), "--json")
    assert code == 2  # one target is no config (bad input); the others are still there, in order
    entries: list[dict[str, Any]] = json.loads(out)
    assert [e["target"] for e in entries] == [str(folder), str(bad), config_path(data_dir, "openai-community__gpt2")]
    assert entries[0]["source"] == "folder" and entries[0]["params"]["checkpoint"] == 6_738_415_616
    assert set(entries[1]) == {"target", "error", "fix"}
    assert entries[1]["error"] == f"{bad}: not JSON (line 1, column 2: Expecting property name enclosed in double quotes)"
    assert entries[2]["memory_gb"]["lora"] > 0


def test_side_by_side_table_reports_the_bad_target(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, config_path(data_dir, "openai-community__gpt2"), "missing/config.json",
                       config_path(data_dir, "openai-community__gpt2-medium"), "--method", "serve")
    assert code == 2
    assert "0.12 B" in out and "0.35 B" in out  # GPT-2 and GPT-2 medium side by side
    assert "error: missing/config.json: no such file\nfix: check the path" in out


def test_lora_targets_map_across_families_and_unknown_ones_fail(capsys: pytest.CaptureFixture[str],
                                                                  data_dir: Path) -> None:
    gpt2, llama = config_path(data_dir, "openai-community__gpt2"), config_path(data_dir, "meta-llama__Llama-3.2-1B-Instruct")
    code, out, _ = run(capsys, gpt2, llama, "--lora-targets", "c_fc", "--json")
    entries = json.loads(out)
    assert code == 0
    assert entries[0]["selected"]["trainable_params"] == 12 * 16 * (768 + 3072)  # GPT-2's c_fc
    assert entries[1]["selected"]["trainable_params"] == 16 * 16 * (2048 + 8192)  # Llama's up_proj
    code, out, _ = run(capsys, gpt2, llama, "--lora-targets", "wpe", "--json")
    assert code == 1
    assert all("wpe matches no linear layer" in e["error"] for e in json.loads(out))


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("--lora-rank", "0"), "--lora-rank"),
        (("--batch", "-1"), "--batch"),
        (("--method", "dpo"), "--method"),
        (("--precision", "fp8"), "--precision"),
        (("--cards", "T4,V100"), "unknown card 'V100'"),
        (("--cost-card", "V100"), "unknown card 'V100'"),
        (("--price", "T4"), "NAME=USD_PER_HOUR"),
        (("--lora-targets", ","), "lora_targets"),
    ],
)
def test_bad_settings_are_usage_errors(capsys: pytest.CaptureFixture[str], data_dir: Path, args: tuple[str, ...],
                                       text: str) -> None:
    code, out, err = run(capsys, config_path(data_dir, "openai-community__gpt2"), *args)
    assert code == 2
    assert text in err and out == ""


def test_hub_target_through_the_emulator(capsys: pytest.CaptureFixture[str], hubsim: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", hubsim.url)
    code, out, _ = run(capsys, "meta-llama/Llama-2-7b-hf", "nobody/nothing", "--json", "--cards", "A100-80GB,H200")
    entries = json.loads(out)
    assert code == 1
    assert entries[0]["source"] == "hub" and len(entries[0]["revision"]) == 40
    assert [c["name"] for c in entries[0]["cards"]] == ["A100-80GB", "H200"]
    assert entries[0]["memory_gb"]["serve_weights"] == pytest.approx(13.477, abs=0.01)
    assert entries[1]["target"] == "nobody/nothing" and "error" in entries[1]


def test_recipe_options_reach_the_estimate(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    phi2 = config_path(data_dir, "microsoft__phi-2")
    _, plain, _ = run(capsys, phi2, "--json", "--method", "full", "--precision", "bf16")
    _, sharded, _ = run(capsys, phi2, "--json", "--method", "full", "--precision", "bf16", "--shards", "4")
    base, split = json.loads(plain)[0]["selected"], json.loads(sharded)[0]["selected"]
    assert split["terms"]["optimizer_states"] == pytest.approx(base["terms"]["optimizer_states"] / 4, rel=1e-3)
    _, dropout, _ = run(capsys, phi2, "--json", "--lora-dropout", "0.05")
    _, litgpt, _ = run(capsys, phi2, "--json", "--implementation", "litgpt", "--loss", "chunked")
    lora = json.loads(plain)[0]["memory_gb"]["lora"]
    assert json.loads(dropout)[0]["memory_gb"]["lora"] > lora
    assert json.loads(litgpt)[0]["settings"]["implementation"] == "litgpt"
