"""The public entry point: `analyze(config)` → structure, parameters, findings and the ModelSpec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from hubwatch.estimator.params.blocks import Build
from hubwatch.estimator.config import Cfg, ConfigError, reading
from hubwatch.estimator.architectures.dispatch import build
from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.lints import Finding, LintContext, lint
from hubwatch.estimator.manifest import Manifest, explain_delta
from hubwatch.estimator.params.spec import ModelSpec
from hubwatch.estimator.params.structure import NodeList, Structure
from hubwatch.estimator.support import UNSUPPORTED, Support, assess, unread_structural_keys

__all__ = ["ESTIMATOR_VERSION", "Analysis", "ParamsReport", "analyze"]

# 1.1: Zamba/RecurrentGemma, a better generic decoder, lints judged on real repos (pad token from the tokenizer).
# 1.2: params.support (modelled / approximate / unsupported), judged on every transformers LM class.
ESTIMATOR_VERSION = "1.2.0"
MAX_SEQ = 100_000_000


@frozen
class ParamsReport:
    """Parameters derived from the config against the checkpoint's count: the delta and why, active per
    token, by component, and how well the config is modelled."""

    derived: int
    checkpoint: int | None
    delta_pct: float | None
    active: int
    by_component: dict[str, int]
    explanation: str = ""
    support: Support = Support("modelled")

    def to_json(self) -> dict[str, Any]:
        return {"derived": self.derived, "checkpoint": self.checkpoint, "delta_pct": self.delta_pct,
                "active": self.active, "by_component": dict(self.by_component), "explanation": self.explanation,
                "support": self.support.to_json()}


@frozen
class Analysis:
    """A config analysed: model, family, custom code, parameters, structure, lint findings and their spec."""

    model: str
    family: str
    custom_code: bool
    params: ParamsReport
    structure: Structure
    findings: tuple[Finding, ...]
    spec: ModelSpec
    notes: tuple[str, ...] = ()
    revision: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        s = self.structure.to_json()
        return {
            "model": self.model, "revision": self.revision, "family": self.family, "custom_code": self.custom_code,
            "params": self.params.to_json(),
            "structure": {"layers": s["layers"], "forward_pass_ok": s["forward_pass_ok"], "nodes": s["nodes"],
                          "failures": s["failures"], "input_shape": s["input_shape"]},
            "findings": [f.to_json() for f in self.findings],
            "notes": list(self.notes), "estimator_version": ESTIMATOR_VERSION,
        }


def _model_name(cfg: Cfg) -> str:
    name = cfg.data.get("_name_or_path")
    if isinstance(name, str) and name:
        return name
    return cfg.architecture or cfg.model_type or "unknown"


def analyze(config: Mapping[str, Any], *, manifest: Manifest | None = None,
            tokenizer_config: Mapping[str, Any] | None = None, generation_config: Mapping[str, Any] | None = None,
            seq_len: int = 2048, model: str | None = None, revision: str | None = None) -> Analysis:
    """Structure, parameters (derived and, with a manifest, checkpoint), findings and ModelSpec of a config."""
    if not isinstance(config, Mapping):
        raise ConfigError("config", f"expected a JSON object, got {type(config).__name__}")
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or not 1 <= seq_len <= MAX_SEQ:
        raise ConfigError("seq_len", f"must be a whole number in 1..{MAX_SEQ}, got {seq_len!r}")
    for name, extra in (("tokenizer_config", tokenizer_config), ("generation_config", generation_config)):
        if extra is not None and not isinstance(extra, Mapping):
            raise ConfigError(name, "expected a JSON object")
    cfg = Cfg(config)
    b = Build(seq_len)
    try:
        with reading() as reads:
            family = build(cfg, b)
    except ConfigError as exc:
        # A top-level size missing where the config describes its model in sub-configs no builder opened (BLT's
        # encoder/decoder/global configs): the unmodelled parts are the reason, not the key the generic path missed
        unopened = [k for k in unread_structural_keys(config, reads)
                    if "." not in k and isinstance(config.get(k), Mapping)]
        if unopened and "." not in exc.key and exc.problem.startswith("missing"):
            raise ConfigError(unopened[0], f"the sub-config {unopened[0]} describes a part no builder models (the "
                                           f"generic path found no {exc.key})") from exc
        raise
    except (TypeError, ValueError, LookupError, AttributeError, ArithmeticError, RecursionError) as exc:
        raise ConfigError("config", f"unreadable config ({type(exc).__name__}: {exc})") from exc
    support = assess(config, reads, b.guesses)
    if support.level == UNSUPPORTED:
        raise ConfigError(support.key, support.reason)
    derived = sum(b.components.values())
    active = derived - b.inactive
    text = cfg.sub("text_config", "llm_config", "language_config", "text_config_dict") if family == "composite" else None
    tcfg = text or cfg
    checkpoint = delta = None
    explanation = ""
    if manifest is not None:
        dtype = cfg.str("torch_dtype", "dtype") or tcfg.str("torch_dtype", "dtype") or None
        checkpoint = manifest.params(dtype)
        if checkpoint is not None and derived:
            delta = round(100.0 * (checkpoint - derived) / derived, 3)
            towers = {k: v for k, v in b.components.items() if k.endswith("_tower")}
            tied_rows = b.vocab * (b.stacks[-1].hidden_size if b.stacks else 0) if not b.lm_head_params else 0
            explanation = explain_delta(manifest, checkpoint, derived, lm_head=b.lm_head_params,
                                        tied_rows=tied_rows if family == "decoder" else 0, layers=b.layers,
                                        towers=towers, components=b.components)
    params = ParamsReport(derived, checkpoint, delta, active, dict(b.components), explanation, support)
    structure = Structure(b.layers, not b.failures, tuple(b.failures), NodeList(b.nodes), (seq_len,))
    deepest = max((stack.num_layers for stack in b.stacks), default=b.layers)  # towers are separate stacks
    ctx = LintContext(tcfg, cfg, family, derived, deepest, b.vocab, b.max_pos, b.final_norm,
                      tokenizer_config, generation_config)
    findings = tuple(lint(ctx))
    spec = ModelSpec(
        model_type=cfg.model_type, family=family if family in ("encoder", "decoder", "encoder-decoder", "vision",
                                                               "composite") else "unknown",
        vocab_size=b.vocab, max_position_embeddings=b.max_pos, stacks=tuple(b.stacks), total_params=derived,
        active_params=active, embedding_params=b.embedding_params, lm_head_params=b.lm_head_params,
        tie_word_embeddings=b.lm_head_params == 0, torch_dtype=cfg.str("torch_dtype", "dtype") or None,
        by_component=dict(b.components))
    custom = isinstance(cfg.data.get("auto_map"), Mapping)
    notes = tuple(b.notes)
    return Analysis(model or _model_name(cfg), family, custom, params, structure, findings, spec, notes, revision)
