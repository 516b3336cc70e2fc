"""Semantic diff of tokenizer files: tokenizer_config.json, special_tokens_map.json,
added_tokens.json and the salient parts of tokenizer.json (never its whole vocabulary).

A special token written as a string or as an AddedToken dict with the same content is the same
special token; only a change of content counts as a special-token change, a change of the
AddedToken flags is a tokenizer change, and a change of representation alone is metadata.
"""

from __future__ import annotations

import hashlib
import json
from itertools import chain
from typing import Any

from hubwatch.domain.records import ChangeRecord, Kind, Severity

from .changes import UPDATE, counted, make_change, show
from .classify import SPECIAL_TOKEN_FLAGS, SPECIAL_TOKEN_KEY
from .configs import diff_parsed, read_pair
from .jsondiff import MISSING, key_changes, lookup

__all__ = ["diff_added_tokens_json", "diff_tokenizer_config", "diff_tokenizer_json", "tokenizer_json_salient"]

_LOW_KEYS = frozenset({"use_fast", "model_input_names", "sp_model_kwargs", "errors", "processor_class"})
_FLAG_NAMES = ("lstrip", "rstrip", "normalized", "single_word", "special")


def _is_token_key(key: str) -> bool:
    return bool(SPECIAL_TOKEN_KEY.match(key)) or key in SPECIAL_TOKEN_FLAGS


def _content(value: Any) -> Any:
    if isinstance(value, dict) and "content" in value:
        return value["content"]
    if isinstance(value, list):
        return [_content(v) for v in value]
    return value


def _flags(value: Any) -> Any:
    if isinstance(value, dict) and "content" in value:
        return {k: value.get(k) for k in _FLAG_NAMES if k in value}
    if isinstance(value, list):
        return [_flags(v) for v in value]
    return "string"


