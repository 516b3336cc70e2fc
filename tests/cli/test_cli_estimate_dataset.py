"""`hubwatch estimate MODEL --dataset …` against the emulator (real HTTP, huggingface_hub): samples per epoch
and estimated tokens per sample from a dataset's metadata, with where each came from; errors in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.cli import main

TINY = "hubsim-test/tiny-llama"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", TINY, *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


@pytest.fixture
def sim(hubsim_factory: Any, datasets_root: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    started = hubsim_factory(root=datasets_root, at=None)
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", started.url)
    return started


def test_dataset_rows_and_estimated_tokens_enter_the_cost(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out, _ = run(capsys, "--dataset", "datasets/stanfordnlp/imdb", "--json")
    assert code == 0
    (entry,) = json.loads(out)
    shown = entry["dataset"]
    assert shown["dataset"] == "datasets/stanfordnlp/imdb" and shown["revision"] == sim.head("datasets/stanfordnlp/imdb")
    assert (shown["config"], shown["split"], shown["rows"], shown["samples"]) == ("plain_text", "train", 25000, 25000)
    assert shown["tokens_per_sample"] == 334 and shown["tokens_per_sample_estimated"] is True
    assert entry["cost"]["samples"] == 25000 and entry["cost"]["tokens"] == 25000 * 334


def test_explicit_samples_override_with_a_note(capsys: pytest.CaptureFixture[str], sim: Any) -> None:
    code, out, _ = run(capsys, "--dataset", "dair-ai/emotion", "--split", "validation", "--samples", "500",
                       "--seq-len", "16", "--json")
    assert code == 0
    (entry,) = json.loads(out)
    assert entry["dataset"]["rows"] == 2000 and entry["dataset"]["samples"] == 500
    assert "overrides the split's 2,000 rows" in entry["dataset"]["samples_from"]
    assert entry["cost"]["tokens"] == 500 * 16  # 27 estimated tokens capped at seq len 16


def test_the_table_names_the_dataset_and_where_numbers_came_from(capsys: pytest.CaptureFixture[str],
                                                                 sim: Any) -> None:
    code, out, _ = run(capsys, "--dataset", "stanfordnlp/imdb@main")
    assert code == 0
    text = " ".join(out.split())
    assert "datasets/stanfordnlp/imdb" in text and "README.md: plain_text/train num_examples" in text
    assert "≈ 334 (estimated)" in text and "what main points at" in text


@pytest.mark.parametrize(("args", "code", "words"), [
    (("--dataset", "nobody/nothing"), 3, "no such dataset"),
    (("--dataset", "stanfordnlp/imdb@nope"), 3, "revision nope not found"),
    (("--dataset", "stanfordnlp/imdb", "--config", "imdb"), 2, "available: plain_text"),
    (("--dataset", "stanfordnlp/imdb", "--split", "validation"), 2, "available: test, train, unsupervised"),
    (("--dataset", "hubsim-test/gated-data"), 2, "states no configs or splits"),
    (("--dataset", "datasets/x"), 2, "not a dataset id"),
])
def test_a_dataset_that_cannot_give_sizes_is_one_line_and_a_fix(capsys: pytest.CaptureFixture[str], sim: Any,
                                                                args: tuple[str, ...], code: int, words: str) -> None:
    got, out, err = run(capsys, *args)
    assert got == code and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2 and words in lines[0] and lines[1].startswith("fix: ")
