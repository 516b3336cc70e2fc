"""Encoder-only text models (BERT-likes: BERT, RoBERTa, XLM-R, DistilBERT, ALBERT, ELECTRA, DeBERTa, ALiBi/GLU BERTs)."""

from __future__ import annotations

from hubwatch.estimator.architectures.registry import model_types
from hubwatch.estimator.params.blocks import Build, Layer, attention_linears, ffn_linears, lin, transformer_dims
from hubwatch.estimator.config import Cfg, ConfigError
from hubwatch.estimator.params.heads import head_kind
from hubwatch.estimator.params.spec import AttentionSpec, LinearSpec

__all__ = ["ENCODER_TYPES", "build_encoder", "encoder_layer"]

ROBERTA_HEADS = {"roberta", "xlm-roberta", "camembert", "data2vec-text", "xlm-roberta-xl", "electra", "mpnet",
                 "roberta-prelayernorm", "longformer", "xmod"}
NO_POOLER = {"distilbert", "deberta", "deberta-v2", "electra", "dpr", "nomic_bert", "bert-generation"}
ENCODER_TYPES = model_types(".encoder_only.encoders:build_encoder")  # the BERT-likes named in the registry


def encoder_layer(cfg: Cfg, h: int, nh: int, inter: int, *, gated: bool = False, norms: int = 2) -> Layer:
    """One post-LN BERT block: Q/K/V/O (biased unless the config says not), two LayerNorms, a plain or GLU MLP."""
    hd = h // max(nh, 1)
    qkv_bias = cfg.bool("qkv_proj_bias", default=True)
    linears = attention_linears(h, nh, nh, hd, qkv_bias=qkv_bias, o_bias=qkv_bias,
                                names=("query", "key", "value", "attention.output.dense"))
    out_bias = cfg.bool("mlp_fc2_bias", default=True)
    if gated:
        linears += [("feed_forward", lin("gated_layers", h, 2 * inter, cfg.bool("mlp_fc1_bias"))),
                    ("feed_forward", lin("wo", inter, h, out_bias))]
    else:
        in_bias = cfg.bool("mlp_fc1_bias", default=True)
        linears += [("feed_forward", lin("intermediate.dense", h, inter, in_bias)),
                    ("feed_forward", lin("output.dense", inter, h, out_bias))]
    layer = Layer(f"attention[mha {nh}x{hd}]", f"mlp[{'glu' if gated else 'plain'} {inter}]", linears)
    layer.more("norms", norms * 2 * h)
    return layer


# SqueezeBERT's 1x1 convolutions: which group count each of the block's linears takes.
_SQUEEZEBERT_GROUPS = {"query": "q_groups", "key": "k_groups", "value": "v_groups",
                       "attention.output.dense": "post_attention_groups", "intermediate.dense": "intermediate_groups",
                       "output.dense": "output_groups"}


