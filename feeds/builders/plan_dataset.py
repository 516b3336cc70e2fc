"""The dataset a planned run is costed on, read from the store: samples per epoch (the split's rows) and
an estimated tokens per sample of a watched dataset's stored revision, by the estimator's own
`dataset_run`, as `hubwatch estimate --dataset` reads them from the hub.

The summary is built from the files the tracker kept of that revision (the card's YAML,
`dataset_infos.json`, the listing, the parquet conversion of a head) by the dataset diff's parser
(`diff.dataset_meta`, `diff.dataset_parquet.with_converted`) and
`estimator.dataset_size.summary_of`, the tracker's own path: nothing is fetched, no loading script
is run, no row is read. What cannot give the sizes is a `PlanInputError` naming the field
(`dataset`, `dataset_config`, `dataset_split`) and what there is instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hubwatch.diff.dataset_meta import dataset_meta
from hubwatch.diff.dataset_parquet import read_conversion, with_converted
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.dataset_size import DatasetRun, DatasetSizeError, DatasetSummary, dataset_run, summary_of
from hubwatch.feeds.builders.plan_settings import DatasetAsk, PlanInputError, PlanSettings
from hubwatch.storage.errors import AmbiguousRevision

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = ["PlanDataset", "plan_dataset", "stored_dataset_run", "stored_summary", "with_dataset"]

_FIELDS = {"dataset": "dataset", "config": "dataset_config", "split": "dataset_split"}
_SHOWN = 5  # watched datasets an unknown one's error lists


@dataclass(frozen=True)
class PlanDataset:
    """The dataset's numbers and the samples per epoch the run uses (its rows, or `samples` given)."""

    run: DatasetRun
    samples: int
    samples_note: str  # where the run's samples per epoch came from
    asked: str | None = None  # the revision given after @ (None: the newest stored)

    @property
    def repo(self) -> RepoId:
        return RepoId.parse(self.run.dataset, RepoType.DATASET)

    def to_json(self) -> dict[str, Any]:
        """As `hubwatch estimate --dataset --json` gives it, plus the run's samples and where they came from."""
        return {**self.run.to_json(), "revision_asked": self.asked, "samples": self.samples,
                "samples_from": self.samples_note}


def stored_summary(store: Store, repo: RepoId, sha: str) -> DatasetSummary:
    """The sizes the stored revision `sha` of the dataset `repo` states (its card, `dataset_infos.json`, where
    neither states a config's splits the hub's parquet conversion the tracker kept of it)."""
    files, contents = store.revisions.snapshot_files(repo, sha)
    snapshot = Snapshot(sha, {f.path: f for f in files}, contents)
    return summary_of(str(repo), sha, with_converted(dataset_meta(snapshot), read_conversion(snapshot)))


def _watched_datasets(store: Store) -> str:
    shown = store.repos.watched(repo_type=RepoType.DATASET, limit=_SHOWN + 1)
    if not shown:
        return "no dataset is watched yet"
    names = ", ".join(str(s.repo) for s in shown[:_SHOWN])
    return f"watched: {names}{', …' if len(shown) > _SHOWN else ''}"


def _revision(store: Store, ask: DatasetAsk) -> str:
    """The full sha of the stored revision `ask` names (a sha or a prefix of 7+; none: the newest)."""
    repo, wanted = ask.repo, ask.revision
    state = store.repo_state(repo)
    if state is None or not state.watched:
        raise PlanInputError("dataset", f"{repo} is not watched by this hubwatch ({_watched_datasets(store)}); "
                                        f"watch it with `hubwatch watch add {repo}`")
    if wanted in (None, "latest", "main", "head"):
        newest, _ = store.revisions.history_page(repo, limit=1)
        if not newest:
            raise PlanInputError("dataset", f"{repo} has no stored revision yet (the next poll backfills it)")
        return newest[0].revision.sha
    try:
        entry = store.revision(repo, wanted)
    except AmbiguousRevision:
        raise PlanInputError("dataset", f"{repo}@{wanted}: more than one stored commit starts so; give more "
                                        "characters of the sha") from None
    if entry is None:
        raise PlanInputError("dataset", f"{repo} has no stored revision {wanted!r} (give 7–40 hex characters of a "
                                        "stored commit after @, or leave out @ for the newest)")
    return entry.revision.sha


def stored_dataset_run(store: Store, repo: RepoId, sha: str, config: str | None, split: str) -> DatasetRun:
    """`dataset_run` of the stored revision; its DatasetSizeError as a PlanInputError naming the form's field
    and what the revision has instead."""
    summary = stored_summary(store, repo, sha)
    try:
        return dataset_run(summary, config, split)
    except DatasetSizeError as exc:
        field = _FIELDS[exc.field]
        shown = f" (available: {', '.join(exc.available)})" if exc.available else ""
        where = "" if exc.field == "dataset" else f" at {sha[:12]}"
        fix = ("; give samples (rows per epoch) instead: hubwatch reads only the card's dataset_info and "
               "dataset_infos.json, never a loading script or the rows") if not exc.available else ""
        raise PlanInputError(field, f"{exc.problem}{where}{shown}{fix}") from exc


def plan_dataset(store: Store, settings: PlanSettings) -> PlanDataset | None:
    """The dataset `settings` names, at its stored revision (None: no dataset asked for)."""
    ask = settings.dataset
    if ask is None:
        return None
    run = stored_dataset_run(store, ask.repo, _revision(store, ask), ask.config, ask.split)
    if not settings.samples_given:
        return PlanDataset(run, run.samples, "the split's rows", ask.revision)
    samples = settings.run.samples
    return PlanDataset(run, samples, f"samples {samples:,} (overrides the split's {run.samples:,} rows)", ask.revision)


def with_dataset(store: Store, settings: PlanSettings) -> tuple[PlanSettings, PlanDataset | None]:
    """`settings` with the run's samples per epoch and tokens per sample taken from the dataset it names."""
    chosen = plan_dataset(store, settings)
    if chosen is None:
        return settings, None
    run = replace(settings.run, samples=chosen.samples, tokens_per_sample=chosen.run.tokens_per_sample)
    return replace(settings, run=run, dataset=None), chosen  # resolved: revisions of one size share a panel
