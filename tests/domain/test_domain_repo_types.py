"""RepoId names a model (`org/name`) or a dataset (`datasets/org/name`): two repos, never mixed (issue 33)."""

from __future__ import annotations

import pytest

from hubwatch.domain.records import InvalidRepoId, RepoId, RepoType


def test_a_dataset_id_parses_prints_and_links_with_its_prefix() -> None:
    ds = RepoId.parse("datasets/Stanfordnlp/imdb")
    assert ds.is_dataset and ds.repo_type is RepoType.DATASET
    assert str(ds) == "datasets/Stanfordnlp/imdb" and ds.key == "datasets/stanfordnlp/imdb"
    assert (ds.hub_id, ds.hub_repo_type) == ("Stanfordnlp/imdb", "dataset")
    assert ds.url_path == "/datasets/Stanfordnlp/imdb"
    assert ds.url() == "https://huggingface.co/datasets/Stanfordnlp/imdb"
    assert RepoId.parse("stanfordnlp/imdb", "dataset") == ds == RepoId.parse("stanfordnlp/imdb", RepoType.DATASET)


def test_a_model_id_is_unchanged() -> None:
    model = RepoId.parse("meta-llama/Llama-2-7b-hf")
    assert not model.is_dataset and model == RepoId("meta-llama", "Llama-2-7b-hf")
    assert str(model) == "meta-llama/Llama-2-7b-hf" and model.key == "meta-llama/llama-2-7b-hf"
    assert (model.hub_id, model.hub_repo_type, model.url_path) == ("meta-llama/Llama-2-7b-hf", "model",
                                                                   "/meta-llama/Llama-2-7b-hf")  # fmt: skip
    assert model.url("http://hub.local/") == "http://hub.local/meta-llama/Llama-2-7b-hf"


def test_a_model_and_a_dataset_of_one_name_are_two_repos() -> None:
    model, ds = RepoId.parse("org/name"), RepoId.parse("datasets/org/name")
    assert model != ds and model.key != ds.key and len({model, ds}) == 2
    assert ds.with_name("new", "n") == RepoId.parse("datasets/new/n")


@pytest.mark.parametrize(("text", "says"), [
    ("models/org/name", "a model id has no prefix"),
    ("spaces/org/name", "not spaces"),
    ("datasets/imdb", "names no org"),
    ("datasets/a/b/c", "not a repo id"),
    ("org/name ", "not a repo id"),
])  # fmt: skip
def test_other_prefixes_and_malformed_ids_are_refused_with_a_reason(text: str, says: str) -> None:
    with pytest.raises(InvalidRepoId, match=says):
        RepoId.parse(text)


def test_a_dataset_id_asked_for_as_a_model_is_refused() -> None:
    with pytest.raises(InvalidRepoId, match="is a dataset id"):
        RepoId.parse("datasets/org/name", "model")
    with pytest.raises(InvalidRepoId, match="repo type"):
        RepoId.parse("org/name", "space")
