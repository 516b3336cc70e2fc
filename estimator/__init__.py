"""The estimator: pure functions from a config (and weight manifest) to structure, parameters and memory."""

if __name__ != "hubwatch.estimator":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.estimator, not {__name__}: the folder estimator/ is installed as hubwatch.estimator")

import sys
import types
from typing import TYPE_CHECKING, Any

# Nothing is imported until a name is asked for (PEP 562): `hubwatch --help` reads the option
# choices in memory/settings.py without loading the model code.
if TYPE_CHECKING:
    from hubwatch.estimator.api import ESTIMATOR_VERSION, Analysis, ParamsReport, analyze
    from hubwatch.estimator.config import ConfigError
    from hubwatch.estimator.estimate import Estimate, Memory
    from hubwatch.estimator.estimate_delta import EstimateDelta, estimate_delta
    from hubwatch.estimator.lints import Finding, merge_special_tokens
    from hubwatch.estimator.manifest import Manifest
    from hubwatch.estimator.memory.peak import MemoryEstimate, estimate_memory
    from hubwatch.estimator.estimate_delta import memory_delta_summary
    from hubwatch.estimator.memory.report import estimate_revision
    from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError
    from hubwatch.estimator.params.structure import Node, Structure

__all__ = ["ESTIMATOR_VERSION", "Analysis", "ConfigError", "Finding", "Manifest", "Node", "ParamsReport",
           "Structure", "analyze", "merge_special_tokens"]
__all__ += ["Estimate", "EstimateDelta", "Memory", "estimate_delta"]
__all__ += ["MemoryEstimate", "MemorySettings", "MemorySettingsError", "estimate_memory", "estimate_revision",
            "memory_delta_summary"]

_WHERE = {
    "ESTIMATOR_VERSION": "hubwatch.estimator.api",
    "Analysis": "hubwatch.estimator.api",
    "ParamsReport": "hubwatch.estimator.api",
    "analyze": "hubwatch.estimator.api",
    "ConfigError": "hubwatch.estimator.config",
    "Estimate": "hubwatch.estimator.estimate",
    "Memory": "hubwatch.estimator.estimate",
    "EstimateDelta": "hubwatch.estimator.estimate_delta",
    "estimate_delta": "hubwatch.estimator.estimate_delta",
    "Finding": "hubwatch.estimator.lints",
    "merge_special_tokens": "hubwatch.estimator.lints",
    "Manifest": "hubwatch.estimator.manifest",
    "MemoryEstimate": "hubwatch.estimator.memory.peak",
    "estimate_memory": "hubwatch.estimator.memory.peak",
    "memory_delta_summary": "hubwatch.estimator.estimate_delta",
    "estimate_revision": "hubwatch.estimator.memory.report",
    "MemorySettings": "hubwatch.estimator.memory.settings",
    "MemorySettingsError": "hubwatch.estimator.memory.settings",
    "Node": "hubwatch.estimator.params.structure",
    "Structure": "hubwatch.estimator.params.structure",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """Keeps a function whose module has its name (`estimate_delta`) from being replaced by the module.

    Importing a submodule sets it as an attribute of the package; eagerly imported, the function
    was bound afterwards and won. Lazily, the function is put back when the module is set.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _WHERE.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
