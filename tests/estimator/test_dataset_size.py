"""Samples per epoch and estimated tokens per sample from a dataset's metadata (estimator/dataset_size.py),
and how they enter the run's cost."""

from __future__ import annotations

import pytest
from memory_spec_builders import llama_like

from hubwatch.estimator.cost import RunShape, forward_flops_per_token, run_flops
from hubwatch.estimator.dataset_size import (
    BYTES_PER_TOKEN, ConfigSize, DatasetSizeError, DatasetSummary, SplitSize, dataset_run,
)
from hubwatch.estimator.estimate_parts import Cost
from hubwatch.estimator.memory.report import memory_report
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError

SHA = "a" * 40
TEXT = (("text", "string"), ("label", "class_label"))
# IMDB's plain_text config as its card states it (tests/data/datasets/stanfordnlp__imdb/v2).
IMDB = DatasetSummary("stanfordnlp/imdb", SHA, {"plain_text": ConfigSize("plain_text", {
    "test": SplitSize(25000, 32650697), "train": SplitSize(25000, 33432835),
    "unsupervised": SplitSize(50000, 67106814)}, TEXT)}, default=None, source="README.md")


def test_samples_are_the_split_rows_and_tokens_an_estimate_from_bytes_per_row() -> None:
    run = dataset_run(IMDB)
    assert (run.config, run.split, run.samples) == ("plain_text", "train", 25000)
    assert run.bytes_per_row == pytest.approx(33432835 / 25000)
    assert run.tokens_per_sample == round(33432835 / 25000 / BYTES_PER_TOKEN) == 334
    assert run.tokens_from.startswith("estimated: 1,337 bytes per row")
    assert "README.md" in run.samples_from and "plain_text/train num_examples" in run.samples_from
    shown = run.to_json()
    assert shown["tokens_per_sample_estimated"] is True and shown["rows"] == 25000
    assert dataset_run(IMDB, "plain_text", "unsupervised").samples == 50000


def test_a_missing_config_or_split_is_named_with_what_there_is() -> None:
    with pytest.raises(DatasetSizeError) as missing:
        dataset_run(IMDB, "imdb")
    assert missing.value.field == "config" and "available: plain_text" in str(missing.value)
    with pytest.raises(DatasetSizeError) as split:
        dataset_run(IMDB, split="validation")
    assert split.value.field == "split" and split.value.available == ("test", "train", "unsupervised")
    assert "no split 'validation'" in str(split.value)


def test_several_configs_take_the_default_else_ask_for_one() -> None:
    two = {n: ConfigSize(n, {"train": SplitSize(10 * i, 400 * i)}, TEXT) for i, n in enumerate(("a", "b"), start=1)}
    assert dataset_run(DatasetSummary("o/n", SHA, two, default="b")).samples == 20
    with pytest.raises(DatasetSizeError, match=r"2 configs and no default.*available: a, b"):
        dataset_run(DatasetSummary("o/n", SHA, two))


def test_metadata_without_sizes_is_an_error_not_a_guess() -> None:
    with pytest.raises(DatasetSizeError, match="states no configs or splits") as none:
        dataset_run(DatasetSummary("o/n", SHA, {}))
    assert none.value.field == "dataset"
    with pytest.raises(DatasetSizeError, match="states no splits"):
        dataset_run(DatasetSummary("o/n", SHA, {"default": ConfigSize("default")}))
    with pytest.raises(DatasetSizeError, match="states no rows"):
        dataset_run(DatasetSummary("o/n", SHA, {"default": ConfigSize("default", {"train": SplitSize(None, 10)})}))


@pytest.mark.parametrize(("columns", "why"), [
    ((("img", "image"), ("label", "class_label")), "column img holds media"),
    ((("clip", "list[audio]"), ("text", "string")), "column clip holds media"),
    ((("x", "float32"), ("y", "int64")), "no column holds text"),
    (None, "names no columns"),
])
def test_no_token_estimate_where_the_bytes_are_not_text(columns: tuple[tuple[str, str], ...] | None, why: str) -> None:
    summary = DatasetSummary("o/n", SHA, {"default": ConfigSize("default", {"train": SplitSize(100, 40_000)}, columns)})
    run = dataset_run(summary)
    assert run.samples == 100 and run.tokens_per_sample is None and why in run.tokens_from
    named = DatasetSummary("o/n", SHA, {"default": ConfigSize("default", {"train": SplitSize(100, 40_000)},
                                                              (("meta", "struct{image: string}"),))})
    assert dataset_run(named).tokens_per_sample == 100  # a field named image is not an image


def test_tokens_per_sample_enter_the_cost_capped_at_the_sequence_length() -> None:
    spec = llama_like(layers=4, hidden=512, inter=1024, heads=8, kv_heads=8, vocab=1000)
    full = RunShape(samples=1000)
    short = RunShape(samples=1000, tokens_per_sample=300)
    tokens, flops = run_flops(spec, "lora", seq_len=2048, grad_checkpointing=False, run=short)
    assert tokens == 1000 * 300
    assert flops == 2.0 * forward_flops_per_token(spec, 300) * tokens  # attention over the sample's own tokens
    assert run_flops(spec, "lora", seq_len=2048, grad_checkpointing=False, run=full)[0] == 1000 * 2048
    long = RunShape(samples=1000, tokens_per_sample=5000)
    assert run_flops(spec, "lora", seq_len=2048, grad_checkpointing=False, run=long)[0] == 1000 * 2048
    with pytest.raises(MemorySettingsError, match="tokens_per_sample"):
        RunShape(tokens_per_sample=0)


def test_the_cost_says_its_tokens_per_sample_and_reads_back() -> None:
    spec = llama_like(layers=4, hidden=512, inter=1024, heads=8, kv_heads=8, vocab=1000)
    settings = MemorySettings(seq_len=1024)
    cost = memory_report(spec, settings, run=RunShape(samples=500, tokens_per_sample=200)).cost
    assert cost is not None and cost.tokens == 500 * 200 and cost.tokens_per_sample == 200
    assert Cost.from_json(cost.to_json()) == cost
    plain = memory_report(spec, settings, run=RunShape(samples=500)).cost
    assert plain is not None and "tokens_per_sample" not in plain.to_json()  # stored estimates read alike
    assert Cost.from_json(plain.to_json()) == plain
