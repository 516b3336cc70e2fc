"""`hubwatch estimate` without --json: the analysis tables, unknown architectures, and bad input on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubwatch.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def config(data_dir: Path, name: str) -> str:
    return str(data_dir / "configs" / name / "config.json")


def test_side_by_side_analysis(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    code, out, _ = run(capsys, config(data_dir, "openai__gpt-oss-20b"), config(data_dir, "tiiuae__falcon-7b"),
                       str(data_dir / "configs" / "google__medgemma-27b-it"))
    assert code == 0
    for title in ("Model", "Parameters by component", "Memory (GB, peak allocated)", "Findings"):
        assert title in out
    for text in ("openai__gpt-oss-20b", "tiiuae__falcon-7b", "google__medgemma-27b-it",  # column headings
                 "decoder", "composite", "yes (auto_map)",  # family, custom code
                 "20,914,757,184", "active per token", "4,187,440,704",  # MoE total and active
                 "experts", "router", "vision tower", "projector",  # components
                 "custom-code-required", "trust_remote_code", "quantization-config",  # findings: rule, message
                 "review the"):  # and fix
        assert text in out, text
    assert "forward pass" in out and "ok" in out


def test_forward_pass_failure_is_named(capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path) -> None:
    cfg = json.loads(Path(config(data_dir, "meta-llama__Llama-3.2-1B-Instruct")).read_text())
    cfg["num_key_value_heads"] = 3  # does not divide 32 heads
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, _ = run(capsys, str(path))
    assert code == 0  # the estimate still runs; the model would not
    assert "fails:" in out and "kv-heads-divide-heads" in out and "error" in out


def test_default_length_follows_a_short_context(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    gpt2 = config(data_dir, "openai-community__gpt2")  # 1024 positions: the default 2048 is capped, not failed
    _, out, _ = run(capsys, gpt2, "--json")
    (entry,) = json.loads(out)
    assert entry["structure"]["forward_pass_ok"] and entry["structure"]["input_shape"] == [1024]
    _, out, _ = run(capsys, str(data_dir / "configs" / "openai__clip-vit-base-patch32"), "--json")
    (clip,) = json.loads(out)  # a dual tower reads at most its text tower's 77 tokens
    assert clip["structure"]["input_shape"] == [77] and clip["settings"]["seq_len"] == 77
    _, out, _ = run(capsys, gpt2, "--json", "--seq-len", "4096")  # asked for: the failure is real
    (entry,) = json.loads(out)
    assert not entry["structure"]["forward_pass_ok"] and "1024" in entry["structure"]["failures"][0]


def test_nodes_flag_prints_the_layer_graph(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    gpt2 = config(data_dir, "openai-community__gpt2")
    _, plain, _ = run(capsys, gpt2)
    _, with_nodes, _ = run(capsys, gpt2, "--nodes")
    assert "Layer graph" not in plain and "model.layers.11.mlp" not in plain
    assert "Layer graph" in with_nodes and "model.layers.11.mlp" in with_nodes and "1024 × 768" in with_nodes


def test_unknown_architecture_gets_a_generic_estimate_and_says_so(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    cfg = {"architectures": ["ZorblaxForCausalLM"], "model_type": "zorblax", "hidden_size": 1024,
           "num_hidden_layers": 12, "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 32000}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, _ = run(capsys, str(path), "--json")
    (entry,) = json.loads(out)
    assert code == 0
    assert any("unknown architecture zorblax" in note and "generic" in note for note in entry["notes"])
    # embeddings + 12 × (4 h² attention + 2 h·ffn plain MLP) + norms + untied head: a real, positive estimate
    h, f, v = 1024, 4096, 32000
    assert entry["params"]["derived"] >= v * h + 12 * (4 * h * h + 2 * h * f)
    code, out, _ = run(capsys, str(path))
    assert "unknown architecture zorblax" in out and "generic estimate: unknown architecture" in out


BASE = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "intermediate_size": 128, "vocab_size": 100}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{not json", "not JSON (line 1, column 2: Expecting property name enclosed in double quotes)"),
        ("[1, 2]", "a JSON array, not a config object"),
        ("", "empty file, not JSON"),
        (json.dumps({k: v for k, v in BASE.items() if k != "hidden_size"}), "hidden_size: missing"),
        (json.dumps({k: v for k, v in BASE.items() if k != "num_hidden_layers"}), "num_hidden_layers: missing"),
        (json.dumps({k: v for k, v in BASE.items() if k != "vocab_size"}), "vocab_size: missing"),
        (json.dumps({**BASE, "num_hidden_layers": 10**12}), "num_hidden_layers: 1000000000000 is beyond"),
        (json.dumps({**BASE, "hidden_size": -64}), "hidden_size: must be at least 1"),
        (json.dumps({**BASE, "vocab_size": -5}), "vocab_size"),
        (json.dumps({**BASE, "num_attention_heads": "4"}), "num_attention_heads: expected a whole number"),
        (json.dumps({**BASE, "intermediate_size": 1e300}), "intermediate_size"),
        (json.dumps({**BASE, "hidden_size": 2**20, "intermediate_size": 2**22, "vocab_size": 10**7}), None),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply to be a config"),
    ],
)
def test_bad_input_is_one_line_naming_the_key(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                               named: str | None) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    code, out, err = run(capsys, str(path))
    assert "Traceback" not in out + err
    if named is None:  # huge but finite: estimated, quickly, without overflow
        assert code == 0 and "Model" in out
        return
    no_config = "JSON" in named or "nested" in named  # the file is no config: bad input, with a fix
    assert code == (2 if no_config else 1)
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == (2 if no_config else 1) and lines[0].startswith("error:") and named in lines[0], out
    assert not no_config or lines[1].startswith("fix: ")
    code, out, _ = run(capsys, str(path), "--json")
    (entry,) = json.loads(out)
    assert code == (2 if no_config else 1) and set(entry) <= {"target", "error", "params", "fix", "support"}
    assert named in entry["error"] and ("fix" in entry) is no_config
    if "params" in entry:  # a config the estimator cannot read: params.support names the key
        support = entry["params"]["support"]
        assert support["level"] == "unsupported" and support["key"] and support["key"] in entry["error"]
        words = entry["support"]  # the same in words, the key named
        assert words["level"] == "unsupported" and words["text"].startswith("unsupported — ")
        assert support["key"] in words["text"] and words["text"].endswith(": no number")


def test_a_weights_file_given_by_mistake_is_refused_unread(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    with path.open("wb") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: 200 MB that would take long to decode as text
    code, out, err = run(capsys, str(path))
    assert code == 2 and "too large to be a JSON config" in out and "Traceback" not in out + err
    assert out.splitlines() == [f"error: {path}: 210 MB, too large to be a JSON config (a weights file?)",
                                "fix: pass the model's config.json, or the folder that holds it"]
