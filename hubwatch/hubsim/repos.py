"""Loads a ROOT folder of repo histories (`<org>__<name>/v1/…`; datasets under `datasets/<org>__<name>/`)
into commits with hub-style file metadata."""

from __future__ import annotations

import csv
import fnmatch
import hashlib
import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hubwatch.hubsim.safetensors import (
    VirtualSafetensors,
    WeightsSpecError,
    parse_weights_json,
)

__all__ = [
    "DATASETS_FOLDER",
    "LFS_PATTERNS",
    "PARQUET_FOLDER",
    "PARQUET_REF",
    "Commit",
    "HistoryError",
    "RepoFile",
    "RepoHistory",
    "load_repo",
    "load_root",
]

# Files the hub stores with Git LFS (the default .gitattributes of a new repo), plus anything > 10 MiB.
LFS_PATTERNS: tuple[str, ...] = (
    "*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.gguf", "*.ggml", "*.h5", "*.onnx",
    "*.msgpack", "*.model", "*.npy", "*.npz", "*.pkl", "*.pickle", "*.joblib", "*.ot", "*.pb",
    "*.tflite", "*.mlmodel", "*.arrow", "*.parquet", "*.zip", "*.gz", "*.tar", "*.xz", "*.zst",
)  # fmt: skip
LFS_SIZE = 10 * 1024 * 1024
_VERSION = re.compile(r"^v(\d+)$")
_DATE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?")
_SHA = re.compile(r"[0-9a-f]{40}")
_DEFAULT_START = datetime(2024, 1, 1, tzinfo=UTC)
WEIGHTS_SPEC = "weights.json"
GATED_FILE = "GATED"
HISTORY_FILE = "HISTORY.tsv"
DATASETS_FOLDER = "datasets"  # ROOT/datasets/<org>__<name>/: dataset repos
PARQUET_FOLDER = "PARQUET"  # <dataset>/PARQUET/vN/: the parquet conversion of main's vN
PARQUET_REF = "refs/convert/parquet"
PARQUET_BOT = "parquet-converter"
CONVERT_DELAY = timedelta(minutes=10)  # a conversion commit's date after the version it converts


