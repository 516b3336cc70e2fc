"""The estimator: pure functions from a config (and weight manifest) to structure, parameters and memory."""

if __name__ != "hubwatch.estimator":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.estimator, not {__name__}: the folder estimator/ is installed as hubwatch.estimator")

from hubwatch.estimator.api import ESTIMATOR_VERSION, Analysis, ParamsReport, analyze
from hubwatch.estimator.config import ConfigError
from hubwatch.estimator.estimate import Estimate, Memory
from hubwatch.estimator.estimate_delta import EstimateDelta, estimate_delta
from hubwatch.estimator.lints import Finding, merge_special_tokens
from hubwatch.estimator.manifest import Manifest
from hubwatch.estimator.memory import MemoryEstimate, estimate_memory
from hubwatch.estimator.estimate_delta import memory_delta_summary
from hubwatch.estimator.memory_report import estimate_revision
from hubwatch.estimator.memory_settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.structure import Node, Structure

__all__ = ["ESTIMATOR_VERSION", "Analysis", "ConfigError", "Finding", "Manifest", "Node", "ParamsReport",
           "Structure", "analyze", "merge_special_tokens"]
__all__ += ["Estimate", "EstimateDelta", "Memory", "estimate_delta"]
__all__ += ["MemoryEstimate", "MemorySettings", "MemorySettingsError", "estimate_memory", "estimate_revision",
            "memory_delta_summary"]
