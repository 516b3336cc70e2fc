"""Granite-Speech's audio side: a Conformer encoder (macaron feed-forwards, attention with a learned relative
position table, a depthwise convolution module, a CTC bottleneck through `output_dim`) and a windowed
Q-Former projector (learned queries, cross-attention every `cross_attention_frequency` layers)."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["add_granite_speech"]


def _conformer(enc: Cfg, b: Build) -> int:
    d = enc.int("hidden_dim", minimum=1) or enc.need("hidden")
    n = enc.int("num_layers", minimum=1) or enc.need("layers")
    nh = enc.int("num_heads", minimum=1) or enc.need("heads")
    hd = enc.int("dim_head", default=d // nh, minimum=1) or d // nh
    mult = enc.int("feedforward_mult", default=4, minimum=1) or 4
    conv_inner = d * (enc.int("conv_expansion_factor", default=2, minimum=1) or 2)
    kernel = enc.int("conv_kernel_size", default=15, minimum=1) or 15
    max_rel = enc.int("max_pos_emb", default=512, minimum=1) or 512
    inp = enc.int("input_dim", default=160, minimum=1) or 160
    out = enc.int("output_dim", default=42, minimum=1) or 42
    enc.raw("cat_hidden_layers")  # only which hidden states feed the projector (its encoder_hidden_size)
    enc.raw("context_size")  # the attention's block length: no tensor depends on it
    ff = [("feed_forward", lin(f"{part}.{name}", i, o, True)) for part in ("ff1", "ff2")
          for name, i, o in (("up_proj", d, mult * d), ("down_proj", mult * d, d))]
    layer = Layer(f"conformer_attn[{nh}x{hd}]+conv[{kernel}]", f"macaron_mlp[{mult * d}]x2", [
        *ff, ("attention", lin("to_q", d, nh * hd)), ("attention", lin("to_kv", d, 2 * nh * hd)),
        ("attention", lin("to_out", nh * hd, d, True)),
        ("conv", lin("up_conv", d, 2 * conv_inner, True)), ("conv", lin("down_conv", conv_inner, d, True))])
    layer.more("attention", (2 * max_rel + 1) * hd)  # rel_pos_emb
    layer.more("conv", conv_inner * kernel + 2 * conv_inner)  # depthwise kernel (no bias), batch norm
    layer.more("norms", 5 * 2 * d)  # ff1, attention, conv, ff2 pre-norms and the post-norm
    b.add("embeddings", inp * d + d)
    b.node("encoder.input_linear", f"linear[{inp}->{d}]", (b.seq, d))
    b.stack("audio", "encoder.layers", [layer] * n, hidden=d, intermediate=mult * d,
            attention=AttentionSpec(nh, nh, hd, ("full",) * n), shape=(b.seq, d))
    b.add("projector", d * out + out + out * d + d)  # out, out_mid
    return d


def _qformer(cfg: Cfg, proj: Cfg, b: Build, text_hidden: int) -> None:
    q = proj.need("hidden")
    n = proj.need("layers")
    ffn = proj.need("ffn")
    enc_h = proj.int("encoder_hidden_size", default=q, minimum=1) or q
    freq = proj.int("cross_attention_frequency", default=2, minimum=1) or 2
    b.divides(proj.need("heads"), q, "num_attention_heads", "hidden_size", proj.path)
    proj.raw("vocab_size")  # a bare Q-Former model has no word embeddings (those live in BLIP-2's own)
    text_input = proj.bool("use_qformer_text_input")
    queries = (cfg.int("window_size", default=15, minimum=1) or 15) // (cfg.int("downsample_rate", default=5,
                                                                              minimum=1) or 5)
    per_layer = 4 * (q * q + q) + 2 * q + 2 * (q * ffn) + ffn + q + 2 * q
    if text_input:  # the text branch's own feed-forward
        per_layer += 2 * (q * ffn) + ffn + q + 2 * q
    cross = 2 * (q * q + q) + 2 * (enc_h * q + q) + 2 * q
    total = queries * q + n * per_layer + len(range(0, n, freq)) * cross + 2 * q + q * text_hidden + text_hidden
    b.add("projector", total)
    b.node("projector.qformer", f"qformer[{n} layers, {queries} queries, cross every {freq}]", (queries, q))


def add_granite_speech(cfg: Cfg, b: Build) -> bool:
    """Adds the encoder and the projector when the config has both; the LoRA adapter (`has_lora_adapter`) is
    loaded apart from the model and adds no parameters to it."""
    enc, proj, text = cfg.sub("encoder_config"), cfg.sub("projector_config"), cfg.sub("text_config")
    if enc is None or proj is None or text is None:
        return False
    cfg.bool("has_lora_adapter")
    b.tower = "audio_tower"
    _conformer(enc, b)
    b.tower = "projector"
    _qformer(cfg, proj, b, text.need("hidden"))
    b.tower = None
    return True