def _split(doc: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(semantic view, flags of special tokens, added_tokens_decoder) of a tokenizer config."""
    if not isinstance(doc, dict):
        return {"(document)": doc}, {}, {}
    view: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for key, value in doc.items():
        if key in ("chat_template", "added_tokens_decoder"):
            continue  # chat templates: templates.py; added tokens: below
        if _is_token_key(key):
            view[key] = _content(value)
            flags[key] = _flags(value)
        else:
            view[key] = value
    decoder = doc.get("added_tokens_decoder")
    return view, flags, decoder if isinstance(decoder, dict) else {}


def _flag_records(file: str, old: dict[str, Any], new: dict[str, Any], old_view: dict[str, Any], new_view: dict[str, Any]) -> list[ChangeRecord]:
    records: list[ChangeRecord] = []
    for key in sorted(set(old) & set(new)):
        if old[key] == new[key] or old_view.get(key) != new_view.get(key):
            continue  # same flags, or the content changed (reported as a special-token change)
        pair = (old[key], new[key])
        if "string" in pair or (isinstance(pair[0], list) and "string" in pair[0] + pair[1]):
            records.append(make_change(
                Kind.METADATA, Severity.INFO, file=file, key=key, old=pair[0], new=pair[1],
                summary=f"{key} representation changed (string ↔ AddedToken), content unchanged",
            ))  # fmt: skip
        else:
            records.append(make_change(
                Kind.TOKENIZER, Severity.MEDIUM, file=file, key=key, old=pair[0], new=pair[1],
                summary=f"{key} AddedToken flags changed: {show(pair[0])} → {show(pair[1])}",
            ))  # fmt: skip
    return records


def _added_token_records(file: str, key: str, old: dict[str, Any], new: dict[str, Any]) -> list[ChangeRecord]:
    """Added tokens by id: added, removed, content changed, flags changed."""
    records: list[ChangeRecord] = []
    added = sorted(set(new) - set(old), key=str)
    removed = sorted(set(old) - set(new), key=str)
    if added:
        shown = ", ".join(f"{i} {show(_content(new[i]))}" for i in added[:5]) + (" …" if len(added) > 5 else "")
        records.append(make_change(
            Kind.TOKENIZER, Severity.MEDIUM, file=file, key=key, old=None,
            new={i: new[i] for i in added}, summary=f"{counted(len(added), 'added token')} defined: {shown}",
        ))  # fmt: skip
    if removed:
        shown = ", ".join(f"{i} {show(_content(old[i]))}" for i in removed[:5]) + (" …" if len(removed) > 5 else "")
        records.append(make_change(
            Kind.TOKENIZER, Severity.HIGH, file=file, key=key, old={i: old[i] for i in removed},
            new=None, summary=f"{counted(len(removed), 'added token')} removed: {shown}",
        ))  # fmt: skip
    common = sorted(set(old) & set(new), key=str)
    renamed = [i for i in common if _content(old[i]) != _content(new[i])]
    if renamed:
        shown = ", ".join(f"{i} {show(_content(old[i]))} → {show(_content(new[i]))}" for i in renamed[:3])
        records.append(make_change(
            Kind.TOKENIZER, Severity.HIGH, file=file, key=key, old={i: old[i] for i in renamed},
            new={i: new[i] for i in renamed}, ids=renamed,
            summary=f"{counted(len(renamed), 'added token')} changed content: {shown}" + (" …" if len(renamed) > 3 else ""),
        ))  # fmt: skip
    reflagged = [i for i in common if i not in renamed and old[i] != new[i]]
    if reflagged:
        i = reflagged[0]
        records.append(make_change(
            Kind.TOKENIZER, Severity.MEDIUM, file=file, key=key, old={i: old[i] for i in reflagged},
            new={i: new[i] for i in reflagged}, ids=reflagged,
            summary=f"{counted(len(reflagged), 'added token')} changed flags: {i} {show(_content(new[i]))} "
            f"{show(_flags(old[i]))} → {show(_flags(new[i]))}",
        ))  # fmt: skip
    return records


def _soften(records: list[ChangeRecord]) -> list[ChangeRecord]:
    out = []
    for r in records:
        key = r.detail.get("key") or ""
        pad_default = key == "padding_side" and {str(r.detail["old"]), str(r.detail["new"])} <= {"None", "right"}
        if r.kind is Kind.TOKENIZER and (key in _LOW_KEYS or pad_default) and r.severity.rank > Severity.LOW.rank:
            r = make_change(r.kind, Severity.LOW, file=r.detail["file"], key=key, old=r.detail["old"],
                            new=r.detail["new"], summary=r.summary, direction=r.direction)  # fmt: skip
        out.append(r)
    return out


def diff_tokenizer_config(file: str, old_raw: bytes | None, new_raw: bytes | None) -> list[ChangeRecord]:
    """tokenizer_config.json or special_tokens_map.json (the chat_template key is left to templates)."""
    pair = read_pair(file, "tokenizer", old_raw, new_raw)
    if isinstance(pair, list):
        return pair
    old, new = pair
    new_view, new_flags, new_dec = _split(new.value)
    if old is None or not old.ok:
        return diff_parsed(file, "tokenizer", None, new_view, added=True)
    old_view, old_flags, old_dec = _split(old.value)
    records = _soften(diff_parsed(file, "tokenizer", old_view, new_view, added=False))
    records += _flag_records(file, old_flags, new_flags, old_view, new_view)
    records += _added_token_records(file, "added_tokens_decoder", old_dec, new_dec)
    return records


def diff_added_tokens_json(file: str, old_raw: bytes | None, new_raw: bytes | None) -> list[ChangeRecord]:
    """added_tokens.json: {token: id}."""
    pair = read_pair(file, "tokenizer", old_raw, new_raw)
    if isinstance(pair, list):
        return pair
    old, new = pair
    if not isinstance(new.value, dict):
        return []
    before = old.value if old is not None and old.ok and isinstance(old.value, dict) else {}
    return _added_token_records(file, "added_tokens", _by_id(before), _by_id(new.value))


def _by_id(tokens: dict[str, Any]) -> dict[str, Any]:
    return {str(v): k for k, v in tokens.items()}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


_PLAIN = frozenset((str, int))  # values whose JSON text Python's equality decides (True == 1 == 1.0 does not)


def _plain(value: Any) -> bool:
    """Whether `value` is a string or whole number, or an object or array of them, or an array of arrays
    of them (a vocabulary, merges as strings or as pairs): checked by type in C, not value by value."""
    items = value.values() if type(value) is dict else value if type(value) is list else None
    if items is None:
        return type(value) in _PLAIN
    kinds = set(map(type, items))
    if kinds <= _PLAIN:
        return True
    return kinds == {list} and set(map(type, chain.from_iterable(items))) <= _PLAIN


def _same_json(old: Any, new: Any) -> bool:
    """Whether `old` and `new` have the same digest, decided without serialising them: equal and plain."""
    return old == new and _plain(old) and _plain(new)


_UNCHANGED = "unchanged"  # the digest left out of both sides of a diff whose part is the same


def tokenizer_json_salient(doc: Any, unchanged: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The parts of tokenizer.json that change behaviour, with the vocabulary reduced to size + digest.

    `unchanged` names the parts ("vocab", "merges") a diff found the same on both sides: their
    digest, the costly part (a tokenizer.json's vocabulary and merges are most of its megabytes), is
    then "unchanged" rather than computed twice to compare equal.
    """
    if not isinstance(doc, dict):
        return {"document": _digest(doc)}
    raw_model = doc.get("model")
    model: dict[str, Any] = raw_model if isinstance(raw_model, dict) else {}
    vocab, merges = model.get("vocab"), model.get("merges")
    return {
        "model": {k: v for k, v in model.items() if k not in ("vocab", "merges")},
        "vocab": {"size": len(vocab) if isinstance(vocab, (dict, list)) else None,
                  "sha256": _UNCHANGED if "vocab" in unchanged else _digest(vocab)},
        "merges": {"count": len(merges) if isinstance(merges, list) else None,
                   "sha256": _UNCHANGED if "merges" in unchanged else _digest(merges)},
        "added_tokens": {
            str(t.get("id")): t for t in doc.get("added_tokens") or [] if isinstance(t, dict)
        },
        **{part: doc.get(part) for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder", "truncation", "padding")},
    }


def _unchanged_parts(old: Any, new: Any) -> frozenset[str]:
    """The parts of the model ("vocab", "merges") the same in both documents."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return frozenset()
    old_model, new_model = old.get("model"), new.get("model")
    if not (isinstance(old_model, dict) and isinstance(new_model, dict)):
        return frozenset()
    return frozenset(part for part in ("vocab", "merges") if _same_json(old_model.get(part), new_model.get(part)))


_TOKENIZER_JSON_KIND = {
    "post_processor": (Kind.SPECIAL_TOKENS, Severity.HIGH),  # where bos/eos are inserted
    "truncation": (Kind.TOKENIZER, Severity.LOW),
    "padding": (Kind.TOKENIZER, Severity.LOW),
}


def diff_tokenizer_json(file: str, old_raw: bytes | None, new_raw: bytes | None) -> list[ChangeRecord]:
    """tokenizer.json: model type, vocab size/digest, added tokens and the pipeline stages."""
    pair = read_pair(file, "tokenizer", old_raw, new_raw)
    if isinstance(pair, list):
        return pair
    old, new = pair
    if old is None or not old.ok:
        after = tokenizer_json_salient(new.value)
        return [make_change(
            Kind.TOKENIZER, Severity.LOW, file=file, key=None, old=None, new=None, direction=UPDATE,
            summary=f"{file} added (model {show(lookup(after, ('model', 'type')))}, vocab {after['vocab']['size']})",
            file_added=True,
        )]  # fmt: skip
    unchanged = _unchanged_parts(old.value, new.value)
    before, after = tokenizer_json_salient(old.value, unchanged), tokenizer_json_salient(new.value, unchanged)
    records = _added_token_records(file, "added_tokens", before.pop("added_tokens"), after.pop("added_tokens"))
    for part in sorted(after):
        changes = key_changes(before[part], after[part])
        if not changes:
            continue
        kind, severity = _TOKENIZER_JSON_KIND.get(part, (Kind.TOKENIZER, Severity.HIGH))
        if part == "vocab":
            summary = f"vocabulary changed: {before['vocab']['size']} → {after['vocab']['size']} entries"
        else:
            summary = f"{part} changed: " + ", ".join(
                f"{c.key or part} {show(None if c.old is MISSING else c.old)} → {show(None if c.new is MISSING else c.new)}"
                for c in changes[:2]
            ) + (" …" if len(changes) > 2 else "")
        records.append(make_change(kind, severity, file=file, key=part, old=before[part], new=after[part],
                                   summary=summary, direction=UPDATE))  # fmt: skip
    return records
