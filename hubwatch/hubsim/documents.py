"""Pure builders of the hub's JSON documents (model and dataset info, commits, tree entries) from loaded commits."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

import yaml

from hubwatch.hubsim.derivatives import base_model_tags
from hubwatch.hubsim.repos import Commit, RepoFile, RepoHistory
from hubwatch.hubsim.responses import iso
from hubwatch.hubsim.safetensors import VirtualSafetensors

__all__ = [
    "card_data",
    "commit_item",
    "dataset_document",
    "file_item",
    "folder_item",
    "folders_of",
    "last_commit",
    "model_document",
]

_SECURITY = {"status": "safe", "avScan": {"virusFound": False, "virusNames": None}, "pickleImportScan": None}


def card_data(commit: Commit) -> dict[str, object] | None:
    """The YAML block at the top of README.md, when there is one and it is a mapping."""
    readme = commit.files.get("README.md")
    if readme is None or isinstance(readme.source, VirtualSafetensors):
        return None
    text = readme.read().decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.startswith("---"):
        return None
    block, sep, _ = text[3:].partition("\n---")
    if not sep:
        return None
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    plain: dict[str, object] = json.loads(json.dumps(data, default=str))  # dates and the like as strings
    return plain


def _json_file(commit: Commit, path: str) -> dict[str, object] | None:
    f = commit.files.get(path)
    if f is None or f.size > 5 * 1024 * 1024 or isinstance(f.source, VirtualSafetensors):
        return None
    try:
        data = json.loads(f.read())
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _config_summary(commit: Commit) -> dict[str, object] | None:
    config = _json_file(commit, "config.json")
    summary: dict[str, object] = {}
    if config is not None:
        for key in ("architectures", "model_type", "auto_map"):
            if key in config:
                summary[key] = config[key]
    tok = _json_file(commit, "tokenizer_config.json")
    if tok is not None:
        picked = {
            k: tok[k]
            for k in ("bos_token", "eos_token", "pad_token", "unk_token", "chat_template")
            if isinstance(tok.get(k), (str, list)) or (isinstance(tok.get(k), dict) and k != "chat_template")
        }
        if picked:
            summary["tokenizer_config"] = picked
    return summary or None


def _tags(card: dict[str, object] | None) -> list[str]:
    tags = (card or {}).get("tags")
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def _sibling(f: RepoFile, blobs: bool) -> dict[str, object]:
    item: dict[str, object] = {"rfilename": f.path}
    if blobs:
        item["size"] = f.size
        item["blobId"] = f.blob_id
        if f.lfs_sha256 is not None:
            item["lfs"] = {"sha256": f.lfs_sha256, "size": f.size, "pointerSize": f.pointer_size}
    return item


def _safetensors_info(commit: Commit) -> dict[str, object] | None:
    params: dict[str, int] = {}
    for f in commit.files.values():
        if isinstance(f.source, VirtualSafetensors):
            for dtype, n in f.source.parameter_counts().items():
                params[dtype] = params.get(dtype, 0) + n
    if not params:
        return None
    return {"parameters": params, "total": sum(params.values())}


def model_document(
    repo: RepoHistory, commit: Commit, last_modified: datetime, *, blobs: bool, security: bool
) -> dict[str, object]:
    """The `/api/models/{repo}` body for one revision."""
    card = card_data(commit)
    doc: dict[str, object] = {
        "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "modelId": repo.repo_id,
        "author": repo.repo_id.split("/", 1)[0],
        "sha": commit.sha,
        "lastModified": iso(last_modified),
        "createdAt": iso(repo.commits[0].date),
        "private": False,
        "disabled": False,
        "gated": "manual" if repo.gated_token is not None else False,
        "downloads": 0,
        "likes": 0,
        "tags": _tags(card) + [t for t in base_model_tags(card, commit.files) if t not in _tags(card)],
        "siblings": [_sibling(f, blobs) for f in commit.files.values()],
        "spaces": [],
        "usedStorage": sum(f.size for f in commit.files.values()),
    }
    if card is not None:
        doc["cardData"] = card
        for key in ("library_name", "pipeline_tag"):
            if isinstance(card.get(key), str):
                doc[key] = card[key]
    config = _config_summary(commit)
    if config is not None:
        doc["config"] = config
    st = _safetensors_info(commit)
    if st is not None:
        doc["safetensors"] = st
    if security:
        doc["securityRepoStatus"] = {"scansDone": True, "filesWithIssues": []}
    return doc


# Card keys the hub turns into `key:value` tags of a dataset.
_DATASET_TAG_KEYS = ("task_categories", "task_ids", "language", "size_categories", "license", "multilinguality")
_DATA_FORMATS = {".parquet": "parquet", ".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json",
                 ".arrow": "arrow", ".txt": "text", ".tar": "webdataset"}  # fmt: skip


def _dataset_tags(card: dict[str, object] | None, commit: Commit) -> list[str]:
    tags = _tags(card)
    for key in _DATASET_TAG_KEYS:
        value = (card or {}).get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and f"{key}:{item}" not in tags:
                tags.append(f"{key}:{item}")
    formats = sorted({fmt for path in commit.files for ext, fmt in _DATA_FORMATS.items() if path.endswith(ext)
                      and not path.endswith(("README.md", "dataset_infos.json"))})  # fmt: skip
    return tags + [f"format:{fmt}" for fmt in formats if f"format:{fmt}" not in tags]


def dataset_document(
    repo: RepoHistory, commit: Commit, last_modified: datetime, *, blobs: bool
) -> dict[str, object]:
    """The `/api/datasets/{repo}` body for one revision (also an entry of the `/api/datasets` listing)."""
    card = card_data(commit)
    doc: dict[str, object] = {
        "_id": hashlib.sha1(repo.key.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "author": repo.repo_id.split("/", 1)[0],
        "sha": commit.sha,
        "lastModified": iso(last_modified),
        "createdAt": iso(repo.commits[0].date),
        "private": False,
        "disabled": False,
        "gated": "manual" if repo.gated_token is not None else False,
        "downloads": 0,
        "likes": 0,
        "tags": _dataset_tags(card, commit),
        "siblings": [_sibling(f, blobs) for f in commit.files.values()],
        "usedStorage": sum(f.size for f in commit.files.values()),
    }
    if card is not None:
        doc["cardData"] = card
        if isinstance(card.get("paperswithcode_id"), str):
            doc["paperswithcode_id"] = card["paperswithcode_id"]
    return doc


def commit_item(repo: RepoHistory, commit: Commit, formatted: bool) -> dict[str, object]:
    """One entry of `/api/models/{repo}/commits/{rev}`."""
    item: dict[str, object] = {
        "id": commit.sha,
        "title": commit.title,
        "message": commit.message,
        "date": iso(commit.date),
        "authors": [{"user": commit.author or repo.repo_id.split("/", 1)[0]}],
    }
    if formatted:
        from html import escape

        item["formatted"] = {"title": escape(commit.title), "message": escape(commit.message)}
    return item


def last_commit(history: Sequence[Commit], path: str, folder: bool = False) -> Commit:
    """The newest commit of `history` (oldest first, ending at the revision) that touched `path`."""

    def view(c: Commit) -> tuple[tuple[str, str], ...]:
        if folder:
            prefix = path + "/"
            return tuple((p, f.blob_id) for p, f in c.files.items() if p.startswith(prefix))
        f = c.files.get(path)
        return ((path, f.blob_id),) if f else ()

    current = view(history[-1])
    for i in range(len(history) - 1, 0, -1):
        if view(history[i - 1]) != current:
            return history[i]
    return history[0]


def _last_commit_doc(c: Commit) -> dict[str, object]:
    return {"id": c.sha, "title": c.title, "date": iso(c.date)}


def file_item(f: RepoFile, history: Sequence[Commit] | None) -> dict[str, object]:
    """A tree / paths-info entry of a file; `history` given = expanded (lastCommit, security)."""
    item: dict[str, object] = {"type": "file", "oid": f.blob_id, "size": f.size, "path": f.path}
    if f.lfs_sha256 is not None:
        item["lfs"] = {"oid": f.lfs_sha256, "size": f.size, "pointerSize": f.pointer_size}
    if history is not None:
        item["lastCommit"] = _last_commit_doc(last_commit(history, f.path))
        item["securityFileStatus"] = dict(_SECURITY)
    return item


def folders_of(commit: Commit) -> list[str]:
    """Every folder path holding at least one file of the commit."""
    found: set[str] = set()
    for path in commit.files:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            found.add("/".join(parts[:i]))
    return sorted(found)


def folder_item(commit: Commit, folder: str, history: Sequence[Commit] | None) -> dict[str, object]:
    """A tree / paths-info entry of a folder (oid: a stable hash of what it holds)."""
    digest = hashlib.sha1()
    for path, f in commit.files.items():
        if path.startswith(folder + "/"):
            digest.update(f"{path}\0{f.blob_id}\n".encode())
    item: dict[str, object] = {"type": "directory", "oid": digest.hexdigest(), "size": 0, "path": folder}
    if history is not None:
        item["lastCommit"] = _last_commit_doc(last_commit(history, folder, folder=True))
    return item
