"""The architecture registry: every model type the estimator routed by name before the registry still has its
builder, a new architecture is found from its row alone, and a config imports only the builders it needs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hubwatch.estimator import analyze
from hubwatch.estimator.architectures import registry
from hubwatch.estimator.architectures.registry import ARCHITECTURES, Route, load

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "data" / "configs"

# Every model type `families.py` named before the registry (its *_TYPES sets and literals), with the
# builder it called then: the table must keep each of them, built by the same function.
BEFORE: dict[str, str] = {
    **dict.fromkeys(("t5", "mt5", "umt5", "longt5", "switch_transformers"), "build_t5"),
    "t5gemma": "_t5gemma", "t5gemma2": "build_t5gemma2", "prophetnet": "build_prophetnet",
    **dict.fromkeys(("bart", "mbart", "plbart", "pegasus", "marian", "blenderbot", "blenderbot-small", "m2m_100",
                     "nllb", "whisper", "bigbird_pegasus", "fsmt", "speech_to_text", "mvp", "trocr", "led",
                     "nllb-moe"), "build_bart"),
    **dict.fromkeys(("roberta", "xlm-roberta", "camembert", "data2vec-text", "xlm-roberta-xl", "electra", "mpnet",
                     "roberta-prelayernorm", "longformer", "xmod", "distilbert", "deberta", "deberta-v2", "dpr",
                     "nomic_bert", "bert-generation", "bert", "albert", "ernie", "megatron-bert", "jina_bert", "xlm",
                     "layoutlm", "splinter", "nezha", "roc_bert", "tapas", "gte", "convbert", "luke", "fnet",
                     "squeezebert"), "build_encoder"),
    "funnel": "build_funnel", "modernbert": "build_modernbert", "mobilebert": "build_mobilebert",
    "wav2vec2": "build_speech", "hubert": "build_speech",
    "clip_text_model": "build_text_tower", "siglip_text_model": "build_text_tower",
    **dict.fromkeys(("vit", "deit", "dinov2", "beit", "vit_mae", "vit_msn", "dinov2_with_registers",
                     "clip_vision_model", "siglip_vision_model", "idefics3_vision", "siglip2_vision_model",
                     "data2vec-vision"), "build_vision"),
    "mllama": "build_mllama",
    **dict.fromkeys(("clip", "siglip", "siglip2", "chinese_clip", "altclip", "jina_clip", "metaclip_2"),
                    "_dual_tower"),
    "mamba": "build_mamba", "falcon_mamba": "build_mamba", "mamba2": "build_mamba",
    "xlnet": "build_xlnet", "musicgen_decoder": "build_musicgen", "musicgen_melody_decoder": "build_musicgen",
    "modernbert-decoder": "build_modernbert",
    **dict.fromkeys(("zamba", "zamba2", "recurrent_gemma", "rwkv"), "build_recurrent"),
    "gemma3n_text": "build_gemma3n", "cpmant": "build_cpmant", "hrm_text": "build_hrm_text",
    "reformer": "build_reformer", "git": "build_git", "neomme": "build_neomme",
    "longcat_flash": "build_longcat_flash", "zaya": "build_zaya", "perceiver": "build_perceiver",
    "inkling_text": "build_inkling", "inkling2_text": "build_inkling_like", "inkling2_loop_text": "build_inkling_like",
}
BRANCHES = {"encoder-decoder", "encoder", "decoder", "text-tower", "vision", "composite"}


def test_every_model_type_routed_before_keeps_its_builder() -> None:
    missing = sorted(set(BEFORE) - set(ARCHITECTURES))
    assert missing == [], f"model types the estimator routed by name before, now without a row: {missing}"
    moved = {mt: ARCHITECTURES[mt].target for mt, name in BEFORE.items()
             if ARCHITECTURES[mt].target.rpartition(":")[2] != name}
    assert moved == {}


@pytest.mark.parametrize("model_type", sorted(ARCHITECTURES))
def test_every_row_names_a_builder_that_exists(model_type: str) -> None:
    route = ARCHITECTURES[model_type]
    assert route.branch in BRANCHES
    assert route.target.startswith(".") and ":" in route.target  # a module inside architectures/
    assert callable(load(route.target))


def test_a_config_imports_only_the_builders_of_its_family() -> None:
    """A GPT-2 config loads the decoder's modules and none of the encoder, encoder-decoder or vision builders;
    a T5 config then loads T5's module, still no vision or speech one."""
    script = textwrap.dedent(f"""
        import json, sys
        from hubwatch.estimator import analyze
        def loaded():
            return sorted(m.split("architectures.")[1] for m in sys.modules
                          if m.startswith("hubwatch.estimator.architectures.") and m.count(".") == 4)
        analyze(json.loads(open({str(CONFIGS / "openai-community__gpt2" / "config.json")!r}).read()))
        print(json.dumps(loaded()))
        analyze(json.loads(open({str(CONFIGS / "google__flan-t5-base" / "config.json")!r}).read()))
        print(json.dumps(loaded()))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    gpt2, t5 = (set(json.loads(line)) for line in done.stdout.splitlines())
    assert "decoder_only.decoders" in gpt2
    assert not {m for m in gpt2 if m.startswith(("encoder_only.", "encoder_decoder.", "multimodal."))}
    assert t5 - gpt2 == {"encoder_decoder.encdec"}


def test_a_new_architecture_is_found_from_its_row_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder module nobody imports, and one row in the table: a config of its model type is built by it."""
    package = tmp_path / "arch_plugin_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "brand_new.py").write_text(textwrap.dedent("""
        from hubwatch.estimator.architectures.decoder_only.decoders import build_decoder
        from hubwatch.estimator.config import Cfg

        def build_brand_new(cfg, b):
            build_decoder(Cfg({**cfg.data, "model_type": "llama"}, cfg.path), b)
            b.add("projector", 12345)  # what this architecture adds to a Llama
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_LOADED", dict(registry._LOADED))  # the builder is forgotten afterwards
    monkeypatch.setitem(ARCHITECTURES, "brand_new", Route("decoder", "arch_plugin_pkg.brand_new:build_brand_new"))
    llama = json.loads((CONFIGS / "meta-llama__Llama-3.2-1B-Instruct" / "config.json").read_text())
    assert "arch_plugin_pkg.brand_new" not in sys.modules
    base = analyze(llama).params
    new = analyze({**llama, "model_type": "brand_new"}).params
    assert "arch_plugin_pkg.brand_new" in sys.modules
    assert new.derived == base.derived + 12345
    assert new.by_component["projector"] == base.by_component.get("projector", 0) + 12345
    monkeypatch.delitem(sys.modules, "arch_plugin_pkg.brand_new")
    monkeypatch.delitem(sys.modules, "arch_plugin_pkg")


def test_a_type_the_table_does_not_name_is_built_by_the_generic_decoder() -> None:
    llama = json.loads((CONFIGS / "meta-llama__Llama-3.2-1B-Instruct" / "config.json").read_text())
    assert "llama" not in ARCHITECTURES
    assert analyze(llama).params.derived == 1_235_814_400
    assert registry.model_types(".encoder_decoder.encdec:build_t5") == {"t5", "mt5", "umt5", "longt5",
                                                                       "switch_transformers"}
