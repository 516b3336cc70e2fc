"""Estimates of a pasted config or of a stored revision: the inputs read back from the store, the panel
(cached per revision or config digest and settings) and `POST /api/v1/plan`'s JSON.

A stored revision's inputs are the files the tracker kept (config, tokenizer and generation
configs, the safetensors headers or index), read by `estimator.inputs` as the tracker reads a
snapshot; nothing is fetched from the hub.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hubwatch.domain.records import InvalidRepoId, RepoId
from hubwatch.domain.remote_data import load_remote_json
from hubwatch.domain.snapshot import unreadable_header
from hubwatch.estimator.inputs import EstimatorInputs, inputs_from_files, is_estimator_file
from hubwatch.feeds.builders.estimate_panel import EstimatePanel, PanelCache, PanelError, estimate_panel
from hubwatch.feeds.builders.plan_dataset import with_dataset
from hubwatch.feeds.builders.plan_settings import PlanInputError, PlanSettings, settings_from_json
from hubwatch.feeds.errors import ApiError, bad_request, not_found

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["MAX_CONFIG_BYTES", "config_inputs", "config_panel", "plan_estimate", "resolve_revision", "revision_panel",
           "stored_inputs"]

MAX_CONFIG_BYTES = 512 * 1024  # a pasted config.json (the largest real ones are ~20 KB)
_COST_KEYS = ("epochs", "samples", "card", "dataset", "dataset_config", "dataset_split")
_KEYS = ("config", "repo", "revision", "settings", *_COST_KEYS)


def _json_object(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = load_remote_json(raw)
    except ValueError:  # not JSON, not UTF-8, too large or too deeply nested
        return None
    return value if isinstance(value, dict) else None


def stored_inputs(store: Store, repo: RepoId, sha: str) -> EstimatorInputs | None:
    """The estimator's inputs from the files stored for `repo` at `sha` (None: no readable config.json)."""
    files, contents = store.revisions.snapshot_files(repo, sha)
    headers: dict[str, Mapping[str, Any]] = {}
    readable = True
    for f in files:
        if f.path.endswith(".safetensors"):
            header = _json_object(contents.get(f.path))
            if header is None or unreadable_header(header) is not None:
                readable = False
            else:
                headers[f.path] = header
    wanted = {p: raw for p, raw in contents.items() if is_estimator_file(p) or p == "weights.json"}
    return inputs_from_files(lambda path: _json_object(wanted.get(path)), wanted,
                             headers if readable else None, sha)


def resolve_revision(store: Store, repo_text: str, revision: str | None) -> tuple[RepoId, str]:
    """The repo and the full sha of its stored revision `revision` (a sha or a prefix of 7+ characters;
    empty or "latest": the newest); PlanInputError naming `repo` or `revision` when there is none."""
    try:
        repo = RepoId.parse(repo_text.strip())
    except InvalidRepoId as exc:
        raise PlanInputError("repo", f"{exc} (give org/name, e.g. meta-llama/Llama-2-7b-hf)") from exc
    wanted = (revision or "").strip().lower()
    if wanted in ("", "latest", "main", "head"):
        newest, _ = store.revisions.history_page(repo, limit=1)
        if not newest:
            known = store.repo_state(repo) is not None
            raise PlanInputError("repo", f"{repo} has no stored revision yet (the next poll backfills it)" if known
                                 else f"{repo} is not watched by this hubwatch (watch it first)")
        return repo, newest[0].revision.sha
    entry = store.revision(repo, wanted)  # AmbiguousRevision for a shared prefix: the app's 400
    if entry is None:
        raise PlanInputError("revision", f"{repo} has no stored revision {wanted!r} (give 7–40 hex characters "
                                         "of a stored commit, or leave it empty for the latest)")
    return repo, entry.revision.sha


def revision_panel(store: Store, cache: PanelCache, repo: RepoId, sha: str, settings: PlanSettings
                   ) -> EstimatePanel | PanelError | None:
    """The panel of a stored revision (None: it has no readable config.json), cached per (sha, settings)."""
    def make() -> EstimatePanel | PanelError | None:
        inputs = stored_inputs(store, repo, sha)
        return None if inputs is None else estimate_panel(inputs, settings, model=str(repo))

    return cache.get((f"{repo}@{sha}", settings), make)