class HistoryError(ValueError):
    """A history folder does not follow the format; the message names the folder or file."""


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob with this content (what the hub calls `oid`/`blobId`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def is_lfs(path: str, size: int) -> bool:
    name = path.rsplit("/", 1)[-1]
    return size > LFS_SIZE or any(fnmatch.fnmatchcase(name, p) for p in LFS_PATTERNS)


@dataclass(frozen=True)
class RepoFile:
    """One file of one revision: where its bytes come from and the metadata the hub reports."""

    path: str
    size: int
    blob_id: str  # git oid of the content, or of the LFS pointer for LFS files
    lfs_sha256: str | None
    pointer_size: int | None
    source: Path | VirtualSafetensors

    def iter_bytes(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Bytes `start..end` (inclusive; default to the end) in chunks."""
        if isinstance(self.source, VirtualSafetensors):
            yield from self.source.iter_bytes(start, end)
            return
        last = self.size - 1 if end is None else min(end, self.size - 1)
        with self.source.open("rb") as fh:
            fh.seek(start)
            left = last + 1 - start
            while left > 0:
                chunk = fh.read(min(left, 1024 * 1024))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk

    def read(self) -> bytes:
        return b"".join(self.iter_bytes())

    @property
    def etag(self) -> str:
        """What the hub puts in ETag / X-Linked-Etag: the LFS sha256, else the git blob id."""
        return self.lfs_sha256 or self.blob_id


@dataclass(frozen=True)
class Commit:
    """One revision: the `vN` folder it comes from and its files (path → file)."""

    sha: str
    version: str
    number: int
    date: datetime
    title: str
    message: str
    files: Mapping[str, RepoFile]
    author: str | None = None  # None: the repo's org (a bot's commits name the bot)


@dataclass(frozen=True)
class RepoHistory:
    """A repo's whole history, oldest first; `gated_token` None = public, "" = any token opens it.

    `repo_type` is "model" or "dataset"; a dataset's `converts` are the commits of its parquet
    conversion branch (`refs/convert/parquet`), each numbered as the main version it converts.
    """

    repo_id: str
    folder: Path
    commits: tuple[Commit, ...]
    gated_token: str | None
    repo_type: str = "model"
    converts: tuple[Commit, ...] = ()

    @property
    def key(self) -> str:
        """How the emulator's state and routes name it: `org/name`, or `datasets/org/name`."""
        return f"{DATASETS_FOLDER}/{self.repo_id}" if self.repo_type == "dataset" else self.repo_id


def _file_from_bytes(path: str, data: bytes, source: Path) -> RepoFile:
    if is_lfs(path, len(data)):
        sha256 = hashlib.sha256(data).hexdigest()
        pointer = lfs_pointer(sha256, len(data))
        return RepoFile(path, len(data), git_blob_sha1(pointer), sha256, len(pointer), source)
    return RepoFile(path, len(data), git_blob_sha1(data), None, None, source)


def _file_from_virtual(path: str, virtual: VirtualSafetensors) -> RepoFile:
    sha256 = virtual.sha256()
    pointer = lfs_pointer(sha256, virtual.size)
    return RepoFile(path, virtual.size, git_blob_sha1(pointer), sha256, len(pointer), virtual)


def _load_files(version_dir: Path) -> dict[str, RepoFile]:
    files: dict[str, RepoFile] = {}
    for item in sorted(version_dir.rglob("*")):
        if not item.is_file():
            continue
        rel = item.relative_to(version_dir).as_posix()
        if rel == WEIGHTS_SPEC:
            continue
        files[rel] = _file_from_bytes(rel, item.read_bytes(), item)
    spec = version_dir / WEIGHTS_SPEC
    if spec.is_file():
        try:
            virtual = parse_weights_json(spec.read_bytes(), str(spec))
        except WeightsSpecError as exc:
            raise HistoryError(str(exc)) from exc
        for rel, layout in virtual.items():
            if rel in files:
                raise HistoryError(f"{spec}: {rel} is both a real file and described in {WEIGHTS_SPEC}")
            files[rel] = _file_from_virtual(rel, layout)
    return dict(sorted(files.items()))


def _read_history(path: Path) -> dict[str, dict[str, str]]:
    if not path.is_file():
        return {}
    rows = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t", quoting=csv.QUOTE_NONE)
    if rows.fieldnames is None or "version" not in rows.fieldnames:
        raise HistoryError(f"{path}: the header row must have a 'version' column")
    return {(row.get("version") or "").strip(): row for row in rows}


def _parse_date(cell: str, where: str) -> datetime | None:
    if not cell.strip():
        return None
    match = _DATE.match(cell)
    if match is None:
        raise HistoryError(f"{where}: date {cell!r} does not start with YYYY-MM-DD")
    day = datetime.strptime(match.group(1), "%Y-%m-%d").replace(tzinfo=UTC)
    if match.group(2):
        hms = (match.group(2) + ":00")[:8]
        h, m, s = (int(x) for x in hms.split(":"))
        return day.replace(hour=h, minute=m, second=s)
    return day


def _derived_sha(repo_id: str, version: str, files: Mapping[str, RepoFile]) -> str:
    digest = hashlib.sha1(f"{repo_id}\n{version}\n".encode())
    for path, f in files.items():
        digest.update(f"{path}\0{f.blob_id}\n".encode())
    return digest.hexdigest()


def _versions(folder: Path) -> list[tuple[int, Path]]:
    return sorted((int(m.group(1)), d) for d in folder.iterdir() if d.is_dir() and (m := _VERSION.match(d.name)))


def _converts(folder: Path, key: str, commits: list[Commit]) -> tuple[Commit, ...]:
    """The parquet conversion branch: `PARQUET/vN/` converts main's vN, committed ten minutes after it (the hub converts some minutes after main moves)."""
    parquet = folder / PARQUET_FOLDER
    if not parquet.is_dir():
        return ()
    by_number = {c.number: c for c in commits}
    out: list[Commit] = []
    for number, vdir in _versions(parquet):
        source = by_number.get(number)
        if source is None:
            raise HistoryError(f"{vdir}: converts v{number}, which {folder} does not have")
        files = _load_files(vdir)
        sha = _derived_sha(key, f"{PARQUET_FOLDER}/{vdir.name}", files)
        out.append(Commit(sha, vdir.name, number, source.date + CONVERT_DELAY, "Update parquet files",
                          f"Converted from {source.sha}", files, PARQUET_BOT))  # fmt: skip
    return tuple(out)


def load_repo(folder: Path, repo_type: str = "model") -> RepoHistory:
    """Load one `<org>__<name>` folder (a model's, or with `repo_type="dataset"` a dataset's);
    raises HistoryError naming what is wrong."""
    org, sep, name = folder.name.partition("__")
    if not sep or not org or not name:
        raise HistoryError(f"{folder}: a repo folder is named <org>__<name>")
    repo_id = f"{org}/{name}"
    key = f"{DATASETS_FOLDER}/{repo_id}" if repo_type == "dataset" else repo_id
    versions = _versions(folder)
    if not versions:
        raise HistoryError(f"{folder}: no version folders (v1/, v2/, …)")
    rows = _read_history(folder / HISTORY_FILE)
    commits: list[Commit] = []
    seen: set[str] = set()
    for position, (number, vdir) in enumerate(versions):
        version = vdir.name
        where = f"{folder / HISTORY_FILE} ({version})"
        row = rows.get(version, {})
        files = _load_files(vdir)
        sha = (row.get("commit") or "").strip().lower() or _derived_sha(key, version, files)
        if not _SHA.fullmatch(sha):
            raise HistoryError(f"{where}: commit {sha!r} is not 40 hex digits")
        if sha in seen:
            raise HistoryError(f"{where}: commit {sha} appears twice")
        seen.add(sha)
        date = _parse_date(row.get("date") or "", where)
        if date is None:
            date = commits[-1].date + timedelta(hours=1) if commits else _DEFAULT_START + timedelta(hours=position)
        elif date.hour == date.minute == date.second == 0:
            date += timedelta(minutes=position)  # keep same-day commits in order
        text = (row.get("message") or "").strip() or f"Upload revision {version}"
        title, _, body = text.partition("\n")
        commits.append(Commit(sha, version, number, date, title.strip(), body.strip(), files))
    gated = folder / GATED_FILE
    token = gated.read_text(encoding="utf-8").strip() if gated.is_file() else None
    converts = _converts(folder, key, commits) if repo_type == "dataset" else ()
    return RepoHistory(repo_id, folder, tuple(commits), token, repo_type, converts)


def load_root(root: Path) -> dict[str, RepoHistory]:
    """Every `<org>__<name>/` folder under `root` and under `root/datasets/` (other entries are
    ignored), by key: `org/name` for a model, `datasets/org/name` for a dataset."""
    if not root.is_dir():
        raise HistoryError(f"{root}: not a folder")
    repos: dict[str, RepoHistory] = {}
    datasets = root / DATASETS_FOLDER
    for folder, repo_type in [(f, "model") for f in sorted(root.iterdir())] + (
        [(f, "dataset") for f in sorted(datasets.iterdir())] if datasets.is_dir() else []
    ):
        if folder.is_dir() and "__" in folder.name:
            history = load_repo(folder, repo_type)
            repos[history.key] = history
    if not repos:
        raise HistoryError(f"{root}: no repo folders (<org>__<name>/v1/… or datasets/<org>__<name>/v1/…)")
    return repos
