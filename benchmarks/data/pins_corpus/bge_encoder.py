"""Offline BGE encoder using the container's model and preprocessing."""

from pathlib import Path

MODEL = "BAAI/bge-small-zh-v1.5"
DIMENSIONS = 512
MODEL_REPOSITORY = "Qdrant/bge-small-zh-v1.5"
MODEL_REVISION = "46fbe35fd4374a00fee7de77dfddaeb6dd6a2c59"


def load_encoder(model_path: Path):
    from fastembed import TextEmbedding
