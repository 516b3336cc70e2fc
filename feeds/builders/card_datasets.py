"""The datasets a model card names (`datasets:` in the YAML block of its README.md), for the model
and revision pages: each linked to its page here when this hubwatch watches it, else named with a
link to the hub marked external (a bare name, the hub's legacy canonical form, too), else shown as
text. The card is read by the diff's bounded parser (`diff/card.py`, within remote_data's limits)
and never trusted: entries that are not strings are left out and counted, at most MAX_SHOWN are
shown ("and N more"), and the store is asked once for all of those shown."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hubwatch.diff.card import card_metadata
from hubwatch.domain.records import InvalidRepoId, RepoId, RepoType

__all__ = ["MAX_SHOWN", "CardDatasets", "NamedDataset", "card_datasets"]

MAX_SHOWN = 20  # entries a page lists; the rest are counted
MAX_TEXT = 120  # characters of an entry shown (an id is at most 9 + 96 + 1 + 96)
_BARE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")  # a canonical dataset: "squad"

# which of these ids are watched → each one's id as the store spells it (`store.repos.watched_ids`)
WatchedLookup = Callable[[Iterable[RepoId]], dict[RepoId, RepoId]]


@dataclass(frozen=True)
class NamedDataset:
    """One `datasets:` entry: as the card spells it (cut at MAX_TEXT), the watched dataset it names
    (its page here) or None, and its page on the hub (None when the entry is no dataset id)."""

    text: str
    watched: RepoId | None
    hub_url: str | None


@dataclass(frozen=True)
class CardDatasets:
    """What a model card's `datasets:` says: the entries shown, how many more it has, how many
    entries are not strings (left out), and why the card's metadata cannot be read (or None)."""

    named: tuple[NamedDataset, ...]
    more: int
    not_text: int
    error: str | None

    @property
    def empty(self) -> bool:
        return not self.named and not self.not_text and self.error is None


def _entries(readme: bytes | None) -> tuple[list[str], int, str | None]:
    """The card's `datasets:` entries (stripped, each once, in the card's order), the count of
    those that are not strings, and the card's metadata error."""
    meta, error = card_metadata(readme.decode("utf-8", "replace") if readme is not None else None)
    value = (meta or {}).get("datasets")
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    texts = [v.strip() for v in items if isinstance(v, str) and v.strip()]
    unique: dict[str, str] = {}
    for text in texts:
        unique.setdefault(text.lower(), text)  # the first spelling of each
    return list(unique.values()), sum(1 for v in items if not isinstance(v, str)), error


def _dataset(text: str) -> RepoId | None:
    """The dataset `org/name` (or `datasets/org/name`) names; None for anything else."""
    if "/" not in text or len(text) > MAX_TEXT:
        return None
    try:
        return RepoId.parse(text, RepoType.DATASET)
    except InvalidRepoId:
        return None


def card_datasets(readme: bytes | None, watched: WatchedLookup, hub_web_url: str) -> CardDatasets | None:
    """The datasets the card `readme` names, the first MAX_SHOWN looked up in one `watched` call;
    None when the card names none (and its metadata reads)."""
    entries, not_text, error = _entries(readme)
    shown = entries[:MAX_SHOWN]
    ids = {text: _dataset(text) for text in shown}
    found = watched([r for r in ids.values() if r is not None]) if any(ids.values()) else {}
    hub = hub_web_url.rstrip("/")
    named = []
    for text in shown:
        repo = ids[text]
        if repo is not None:
            hub_url: str | None = repo.url(hub)
        else:
            hub_url = f"{hub}/datasets/{text}" if _BARE.fullmatch(text) else None
        named.append(NamedDataset(text[:MAX_TEXT] + ("…" if len(text) > MAX_TEXT else ""),
                                  found.get(repo) if repo is not None else None, hub_url))  # fmt: skip
    result = CardDatasets(tuple(named), len(entries) - len(shown), not_text, error)
    return None if result.empty else result