def config_inputs(config: dict[str, Any]) -> EstimatorInputs:
    """A pasted config alone: no manifest, no tokenizer files."""
    return EstimatorInputs(config, None, None, None)


def config_panel(cache: PanelCache, config: dict[str, Any], settings: PlanSettings) -> EstimatePanel | PanelError:
    """The panel of a pasted config, cached per (digest of its canonical JSON, settings)."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    panel = cache.get((f"config:{digest}", settings), lambda: estimate_panel(config_inputs(config), settings))
    assert panel is not None  # estimate_panel always answers
    return panel


def _api_error(exc: PlanInputError) -> ApiError:
    where = exc.field if exc.field in (*_COST_KEYS, "repo", "revision", "settings") else f"settings.{exc.field}"
    return bad_request(f"{where}: {exc.problem}")


def plan_estimate(body: Any, store: Store) -> dict[str, Any]:
    """`analyze(...).to_json()` plus `"memory"`: the memory report (per method, batch per card, cost) at
    the settings and cost inputs, of a pasted `config` or of a watched `repo`'s stored `revision`
    (default: the latest), with `"dataset"` (its rows, tokens per sample and where they came from) when the run
    is costed on a watched dataset's stored revision. A config, repo, dataset or setting the estimator rejects
    is a 400 naming the key."""
    from hubwatch.estimator.config import ConfigError
    from hubwatch.estimator.inputs import estimate_inputs
    from hubwatch.estimator.memory.settings import MemorySettingsError

    if not isinstance(body, dict):
        raise bad_request('body must be a JSON object: {"config": {...}} or {"repo": "org/name"}, '
                          'with optional "settings", "epochs", "samples", "card", "dataset", "dataset_config", '
                          '"dataset_split"')
    unknown = sorted(set(body) - set(_KEYS))
    if unknown:
        raise bad_request(f"{unknown[0]} is not a plan field (use {', '.join(_KEYS)})")
    config, repo_text, revision = body.get("config"), body.get("repo"), body.get("revision")
    if (config is None) == (repo_text is None):
        raise bad_request("give either config (the model's config.json) or repo (a watched org/name), not "
                          + ("both" if config is not None else "neither"))
    if revision is not None and (repo_text is None or not isinstance(revision, str)):
        raise bad_request("revision: give it as text, with repo (a stored commit sha or prefix; default: latest)")
    try:
        settings, chosen = with_dataset(store, settings_from_json(body.get("settings"),
                                                                  {k: body[k] for k in _COST_KEYS if k in body}))
        model = None
        if repo_text is not None:
            if not isinstance(repo_text, str):
                raise PlanInputError("repo", "expected org/name as text")
            repo, sha = resolve_revision(store, repo_text, revision)
            inputs = stored_inputs(store, repo, sha)
            if inputs is None:
                raise ApiError(404, "not_found", f"{repo}@{sha[:12]} has no readable config.json stored")
            model = str(repo)
        elif not isinstance(config, dict):
            raise bad_request("config must be a JSON object (the model's config.json)")
        else:
            inputs = config_inputs(config)
    except PlanInputError as exc:
        if exc.field == "repo" and "not watched" in exc.problem:
            raise not_found(f"repo: {exc.problem}") from exc
        raise _api_error(exc) from exc
    try:
        analysis, estimate = estimate_inputs(inputs, settings.memory, cards=settings.cards, run=settings.run,
                                             cost_card=settings.card, model=model)
    except ConfigError as exc:
        raise bad_request(f"config.{exc}" if exc.key and exc.key != "config" else f"config: {exc.problem}") from exc
    except MemorySettingsError as exc:
        raise bad_request(f"settings.{exc}") from exc
    except (ValueError, TypeError, LookupError, ArithmeticError, RecursionError) as exc:
        raise bad_request(f"config: the estimator cannot read it ({type(exc).__name__}: {exc})") from exc
    from hubwatch.estimator.verdict import estimate_verdicts, support_words

    result = analysis.to_json()
    words = support_words(analysis.params.support)
    result["support"] = None if words is None else words.to_json()
    result["memory"] = {**estimate.memory_json(), "verdicts": [v.to_json() for v in estimate_verdicts(estimate)]}
    if chosen is not None:
        result["dataset"] = chosen.to_json()
    return result
