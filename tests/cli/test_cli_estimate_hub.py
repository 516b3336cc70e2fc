"""`hubwatch estimate org/name [--revision R]` end to end against the hub emulator (real HTTP, real client)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main

TINY = "hubsim-test/tiny-llama"
V1 = "1" * 40


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def declared_count(weights_json: Path) -> int:
    """The scalar count of every tensor a `weights.json` declares (what the safetensors headers hold)."""
    files = json.loads(weights_json.read_text())
    return sum(math.prod(t["shape"]) for tensors in files.values() for name, t in tensors.items()
               if name != "__metadata__")


@pytest.fixture
def sim(hubsim_factory: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    started = hubsim_factory(root=data_dir / "hubsim", at=None)  # every version: head = v3
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", started.url)
    return started


def test_head_revision_counts_the_checkpoint_from_safetensors_headers(capsys: pytest.CaptureFixture[str], sim: Any,
                                                                      data_dir: Path) -> None:
    code, out, _ = run(capsys, TINY, "--json")
    assert code == 0
    (entry,) = json.loads(out)
    assert entry["source"] == "hub" and entry["model"] == TINY and entry["revision"] == sim.head(TINY)
    # v3 declares a 4.2 GB shard that the emulator never materialises: only range-read headers can count it
    expected = declared_count(data_dir / "hubsim" / "hubsim-test__tiny-llama" / "v3" / "weights.json")
    assert expected > 2_000_000_000
    params = entry["params"]
    assert params["checkpoint"] == expected
    assert params["derived"] == 73_920  # 1 layer, hidden 64, vocab 256, untied head
    assert params["delta_pct"] == pytest.approx(100 * (expected - 73_920) / 73_920, rel=1e-6)
    assert "does not describe" in params["explanation"]


def test_an_older_revision(capsys: pytest.CaptureFixture[str], sim: Any, data_dir: Path) -> None:
    code, out, _ = run(capsys, TINY, "--revision", V1, "--json")
    assert code == 0
    (entry,) = json.loads(out)
    assert entry["revision"] == V1
    assert entry["params"]["checkpoint"] == declared_count(
        data_dir / "hubsim" / "hubsim-test__tiny-llama" / "v1" / "weights.json")
    assert entry["params"]["delta_pct"] < 0 and "lacks" in entry["params"]["explanation"]


def test_table_shows_checkpoint_delta_and_its_explanation(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out, _ = run(capsys, TINY, "--revision", V1)
    assert code == 0
    for text in ("45,120", "73,920", "-38.96 %", "lacks modules", V1, "decoder", "forward pass"):
        assert text in out, text


def test_missing_repo_and_revision_each_get_their_own_entry(capsys: pytest.CaptureFixture[str], sim: Any,
                                                            data_dir: Path) -> None:
    local = str(data_dir / "configs" / "openai-community__gpt2" / "config.json")
    code, out, _ = run(capsys, "nobody/nothing-here", local, "--json")
    assert code == 1
    missing, ok = json.loads(out)
    assert set(missing) == {"target", "error"} and missing["target"] == "nobody/nothing-here"
    assert "nobody/nothing-here" in missing["error"] and "not found" in missing["error"]
    assert "\n" not in missing["error"] and ok["params"]["derived"] == 124_439_808

    code, out, _ = run(capsys, TINY, "--revision", "no-such-branch", "--json")
    (entry,) = json.loads(out)
    assert code == 1 and set(entry) == {"target", "error"}
    assert "no-such-branch" in entry["error"] and "revision" in entry["error"]


def test_missing_repo_in_a_table_is_one_line(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out, err = run(capsys, "nobody/nothing-here")
    assert code == 1
    lines = [line for line in out.splitlines() if "nobody/nothing-here" in line]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in out + err


def test_gated_repo_says_how_to_get_in(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out, _ = run(capsys, "hubsim-test/gated-model", "--json")
    (entry,) = json.loads(out)
    assert code == 1 and "gated" in entry["error"] and "HF_TOKEN" in entry["error"]


def test_hub_targets_pass_tokenizer_and_generation_configs_to_the_lints(capsys: pytest.CaptureFixture[str],
                                                                         hubsim: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", hubsim.url)  # the real histories, each at v1
    code, out, _ = run(capsys, "mattshumer/Reflection-Llama-3.1-70B", "microsoft/phi-1_5", "meta-llama/Llama-2-7b-hf",
                       "--json")
    assert code == 0
    reflection, phi, llama = ({f["rule"]: f for f in e["findings"]} for e in json.loads(out))
    assert "128261" in reflection["vocab-smaller-than-tokenizer"]["message"]  # an added token past vocab_size
    assert "eos-missing-from-generation-config" in phi
    assert "pad-token-missing" not in llama  # v1 names pad <unk> in special_tokens_map.json only


def test_folder_targets_pass_them_too(capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "tiny"
    shutil.copytree(data_dir / "hubsim" / "hubsim-test__tiny-llama" / "v1", folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": {"300": {"content": "<x>"}}}))
    (folder / "generation_config.json").write_text(json.dumps({"temperature": 0.7}))
    code, out, _ = run(capsys, str(folder), "--json")
    (entry,) = json.loads(out)
    assert code == 0 and entry["source"] == "folder"
    assert entry["params"]["checkpoint"] == declared_count(folder / "weights.json")  # weights.json manifest
    rules = {f["rule"] for f in entry["findings"]}
    assert {"vocab-smaller-than-tokenizer", "eos-missing-from-generation-config", "pad-token-missing"} <= rules


def test_without_shard_headers_the_index_total_size_counts(capsys: pytest.CaptureFixture[str], hubsim: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", hubsim.url)  # these histories keep the index, not the shards
    code, out, _ = run(capsys, "Qwen/Qwen-72B", "FlagAlpha/Atom-7B", "--json")
    qwen, atom = json.loads(out)
    assert code == 1
    assert qwen["params"]["checkpoint"] == qwen["params"]["derived"] == 72_287_920_128  # total_size ÷ 2 (bf16)
    assert qwen["params"]["delta_pct"] == 0.0
    assert set(atom) == {"target", "error"} and "FlagAlpha/Atom-7B" in atom["error"]
    assert "has no config.json" in atom["error"] and "--revision" in atom["error"]


def _write_safetensors(path: Path, tensors: dict[str, Any]) -> None:
    """A real safetensors file: header with data offsets, then zero bytes for the data."""
    sizes = {"F32": 4, "BF16": 2, "F16": 2}
    header: dict[str, Any] = {}
    offset = 0
    for name, t in tensors.items():
        if name == "__metadata__":
            header[name] = t
            continue
        n = math.prod(t["shape"]) * sizes[t["dtype"]]
        header[name] = {"dtype": t["dtype"], "shape": t["shape"], "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + bytes(offset))


def test_a_local_model_folder_counts_its_safetensors_headers(capsys: pytest.CaptureFixture[str], data_dir: Path,
                                                             tmp_path: Path) -> None:
    source = data_dir / "hubsim" / "hubsim-test__tiny-llama" / "v1"
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "config.json").write_bytes((source / "config.json").read_bytes())
    weights = json.loads((source / "weights.json").read_text())
    _write_safetensors(folder / "model.safetensors", weights["model.safetensors"])
    code, out, _ = run(capsys, str(folder), "--json")
    (entry,) = json.loads(out)
    assert code == 0 and entry["params"]["checkpoint"] == declared_count(source / "weights.json")

    (folder / "model.safetensors").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 9\n")
    code, out, _ = run(capsys, str(folder), "--json")  # cloned without LFS: said, not a crash
    (entry,) = json.loads(out)
    assert code == 2 and "model.safetensors" in entry["error"] and "LFS" in entry["error"]  # bad input
    assert entry["fix"].startswith("fetch the shards (`git lfs pull`)")
