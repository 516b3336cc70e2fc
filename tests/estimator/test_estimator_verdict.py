"""What a reader is told beside the numbers: the support level in words, and a "does not fit" that names the
term that breaks the card's budget (the largest alone, or the one whose addition passes it)."""

from __future__ import annotations

from hubwatch.estimator.estimate_parts import MethodMemory
from hubwatch.estimator.support import Support
from hubwatch.estimator.verdict import fit_verdict, support_words


def _memory(terms: dict[str, float], overhead: float = 0.5, headroom: float = 1.15) -> MethodMemory:
    peak = sum(terms.values())
    return MethodMemory("lora", 2048, 1, peak, peak * headroom + overhead, tuple(terms.items()), "backward", (),
                        1000, overhead, headroom)


def test_support_in_words_says_the_level_its_reasons_and_the_bound() -> None:
    modelled = support_words(Support("modelled"))
    assert modelled is not None and modelled.reasons == ()
    assert modelled.text == "modelled — every mechanism the config describes is read; expected within 1%"
    approx = support_words(Support("approximate", ("model_type doge has no profile",)))
    assert approx is not None
    assert approx.text == "approximate — model_type doge has no profile; expected within 25%"
    assert approx.to_json() == {"level": "approximate", "reasons": ["model_type doge has no profile"],
                                "bound": "expected within 25%", "text": approx.text}
    gone = support_words(Support.unsupported("the sub-config vision_config describes a part no builder models",
                                             "vision_config"))
    assert gone is not None and gone.level == "unsupported"
    assert gone.text.startswith("unsupported — the sub-config vision_config") and gone.text.endswith("no number")
    keyed = support_words(Support.unsupported("no hidden size", "hidden_size"))
    assert keyed is not None and keyed.reasons == ("no hidden size (key hidden_size)",)
    assert support_words(None) is None


def test_a_term_that_alone_passes_the_budget_is_named() -> None:
    v = fit_verdict(_memory({"weights": 26.9, "activations": 2.0, "logits": 0.5}), "L4", 24)
    assert not v.fits and v.term == "weights" and v.crossing == ""
    assert abs(v.budget_gb - (24 - 0.5) / 1.15) < 1e-9
    assert v.line == "does not fit on L4 (24 GB): weights is 26.9 GB of a 20.4 GB budget"
    assert v.to_json()["term"] == "weights" and v.to_json()["fits"] is False
    assert v.short == "weights 26.9 GB" and (v.overhead_gb, v.headroom) == (0.5, 1.15)


def test_otherwise_the_largest_and_the_term_whose_addition_passes_it() -> None:
    v = fit_verdict(_memory({"weights": 13.5, "optimizer_states": 1.0, "activations": 9.3}), "L4", 24)
    assert not v.fits and v.term == "weights" and v.crossing == "activations"
    assert v.line == ("does not fit on L4 (24 GB): weights is 13.5 GB of a 20.4 GB budget; adding activations "
                      "(9.3 GB) passes it (peak 23.8 GB)")
    assert v.short == "weights 13.5 + activations 9.3 GB"


def test_a_fit_says_what_it_needs() -> None:
    v = fit_verdict(_memory({"weights": 13.5, "activations": 2.0}), "A100-40GB", 40)
    assert v.fits and v.line.startswith("fits on A100-40GB (40 GB): needs 18.3 GB")
    assert v.to_json()["crossing"] is None


def test_the_verdict_agrees_with_the_fit_rule_at_the_edge() -> None:
    memory = _memory({"weights": 20.0})
    assert fit_verdict(memory, "edge", memory.required_gb).fits
    assert not fit_verdict(memory, "edge", memory.required_gb - 0.01).fits


def test_the_card_tables_answer_decides_where_it_is_given() -> None:
    """The batch search works in bytes; the GB figures are rounded: its answer wins at the edge, and a misfit
    whose rounded terms stay within the budget still names a term."""
    memory = _memory({"weights": 10.0, "activations": 5.0})
    assert not fit_verdict(memory, "edge", memory.required_gb, fits=False).fits
    v = fit_verdict(memory, "edge", memory.required_gb + 1, fits=False)
    assert v.term == "weights" and v.crossing == "activations"
    assert fit_verdict(memory, "edge", memory.required_gb - 0.001, fits=True).fits


def test_estimate_verdicts_agree_with_the_largest_batch_per_card() -> None:
    from hubwatch.estimator.memory.report import estimate_revision
    from hubwatch.estimator.memory.settings import MemorySettings
    from hubwatch.estimator.verdict import batch_one_misfits, estimate_verdicts

    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
              "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}
    for batch in (1, 3):
        estimate = estimate_revision(config, MemorySettings(method="full", batch=batch))
        verdicts = estimate_verdicts(estimate)
        assert [v.card for v in verdicts] == [c.name for c in estimate.cards]
        for v, card in zip(verdicts, estimate.cards, strict=True):
            largest = card.batch("full")
            assert largest is not None and v.fits is (largest >= batch), (card.name, largest, v.line)
        misfits = batch_one_misfits(estimate)
        assert bool(misfits) is (batch == 1)  # the terms are at batch 3: they say nothing of batch 1
        assert all(estimate.cards[[c.name for c in estimate.cards].index(card)].batch(m) == 0 for card, m in misfits)
