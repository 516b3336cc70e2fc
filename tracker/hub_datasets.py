"""A dataset's sizes from the hub, for the estimator: `dataset_summary` reads one revision's card metadata
(`HfApi.dataset_info`, `repo_type="dataset"`) and, only where the card states no sizes, its
`dataset_infos.json`, then the hub's parquet conversion of it (`tracker.hub_parquet`: main's head
only), and gives `estimator.dataset_size.DatasetSummary`.

Part of the hub adapter beside `tracker/hub.py` (whose request guard and error translation it uses):
no row is read, no data file opened and no loading script run. The card's YAML is read by the
dataset diff's parser (`diff.dataset_meta`), within the same limits as a model card, and made a summary by
`estimator.dataset_size.summary_of`, as the web app does from a stored revision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from hubwatch.diff.dataset_meta import CARD_FILE, INFOS_FILE, DatasetMeta, dataset_meta
from hubwatch.diff.dataset_parquet import CONVERSION_PATH, read_conversion, with_converted
from hubwatch.domain.records import RepoId, RepoType
from hubwatch.domain.snapshot import Snapshot
from hubwatch.estimator.dataset_size import DatasetSummary, summary_of
from hubwatch.tracker.errors import InvalidContent
from hubwatch.tracker.hub_parquet import parquet_conversion

if TYPE_CHECKING:
    from hubwatch.tracker.hub import HfHubClient

__all__ = ["DATASETS_PREFIX", "dataset_summary", "parse_dataset_ref"]

DATASETS_PREFIX = "datasets/"
_MAX_INFOS_BYTES = 5 * 1024 * 1024  # a dataset_infos.json of thousands of configs stays well below


def parse_dataset_ref(text: str) -> tuple[RepoId, str | None]:
    """`datasets/ORG/NAME[@REV]` or `ORG/NAME[@REV]` → (the dataset's id, the revision or None);
    InvalidRepoId if not."""
    name, sep, revision = text.strip().partition("@")
    return RepoId.parse(name, RepoType.DATASET), (revision or None) if sep else None


def _card_text(card: Any) -> bytes | None:
    """The card's metadata as the YAML block of a README.md (the hub parsed it from there)."""
    data = card.to_dict() if hasattr(card, "to_dict") else card
    if not isinstance(data, dict) or not data:
        return None
    block: str = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return f"---\n{block}---\n".encode()


def dataset_summary(client: HfHubClient, dataset: RepoId, revision: str | None = None) -> DatasetSummary:
    """The sizes a dataset revision's metadata states (default: main): one request for the card's
    metadata, one for `dataset_infos.json` when the card has no sizes and the revision lists it, and
    where neither states them the conversion's refs (one), and when they name one of this revision
    (main's head) the head's and the converter's commit dates and the branch's tree (three).

    Raises the adapter's HubError types, their repo named `datasets/ORG/NAME`: RepoNotFound,
    RevisionNotFound, GatedRepo (a gated dataset whose sizes are only in `dataset_infos.json`), …
    """
    dataset = dataset if dataset.is_dataset else RepoId(dataset.org, dataset.name, RepoType.DATASET)
    rid, label = dataset.hub_id, str(dataset)
    api = client._api  # the adapter's own client and guard (this module is part of the adapter)
    info = client._call(lambda: api.dataset_info(rid, revision=revision, timeout=client._timeout), label, revision)
    if not info.sha:
        raise InvalidContent("dataset info carries no commit sha", repo_id=label, revision=revision)
    sha = str(info.sha)
    contents: dict[str, bytes] = {}
    readme = _card_text(info.card_data)
    if readme is not None:
        contents[CARD_FILE] = readme
    meta = dataset_meta(Snapshot(sha, {}, contents))
    listed = {s.rfilename for s in info.siblings or ()}
    if INFOS_FILE in listed and _unstated(meta):
        contents[INFOS_FILE] = _download(client, dataset, sha, INFOS_FILE)
        meta = dataset_meta(Snapshot(sha, {}, contents))
    if _unstated(meta) and (document := parquet_conversion(client, dataset, sha)) is not None:
        meta = with_converted(meta, read_conversion(Snapshot(sha, {}, {CONVERSION_PATH: document})))
    return summary_of(label, sha, meta)


def _unstated(meta: DatasetMeta) -> bool:
    return not meta.configs or any(not c.splits for c in meta.configs.values())


def _download(client: HfHubClient, dataset: RepoId, sha: str, path: str) -> bytes:
    """One small metadata file of the dataset revision, refused past `_MAX_INFOS_BYTES`."""
    label = str(dataset)
    body = client.bounded_get(dataset, sha, path, _MAX_INFOS_BYTES)
    if body is None:
        raise InvalidContent(f"{path}: larger than the {_MAX_INFOS_BYTES} bytes read of a metadata file",
                             repo_id=label, revision=sha)
    return body
