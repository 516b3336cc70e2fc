"""Tying read from the config of BART-like encoder-decoders: transformers 5 ties the shared table, each
side's embed_tokens and the LM head only while tie_word_embeddings holds (truth here is the tied default
count from transformers_defaults.json plus the tables the code builds once the ties are dropped)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubwatch.estimator import analyze

ROWS = json.loads((Path(__file__).parent / "transformers_defaults.json").read_text())["rows"]


def _row(model_type: str, architecture: str) -> dict[str, Any]:
    return next(r for r in ROWS if r["model_type"] == model_type and r["architecture"] == architecture)


# (model_type, architecture, how many vocab x d_model tables untying adds)
UNTIED = [
    ("bart", "BartForConditionalGeneration", 3),  # encoder and decoder embed_tokens, lm_head beside shared
    ("bart", "BartModel", 2),  # no head: the two sides' tables
    ("bart", "BartForQuestionAnswering", 2),
    ("marian", "MarianMTModel", 3),
]


@pytest.mark.parametrize(("model_type", "architecture", "tables"), UNTIED)
def test_untied_bart_like_counts_each_table(model_type: str, architecture: str, tables: int) -> None:
    row = _row(model_type, architecture)
    cfg = dict(row["config"], tie_word_embeddings=False)
    expected = row["params"] + tables * cfg["vocab_size"] * cfg["d_model"]
    assert analyze(cfg).params.derived == expected


def test_marian_without_shared_embeddings_keeps_no_shared_table() -> None:
    row = _row("marian", "MarianMTModel")
    cfg = dict(row["config"], share_encoder_decoder_embeddings=False, decoder_vocab_size=row["config"]["vocab_size"])
    table = cfg["vocab_size"] * cfg["d_model"]
    assert analyze(cfg).params.derived == row["params"] + table  # encoder and decoder tables, head tied to the decoder's
    untied = dict(cfg, tie_word_embeddings=False)
    assert analyze(untied).params.derived == row["params"] + 2 * table


FSMT = {"architectures": ["FSMTForConditionalGeneration"], "model_type": "fsmt", "d_model": 64,
        "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4, "decoder_attention_heads": 4,
        "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "src_vocab_size": 300, "tgt_vocab_size": 300,
        "max_position_embeddings": 64}


def test_fsmt_untied_by_default_and_tied_to_one_decoder_table() -> None:
    untied = analyze(FSMT).params.derived
    assert analyze(dict(FSMT, tie_word_embeddings=False)).params.derived == untied
    tied = analyze(dict(FSMT, tie_word_embeddings=True)).params.derived
    assert untied - tied == 2 * 300 * 64  # the encoder's table and the output projection become the decoder's


ZOO = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "transformers_zoo.json").read_text())["rows"]


def _zoo(model_type: str, architecture: str) -> dict[str, Any]:
    return next(r for r in ZOO if r.get("model_type") == model_type and r["architecture"] == architecture)


def test_untied_switch_transformers_keeps_each_stack_table_and_a_head() -> None:
    row = _zoo("switch_transformers", "SwitchTransformersForConditionalGeneration")
    cfg = dict(row["config"], tie_word_embeddings=False)
    assert analyze(cfg).params.derived == row["params"] + 3 * cfg["vocab_size"] * cfg["d_model"]


def test_untied_luke_keeps_its_entity_decoder_and_second_bias() -> None:
    row = _zoo("luke", "LukeForMaskedLM")
    cfg = dict(row["config"], tie_word_embeddings=False)
    extra = cfg["entity_vocab_size"] * cfg["entity_emb_size"] + cfg["vocab_size"]
    assert analyze(cfg).params.derived == row["params"] + extra


def test_convbert_generator_head_works_at_the_embedding_width() -> None:
    row = _zoo("convbert", "ConvBertForMaskedLM")
    narrow = dict(row["config"], embedding_size=128)
    untied = dict(narrow, tie_word_embeddings=False)
    assert analyze(untied).params.derived - analyze(narrow).params.derived == narrow["vocab_size"] * 128


def test_bert_generation_decoder_has_a_bare_lm_head_and_no_pooler_or_type_table() -> None:
    row = _zoo("bert-generation", "BertGenerationDecoder")
    assert analyze(row["config"]).params.derived == row["params"]
    untied = dict(row["config"], tie_word_embeddings=False)
    h, vocab = untied["hidden_size"], untied["vocab_size"]
    assert analyze(untied).params.derived == row["params"] + vocab * h + vocab  # decoder weight and bias apart


def test_untied_zamba2_gives_every_hybrid_layer_its_own_block_and_adapter_slots() -> None:
    row = next(r for r in ZOO if r.get("model_type") == "zamba2" and r["overrides"])
    cfg = row["config"]
    uses = cfg["layers_block_type"].count("hybrid")
    h, inter, rank, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["adapter_rank"], cfg["vocab_size"]
    assert analyze(cfg).params.derived == row["params"]
    one_each = dict(cfg, num_mem_blocks=uses)
    untied_one_each = dict(one_each, tie_word_embeddings=False)
    # a block per hybrid layer already: untying adds only the LM head
    assert analyze(untied_one_each).params.derived - analyze(one_each).params.derived == vocab * h
    # one shared block untied: every layer's block keeps an adapter slot for each hybrid layer
    adapter = rank * (h + 2 * inter) + 3 * 2 * rank * 2 * h
    untied_one = dict(cfg, num_mem_blocks=1, tie_word_embeddings=False)
    extra = analyze(untied_one).params.derived - analyze(untied_one_each).params.derived
    assert extra == (uses * uses - uses) * adapter


def test_kimi_linear_head_stays_untied_whatever_the_config_says() -> None:
    row = next(r for r in ZOO if r.get("model_type") == "kimi_linear" and r["overrides"])
    assert not row["config"]["tie_word_embeddings"]
    assert analyze(dict(row["config"], tie_word_embeddings=True)).params.derived == row["params"]


def test_marian_shared_and_tied_ignores_a_different_decoder_vocab_size() -> None:
    row = _row("marian", "MarianMTModel")
    cfg = dict(row["config"], decoder_vocab_size=row["config"]["vocab_size"] + 150)
    assert analyze(cfg).params.derived == row["params"]  # the decoder's table is tied to shared


PERTURBED = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "transformers_perturbed.json")
                       .read_text())["rows"]


@pytest.mark.parametrize("architecture", ["RemBertForMaskedLM", "RemBertForCausalLM", "NemotronHForCausalLM",
                                          "ZambaForCausalLM"])
def test_tying_flipped_matches_the_meta_device_build(architecture: str) -> None:
    # RemBERT's 1664-wide output layer cannot share its 256-wide word table; NemotronH keeps its head apart
    # whatever the config says; Zamba untied keeps a shared block per hybrid layer
    row = next(r for r in PERTURBED if r["architecture"] == architecture and "tie_word_embeddings" in r["overrides"])
    assert analyze(row["config"]).params.derived == row["params"]
