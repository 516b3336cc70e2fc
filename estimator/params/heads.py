"""Task heads named by the architecture class: LM head, classifiers, QA spans, poolers."""

from __future__ import annotations

from collections.abc import Mapping

from hubwatch.estimator.params.blocks import Build
from hubwatch.estimator.config import Cfg

__all__ = ["add_head", "classify", "head_kind"]

_SUFFIXES = (
    ("ForCausalLM", "lm"), ("LMHeadModel", "lm"), ("ForConditionalGeneration", "lm"), ("ForMaskedLM", "mlm"),
    ("ForPreTraining", "pretrain"), ("ForSequenceClassification", "seqcls"), ("ForTokenClassification", "tokcls"),
    ("ForQuestionAnswering", "qa"), ("ForImageClassification", "imgcls"), ("ForMultipleChoice", "mc"),
    ("ForNextSentencePrediction", "nsp"), ("ForCTC", "ctc"), ("ForSpeechSeq2Seq", "lm"), ("WithLMHead", "lm"),
    ("ForMaskedImageModeling", "base"), ("MTModel", "lm"), ("ForTextToText", "lm"),
)


def classify(cls: str) -> str | None:
    for suffix, kind in _SUFFIXES:
        if cls.endswith(suffix):
            return kind
    return None


def head_kind(cfg: Cfg, default: str = "base") -> str:
    """The head the config's architecture class carries (auto_map's class when the named one is a bare model)."""
    kind = classify(cfg.architecture)
    if kind:
        return kind
    auto = cfg.data.get("auto_map")
    if isinstance(auto, Mapping):
        target = auto.get("AutoModel")
        if isinstance(target, str) and classify(target.split(".")[-1]) == "lm":
            return "lm"
    if cfg.architecture:
        return "base"
    return default


def add_head(cfg: Cfg, b: Build, kind: str, h: int, vocab: int, *, tie: bool, bias: bool, family: str,
             prefix: str = "model") -> None:
    """Adds the output layer of a decoder (or a decoder-style head on another family)."""
    seq = b.seq
    labels = cfg.num_labels()
    if kind in ("lm", "pretrain", "mlm"):
        params = (0 if tie else vocab * h) + (vocab if bias else 0)
        b.add("head", params)
        b.lm_head_params += 0 if tie else vocab * h
        b.node("lm_head", "lm_head[tied]" if tie else "lm_head", (seq, vocab))
    elif kind == "seqcls":
        b.add("head", h * labels)
        b.node("score", f"classifier[{labels}]", (labels,))
    elif kind == "tokcls":
        b.add("head", h * labels + labels)
        b.node("classifier", f"classifier[{labels}]", (seq, labels))
    elif kind == "qa":
        b.add("head", h * 2 + 2)
        b.node("qa_outputs", "span_classifier", (seq, 2))
