"""A dataset's sizes through the hub adapter (tracker/hub_datasets.py): the official huggingface_hub client
against the emulator's dataset routes, real IMDB and Emotion metadata and the synthetic reviews history."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hubwatch.domain.records import InvalidRepoId, RepoId
from hubwatch.estimator.dataset_size import dataset_run
from hubwatch.settings import Settings
from hubwatch.tracker.errors import GatedRepo, RepoNotFound, RevisionNotFound
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.hub_datasets import dataset_summary, parse_dataset_ref

IMDB = RepoId.parse("datasets/stanfordnlp/imdb")
EMOTION = RepoId.parse("datasets/dair-ai/emotion")
REVIEWS = RepoId.parse("datasets/hubwatch-test/reviews")


def _client(sim: Any, token: str = "") -> HubClient:
    return HubClient.from_settings(Settings(database_url="sqlite://", hub_endpoint=sim.url, hub_timeout_s=10,
                                            hf_token=token))


@pytest.fixture
def sim(hubsim_factory: Callable[..., Any], datasets_root: Path) -> Any:
    return hubsim_factory(root=datasets_root, at=None)


def test_parse_dataset_ref() -> None:
    assert parse_dataset_ref("datasets/stanfordnlp/imdb") == (IMDB, None)
    assert parse_dataset_ref("stanfordnlp/imdb@refs/convert/parquet") == (IMDB, "refs/convert/parquet")
    assert parse_dataset_ref(" datasets/stanfordnlp/imdb@abc123 ") == (IMDB, "abc123")
    with pytest.raises(InvalidRepoId):
        parse_dataset_ref("datasets/imdb")


def test_imdb_sizes_come_from_the_card(sim: Any) -> None:
    summary = dataset_summary(_client(sim), IMDB)
    assert summary.dataset == "datasets/stanfordnlp/imdb" and summary.revision == sim.head("datasets/stanfordnlp/imdb")
    assert summary.source == "README.md" and list(summary.configs) == ["plain_text"]
    run = dataset_run(summary)
    assert (run.samples, run.tokens_per_sample) == (25000, 334)  # 33,432,835 bytes / 25,000 rows / 4
    assert dataset_run(summary, split="unsupervised").samples == 50000


def test_emotion_sizes_come_from_dataset_infos_json(sim: Any) -> None:
    summary = dataset_summary(_client(sim), EMOTION)
    assert summary.source == "dataset_infos.json"
    run = dataset_run(summary)
    assert run.config == "emotion" and run.samples == 16000 and "dataset_infos.json" in run.samples_from
    assert run.tokens_per_sample == round(1741541 / 16000 / 4)


def test_a_revision_reads_that_revision_and_names_its_sha(sim: Any) -> None:
    hub = _client(sim)
    from huggingface_hub import HfApi

    first = HfApi(endpoint=sim.url, token=False).list_repo_commits(REVIEWS.hub_id, repo_type="dataset")[-1].commit_id
    old = dataset_summary(hub, REVIEWS, first)
    assert old.revision == first and dataset_run(old).samples == 100
    assert dataset_run(dataset_summary(hub, REVIEWS)).samples == 150  # main: v3 grew train to 150 rows


def test_unknown_dataset_and_revision_are_the_adapter_errors(sim: Any) -> None:
    hub = _client(sim)
    with pytest.raises(RepoNotFound) as missing:
        dataset_summary(hub, RepoId.parse("nobody/nothing"))
    assert missing.value.repo_id == "datasets/nobody/nothing"
    with pytest.raises(RevisionNotFound):
        dataset_summary(hub, IMDB, "no-such-branch")
    with pytest.raises(RepoNotFound):  # a model id is no dataset id
        dataset_summary(hub, RepoId.parse("hubsim-test/tiny-llama"))


def test_gated_dataset_whose_sizes_need_its_files(hubsim_factory: Callable[..., Any], data_dir: Path,
                                                  tmp_path: Path) -> None:
    # Emotion's metadata behind a gate: the card is public, dataset_infos.json needs the token.
    folder = tmp_path / "datasets" / "hubsim-test__gated-emotion"
    shutil.copytree(data_dir / "datasets" / "dair-ai__emotion" / "v2", folder / "v1")
    (folder / "GATED").write_text("emotion-token")
    sim = hubsim_factory(root=tmp_path, at=None)
    gated = RepoId.parse("hubsim-test/gated-emotion")
    with pytest.raises(GatedRepo) as refused:
        dataset_summary(_client(sim), gated)
    assert refused.value.repo_id == "datasets/hubsim-test/gated-emotion"
    assert dataset_run(dataset_summary(_client(sim, "emotion-token"), gated)).samples == 16000


def test_no_sizes_stated_is_an_empty_summary(sim: Any) -> None:
    summary = dataset_summary(_client(sim), RepoId.parse("hubsim-test/gated-data"))  # card without dataset_info
    assert summary.configs == {} and summary.source is None


def test_the_recently_modified_listing_of_datasets_names_datasets_only(
    hubsim_factory: Callable[..., Any], datasets_root: Path
) -> None:
    from datetime import datetime, timedelta, timezone

    from hubwatch.domain.records import RepoType

    sim = hubsim_factory(root=datasets_root, at="v1")
    hub = _client(sim)
    since = datetime.now(timezone.utc) - timedelta(minutes=1)
    assert hub.recently_modified(since, repo_type=RepoType.DATASET) == {}  # nothing moved in the last minute
    new_sha = sim.advance(str(REVIEWS))
    listed = hub.recently_modified(since, repo_type=RepoType.DATASET)
    assert listed is not None and list(listed) == [REVIEWS] and listed[REVIEWS].sha == new_sha
    assert listed[REVIEWS].repo.is_dataset
    assert hub.recently_modified(since) == {}  # the models' listing: the dataset is not in it
    old = datetime(2000, 1, 1, tzinfo=timezone.utc)
    everything = hub.recently_modified(old, repo_type=RepoType.DATASET)
    assert everything is not None and {str(r) for r in everything} == {
        str(REVIEWS), str(IMDB), str(EMOTION), "datasets/hubsim-test/gated-data"}
    assert hub.recently_modified(old, repo_type=RepoType.DATASET, max_items=2) is None  # busy: cannot vouch
    models = hub.recently_modified(old)
    assert models is not None and [str(r) for r in models] == ["hubsim-test/tiny-llama"]
