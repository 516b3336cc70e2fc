"""Encoder-decoder models: T5-likes (relative bias, RMS norms), BART-likes (learned positions) and Whisper."""

from __future__ import annotations

from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin
from hubwatch.estimator.config import Cfg
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec

__all__ = ["build_bart", "build_musicgen", "build_t5"]
_UNTIED_CAUSAL_HEAD = {"bigbird_pegasus"}
# (BigBird-Pegasus has one norm per stack, named layernorm_embedding though it closes the stack.)
_FINAL_LN = {"mbart", "pegasus", "blenderbot", "m2m_100", "whisper", "nllb", "mvp", "nllb-moe"}
_EMB_LN = {"bart", "mbart", "plbart", "blenderbot-small", "bigbird_pegasus", "mvp"}
_UNTIED_BY_DEFAULT = {"fsmt"}  # FSMTConfig.tie_word_embeddings defaults to False; the others' to True
_SINUSOIDAL_BUFFER = {"m2m_100", "nllb", "speech_to_text", "nllb-moe", "pegasus_x"}  # FSMT's sinusoidal table is a parameter


def build_t5(cfg: Cfg, b: Build) -> None:
    d, nh = cfg.need("hidden"), cfg.need("heads")
    n_enc = cfg.need("layers")
    n_dec = cfg.int("num_decoder_layers", default=n_enc) or 0
    dkv = cfg.int("d_kv", default=d // nh, minimum=1) or 1
    dff = cfg.concept("ffn", minimum=1) or 4 * d
    vocab = cfg.need("vocab")
    b.vocab = vocab
    gated_act = cfg.bool("is_gated_act")
    gated = cfg.str("feed_forward_proj", default="relu").startswith("gated") or gated_act
    buckets = cfg.int("relative_attention_num_buckets", default=32) or 0
    every_layer_bias = cfg.model_type == "umt5"
    enc_seq = dec_seq = b.seq
    b.embed("shared", vocab, d, (enc_seq, d))
    # Switch Transformers honours tie_word_embeddings (the T5 configs force it on and keep the checkpoint's
    # head apart): untied, each stack keeps its own embed_tokens beside shared (_tied_weights_keys)
    untied_tables = cfg.model_type == "switch_transformers" and not cfg.bool("tie_word_embeddings", default=True)
    if untied_tables:
        b.embed("encoder.embed_tokens", vocab, d, (enc_seq, d))
    ffn = ffn_linears(d, dff, gated=gated, bias=False, names=("wi_0", "wi_1", "wo"))
    attn = attention_linears(d, nh, nh, dkv, qkv_bias=False, o_bias=False, names=("q", "k", "v", "o"), out_dim=d)
    experts = cfg.concept("experts", default=0) or 0
    sparse_ffn = ffn
    if experts > 1:  # Switch Transformers: every sparse_step-th block's MLP is a top-1 router over experts
        sparse_ffn = [("router", lin("router.classifier", d, experts, cfg.bool("router_bias")))] + ffn_linears(
            d, cfg.concept("expert_ffn", default=dff, minimum=1) or dff, gated=gated, bias=False,
            names=("wi_0", "wi_1", "wo"), component="experts", count=experts, active=1)
    enc_sparse = _sparse_blocks(cfg, "encoder", n_enc, experts)
    dec_sparse = _sparse_blocks(cfg, "decoder", n_dec, experts)
    cache: dict[tuple[bool, bool, bool], Layer] = {}

    def block(first_block: bool, sparse: bool, cross: bool) -> Layer:
        key = (first_block or every_layer_bias, sparse, cross)
        if key not in cache:
            linears = attn + (attention_linears(d, nh, nh, dkv, qkv_bias=False, o_bias=False,
                                                names=("q", "k", "v", "o"), out_dim=d) if cross else [])
            ffn_type = f"moe[1 of {experts}]" if sparse else f"mlp[{'glu' if gated else 'plain'} {dff}]"
            layer = Layer(f"self_attn[mha {nh}x{dkv} rel]" + ("+cross_attn" if cross else ""), ffn_type,
                          linears + (sparse_ffn if sparse else ffn))
            layer.more("attention", buckets * nh if key[0] else 0)
            layer.more("norms", (3 if cross else 2) * d)
            cache[key] = layer
        return cache[key]

    spec = AttentionSpec(nh, nh, dkv, ("full",) * n_enc)
    b.stack("encoder", "encoder.block", [block(i == 0, enc_sparse[i], False) for i in range(n_enc)], hidden=d,
            intermediate=dff, attention=spec, shape=(enc_seq, d), gated=gated, num_experts=experts if experts > 1
            else 0, experts_per_token=1 if experts > 1 else 0)
    b.add("norms", d)
    only_encoder = cfg.architecture.endswith("EncoderModel")
    if not only_encoder and n_dec:
        b.stack("decoder", "decoder.block", [block(i == 0, dec_sparse[i], True) for i in range(n_dec)], hidden=d,
                intermediate=dff,
                attention=AttentionSpec(nh, nh, dkv, ("full",) * n_dec, cross_attention=True),
                shape=(dec_seq, d), gated=gated)
        b.add("norms", d)
        if untied_tables:
            b.embed("decoder.embed_tokens", vocab, d, (dec_seq, d))
        if head_kind(cfg, default="lm") == "lm" and not cfg.bool("tie_word_embeddings", default=True):
            b.add("head", vocab * d)
            b.lm_head_params = vocab * d
        b.node("lm_head", "lm_head", (dec_seq, vocab))


def _sparse_blocks(cfg: Cfg, part: str, n: int, experts: int) -> list[bool]:
    """Switch Transformers: block i is sparse when i % step == 1 (every block when the step is 1); the step
    is given, or follows from the number of sparse blocks."""
    if experts <= 1:
        return [False] * n
    count = cfg.int(f"num_sparse_{part}_layers", default=None)
    step = cfg.int(f"{part}_sparse_step", default=None)
    if step is None:
        step = n // count if count else 1
    return [step > 0 and (step == 1 or i % step == 1) for i in range(n)]


def _bart_moe(cfg: Cfg, dense: Layer, part: str, n: int, d: int, ffn: int) -> list[Layer]:
    """NLLB-MoE: every sparse_step-th layer ((i + 1) % step == 0) swaps its MLP for a router and top-2
    experts (each fc1/fc2 with biases); the other layers stay dense."""
    experts = cfg.concept("experts", default=0) or 0
    if experts <= 1:
        return [dense] * n
    step = cfg.int(f"{part}_sparse_step", default=1, minimum=0) or 0
    top_k = min(cfg.concept("experts_per_tok", default=2, minimum=1) or 2, experts)
    sparse = Layer(dense.mixer, f"moe[{top_k} of {experts} x {ffn}]",
                   [(c, s) for c, s in dense.linears if s.name not in ("fc1", "fc2")]
                   + [("router", lin("router.classifier", d, experts, cfg.bool("router_bias")))]
                   + ffn_linears(d, ffn, gated=False, bias=True, names=("fc1", "fc2"), component="experts",
                                 count=experts, active=top_k), dict(dense.extra))
    return [sparse if step > 0 and (i + 1) % step == 0 else dense for i in range(n)]


def _token_tables(mt: str, tied: bool, separate: bool, src_vocab: int, vocab: int,
                  dec_vocab: int) -> list[tuple[str, int]]:
    """The token tables of a BART-like encoder-decoder, as transformers 5 builds them: a shared table
    (when the sides share one) and each side's own embed_tokens, which are one tensor only while
    tie_word_embeddings holds (modeling_utils.get_expanded_tied_weights_keys returns no ties otherwise).
    FSMT ties its encoder table to the decoder's (FSMTModel._tied_weights_keys); Marian without shared
    embeddings has no shared table and ties only its LM head to the decoder's table."""
    if mt == "fsmt":
        return [("decoder.embed_tokens", vocab)] if tied else [("encoder.embed_tokens", src_vocab),
                                                              ("decoder.embed_tokens", vocab)]
    if separate:
        return [("encoder.embed_tokens", src_vocab), ("decoder.embed_tokens", vocab)]
    if tied:
        return [("shared", vocab)]
    return [("shared", vocab), ("encoder.embed_tokens", vocab), ("decoder.embed_tokens", dec_vocab)]


def _bart_layer(d: int, nh: int, ffn: int, *, cross: bool, k_bias: bool, attn_bias: bool = True) -> Layer:
    hd = d // max(nh, 1)
    names = ("q_proj", "k_proj", "v_proj", "out_proj")
    attn = attention_linears(d, nh, nh, hd, qkv_bias=attn_bias, o_bias=attn_bias, names=names)
    if not k_bias:  # Whisper's key projections carry no bias
        attn[1] = ("attention", lin("k_proj", d, d, False))
    linears = list(attn)
    if cross:
        linears += [(c, s) for c, s in attn]
    linears += ffn_linears(d, ffn, gated=False, bias=True, names=("fc1", "fc2"))
    layer = Layer(f"self_attn[mha {nh}x{hd}]" + ("+cross_attn" if cross else ""), f"mlp[plain {ffn}]", linears)
    layer.more("norms", (3 if cross else 2) * 2 * d)
    return layer


def build_bart(cfg: Cfg, b: Build) -> None:
    mt = cfg.model_type
    d = cfg.need("hidden")
    n_enc = cfg.int("encoder_layers", default=None) or cfg.need("layers")
    n_dec = cfg.int("decoder_layers", default=n_enc) or 0
    nh_e = cfg.int("encoder_attention_heads", default=None, minimum=1) or cfg.need("heads")
    nh_d = cfg.int("decoder_attention_heads", default=nh_e, minimum=1) or nh_e
    ff_e = cfg.int("encoder_ffn_dim", default=None, minimum=1) or cfg.concept("ffn") or 4 * d
    ff_d = cfg.int("decoder_ffn_dim", default=ff_e, minimum=1) or ff_e
    vocab = cfg.need("vocab")
    b.vocab = vocab
    for nh in (nh_e, nh_d):
        b.divides(nh, d, "attention heads", "d_model")
    seq = b.seq
    whisper = mt == "whisper"
    max_pos = cfg.int("max_position_embeddings", default=1024) or 1024
    b.max_pos = max_pos
    learned = cfg.bool("use_learned_position_embeddings", default=mt not in _SINUSOIDAL_BUFFER)
    offset = 2 if mt in ("bart", "mbart", "plbart", "mvp", "trocr", "fsmt") else 0
    pos_params = (max_pos + offset) * d if learned else 0
    final_ln = 2 * d if mt in _FINAL_LN or cfg.bool("add_final_layer_norm") else 0
    emb_ln = 2 * d if cfg.bool("layernorm_embedding", default=mt in _EMB_LN) else 0
    # LED: a Longformer encoder (long learned positions, global q/k/v) and a BART decoder
    enc_pos = cfg.int("max_encoder_position_embeddings", default=None, minimum=1)
    dec_pos = cfg.int("max_decoder_position_embeddings", default=None, minimum=1)
    # FSMT (src/tgt vocabularies) and Marian without shared embeddings: separate encoder and decoder tables
    separate = cfg.has("src_vocab_size") or not cfg.bool("share_encoder_decoder_embeddings", default=True)
    src_vocab = cfg.int("src_vocab_size", default=vocab, minimum=1) or vocab
    # Marian's decoder table has decoder_vocab_size rows; with shared embeddings the head and the tie follow
    # vocab_size (MarianMTModel: target_vocab_size), so decoder_vocab_size counts only for an untied table
    dec_vocab = cfg.int("decoder_vocab_size", default=vocab, minimum=1) or vocab
    if separate:
        vocab = dec_vocab
    decoder_only = cfg.architecture.endswith("ForCausalLM")
    tied = cfg.bool("tie_word_embeddings", default=mt not in _UNTIED_BY_DEFAULT)
    attn_bias = cfg.bool("use_bias", default=True)  # BigBird-Pegasus: bias-free attention projections
    if mt == "bigbird_pegasus":  # block-sparse attention: a pattern over the same q/k/v, no weights of its own
        cfg.int("block_size")
        cfg.int("num_random_blocks")
    enc_shape = (seq, d)
    if whisper and decoder_only:
        max_pos = cfg.int("max_target_positions", default=448) or 448
        pos_params = max_pos * d
    elif whisper:
        mels = cfg.int("num_mel_bins", default=80) or 80
        src = cfg.int("max_source_positions", default=1500) or 1500
        b.add("embeddings", mels * d * 3 + d + d * d * 3 + d)
        b.node("encoder.conv", f"conv1d[{mels}->{d}]x2", (src, d))
        b.embed("encoder.embed_positions", src, d, (src, d), "position_embedding")
        enc_shape = (src, d)
        max_pos = cfg.int("max_target_positions", default=448) or 448
        pos_params = max_pos * d
    elif not decoder_only:
        for name, rows in _token_tables(mt, tied, separate, src_vocab, vocab, dec_vocab):
            b.embed(name, rows, d, (seq, d))
        if enc_pos is not None and learned:
            b.embed("encoder.embed_positions", enc_pos, d, (seq, d), "position_embedding")
        elif pos_params:
            b.embed("encoder.embed_positions", max_pos + offset, d, (seq, d), "position_embedding")
        b.check(seq <= max_pos, f"sequence length {seq} exceeds max_position_embeddings ({max_pos})")
    if decoder_only:  # *ForCausalLM: the decoder alone (its layers keep their cross-attention), tied LM head
        b.embed("model.decoder.embed_tokens", vocab, d, (seq, d))
    else:
        b.add("norms", emb_ln + final_ln)
        enc = _bart_layer(d, nh_e, ff_e, cross=False, k_bias=not whisper, attn_bias=attn_bias)
        if mt == "led":
            enc.linears += [("attention", lin(f"{n}_global", d, d, True)) for n in ("query", "key", "value")]
        globals_ = cfg.int("num_global_tokens", default=0) or 0
        if globals_:  # PEGASUS-X: learned global tokens, and a norm for their attention in each encoder layer
            b.embed("encoder.embed_global", globals_, d, (globals_, d))
            enc.more("norms", 2 * d)
        b.stack("encoder", "encoder.layers", _bart_moe(cfg, enc, "encoder", n_enc, d, ff_e), hidden=d,
                intermediate=ff_e, attention=AttentionSpec(nh_e, nh_e, d // nh_e, ("full",) * n_enc),
                shape=enc_shape)
    if not n_dec or cfg.architecture.endswith("EncoderModel"):
        return
    if whisper and not decoder_only:
        b.embed("decoder.embed_tokens", vocab, d, (seq, d))
    if dec_pos is not None and learned:
        b.embed("decoder.embed_positions", dec_pos, d, (seq, d), "position_embedding")
    elif pos_params:
        b.embed("decoder.embed_positions", pos_params // d, d, (seq, d), "position_embedding")
    b.add("norms", emb_ln + final_ln)
    dec = _bart_layer(d, nh_d, ff_d, cross=True, k_bias=not whisper, attn_bias=attn_bias)
    b.stack("decoder", "decoder.layers", _bart_moe(cfg, dec, "decoder", n_dec, d, ff_d), hidden=d, intermediate=ff_d,
            attention=AttentionSpec(nh_d, nh_d, d // nh_d, ("full",) * n_dec, cross_attention=True),
            shape=(seq, d))
    kind = head_kind(cfg, default="lm")
    if kind == "lm":
        # BigBird-Pegasus's ForCausalLM class declares no tie: its head is its own matrix whatever the config says
        untied_class = decoder_only and mt in _UNTIED_CAUSAL_HEAD
        if not tied or untied_class:
            b.add("head", vocab * d)
            b.lm_head_params = vocab * d
        b.node("lm_head", "lm_head", (seq, vocab))
    elif mt == "fsmt" and not tied:  # FSMT's decoder owns its output projection, whatever head is on top
        b.add("head", vocab * d)
    if kind == "seqcls":
        labels = cfg.num_labels()
        b.add("head", d * d + d + d * labels + labels)
        b.node("classification_head", f"classifier[{labels}]", (labels,))
    elif kind == "qa":
        b.add("head", 2 * d + 2)
        b.node("qa_outputs", "span_classifier", (seq, 2))


def build_musicgen(cfg: Cfg, b: Build) -> None:
    """MusicGen's decoder: one embedding table (codes + a pad row) and one LM head per codebook, BART-style
    layers without linear biases, cross-attention to the text encoder (not in MusicGen-Melody, which
    prepends its conditioning instead), sinusoidal positions, a final LayerNorm."""
    d, n, nh = cfg.need("hidden"), cfg.need("layers"), cfg.need("heads")
    ffn = cfg.concept("ffn", minimum=1) or 4 * d
    vocab = cfg.need("vocab")
    books = cfg.int("num_codebooks", default=4, minimum=1) or 1
    b.divides(nh, d, "num_attention_heads", "hidden_size")
    b.vocab, b.max_pos = vocab, cfg.concept("max_pos", minimum=1)
    seq = b.seq
    b.embed("model.decoder.embed_tokens", books * (vocab + 1), d, (seq, d))
    cross = cfg.model_type == "musicgen_decoder"
    attn = attention_linears(d, nh, nh, d // nh, qkv_bias=False, o_bias=False,
                             names=("q_proj", "k_proj", "v_proj", "out_proj"))
    layer = Layer(f"self_attn[mha {nh}x{d // nh}]" + ("+cross_attn" if cross else ""), f"mlp[plain {ffn}]",
                  attn + (list(attn) if cross else []) + ffn_linears(d, ffn, gated=False, bias=False,
                                                                     names=("fc1", "fc2")))
    layer.more("norms", (3 if cross else 2) * 2 * d)
    b.stack("decoder", "model.decoder.layers", [layer] * n, hidden=d, intermediate=ffn,
            attention=AttentionSpec(nh, nh, d // nh, ("full",) * n, cross_attention=cross), shape=(seq, d))
    b.add("norms", 2 * d)
    b.add("head", books * vocab * d)
    b.lm_head_params += books * vocab * d
    b.node("lm_heads", f"lm_head[{books} codebooks]", (seq, vocab))
