"""HRM-Text (transformers models/hrm_text): two Llama-style stacks, H and L, each of `num_layers_per_stack` layers,
run in cycles (H_cycles × (L_cycles + 1) invocations that reuse the same weights)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder

__all__ = ["build_hrm_text"]


def build_hrm_text(cfg: Cfg, b: Build) -> None:
    """The saved config's num_hidden_layers is the inflated invocation count (HrmTextConfig.__post_init__ rewrites
    it to num_layers_per_stack × H_cycles × (L_cycles + 1)); the weights are the two stacks of the real count.
    Each layer: q, k, v, an output gate (all heads × head_dim, no GQA) and o_proj, a gated MLP; its norms and the
    stacks' final norms are weightless (NanoChat's RMSNorm); the model adds z_L_init (one hidden-wide vector)."""
    per_stack = cfg.int("num_layers_per_stack", default=None, minimum=1) or cfg.need("layers")
    cfg.int("H_cycles")  # the cycles reuse the two stacks: no weights of their own
    cfg.int("L_cycles")
    build_decoder(Cfg({**cfg.data, "num_hidden_layers": 2 * per_stack}, cfg.path), b)
    b.add("embeddings", cfg.need("hidden"))  # z_L_init
