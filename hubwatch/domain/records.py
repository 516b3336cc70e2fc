"""Typed, frozen domain values shared by the tracker, the store and the web app."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from hubwatch.domain.files import FileRecord

__all__ = [
    "AdvisoryRecord",
    "ChangeRecord",
    "Direction",
    "FileRecord",
    "InvalidRepoId",
    "Kind",
    "PollState",
    "RepoId",
    "RepoType",
    "RevisionRecord",
    "Severity",
    "is_commit_sha",
]

_REPO_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
_SHA = re.compile(r"[0-9a-f]{40}")


class InvalidRepoId(ValueError):
    """A repo id that is not `org/name` (a model) or `datasets/org/name` (a dataset)."""


class RepoType(str, Enum):
    """Which kind of hub repo an id names: the hub keeps models and datasets apart (the same
    `org/name` may be both, and they are two repos)."""

    MODEL = "model"
    DATASET = "dataset"

    def __str__(self) -> str:
        return str(self.value)  # the word huggingface_hub's `repo_type=` takes: "model", "dataset"

    @property
    def prefix(self) -> str:
        """What the hub's URLs put before `org/name`: "" for a model, "datasets/" for a dataset."""
        return "" if self is RepoType.MODEL else "datasets/"

    @classmethod
    def parse(cls, value: object) -> "RepoType":
        """`value` (a RepoType, its text, or the plural "models"/"datasets"); InvalidRepoId otherwise."""
        if isinstance(value, str) and value in ("models", "datasets"):
            value = value[:-1]
        try:
            return cls(value)
        except ValueError:
            raise InvalidRepoId(f"repo type {value!r} is not 'model' or 'dataset'") from None


# The hub's other URL prefixes: named so an id under them is refused with a reason, not read as org/name.
_OTHER_PREFIXES = {"models": "a model id has no prefix: give it as 'org/name'",
                   "spaces": "hubwatch watches models and datasets, not spaces"}  # fmt: skip


@dataclass(frozen=True, eq=False)
class RepoId:
    """A repo on the hub: a model `org/name` or a dataset `datasets/org/name`, spelled as given.

    The hub resolves ids case-insensitively, so two spellings of one id are equal (and hash alike):
    `RepoId.parse("Org/Name") == RepoId.parse("org/name")`; `key` is the spelling-free form. A
    model and a dataset of one `org/name` are two repos: they differ in `key`, `str()` and the URL.
    Every call to the hub passes `hub_id` (the plain `org/name`) and `hub_repo_type`, never `str()`.
    Ordering is by (org, name, type) as spelled, like the store's listings (a dataset before the model).
    """

    org: str
    name: str
    repo_type: RepoType = RepoType.MODEL

    @property
    def is_dataset(self) -> bool:
        return self.repo_type is RepoType.DATASET

    @property
    def hub_id(self) -> str:
        """`org/name` as the huggingface_hub client takes it (with `repo_type=hub_repo_type`)."""
        return f"{self.org}/{self.name}"

    @property
    def hub_repo_type(self) -> str:
        """"model" or "dataset": the client's `repo_type=` for this repo."""
        return self.repo_type.value

    @property
    def key(self) -> str:
        """The id lowercased: what two spellings of one repo share (`datasets/org/name` for a dataset)."""
        return str(self).lower()

    @property
    def url_path(self) -> str:
        """The repo's path on the hub (and on hubwatch's pages): `/org/name` or `/datasets/org/name`."""
        return f"/{self}"

    @property
    def page_path(self) -> str:
        """Where hubwatch's web app keeps the repo's pages: `/models/org/name` for a model,
        `/datasets/org/name` for a dataset (one `org/name` may be both; their pages never mix)."""
        return f"/{'datasets' if self.is_dataset else 'models'}/{self.hub_id}"

    def __eq__(self, other: object) -> bool:
        return self.key == other.key if isinstance(other, RepoId) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.key)

    def _order(self) -> tuple[str, str, str]:
        return self.org, self.name, self.repo_type.value

    def __lt__(self, other: "RepoId") -> bool:
        return self._order() < other._order()

    def __le__(self, other: "RepoId") -> bool:
        return self == other or self < other

    def __gt__(self, other: "RepoId") -> bool:
        return other < self

    def __ge__(self, other: "RepoId") -> bool:
        return self == other or other < self

    @classmethod
    def parse(cls, text: str, repo_type: RepoType | str | None = None) -> "RepoId":
        """`org/name` (a model, or a dataset when `repo_type` says so) or `datasets/org/name`,
        matched in full: surrounding whitespace or a trailing newline is refused, and so is a
        `datasets/…` id asked for as a model, or an id under `models/` or `spaces/`."""
        wanted = RepoType.parse(repo_type) if repo_type is not None else None
        parts = text.split("/") if isinstance(text, str) else []
        if len(parts) == 3 and parts[0] in _OTHER_PREFIXES:
            raise InvalidRepoId(f"{text!r}: {_OTHER_PREFIXES[parts[0]]}")
        if len(parts) == 2 and parts[0] in ("datasets", *_OTHER_PREFIXES):
            raise InvalidRepoId(f"{text!r} names no org: expected '{parts[0]}/org/name'")  # the hub's reserved words
        kind = wanted or RepoType.MODEL
        if len(parts) == 3 and parts[0] == "datasets":
            if wanted is RepoType.MODEL:
                raise InvalidRepoId(f"{text!r} is a dataset id, but a model was asked for: give it as 'org/name'")
            kind, parts = RepoType.DATASET, parts[1:]
        if len(parts) != 2 or not all(_REPO_PART.fullmatch(p) for p in parts) or ".." in text:
            raise InvalidRepoId(
                f"{text!r} is not a repo id: expected 'org/name' for a model or 'datasets/org/name' "
                "for a dataset (letters, digits, '.', '_' or '-'), e.g. 'meta-llama/Llama-2-7b-hf'"
            )
        return cls(parts[0], parts[1], kind)

    def with_name(self, org: str, name: str) -> "RepoId":
        """The same kind of repo under another `org/name` (a rename upstream)."""
        return RepoId(org, name, self.repo_type)

    def __str__(self) -> str:
        return f"{self.repo_type.prefix}{self.org}/{self.name}"

    def url(self, hub: str = "https://huggingface.co") -> str:
        return f"{hub.rstrip('/')}{self.url_path}"


