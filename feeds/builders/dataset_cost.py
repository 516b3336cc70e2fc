"""The cost of a fine-tune on a dataset, for the dataset's own pages: one epoch of a watched model (its newest
stored revision) on one config and split of THIS dataset revision, and how that moved against the
parent revision when the parent is stored ("train rows 100 → 150: cost per epoch $x → $y").

Everything is what `/plan` does (`plan_dataset.with_dataset`, `plan.revision_panel`, the estimator's
`dataset_run` and its cost, the same panel cache); the hours and dollars are the estimator's
`run_hours` of the run's FLOPs, not the panel's rounded figures, so a small dataset's few cents and
their change still show. A model, method, config or split that cannot be costed is a message, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from hubwatch.domain.records import InvalidRepoId, RepoId, RepoType
from hubwatch.estimator.cards import card_by_name
from hubwatch.estimator.cost import PRICE_TABLE_DATE, RunShape, run_hours
from hubwatch.estimator.dataset_size import DatasetRun, DatasetSummary
from hubwatch.feeds.builders.estimate_panel import METHOD_LABELS, EstimatePanel, PanelCache
from hubwatch.feeds.builders.plan import revision_panel
from hubwatch.feeds.builders.plan_dataset import stored_summary, with_dataset
from hubwatch.feeds.builders.plan_settings import PlanInputError, plan_settings

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hubwatch.storage import Store

__all__ = ["COST_FIELDS", "MAX_MODELS", "TRAINING_METHODS", "CostPoint", "DatasetCost", "dataset_cost"]

MAX_MODELS = 200  # watched models the select offers (the first by org/name; ?model= names any other)
TRAINING_METHODS = ("lora", "qlora", "full")  # the default first, as the model page's form has it
COST_FIELDS = ("model", "method", "dataset_config", "dataset_split")  # the panel's GET parameters


@dataclass(frozen=True)
class CostPoint:
    """One epoch of the model on one dataset revision's split: its samples and tokens, the card it runs on,
    and its hours and dollars (unrounded: the estimator's `run_hours` of the run's FLOPs)."""

    run: DatasetRun
    card: str
    cards: int
    tokens_per_sample: int  # the estimate capped at the sequence length (or the sequence length)
    tokens: float
    card_hours: float
    usd: float | None


@dataclass(frozen=True)
class DatasetCost:
    """The panel: the choices offered, what was chosen, the cost at this revision and at its parent."""

    models: tuple[RepoId, ...]
    more_models: bool  # more watched models than the select lists
    model: RepoId | None
    method: str
    method_label: str
    configs: tuple[str, ...]
    config: str | None
    splits: tuple[str, ...]
    split: str
    seq_len: int | None = None
    model_sha: str | None = None
    at: CostPoint | None = None
    parent: CostPoint | None = None
    parent_sha: str | None = None  # the parent revision, when it is stored
    parent_note: str | None = None  # why the parent has no cost to compare (no such split, no rows, …)
    error: str | None = None  # why there is no cost at this revision
    plan_url: str | None = None  # the full /plan of this model on this dataset revision

    price_table_date: str = PRICE_TABLE_DATE

    @property
    def method_choices(self) -> tuple[tuple[str, str], ...]:
        """(method, label) of the methods a training run can be costed with, the default first."""
        return tuple((m, METHOD_LABELS[m]) for m in TRAINING_METHODS)

    @property
    def changed(self) -> bool:
        """The cost per epoch moved against the parent (its rows or tokens per sample)."""
        return (self.parent is not None and self.at is not None
                and (self.parent.run.samples, self.parent.tokens) != (self.at.run.samples, self.at.tokens))

    @property
    def change_pct(self) -> float | None:
        if not self.changed or self.parent is None or self.at is None or not self.parent.usd or self.at.usd is None:
            return None
        return 100 * (self.at.usd - self.parent.usd) / self.parent.usd


def _models(store: Store) -> tuple[tuple[RepoId, ...], bool]:
    states = store.repos.watched(repo_type=RepoType.MODEL, limit=MAX_MODELS + 1)
    return tuple(s.repo for s in states[:MAX_MODELS]), len(states) > MAX_MODELS


def _pick_model(store: Store, models: tuple[RepoId, ...], asked: str) -> RepoId:
    if not asked:
        return models[0]
    try:
        repo = RepoId.parse(asked, RepoType.MODEL)
    except InvalidRepoId as exc:
        raise PlanInputError("model", f"{exc} (give a watched model's org/name)") from None
    state = store.repo_state(repo)
    if state is None or not state.watched:
        raise PlanInputError("model", f"{repo} is not watched by this hubwatch (watch it with "
                                      f"`hubwatch watch add {repo}`)")
    return state.repo


def _choices(summary: DatasetSummary, config: str, split: str
             ) -> tuple[tuple[str, ...], str | None, tuple[str, ...], str]:
    """The configs and the chosen one's splits; defaults: the dataset's default config (or the first), train
    (or the config's first split). A config or split asked for is kept as asked (dataset_run names it)."""
    configs = tuple(summary.configs)
    chosen = config or (summary.default if summary.default in summary.configs else (configs[0] if configs else None))
    size = summary.configs.get(chosen) if chosen is not None else None
    splits = tuple(size.splits) if size is not None else ()
    picked = split or ("train" if "train" in splits or not splits else splits[0])
    return configs, chosen, splits, picked


def _point(store: Store, cache: PanelCache, model: RepoId, model_sha: str, method: str, dataset: RepoId, sha: str,
           config: str | None, split: str) -> tuple[CostPoint, int]:
    """One epoch of `model` on `dataset`@`sha` (PlanInputError naming what stops it), and the sequence length."""
    asked = {"method": method, "dataset": f"{dataset}@{sha}", "dataset_split": split, "dataset_config": config or ""}
    settings, chosen = with_dataset(store, plan_settings(asked))
    assert chosen is not None
    panel = revision_panel(store, cache, model, model_sha, settings)
    if panel is None:
        raise PlanInputError("model", f"{model} at {model_sha[:12]} has no readable config.json stored: pick another "
                                      "model")
    if not isinstance(panel, EstimatePanel):
        raise PlanInputError("model", f"{model} cannot be estimated ({panel.message})")
    cost = panel.cost
    if cost is None:
        raise PlanInputError("method", f"{METHOD_LABELS.get(method, method)} of {model} fits none of the cards: "
                                       "no training cost")
    hours, usd = run_hours(cost.flops, card_by_name(cost.card), cost.cards, RunShape(utilisation=cost.utilisation))
    return CostPoint(chosen.run, cost.card, cost.cards, cost.tokens_per_sample, cost.tokens, hours * cost.cards,
                     usd), panel.seq_len


def dataset_cost(store: Store, cache: PanelCache, dataset: RepoId, sha: str, parent: str | None,
                 params: Mapping[str, str]) -> DatasetCost:
    """The cost panel of the stored dataset revision `sha` (its parent `parent`, None for the first) at the
    page's `model`, `method`, `dataset_config` and `dataset_split` parameters (each optional)."""
    asked = {f: (params.get(f) or "").strip()[:256] for f in COST_FIELDS}
    summary = stored_summary(store, dataset, sha)
    configs, config, splits, split = _choices(summary, asked["dataset_config"], asked["dataset_split"])
    method = asked["method"] or TRAINING_METHODS[0]
    models, more = _models(store)
    base = DatasetCost(models, more, None, method, METHOD_LABELS.get(method, method), configs, config, splits, split)
    if method not in TRAINING_METHODS:
        return replace(base, error=f"method: {method!r} has no training cost here (choose {', '.join(TRAINING_METHODS)})")
    if not models and not asked["model"]:
        return base
    try:
        model = _pick_model(store, models, asked["model"])
        newest, _ = store.revisions.history_page(model, limit=1)
        if not newest:
            raise PlanInputError("model", f"{model} has no stored revision yet (the next poll backfills it)")
        model_sha = newest[0].revision.sha
        plan = _plan_url(model, dataset, sha, config, split, method)
        base = replace(base, model=model, model_sha=model_sha, plan_url=plan)
        at, seq_len = _point(store, cache, model, model_sha, method, dataset, sha, config, split)
    except PlanInputError as exc:
        return replace(base, error=str(exc))
    result = replace(base, at=at, seq_len=seq_len)
    if parent is None or store.revision(dataset, parent) is None:
        return result
    try:
        before, _ = _point(store, cache, model, model_sha, method, dataset, parent, config, split)
    except PlanInputError as exc:
        return replace(result, parent_sha=parent, parent_note=exc.problem)
    return replace(result, parent=before, parent_sha=parent)


def _plan_url(model: RepoId, dataset: RepoId, sha: str, config: str | None, split: str, method: str) -> str:
    query = {"repo": str(model), "dataset": f"{dataset}@{sha}", "dataset_config": config or "",
             "dataset_split": split, "method": method}
    return f"/plan?{urlencode(query)}#cost"
