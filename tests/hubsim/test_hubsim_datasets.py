"""Dataset repos in the emulator, through the official huggingface_hub client (repo_type="dataset")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError
from huggingface_hub.hf_api import RepoFile, RepoFolder

from hubwatch.hubsim import HubSim

REVIEWS = "hubwatch-test/reviews"
IMDB = "stanfordnlp/imdb"
GATED = "hubsim-test/gated-data"
TINY = "hubsim-test/tiny-llama"
DATA = Path(__file__).resolve().parents[1] / "data" / "datasets"


@pytest.fixture
def sim(hubsim_factory: Callable[..., HubSim], datasets_root: Path) -> HubSim:
    return hubsim_factory(root=datasets_root, at=None)


def _api(sim: HubSim, token: str | bool = False) -> HfApi:
    return HfApi(endpoint=sim.url, token=token)


def test_dataset_info_card_siblings_sha_and_tags(sim: HubSim) -> None:
    info = _api(sim).dataset_info(REVIEWS, files_metadata=True)
    assert info.id == REVIEWS and info.author == "hubwatch-test" and info.sha == sim.head(f"datasets/{REVIEWS}")
    assert info.gated is False and info.private is False
    assert info.card_data is not None and info.card_data.license == "cc-by-nc-4.0"  # v7 on, the head is v9
    assert info.card_data["dataset_info"]["splits"][1] == {"name": "test", "num_bytes": 3100, "num_examples": 30}
    assert info.tags is not None and {"license:cc-by-nc-4.0", "language:en", "format:parquet"} <= set(info.tags)
    assert info.siblings is not None
    files = {s.rfilename: s for s in info.siblings}
    shard = files["data/train-00000-of-00001.parquet"]
    content = (DATA / "hubwatch-test__reviews" / "v9" / "data" / "train-00000-of-00001.parquet").read_bytes()
    assert shard.lfs is not None and shard.size == len(content) and shard.lfs.size == len(content)
    import hashlib

    assert shard.lfs.sha256 == hashlib.sha256(content).hexdigest()
    assert files["README.md"].lfs is None and files["README.md"].blob_id is not None
    real = _api(sim).dataset_info(IMDB)
    assert real.card_data is not None and real.card_data["dataset_info"]["config_name"] == "plain_text"
    assert real.paperswithcode_id == "imdb-movie-reviews"


def test_dataset_revision_commits_and_expand(sim: HubSim) -> None:
    api = _api(sim)
    commits = api.list_repo_commits(REVIEWS, repo_type="dataset")
    assert [c.title for c in commits][-2:] == ["Convert to Parquet", "Upload dataset (CSV)"] and len(commits) == 9
    assert commits[0].created_at > commits[-1].created_at and commits[0].authors == ["hubwatch-test"]
    v1 = api.dataset_info(REVIEWS, revision=commits[-1].commit_id)
    assert v1.sha == commits[-1].commit_id and v1.card_data is not None and v1.card_data.license == "cc-by-4.0"
    assert v1.tags is not None and "format:csv" in v1.tags
    older = api.list_repo_commits(REVIEWS, repo_type="dataset", revision=commits[3].commit_id)
    assert [c.commit_id for c in older] == [c.commit_id for c in commits[3:]]
    expanded = api.dataset_info(REVIEWS, expand=["sha", "lastModified"])
    assert expanded.sha == commits[0].commit_id and expanded.siblings is None and expanded.last_modified is not None


def test_dataset_tree_with_lfs_and_paths_info(sim: HubSim) -> None:
    api = _api(sim)
    tree = list(api.list_repo_tree(REVIEWS, repo_type="dataset", recursive=True))
    paths = {e.path: e for e in tree}
    assert isinstance(paths["data"], RepoFolder)
    shard = paths["data/test-00000-of-00001.parquet"]
    assert isinstance(shard, RepoFile) and shard.lfs is not None and len(shard.lfs.sha256) == 64
    assert shard.lfs.size == shard.size
    top = {e.path for e in api.list_repo_tree(REVIEWS, repo_type="dataset")}
    assert top == {"README.md", "data"}
    inside = {e.path for e in api.list_repo_tree(REVIEWS, repo_type="dataset", path_in_repo="data")}
    assert inside == {"data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet"}
    info = api.get_paths_info(REVIEWS, ["README.md", "data", "nope"], repo_type="dataset", expand=True)
    assert [type(e).__name__ for e in info] == ["RepoFile", "RepoFolder"]
    assert isinstance(info[0], RepoFile) and info[0].last_commit is not None


def test_dataset_resolve_and_download(sim: HubSim, tmp_path: Path) -> None:
    path = hf_hub_download(REVIEWS, "README.md", repo_type="dataset", endpoint=sim.url, token=False, cache_dir=tmp_path)
    assert Path(path).read_bytes() == (DATA / "hubwatch-test__reviews" / "v9" / "README.md").read_bytes()
    first = _api(sim).list_repo_commits(REVIEWS, repo_type="dataset")[-1].commit_id
    csv = hf_hub_download(REVIEWS, "data/train.csv", repo_type="dataset", revision=first, endpoint=sim.url,
                          token=False, cache_dir=tmp_path)  # fmt: skip
    assert Path(csv).read_text().startswith("text,label,score")
    r = httpx.head(f"{sim.url}/datasets/{REVIEWS}/resolve/main/data/test-00000-of-00001.parquet")
    assert r.status_code == 200 and r.headers["x-linked-etag"].strip('"') == r.headers["etag"].strip('"')
    assert r.headers["x-repo-commit"] == sim.head(f"datasets/{REVIEWS}")
    raw = httpx.get(f"{sim.url}/datasets/{REVIEWS}/raw/main/data/test-00000-of-00001.parquet")
    assert raw.text.startswith("version https://git-lfs.github.com/spec/v1")


def test_datasets_and_models_are_separate_namespaces(sim: HubSim) -> None:
    api = _api(sim)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(REVIEWS)
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info(TINY)
    assert api.model_info(TINY).id == TINY
    assert httpx.get(f"{sim.url}/api/datasets/{REVIEWS}/safetensors-metadata/x.json").status_code == 404
    with pytest.raises(RevisionNotFoundError):
        api.dataset_info(REVIEWS, revision="no-such-branch")


def test_parquet_conversion_branch(sim: HubSim, hubsim_factory: Callable[..., HubSim], datasets_root: Path) -> None:
    api = _api(sim)
    refs = api.list_repo_refs(REVIEWS, repo_type="dataset")
    assert [(r.name, r.ref) for r in refs.converts] == [("parquet", "refs/convert/parquet")]
    tree = {e.path for e in api.list_repo_tree(REVIEWS, repo_type="dataset", revision="refs/convert/parquet",
                                               recursive=True) if isinstance(e, RepoFile)}  # fmt: skip
    assert tree == {"default/train/0000.parquet", "default/test/0000.parquet"}
    branch = api.list_repo_commits(REVIEWS, repo_type="dataset", revision="refs/convert/parquet")
    assert [c.title for c in branch] == ["Update parquet files"] * 2 and branch[0].authors == ["parquet-converter"]
    assert branch[0].commit_id == refs.converts[0].target_commit
    old = api.list_repo_tree(REVIEWS, repo_type="dataset", revision=branch[1].commit_id, recursive=True)
    assert "default/train/0000.parquet" in {e.path for e in old}
    path = hf_hub_download(REVIEWS, "default/train/0000.parquet", repo_type="dataset", revision="refs/convert/parquet",
                           endpoint=sim.url, token=False)  # fmt: skip
    assert Path(path).read_bytes() == (DATA / "hubwatch-test__reviews" / "PARQUET" / "v3" / "default" / "train" / "0000.parquet").read_bytes()
    # only conversions of versions main shows are out; a dataset without any has none
    early = hubsim_factory(root=datasets_root, at="v2")
    early_refs = _api(early).list_repo_refs(REVIEWS, repo_type="dataset")
    assert early_refs.converts[0].target_commit == branch[1].commit_id
    none = hubsim_factory(root=datasets_root, at="v1")
    assert _api(none).list_repo_refs(IMDB, repo_type="dataset").converts == []
    with pytest.raises(RevisionNotFoundError):
        _api(none).list_repo_commits(IMDB, repo_type="dataset", revision="refs/convert/parquet")


def test_conversion_lag_holds_conversions_until_the_converter_runs(
    hubsim_factory: Callable[..., HubSim], datasets_root: Path
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v2", conversion_lag=True)
    api = _api(sim)
    assert api.list_repo_refs(REVIEWS, repo_type="dataset").converts == []  # nothing converted at the start
    sim.advance(f"datasets/{REVIEWS}")  # v3, whose conversion PARQUET/v3 holds: not out until the converter runs
    assert api.list_repo_refs(REVIEWS, repo_type="dataset").converts == []
    r = httpx.post(f"{sim.url}/_sim/datasets/{REVIEWS}/convert")
    assert r.status_code == 200 and r.json()["version"] == "v3"
    (convert,) = api.list_repo_refs(REVIEWS, repo_type="dataset").converts
    assert convert.target_commit == r.json()["sha"]
    (commit, *_) = api.list_repo_commits(REVIEWS, repo_type="dataset", revision="refs/convert/parquet")
    head = api.list_repo_commits(REVIEWS, repo_type="dataset")[0]
    assert commit.commit_id == convert.target_commit and commit.created_at > head.created_at  # minutes after main
    # A version without a conversion folder gets none; a model has no converter.
    assert httpx.post(f"{sim.url}/_sim/datasets/{IMDB}/convert").json()["sha"] is None
    assert api.list_repo_refs(IMDB, repo_type="dataset").converts == []
    r = httpx.post(f"{sim.url}/_sim/{TINY}/convert")
    assert r.status_code == 400 and "only datasets" in r.text
    # Without the lag, what advance reveals is converted at once (as before).
    eager = hubsim_factory(root=datasets_root, at="v2")
    eager.advance(f"datasets/{REVIEWS}")
    assert _api(eager).list_repo_refs(REVIEWS, repo_type="dataset").converts[0].target_commit == convert.target_commit


def test_gated_dataset(sim: HubSim, tmp_path: Path) -> None:
    info = _api(sim).dataset_info(GATED)
    assert info.gated == "manual"
    with pytest.raises(GatedRepoError) as no_token:
        hf_hub_download(GATED, "data.jsonl", repo_type="dataset", endpoint=sim.url, token=False, cache_dir=tmp_path)
    assert "dataset hubsim-test/gated-data" in str(no_token.value)
    with pytest.raises(GatedRepoError):
        hf_hub_download(GATED, "data.jsonl", repo_type="dataset", endpoint=sim.url, token="wrong", cache_dir=tmp_path)
    ok = hf_hub_download(GATED, "data.jsonl", repo_type="dataset", endpoint=sim.url, token="gated-data-token",
                         cache_dir=tmp_path)  # fmt: skip
    assert Path(ok).read_text() == '{"text": "hello"}\n'


def test_recently_modified_listing_for_datasets(hubsim_factory: Callable[..., HubSim], datasets_root: Path) -> None:
    sim = hubsim_factory(root=datasets_root, at="v1")
    api = _api(sim)
    listed = list(api.list_datasets(sort="last_modified", expand=["sha", "lastModified"]))
    assert {d.id for d in listed} == {REVIEWS, IMDB, GATED, "dair-ai/emotion"}  # datasets only, not the model
    assert all(d.sha and d.last_modified for d in listed)
    assert [m.id for m in api.list_models()] == [TINY]
    new_sha = sim.advance(f"datasets/{REVIEWS}")
    first = next(iter(api.list_datasets(sort="last_modified", expand=["sha", "lastModified"])))
    assert (first.id, first.sha) == (REVIEWS, new_sha)  # the one that moved comes first
    assert [d.id for d in api.list_datasets(author="stanfordnlp")] == [IMDB]
    assert [d.id for d in api.list_datasets(search="review")] == [REVIEWS]
    default = httpx.get(f"{sim.url}/api/datasets", params={"limit": 1}).json()
    assert len(default) == 1 and {"id", "sha", "lastModified", "gated", "tags"} <= set(default[0])
    assert "siblings" not in default[0]


def test_control_routes_for_datasets(hubsim_factory: Callable[..., HubSim], datasets_root: Path) -> None:
    sim = hubsim_factory(root=datasets_root, at="v1")
    r = httpx.post(f"{sim.url}/_sim/datasets/{REVIEWS}/advance")
    assert r.status_code == 200 and r.json()["version"] == "v2" and r.json()["repo"] == f"datasets/{REVIEWS}"
    r = httpx.post(f"{sim.url}/_sim/datasets/{REVIEWS}/rewind", json={"to": "v1"})
    assert r.status_code == 200 and r.json()["version"] == "v1"
    assert _api(sim).dataset_info(REVIEWS).sha == r.json()["sha"] == sim.head(f"datasets/{REVIEWS}")
    assert len(_api(sim).list_repo_commits(REVIEWS, repo_type="dataset")) == 1
    state = httpx.get(f"{sim.url}/_sim/state").json()["repos"]
    assert state[f"datasets/{REVIEWS}"]["type"] == "dataset" and state[TINY]["type"] == "model"
    r = httpx.post(f"{sim.url}/_sim/datasets/{REVIEWS}/rename", json={"to": "hubwatch-test/reviews-v2"})
    assert r.status_code == 200 and r.json()["to"] == "datasets/hubwatch-test/reviews-v2"
    moved = httpx.get(f"{sim.url}/api/datasets/{REVIEWS}/revision/main")
    assert moved.status_code == 307 and moved.headers["location"] == "/api/datasets/hubwatch-test/reviews-v2/revision/main"
    assert _api(sim).dataset_info(REVIEWS).id == "hubwatch-test/reviews-v2"  # the client follows the 307
    assert httpx.post(f"{sim.url}/_sim/{TINY}/advance").json()["repo"] == TINY  # models as before
    tag = httpx.post(f"{sim.url}/_sim/datasets/hubwatch-test/reviews-v2/refs", json={"tag": "v1.0", "at": "v3"})
    assert tag.status_code == 200 and tag.json()["ref"] == "refs/tags/v1.0"
    tagged = _api(sim).dataset_info("hubwatch-test/reviews-v2", revision="v1.0")
    assert tagged.sha == tag.json()["sha"] and tagged.card_data is not None
    assert [t.name for t in _api(sim).list_repo_refs("hubwatch-test/reviews-v2", repo_type="dataset").tags] == ["v1.0"]
    squashed = httpx.post(f"{sim.url}/_sim/datasets/hubwatch-test/reviews-v2/squash")
    assert squashed.status_code == 200
    assert len(_api(sim).list_repo_commits("hubwatch-test/reviews-v2", repo_type="dataset")) == 1


def test_dataset_webhook_payload() -> None:
    from datetime import UTC, datetime

    from hubwatch.hubsim.control import webhook_payload
    from hubwatch.hubsim.repos import Commit
    from hubwatch.hubsim.state import Advance

    commit = Commit("a" * 40, "v2", 2, datetime(2025, 1, 1, tzinfo=UTC), "t", "", {})
    body = webhook_payload(Advance(f"datasets/{REVIEWS}", "b" * 40, commit, 2, 7), "http://sim")
    repo = body["repo"]
    assert isinstance(repo, dict) and repo["type"] == "dataset" and repo["name"] == REVIEWS
    assert repo["url"] == {"web": f"http://sim/datasets/{REVIEWS}", "api": f"http://sim/api/datasets/{REVIEWS}"}


def test_deleted_mode_takes_a_dataset_off_the_hub(sim: HubSim) -> None:
    sim.set_faults(deleted=f"datasets/{REVIEWS}")
    api = _api(sim)
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info(REVIEWS)
    r = httpx.get(f"{sim.url}/datasets/{REVIEWS}/resolve/main/README.md")
    assert r.status_code == 404 and r.headers["x-error-code"] == "RepoNotFound"
    assert REVIEWS not in {d.id for d in api.list_datasets()}
    assert api.dataset_info(IMDB).id == IMDB


def test_dataset_commits_page_by_link_and_rate_limits_apply(hubsim_factory: Callable[..., HubSim],
                                                           datasets_root: Path) -> None:  # fmt: skip
    sim = hubsim_factory(root=datasets_root, at=None, page_size=2)
    commits = _api(sim).list_repo_commits(REVIEWS, repo_type="dataset")
    assert len(commits) == 9  # five pages of two
    r = httpx.get(f"{sim.url}/api/datasets/{REVIEWS}/commits/main")
    assert len(r.json()) == 2 and 'rel="next"' in r.headers["link"] and r.headers["x-total-count"] == "9"
    sim.set_faults(rate_limit=1, retry_after=7)
    limited = httpx.get(f"{sim.url}/api/datasets/{REVIEWS}")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"


def test_loader_datasets_only_root_and_same_id_as_a_model(tmp_path: Path) -> None:
    import shutil

    from hubwatch.hubsim import HistoryError, load_root

    (tmp_path / "datasets").mkdir()
    shutil.copytree(DATA / "hubsim-test__gated-data", tmp_path / "datasets" / "acme__same")
    repos = load_root(tmp_path)  # a root holding only datasets loads
    assert list(repos) == ["datasets/acme/same"] and repos["datasets/acme/same"].repo_type == "dataset"
    shutil.copytree(DATA / "hubsim-test__gated-data", tmp_path / "acme__same")
    both = load_root(tmp_path)  # a model and a dataset may share an id: two repos, other shas
    assert set(both) == {"acme/same", "datasets/acme/same"} and both["acme/same"].repo_type == "model"
    assert both["acme/same"].commits[0].sha != both["datasets/acme/same"].commits[0].sha
    assert both["acme/same"].converts == ()
    (tmp_path / "datasets" / "acme__same" / "PARQUET" / "v5").mkdir(parents=True)
    with pytest.raises(HistoryError, match="converts v5"):
        load_root(tmp_path)
