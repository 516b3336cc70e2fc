"""State-space (Mamba-style) language models: selective-scan mixers instead of attention."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import add_head, head_kind
from hubwatch.estimator.architectures.decoder_only.hybrid import mamba2_mixer
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_mamba"]


def build_mamba(cfg: Cfg, b: Build) -> None:
    h, n = cfg.need("hidden"), cfg.need("layers")
    vocab = cfg.need("vocab")
    b.vocab = vocab
    inner = cfg.int("intermediate_size", "d_inner", default=None, minimum=1) or (cfg.int("expand", default=2) or 2) * h
    state = cfg.int("state_size", "d_state", default=16, minimum=1) or 16
    kernel = cfg.int("conv_kernel", "d_conv", default=4, minimum=1) or 4
    rank_raw = cfg.raw("time_step_rank", "dt_rank")
    rank = -(-h // 16) if rank_raw in (None, "auto") else (cfg.int("time_step_rank", "dt_rank", minimum=1) or 1)
    bias, conv_bias = cfg.bool("use_bias"), cfg.bool("use_conv_bias", default=True)
    shape = (b.seq, h)
    b.embed("backbone.embeddings", vocab, h, shape)
    if cfg.model_type == "mamba2":
        layer = mamba2_mixer(cfg, h)
    else:
        layer = _mamba1(cfg, h, inner, state, kernel, rank, bias, conv_bias)
    layer.more("norms", h)
    b.stack("decoder", "backbone.layers", [layer] * n, hidden=h, intermediate=inner,
            attention=AttentionSpec(0, 0, 0, ("none",) * n), shape=shape, extra_params=vocab * h)
    b.add("norms", h)
    b.node("backbone.norm_f", "norm[rms]", shape)
    b.final_norm = True
    tie = cfg.bool("tie_word_embeddings", default=cfg.model_type != "mamba2")
    add_head(cfg, b, head_kind(cfg, default="lm"), h, vocab, tie=tie, bias=False, family="decoder")


def _mamba1(cfg: Cfg, h: int, inner: int, state: int, kernel: int, rank: int, bias: bool, conv_bias: bool) -> Layer:
    layer = Layer(f"mixer[ssm d_state={state}]", "", [
        ("ssm", lin("in_proj", h, 2 * inner, bias)), ("ssm", lin("x_proj", inner, rank + 2 * state)),
        ("ssm", lin("dt_proj", rank, inner, True)), ("ssm", lin("out_proj", inner, h, bias))])
    layer.more("ssm", inner * kernel + (inner if conv_bias else 0) + inner * state + inner)
    return layer
