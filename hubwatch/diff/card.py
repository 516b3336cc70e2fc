"""Card metadata (the YAML block at the top of README.md): licence, gating, base model, tags.

A model card by default; a dataset card with `DATASET_CARD` (its task categories and languages
low, its `dataset_info`/`configs` left to the dataset differs).

Parsed as yaml.safe_load does, within remote_data's limits (size, depth, aliases expanded). A
licence moving to a more restrictive one is a hazard (medium; high when commercial use becomes
forbidden or the licence disappears), and so is new gating; a licence relaxed or gating removed
clears them. Every other card change is an update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.domain.remote_data import RemoteJsonError, load_remote_yaml
from hubwatch.domain.snapshot import Snapshot

from .changes import UPDATE, HAZARD, make_change, show
from .jsondiff import MISSING, key_changes
from .text import line_counts

__all__ = ["DATASET_CARD", "MODEL_CARD", "CardRules", "card_metadata", "diff_card", "license_rank"]

_FILE = "README.md"
_PERMISSIVE = ("mit", "apache", "bsd", "cc0", "cc-by-4.0", "cc-by-3.0", "cc-by-2.0", "unlicense", "isc", "zlib",
               "wtfpl", "postgresql", "ecl", "afl", "bsl-1.0", "pddl", "odc-by", "artistic")  # fmt: skip
_COPYLEFT_WEAK = ("lgpl", "mpl", "epl", "cc-by-sa", "openrail", "bigscience", "creativeml", "odbl", "cdla")
_COPYLEFT = ("gpl", "agpl", "gfdl", "osl", "eupl")
_NON_COMMERCIAL = ("-nc", "noncommercial", "non-commercial", "research", "cc-by-nc", "bigcode-openrail-m-nc")
_GATING = ("extra_gated_prompt", "extra_gated_fields", "extra_gated_heading", "extra_gated_button_content", "gated")
_NOTABLE = ("base_model", "pipeline_tag", "library_name", "base_model_relation")


@dataclass(frozen=True)
class CardRules:
    """What kind of card: its name in summaries, the keys reported low (others info), the
    top-level keys another differ reads (skipped here)."""

    noun: str
    notable: tuple[str, ...]
    skipped: frozenset[str] = frozenset()


MODEL_CARD = CardRules("model card", _NOTABLE)
DATASET_CARD = CardRules(
    "dataset card",
    ("task_categories", "task_ids", "language", "multilinguality", "size_categories", "source_datasets",
     "annotations_creators", "language_creators", "pretty_name"),
    frozenset({"dataset_info", "configs"}),
)  # fmt: skip


def license_rank(value: Any) -> int:
    """0 permissive … 3 custom/community licence … 4 non-commercial or research-only; 5 none."""
    if value is None or value is MISSING:
        return 5
    text = " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    text = text.lower()
    if any(marker in text for marker in _NON_COMMERCIAL):
        return 4
    if text.startswith(("agpl", "gpl")) or any(text.startswith(p) for p in _COPYLEFT):
        return 2 if not text.startswith("lgpl") else 1
    if any(text.startswith(p) for p in _COPYLEFT_WEAK):
        return 1
    if any(text.startswith(p) for p in _PERMISSIVE):
        return 0
    return 3  # llama2, llama3.1, gemma, other, … : custom terms


def _split_card(text: str) -> tuple[str | None, str]:
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None, text


def card_metadata(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(metadata dict, error) of a model card; (None, None) when it has no metadata block."""
    if text is None:
        return None, None
    block, _ = _split_card(text)
    if block is None:
        return None, None
    try:
        data = load_remote_yaml(block)
    except yaml.YAMLError as exc:
        return None, f"metadata block is not valid YAML: {str(exc).splitlines()[0][:200]}"
    except RemoteJsonError as exc:
        return None, f"metadata block is not read: {exc}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, "metadata block is not a mapping"
    return {str(k): v for k, v in data.items()}, None


def _shown(value: Any) -> str:
    return "none" if value is None or value is MISSING else show(value)


def _license_record(old: Any, new: Any) -> ChangeRecord:
    a, b = license_rank(old), license_rank(new)
    marks: dict[str, list[str]] = {}
    if b > a:  # a hazard while the licence stays above `a`: cleared by a change back to rank <= a
        severity, direction, marks = Severity.HIGH if b >= 4 else Severity.MEDIUM, HAZARD, {"hazards": [f"license:{a}"]}
    elif b < a:
        severity, direction, marks = Severity.MEDIUM, UPDATE, {"clears": [f"license:{b}"]}
    else:
        severity, direction = Severity.MEDIUM, UPDATE
    return make_change(
        Kind.LICENSE, severity, file=_FILE, key="license", old=None if old is MISSING else old,
        new=None if new is MISSING else new, direction=direction,
        summary=f"licence {_shown(old)} → {_shown(new)}" + (" (more restrictive)" if b > a else " (less restrictive)" if b < a else ""),
        restrictiveness={"old": a, "new": b}, **marks,
    )  # fmt: skip


def diff_card(old: Snapshot, new: Snapshot, rules: CardRules = MODEL_CARD) -> list[ChangeRecord]:
    """Changes of the card's metadata (and a note when only its text changed)."""
    old_text, new_text = old.text(_FILE), new.text(_FILE)
    if old_text == new_text:
        return []
    (before, _), (after, error) = card_metadata(old_text), card_metadata(new_text)
    records: list[ChangeRecord] = []
    if error:
        records.append(make_change(Kind.CARD, Severity.LOW, file=_FILE, key=None, old=None, new=None,
                                   summary=f"{rules.noun} {error}", error=error))  # fmt: skip
    before, after = before or {}, after or {}
    lic_old, lic_new = before.get("license", MISSING), after.get("license", MISSING)
    if lic_old != lic_new and not (lic_old is MISSING and new_text is None):
        records.append(_license_record(lic_old, lic_new))
    gated_old = any(k in before for k in _GATING)
    gated_new = any(k in after for k in _GATING)
    if gated_old != gated_new:
        records.append(make_change(
            Kind.CARD, Severity.MEDIUM, file=_FILE, key="gating", old=gated_old, new=gated_new,
            summary="access gating added (terms must be accepted)" if gated_new else "access gating removed",
            direction=HAZARD if gated_new else UPDATE, **({"hazards" if gated_new else "clears": ["gating"]}),
        ))  # fmt: skip
    for change in key_changes(before, after):
        top = change.path[0] if change.path else ""
        if top in ("license",) or top in _GATING or top in rules.skipped:
            continue
        severity = Severity.LOW if top in rules.notable else Severity.INFO
        old_v, new_v = (None if v is MISSING else v for v in (change.old, change.new))
        records.append(make_change(
            Kind.CARD, severity, file=_FILE, key=change.key, old=old_v, new=new_v,
            summary=f"card {change.key} {show(old_v)} → {show(new_v)}",
        ))  # fmt: skip
    if not records and old_text is not None and new_text is not None:
        if rules.skipped and _split_card(old_text)[1] == _split_card(new_text)[1]:
            return records  # only metadata another differ reads changed
        plus, minus = line_counts(old_text, new_text)
        records.append(make_change(Kind.CARD, Severity.INFO, file=_FILE, key=None, old=None, new=None,
                                   summary=f"{rules.noun} text changed (+{plus}/-{minus} lines)"))  # fmt: skip
    return records
