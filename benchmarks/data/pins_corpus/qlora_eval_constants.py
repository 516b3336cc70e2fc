"""Hold paths and constants for the frozen validation evaluation."""

from pathlib import Path


PROJECT_ROOT = Path(__file__).resolve().parents[2]

MODEL_ID = "unsloth/Qwen3-4B-Instruct-2507-unsloth-bnb-4bit"
MODEL_REVISION = "7744afa8566e264af1a92a806d8d9aae00cc7c78"
TARGET_CATEGORIES = ("bug", "feature", "documentation", "question_support")
