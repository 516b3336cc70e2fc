"""What `analyze` takes for one revision, from its files by path, and the estimate the CLI makes of it.

The files come from wherever the caller keeps them (a hub snapshot, a local folder, the store): the
caller parses each JSON file (bounded, as remote data) and hands a reader over; this module decides
which file means what, so the tracker, the CLI and the web app read a revision alike.
`estimate_inputs` is `hubwatch estimate`'s procedure: the analysis (with the layer graph) and the
Estimate at the given settings, cards, run shape and cost card.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.manifest import Manifest

if TYPE_CHECKING:
    from hubwatch.estimator.api import Analysis
    from hubwatch.estimator.cards import Card
    from hubwatch.estimator.cost import RunShape
    from hubwatch.estimator.estimate import Estimate
    from hubwatch.estimator.memory.settings import MemorySettings

__all__ = ["DEFAULT_SEQ_LEN", "ESTIMATOR_FILES", "EstimatorInputs", "JsonReader", "estimate_inputs", "files_manifest",
           "inputs_from_files", "is_estimator_file"]

# The files the estimator reads besides safetensors headers (`weights.json`: the emulator's manifest).
ESTIMATOR_FILES = ("config.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json")
DEFAULT_SEQ_LEN = 2048

JsonReader = Callable[[str], "dict[str, Any] | None"]  # path → the file's JSON object (None: absent or unreadable)


@frozen
class EstimatorInputs:
    """What `analyze` takes for one revision or folder."""

    config: dict[str, Any]
    manifest: Manifest | None
    tokenizer_config: dict[str, Any] | None
    generation_config: dict[str, Any] | None
    revision: str | None = None


def is_estimator_file(path: str) -> bool:
    """A file the estimator reads (root level only), besides `*.safetensors` headers."""
    return path in ESTIMATOR_FILES or (path.endswith(".safetensors.index.json") and "/" not in path)


def files_manifest(read: JsonReader, paths: Iterable[str], headers: Mapping[str, Mapping[str, Any]] | None,
                   config: Mapping[str, Any]) -> Manifest | None:
    """The checkpoint: a `weights.json` manifest, else the safetensors `headers` (None when any of
    them is unreadable), else the first root `*.safetensors.index.json` (with the config's dtype)."""
    weights = read("weights.json")
    if weights is not None:
        return Manifest.from_weights_json(weights)
    if headers:
        return Manifest.from_safetensors_headers(headers)
    for path in sorted(paths):
        if path.endswith(".safetensors.index.json") and "/" not in path:
            index = read(path)
            if index is not None:
                dtype = config.get("torch_dtype") or config.get("dtype")
                return Manifest.from_index(index, dtype=dtype if isinstance(dtype, str) else None)
    return None


def inputs_from_files(read: JsonReader, paths: Iterable[str], headers: Mapping[str, Mapping[str, Any]] | None,
                      revision: str | None = None) -> EstimatorInputs | None:
    """The estimator's inputs from a revision's files, or None when it has no readable config.json."""
    from hubwatch.estimator.lints import merge_special_tokens

    config = read("config.json")
    if config is None:
        return None
    tokenizer = merge_special_tokens(read("tokenizer_config.json"), read("special_tokens_map.json"))
    return EstimatorInputs(config, files_manifest(read, paths, headers, config), tokenizer,
                           read("generation_config.json"), revision or None)


def estimate_inputs(inputs: EstimatorInputs, settings: MemorySettings, *, cards: tuple[Card, ...], run: RunShape,
                    cost_card: Card | None, model: str | None = None) -> tuple[Analysis, Estimate]:
    """The analysis (structure, parameters, findings) and the Estimate (memory, cards, cost), as
    `hubwatch estimate` makes them: the default length is capped at the model's context; a selected
    method the model cannot run raises MemorySettingsError (ConfigError for a config it cannot read)."""
    from hubwatch.estimator.api import analyze
    from hubwatch.estimator.memory.report import memory_report, with_analysis

    def run_analysis(seq_len: int) -> Analysis:
        return analyze(inputs.config, manifest=inputs.manifest, tokenizer_config=inputs.tokenizer_config,
                       generation_config=inputs.generation_config, seq_len=seq_len, model=model,
                       revision=inputs.revision)

    analysis = run_analysis(settings.seq_len or DEFAULT_SEQ_LEN)
    context = analysis.spec.max_position_embeddings
    if settings.seq_len is None and context and context < DEFAULT_SEQ_LEN:
        analysis = run_analysis(context)
    report = memory_report(analysis.spec, settings, cards=cards, run=run, cost_card=cost_card)
    return analysis, with_analysis(report, analysis)
