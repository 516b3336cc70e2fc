from __future__ import annotations

import math
from pathlib import Path
import statistics
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from experiments.rlt.model import RLTConfig, RecurrentLoopedTransformer, parameter_count as rlt_parameter_count
from tam_research.models import ModelConfig, ResearchLM, parameter_count as transformer_parameter_count


DATASET_ID = "Salesforce/wikitext"
DATASET_CONFIG = "wikitext-103-raw-v1"
DATASET_REVISION = "00aa25585682d4957f9e86edc73f59be7419af99"
DATASET_SPLIT = "test"
TOKENIZER_ID = "gpt2"
SEQ_LEN = 64
BATCH_SIZE = 64
EVAL_BATCHES = 32