def is_commit_sha(text: str) -> bool:
    return bool(_SHA.fullmatch(text))


class Kind(str, Enum):
    """The change taxonomy: one vocabulary in the CLI, JSON, OSV, feeds and pages."""

    ARCHITECTURE = "architecture"
    CONTEXT = "context"
    SPECIAL_TOKENS = "special_tokens"
    TOKENIZER = "tokenizer"
    CHAT_TEMPLATE = "chat_template"
    GENERATION_DEFAULTS = "generation_defaults"
    DTYPE = "dtype"
    WEIGHTS = "weights"
    CUSTOM_CODE = "custom_code"
    PICKLE = "pickle"
    LICENSE = "license"
    CARD = "card"
    FILES = "files"
    CONFIG = "config"
    METADATA = "metadata"
    # dataset repos (docs/changes.md, *Datasets*)
    SCHEMA = "schema"
    SPLITS = "splits"
    DATA_FILES = "data_files"
    SUBSETS = "subsets"


class Severity(str, Enum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is more severe: info=0 … critical=4."""
        return ["info", "low", "medium", "high", "critical"].index(self.value)


class Direction(str, Enum):
    """What an advised change means for a pin: the two meanings, checked here (docs/advisories.md).

    UPDATE: upstream changed something that matters and pins before this revision lack it
    (OSV `introduced: "0"`, `fixed: <this commit>`). HAZARD: this revision onward carries something
    risky (`introduced: <this commit>`, closed with `fixed:` when upstream removes it).
    """

    HAZARD = "hazard"
    UPDATE = "update"

    def __str__(self) -> str:
        return str(self.value)  # prints as stored: "hazard", not "Direction.HAZARD"

    @property
    def id_token(self) -> str:
        """The word advisory ids were derived from before the rename (risk/fix): ids stay stable."""
        return "risk" if self is Direction.HAZARD else "fix"

    @classmethod
    def parse(cls, value: object, where: str = "change") -> "Direction":
        """`value` (a Direction, its text, or the old 'risk'/'fix') as a Direction; a ValueError naming `where`."""
        if isinstance(value, str) and value in _LEGACY_DIRECTIONS:
            return _LEGACY_DIRECTIONS[value]
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"{where} has direction {value!r}: expected 'hazard' or 'update'") from None


# Stored by releases before the two meanings were named (migration 0003 rewrites stored rows).
_LEGACY_DIRECTIONS = {"risk": Direction.HAZARD, "fix": Direction.UPDATE}


class PollState(str, Enum):
    """How a watched repo's polling stands, as recorded after each poll."""

    NEW = "new"  # watched, never polled
    OK = "ok"
    GATED = "gated"
    NOT_FOUND = "not_found"
    DISABLED = "disabled"  # 403 "Access to this resource is disabled."
    ERROR = "error"  # every state but NEW and OK counts in the repo's consecutive failures (OK resets them)

    def __str__(self) -> str:
        return str(self.value)  # prints as stored (CLI tables, pages): "ok", not "PollState.OK"

    @classmethod
    def parse(cls, value: object) -> "PollState":
        """`value` (a PollState or its text) as a PollState; a ValueError listing the states otherwise."""
        try:
            return cls(value)
        except ValueError:
            states = ", ".join(s.value for s in cls)
            raise ValueError(f"poll state {value!r} is not one of {states}") from None


@dataclass(frozen=True)
class ChangeRecord:
    """One classified change of a revision against its parent."""

    kind: Kind
    severity: Severity
    path: str
    summary: str
    detail: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    direction: Direction = Direction.UPDATE


@dataclass(frozen=True)
class RevisionRecord:
    """One upstream commit of a repo."""

    sha: str
    parent: str | None
    date: datetime
    title: str
    message: str = ""
    authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class AdvisoryRecord:
    """An OSV record as published, with the revision it was raised for."""

    id: str
    repo: RepoId
    revision_sha: str
    osv: dict[str, Any]
    modified: datetime
    withdrawn: datetime | None = None
