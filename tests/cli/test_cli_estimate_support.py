"""`hubwatch estimate`: the support level with its reason next to the parameter number, and a "does not fit"
that names the term that breaks the card, in the table and in --json (`support`, `verdicts`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", *args])
    return int(exit_info.value.code or 0), capsys.readouterr().out


def _config(data_dir: Path) -> str:
    return str(data_dir / "configs" / "meta-llama__Llama-3.2-1B-Instruct" / "config.json")


def _odd(data_dir: Path, tmp_path: Path, model_type: str) -> str:
    cfg = json.loads(Path(_config(data_dir)).read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**cfg, "model_type": model_type, "architectures": ["OddForCausalLM"]}))
    return str(path)


def _rows(out: str, label: str) -> list[str]:
    """The table row starting with `label` and its continuation lines (their first cell empty), cells joined."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0].startswith(label):
            block = [" ".join(cells[1:])]
            for more in lines[i + 1:]:
                rest = [c.strip() for c in more.split("│")[1:-1]]
                if not rest or rest[0]:
                    break
                block.append(" ".join(rest[1:]))
            return block
    raise AssertionError(f"no row {label!r} in\n{out}")


def test_the_level_and_its_reason_sit_next_to_the_number(capsys: pytest.CaptureFixture[str], data_dir: Path,
                                                         tmp_path: Path) -> None:
    code, out = run(capsys, _config(data_dir))
    assert code == 0
    number, words = _rows(out, "parameters (derived)")[:2]
    assert number == "1,235,814,400 (1.24 B)"
    assert words == "modelled — every mechanism the config describes is read; expected within 1%"
    code, out = run(capsys, _odd(data_dir, tmp_path, "oddformer"))
    text = " ".join(_rows(out, "parameters (derived)")[1:])
    assert text.startswith("approximate — ") and "oddformer" in text and text.endswith("expected within 25%")


def test_json_has_support_in_words(capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path) -> None:
    _, out = run(capsys, _config(data_dir), _odd(data_dir, tmp_path, "oddformer"), "--json")
    modelled, odd = json.loads(out)
    assert modelled["support"] == {"level": "modelled", "reasons": [], "bound": "expected within 1%",
                                   "text": "modelled — every mechanism the config describes is read; "
                                           "expected within 1%"}
    assert odd["support"]["level"] == odd["params"]["support"]["level"] == "approximate"
    assert odd["support"]["reasons"] == odd["params"]["support"]["guessed"] and odd["support"]["reasons"]
    assert odd["support"]["text"] == "approximate — " + "; ".join(odd["support"]["reasons"]) + "; expected within 25%"


def _verdicts(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["card"]: v for v in entry["verdicts"]}


def test_does_not_fit_names_the_term_in_json_and_table(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    args = (_config(data_dir), "--method", "full", "--batch", "4")
    _, out = run(capsys, *args, "--json")
    (entry,) = json.loads(out)
    verdicts = _verdicts(entry)
    assert [v["card"] for v in entry["verdicts"]] == [c["name"] for c in entry["cards"]]
    terms = entry["methods"]["full"]["terms"]
    required = entry["methods"]["full"]["required_gb"]
    for card in entry["cards"]:
        v = verdicts[card["name"]]
        assert v["method"] == "full" and v["batch"] == 4
        assert v["fits"] is (required <= card["memory_gb"])
        assert v["budget_gb"] == pytest.approx((card["memory_gb"] - 0.5) / 1.15, abs=1e-3)
    t4 = verdicts["T4"]  # activations alone pass a T4's budget
    assert not t4["fits"] and t4["term"] == max(terms, key=terms.get) and t4["crossing"] is None
    assert t4["line"] == f"does not fit on T4 (16 GB): activations is {terms['activations']:.1f} GB of a 13.5 GB budget"
    l4 = verdicts["L4"]  # the largest term fits an L4's budget; the next one added passes it
    assert not l4["fits"] and l4["term"] == "activations" and l4["crossing"] == "logits"
    assert l4["crossing_gb"] == terms["logits"] and terms["activations"] < l4["budget_gb"]
    assert verdicts["H100-80GB"]["fits"] and verdicts["H100-80GB"]["line"].startswith("fits on H100-80GB (80 GB): needs ")
    _, table = run(capsys, *args)
    t4_rows = _rows(table, "T4 16 GB")
    assert t4_rows[0] == "0 / 1 / 1 / 63"
    assert " ".join(t4_rows[1:]) == ("full at batch 4 does not fit: activations is "
                                     f"{terms['activations']:.1f} GB of a 13.5 GB budget")
    assert len(_rows(table, "H100-80GB 80 GB")) == 1  # it fits: nothing said under it


def test_serving_is_judged_too(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    _, out = run(capsys, _config(data_dir), "--method", "serve", "--json")
    (entry,) = json.loads(out)
    assert entry["verdicts"] and all(v["method"] == "serve" for v in entry["verdicts"])