def _squeezebert_groups(cfg: Cfg, layer: Layer) -> None:
    """Grouped 1x1 convolutions in place of the dense layers: g groups hold in × out / g weights (and all the
    biases), counted as g linears of in/g → out/g."""
    out: list[tuple[str, LinearSpec]] = []
    for comp, spec in layer.linears:
        key = _SQUEEZEBERT_GROUPS.get(spec.name)
        g = (cfg.int(key, default=1, minimum=1) or 1) if key else 1
        if key and (spec.in_features % g or spec.out_features % g):
            raise ConfigError(cfg.key(key), f"{g} groups do not divide {spec.name} ({spec.in_features}->"
                                            f"{spec.out_features})")
        if g > 1:
            spec = lin(spec.name, spec.in_features // g, spec.out_features // g, spec.bias, count=g)
        out.append((comp, spec))
    layer.linears = out
    layer.mixer = layer.mixer.replace("attention[", "grouped_attention[")


def build_encoder(cfg: Cfg, b: Build, *, prefix: str = "encoder", head: str | None = None) -> None:
    """Adds a BERT-like encoder with the head its architecture names."""
    mt = cfg.model_type
    native_nomic = mt == "nomic_bert" and not cfg.has("qkv_proj_bias", "mlp_fc1_bias", "rotary_emb_fraction")
    if native_nomic:  # transformers' own NomicBERT: no biases in attention or MLP, SwiGLU, rotary positions
        cfg = Cfg({"qkv_proj_bias": False, "mlp_fc1_bias": False, "mlp_fc2_bias": False, **cfg.data}, cfg.path)
    gte = mt == "gte"  # GTE (mGTE): biased attention, a GLU whose down projection alone has a bias, rotary
    if gte:
        cfg = Cfg({"qkv_proj_bias": True, "mlp_fc1_bias": False, "mlp_fc2_bias": True, **cfg.data}, cfg.path)
    fourier = mt == "fnet"  # FNet mixes tokens with a Fourier transform: no attention weights, no heads
    if fourier:
        h, n_layers, nh = cfg.need("hidden"), cfg.need("layers"), 1
        inter = cfg.concept("ffn", minimum=1) or 4 * h
    else:
        h, n_layers, nh, inter = transformer_dims(cfg, b)
    head_dim = cfg.concept("head_dim", minimum=1)
    b.check(head_dim is None or head_dim * nh == h,
            f"head_dim ({head_dim}) × num_attention_heads ({nh}) is not hidden_size ({h}): BERT-style attention "
            "splits the width into the heads")
    vocab = cfg.need("vocab")
    b.vocab = vocab
    emb = cfg.int("embedding_size", "input_embedding_size", default=h, minimum=1) or h  # RemBERT: input_…
    seq = b.seq
    shape = (seq, h)
    b.embed("embeddings.word_embeddings", vocab, emb, (seq, emb))
    pos_type = cfg.str("position_embedding_type", default="absolute")
    rotary = (pos_type == "rotary" or (cfg.float("rotary_emb_fraction", default=0.0) or 0.0) > 0
              or ((native_nomic or gte) and cfg.has("rope_parameters", "rope_theta")))
    learned = pos_type not in ("alibi", "none") and not rotary and cfg.bool("position_biased_input", default=True)
    max_pos = cfg.concept("max_pos", minimum=1)
    b.max_pos = max_pos
    if learned:
        rows = max_pos or 512
        b.embed("embeddings.position_embeddings", rows, emb, (seq, emb), "position_embedding")
        b.check(seq <= rows, f"sequence length {seq} exceeds max_position_embeddings ({rows})")
    types = sum(cfg.int_list("type_vocab_sizes") or []) or (  # TAPAS: one table per token-type kind
        cfg.int("type_vocab_size", default=0 if mt in ("distilbert", "mpnet") else 2) or 0)
    if mt == "bert-generation":  # BertGenerationEmbeddings: word and position tables only
        types = 0
    if types:
        b.embed("embeddings.token_type_embeddings", types, emb, (seq, emb), "token_type_embedding")
    b.add("norms", 2 * emb)
    _extra_embeddings(cfg, b, emb, shape)
    if emb != h or fourier:  # FNet projects its embeddings even at the same width
        b.add("embeddings", emb * h + (0 if mt.startswith("deberta") else h))
        b.node("embeddings.projection", f"linear[{emb}->{h}]", shape)
    act = cfg.str("feed_forward_type", "mlp_type", "activation_function", "hidden_act", default="gelu")
    gated = act in ("glu", "geglu", "reglu", "swiglu") or (native_nomic and act in ("silu", "swish")) or gte
    layer = encoder_layer(cfg, h, nh, inter, gated=gated)
    if cfg.bool("add_cross_attention") and cfg.bool("is_decoder"):  # a BERT decoder of an encoder-decoder pair
        layer.linears += [("attention", lin(f"crossattention.{n}", h, h, True)) for n in ("query", "key", "value",
                                                                                             "output.dense")]
        layer.more("norms", 2 * h)
    languages = cfg.str_list("languages") or []
    if languages and cfg.has("adapter_reduction_factor"):  # X-MOD: a bottleneck adapter per language per layer
        width = h // (cfg.int("adapter_reduction_factor", minimum=1) or 1)
        layer.linears += [("adapters", lin("adapter.dense1", h, width, True, count=len(languages), active=1)),
                          ("adapters", lin("adapter.dense2", width, h, True, count=len(languages), active=1))]
        if cfg.bool("adapter_layer_norm") or not cfg.bool("adapter_reuse_layer_norm", default=True):
            layer.more("norms", 2 * h)
    if mt == "convbert":
        _convbert_attention(cfg, layer, h, nh)
    if mt == "squeezebert":
        _squeezebert_groups(cfg, layer)
    if fourier:
        layer.linears = [(c, s) for c, s in layer.linears if c != "attention"]
        layer.mixer = "fourier[no weights]"
    entities = cfg.int("entity_vocab_size", default=0) or 0
    if entities:  # LUKE: entity embeddings (own positions and types), entity-aware queries in every layer
        de = cfg.int("entity_emb_size", default=h, minimum=1) or h
        b.embed("entity_embeddings.entity_embeddings", entities, de, shape)
        b.add("embeddings", (h * de if de != h else 0) + (max_pos or 512) * h + types * h + 2 * h)
        if cfg.bool("use_entity_aware_attention", default=True):
            layer.linears += [("attention", lin(n, h, h, True)) for n in ("w2e_query", "e2w_query", "e2e_query")]
    if mt == "longformer":  # separate projections for the tokens with global attention
        layer.linears += [("attention", lin(f"{n}_global", h, h, True)) for n in ("query", "key", "value")]
    if mt not in ENCODER_TYPES:
        b.guess(f"BERT-like encoder (model_type {mt or '(none)'} routed by its keys: family extras not modelled)")
    if mt.startswith("deberta") and cfg.bool("relative_attention"):
        _deberta_relative(cfg, b, layer, h)
    stored = n_layers
    if mt == "albert":  # ALBERT shares one group of layers across the whole depth
        stored = (cfg.int("num_hidden_groups", default=1) or 1) * (cfg.int("inner_group_num", default=1) or 1)
    if mt == "mpnet":
        b.add("attention", (cfg.int("relative_attention_num_buckets", default=32) or 32) * nh)
    attention = AttentionSpec(nh, nh, h // nh, ("full",) * n_layers)
    b.stack("encoder", f"{prefix}.layer", [layer] * stored, hidden=h, intermediate=inter, attention=attention,
            shape=shape, extra_params=vocab * emb)
    if stored != n_layers:
        b.layers += n_layers - stored
        b.notes.append(f"{n_layers} layers share the weights of {stored}")
    pooled_before = b.components.get("pooler", 0)
    _encoder_head(cfg, b, head or head_kind(cfg), h, emb, vocab)
    adapters = cfg.str_list("lora_adaptations")
    if adapters:  # present whether or not trained weights are loaded from the base repo
        # LoRA-parametrised encoders (Jina v3-style): every linear and embedding carries rank-r A/B per task.
        rank = cfg.int("lora_rank", default=4, minimum=1) or 0
        per_task = sum(spec.in_features + spec.out_features for _, spec in layer.linears) * stored
        per_task -= 2 * h * stored  # these implementations fuse Q, K and V into one adapted projection
        per_task += vocab + emb + (types + emb if types else 0) + ((max_pos or 512) + emb if learned else 0)
        if b.components.get("pooler", 0) > pooled_before:
            per_task += 2 * h
        b.add("adapters", len(adapters) * rank * per_task)
        b.notes.append(f"{len(adapters)} LoRA task adapters of rank {rank} counted")


def _convbert_attention(cfg: Cfg, layer: Layer, h: int, nh: int) -> None:
    """ConvBERT's mixed attention: self-attention over h / head_ratio, and a span-based dynamic convolution
    (depthwise-separable key convolution, per-head kernels, a convolution output projection)."""
    ratio = cfg.int("head_ratio", default=2, minimum=1) or 1
    kernel = cfg.int("conv_kernel_size", default=9, minimum=1) or 1
    heads = max(nh // ratio, 1)
    width = h // ratio
    if cfg.int("num_groups", default=1, minimum=1) != 1:
        raise ConfigError(cfg.key("num_groups"), "grouped ConvBERT feed-forward layers are not modelled; "
                          "only num_groups = 1 is")
    own = ("query", "key", "value", "attention.output.dense")  # BERT's self-attention, replaced here
    layer.linears = [(c, s) for c, s in layer.linears if s.name not in own] + [
        ("attention", lin(n, h, width, True)) for n in ("query", "key", "value", "conv_out_layer")] + [
        ("attention", lin("key_conv_attn_layer.pointwise", h, width, False)),
        ("attention", lin("conv_kernel_layer", width, heads * kernel, True)),
        ("attention", lin("attention.output.dense", h, h, True))]
    layer.more("attention", h * kernel + width)  # the depthwise kernel and the separable convolution's bias


def _extra_embeddings(cfg: Cfg, b: Build, emb: int, shape: tuple[int, ...]) -> None:
    """Family tables beside the word embeddings: LayoutLM's 2-D box positions (x, y, height, width);
    RoCBERT's pronunciation and glyph-shape embeddings, concatenated and mapped back to the width."""
    boxes = cfg.int("max_2d_position_embeddings", default=0) or 0
    if boxes:
        b.embed("embeddings.box_position_embeddings", 4 * boxes, emb, shape, "position_embedding")
    extra = 0
    for kind in ("pronunciation", "shape"):
        if cfg.has(f"{kind}_vocab_size") and cfg.bool(f"enable_{kind}", default=True):
            dim = cfg.int(f"{kind}_embed_dim", default=emb, minimum=1) or emb
            b.embed(f"embeddings.{kind}_embed", cfg.int(f"{kind}_vocab_size", minimum=1) or 0, dim, shape)
            extra += dim
    if extra and cfg.bool("concat_input", default=True):
        b.add("embeddings", (emb + extra) * emb + emb)
        b.node("embeddings.map_inputs_layer", f"linear[{emb + extra}->{emb}]", shape)


def _deberta_relative(cfg: Cfg, b: Build, layer: Layer, h: int) -> None:
    buckets = cfg.int("position_buckets", default=-1, minimum=-1) or -1
    max_rel = cfg.int("max_relative_positions", default=-1, minimum=-1) or -1
    size = buckets if buckets > 0 else (max_rel if max_rel > 0 else (cfg.concept("max_pos") or 512))
    b.add("embeddings", 2 * size * h)
    if "layer_norm" in cfg.str("norm_rel_ebd", default="none"):
        b.add("norms", 2 * h)
    if not cfg.bool("share_att_key"):
        kinds = cfg.str_list("pos_att_type") or []
        for kind, name in (("c2p", "pos_key_proj"), ("p2c", "pos_query_proj")):
            if kind in kinds:
                layer.linears.append(("attention", lin(name, h, h, name == "pos_key_proj" or True)))


def _encoder_head(cfg: Cfg, b: Build, kind: str, h: int, emb: int, vocab: int) -> None:
    mt = cfg.model_type
    labels = cfg.num_labels()
    seq = b.seq
    pooler = h * h + h
    if mt == "bert-generation" and cfg.architecture == "BertGenerationDecoder":  # the encoder plus an LM head
        kind = "lm"

    def add(name: str, type_: str, params: int, shape: tuple[int, ...], comp: str = "head") -> None:
        b.add(comp, params)
        b.node(name, type_, shape)

    if kind == "pretrain" and mt == "electra":  # the discriminator alone: no generator head
        add("discriminator_predictions", "classifier[1]", h * h + h + h + 1, (seq, 1))
    elif kind in ("mlm", "pretrain", "lm") and mt == "bert-generation":
        # BertGenerationOnlyLMHead: a decoder with no transform; tied, its weight is the word table and its
        # bias is lm_head.bias (BertGenerationDecoder._tied_weights_keys), untied both are their own
        untied = not cfg.bool("tie_word_embeddings", default=True)
        add("lm_head", "lm_head", vocab + (vocab * h + vocab if untied else 0), (seq, vocab))
        b.lm_head_params += vocab * h if untied else 0
    elif kind in ("mlm", "pretrain", "lm"):
        out = cfg.int("output_embedding_size", default=emb if mt in ("albert", "electra", "convbert") else h,
                    minimum=1) or h  # ConvBERT: generator_predictions maps to embedding_size
        # A decoder wider than the word table cannot share it (RemBERT: 256-wide input embeddings, a 1664-wide
        # output layer): transformers 5.24.0 builds it as its own matrix whatever tie_word_embeddings says
        untied = not cfg.bool("tie_word_embeddings", default=True) or out != emb
        add("lm_head", "mlm_head", h * out + out + 2 * out + vocab + (vocab * out if untied else 0), (seq, vocab))
        b.lm_head_params += vocab * out if untied else 0
        if kind == "pretrain" or mt in ("layoutlm", "luke", "fnet", "squeezebert", "big_bird"):  # MLM models that keep the pooler
            add("pooler", "pooler", pooler, (h,), "pooler")
        if mt == "luke":  # entity prediction head; transformers builds LUKE's MLM decoder as its own matrix
            de = cfg.int("entity_emb_size", default=h, minimum=1) or h
            entities = cfg.int("entity_vocab_size", default=0) or 0
            add("entity_predictions", "entity_head", h * de + 3 * de + entities, (seq, entities))
            add("lm_head.decoder", "lm_head", 0 if untied else vocab * out, (seq, vocab))
            b.lm_head_params += 0 if untied else vocab * out
            if untied:  # LukeForMaskedLM._tied_weights_keys: the entity decoder and lm_head.bias are their own
                add("entity_predictions.decoder", "entity_decoder", entities * de + vocab, (seq, entities))
        if kind == "pretrain":
            add("seq_relationship", "classifier[2]", 2 * h + 2, (2,))
    elif kind == "seqcls":
        if mt in ROBERTA_HEADS:
            add("classifier", f"classification_head[{labels}]", h * h + h + h * labels + labels, (labels,))
        elif mt == "distilbert":
            add("classifier", f"classification_head[{labels}]", h * h + h + h * labels + labels, (labels,))
        elif mt.startswith("deberta"):
            ph = cfg.int("pooler_hidden_size", default=h) or h
            add("pooler", "context_pooler", h * ph + ph, (ph,), "pooler")
            add("classifier", f"classifier[{labels}]", ph * labels + labels, (labels,))
        else:
            add("pooler", "pooler", pooler, (h,), "pooler")
            add("classifier", f"classifier[{labels}]", h * labels + labels, (labels,))
    elif kind == "tokcls":
        add("classifier", f"classifier[{labels}]", h * labels + labels, (seq, labels))
    elif kind == "qa":
        add("qa_outputs", "span_classifier", 2 * h + 2, (seq, 2))
    elif kind == "mc":  # every family pools the first token through an h×h layer before scoring
        add("pooler", "pooler", pooler, (h,), "pooler")
        add("classifier", "classifier[1]", h + 1, (1,))
    elif mt == "dpr":
        proj = cfg.int("projection_dim", default=0) or 0
        if proj:
            add("encode_proj", f"linear[{h}->{proj}]", h * proj + proj, (proj,))
    elif mt not in NO_POOLER and cfg.bool("add_pooling_layer", default=True):
        add("pooler", "pooler", pooler, (h,), "pooler")
