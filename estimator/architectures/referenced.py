"""Configs of public base models that composite configs reference by name instead of inlining.

A tower given only as `hf_model_name_or_path` (e.g. Jina CLIP's text tower) can be counted when
its base config is listed here; otherwise the estimate says the tower was not counted. Values are
the public config.json of each named repo.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REFERENCED_CONFIGS"]

REFERENCED_CONFIGS: dict[str, dict[str, Any]] = {
    # huggingface.co/jinaai/jina-embeddings-v3 config.json (XLM-RoBERTa with rotary positions and LoRA tasks)
    "jinaai/jina-embeddings-v3": {
        "model_type": "xlm-roberta", "architectures": ["XLMRobertaModel"], "hidden_size": 1024,
        "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 250002,
        "max_position_embeddings": 8194, "type_vocab_size": 1, "position_embedding_type": "rotary",
        "lora_adaptations": ["retrieval.query", "retrieval.passage", "separation", "classification",
                             "text-matching"],
        "lora_rank": 4,
    },
    # huggingface.co/openai/clip-vit-large-patch14(-336) vision_config: the tower LLaVA-1.5 names in mm_vision_tower
    "openai/clip-vit-large-patch14-336": {
        "model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
        "num_hidden_layers": 24, "image_size": 336, "patch_size": 14, "num_channels": 3,
    },
    "openai/clip-vit-large-patch14": {
        "model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
        "num_hidden_layers": 24, "image_size": 224, "patch_size": 14, "num_channels": 3,
    },
}
