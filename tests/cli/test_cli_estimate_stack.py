"""`hubwatch estimate --stack`: the stack's defaults in the JSON, its options, and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def _config(data_dir: Path) -> str:
    return str(data_dir / "configs" / "meta-llama__Llama-3.2-1B-Instruct" / "config.json")


def _qlora(entry: dict[str, Any]) -> dict[str, Any]:
    methods = entry["methods"]
    assert isinstance(methods, (list, dict))
    found = next(m for m in methods if m["method"] == "qlora") if isinstance(methods, list) else methods["qlora"]
    assert isinstance(found, dict)
    return found


def test_stack_defaults_reach_the_json(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, _config(data_dir), "--json", "--stack", "unsloth", "--method", "qlora",
                       "--seq-len", "4096")
    assert code == 0
    (entry,) = json.loads(out)
    settings = entry["settings"]
    assert settings["stack"] == "unsloth" and settings["loss"] == "fused"
    assert settings["grad_checkpointing"] is True and settings["activation_offloading"] is True
    assert _qlora(entry)["host_gb"] > 0
    code, out, _ = run(capsys, _config(data_dir), "--json", "--stack", "unsloth", "--no-grad-checkpointing",
                       "--no-activation-offloading", "--loss", "fp32")
    (entry,) = json.loads(out)
    assert entry["settings"]["grad_checkpointing"] is False and entry["settings"]["loss"] == "fp32"


def test_torchtune_logits_are_smaller_than_hf_at_long_sequences(capsys: pytest.CaptureFixture[str],
                                                               data_dir: Path) -> None:
    logits = {}
    for stack in ("hf", "torchtune"):
        code, out, _ = run(capsys, _config(data_dir), "--json", "--stack", stack, "--method", "qlora",
                           "--seq-len", "8192")
        assert code == 0
        logits[stack] = _qlora(json.loads(out)[0])["terms"]["logits"]
    assert logits["torchtune"] < 0.5 * logits["hf"]


def test_unknown_stack_and_misplaced_options_are_refused(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, _, err = run(capsys, _config(data_dir), "--stack", "deepspeed")
    assert code == 2 and "'hf', 'torchtune', 'unsloth', 'litgpt', 'axolotl'" in err
    code, _, err = run(capsys, _config(data_dir), "--optimizer-in-backward")
    assert code == 2 and "stack=torchtune" in err
    code, _, err = run(capsys, _config(data_dir), "--activation-offloading")
    assert code == 2 and "hf has no activation offloading" in err
    code, out, _ = run(capsys, _config(data_dir), "--json", "--stack", "torchtune", "--method", "full",
                       "--optimizer-in-backward", "--optimizer", "paged-adamw-8bit")
    assert code == 0 and json.loads(out)[0]["settings"]["optimizer_in_backward"] is True
