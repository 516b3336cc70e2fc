"""Chat templates wherever they live, diffed as text and as the prompts they render.

Locations: the `chat_template` key of tokenizer_config.json (a string, or a list of named
templates), chat_template.jinja, chat_template.json (`{"chat_template": …}`) and
additional_chat_templates/<name>.jinja. The template in effect for a name follows transformers'
precedence (chat_template.jinja > chat_template.json > tokenizer_config.json; a file in
additional_chat_templates/ > a named entry in tokenizer_config.json). Copies that are not in
effect are reported at info.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Mapping

from hubwatch.domain.records import ChangeRecord, Kind, Severity
from hubwatch.domain.snapshot import Snapshot

from .changes import UPDATE, HAZARD, make_change
from .conversations import CONVERSATIONS, template_context
from hubwatch.domain.parsed_json import remote_json
from .sandbox import RenderLimits, RenderResult, render_many
from .text import diff_text, line_counts

__all__ = ["TemplateSource", "diff_templates", "special_tokens_of", "template_sources"]

_PRECEDENCE = {"chat_template.jinja": 0, "chat_template.json": 1, "tokenizer_config.json": 2}
_TEMPLATE_FILES = frozenset({"tokenizer_config.json", "chat_template.json", "chat_template.jinja", "special_tokens_map.json"})
_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")


@dataclass(frozen=True)
class TemplateSource:
    file: str
    name: str
    text: str

    @property
    def rank(self) -> int:
        return _PRECEDENCE.get(self.file, 0 if self.file.startswith("additional_chat_templates/") else 3)


def _json(snapshot: Snapshot, path: str) -> Any:
    raw = snapshot.contents.get(path)
    if raw is None:
        return None
    try:
        return remote_json(raw)
    except ValueError:  # not JSON, not UTF-8, too large or too deeply nested
        return None


def _named(file: str, value: Any) -> list[TemplateSource]:
    if isinstance(value, str):
        return [TemplateSource(file, "default", value)]
    if isinstance(value, list):
        return [
            TemplateSource(file, str(item["name"]), item["template"])
            for item in value
            if isinstance(item, dict) and isinstance(item.get("template"), str) and "name" in item
        ]
    return []


def template_sources(snapshot: Snapshot) -> list[TemplateSource]:
    """Every chat template the revision holds, in every location."""
    found: list[TemplateSource] = []
    for file in ("tokenizer_config.json", "chat_template.json"):
        doc = _json(snapshot, file)
        if isinstance(doc, dict):
            found += _named(file, doc.get("chat_template"))
    text = snapshot.text("chat_template.jinja")
    if text is not None:
        found.append(TemplateSource("chat_template.jinja", "default", text))
    for path in sorted(snapshot.contents):
        if path.startswith("additional_chat_templates/"):
            name = posixpath.basename(path).removesuffix(".jinja")
            found.append(TemplateSource(path, name, snapshot.text(path) or ""))
    return found


def _effective(sources: list[TemplateSource]) -> dict[str, TemplateSource]:
    chosen: dict[str, TemplateSource] = {}
    for source in sorted(sources, key=lambda s: s.rank, reverse=True):
        chosen[source.name] = source  # lower rank (higher precedence) written last
    return chosen


def special_tokens_of(snapshot: Snapshot) -> dict[str, str]:
    """bos_token, eos_token, … as strings, as transformers passes them to templates."""
    tokens: dict[str, str] = {}
    for file in ("tokenizer_config.json", "special_tokens_map.json"):
        doc = _json(snapshot, file)
        if not isinstance(doc, dict):
            continue
        for key in _TOKEN_KEYS:
            value = doc.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                tokens[key] = value
    return tokens


def _render(source: TemplateSource | None, tokens: Mapping[str, str], limits: RenderLimits | None) -> list[RenderResult]:
    if source is None:
        return []
    return render_many(source.text, [template_context(c, tokens) for c in CONVERSATIONS], limits)


def _compare(old: TemplateSource, new: TemplateSource, old_tokens: Mapping[str, str],
             new_tokens: Mapping[str, str], limits: RenderLimits | None) -> ChangeRecord | None:  # fmt: skip
    """One template in effect before and after: a hazard when a conversation that rendered no longer
    does; an update when prompts changed, a failing one renders again, or the template moved."""
    before, after = _render(old, old_tokens, limits), _render(new, new_tokens, limits)
    changed, broke, healed, failing_both, rendered = [], [], [], 0, {}
    for conv, a, b in zip(CONVERSATIONS, before, after):
        if a.ok and b.ok and a.text == b.text:
            continue
        if not a.ok and not b.ok:
            failing_both += 1  # fails before and after (e.g. a role the template refuses): no news
            continue
        entry: dict[str, Any] = {"old": a.outcome if not a.ok else "ok", "new": b.outcome if not b.ok else "ok"}
        if a.ok and b.ok:
            changed.append(conv)
            entry["diff"] = diff_text(a.text, b.text, old_name=f"old/{conv.name}", new_name=f"new/{conv.name}")
        elif a.ok:
            broke.append(conv)
        else:
            healed.append(conv)
        rendered[conv.name] = entry
    text_diff = diff_text(old.text, new.text, old_name=f"old/{old.file}", new_name=f"new/{new.file}")
    moved = old.file != new.file
    if not rendered and not text_diff and not moved:
        return None
    added, removed = line_counts(old.text, new.text)
    where = "" if new.name == "default" else f" ({new.name})"
    parts = [f"chat template{where} moved from {old.file} to {new.file}"] if moved else []
    if broke:
        parts.append(f"chat template{where} no longer renders for {_titles([c.title for c in broke])}")
    if changed:
        parts.append(f"rendered prompt{where} for {_titles([c.title for c in changed])} changed")
    if healed:
        parts.append(f"chat template{where} now renders for {_titles([c.title for c in healed])}")
    severity = Severity.HIGH if broke or changed else Severity.MEDIUM if healed else Severity.LOW
    if not (broke or changed or healed):
        if moved:
            parts[0] += " (rendered prompts unchanged)"
        elif failing_both == len(CONVERSATIONS):
            severity = Severity.INFO  # nothing rendered before or after: nothing a pin feels
            parts.append(f"chat template{where} text changed (+{added}/-{removed} lines); it fails to render before and after")
        else:
            parts.append(f"chat template{where} text changed (+{added}/-{removed} lines), rendered prompts unchanged")
    marks: dict[str, list[str]] = {}
    if broke:
        marks["hazards"] = [_hazard(new.name, c.name) for c in broke]
    if healed:
        marks["clears"] = [_hazard(new.name, c.name) for c in healed]
    extra: dict[str, Any] = {"moved_from": old.file} if moved else {}
    return make_change(
        Kind.CHAT_TEMPLATE, severity, file=new.file, key=_key(new), old=old.text, new=new.text,
        summary="; ".join(parts), direction=HAZARD if broke else UPDATE, template=new.name, text_diff=text_diff,
        rendered_diff=rendered, old_file=old.file, **marks, **extra,
    )  # fmt: skip


def _hazard(template: str, conversation: str) -> str:
    """The hazard key of one conversation a template no longer renders (cleared when it renders again)."""
    return f"template:{template}:{conversation}"


def _titles(titles: list[str]) -> str:
    if len(titles) <= 3:
        return ", ".join(titles)
    if len(titles) == len(CONVERSATIONS):
        return f"all {len(titles)} conversations"
    return f"{len(titles)} of {len(CONVERSATIONS)} conversations ({titles[0]}, {titles[1]}, …)"


def _key(source: TemplateSource) -> str | None:
    if source.file == "tokenizer_config.json":
        return "chat_template" if source.name == "default" else f"chat_template.{source.name}"
    return None if source.name == "default" or source.file.startswith("additional_") else source.name


def _appeared(source: TemplateSource, tokens: Mapping[str, str], limits: RenderLimits | None) -> ChangeRecord:
    results = _render(source, tokens, limits)
    failing = _titles([c.title for c, r in zip(CONVERSATIONS, results) if not r.ok])
    where = "" if source.name == "default" else f" '{source.name}'"
    note = f"; fails to render for {failing}" if failing else ""
    clears = [_hazard(source.name, c.name) for c, r in zip(CONVERSATIONS, results) if r.ok]
    return make_change(
        Kind.CHAT_TEMPLATE, Severity.MEDIUM, file=source.file, key=_key(source), old=None,
        new=source.text, summary=f"chat template{where} added ({source.file}){note}", direction=UPDATE,
        template=source.name, rendered={c.name: (r.text if r.ok else r.outcome) for c, r in zip(CONVERSATIONS, results)},
        **({"clears": clears} if clears else {}),
    )  # fmt: skip


def _gone(source: TemplateSource, tokens: Mapping[str, str], limits: RenderLimits | None) -> ChangeRecord:
    """The template in effect removed, none in its place: a hazard for what it rendered."""
    lost = [c for c, r in zip(CONVERSATIONS, _render(source, tokens, limits)) if r.ok]
    where = "" if source.name == "default" else f" {source.name!r}"
    note = "" if lost else " (it rendered no conversation)"
    return make_change(
        Kind.CHAT_TEMPLATE, Severity.HIGH if lost else Severity.LOW, file=source.file, key=_key(source),
        old=source.text, new=None, summary=f"chat template{where} removed{note}", template=source.name,
        direction=HAZARD if lost else UPDATE, **({"hazards": [_hazard(source.name, c.name) for c in lost]} if lost else {}),
    )  # fmt: skip


def _template_files(snapshot: Snapshot) -> dict[str, bytes]:
    """The bytes of every file a chat template or a special token passed to one is read from."""
    return {p: raw for p, raw in snapshot.contents.items()
            if p in _TEMPLATE_FILES or p.startswith("additional_chat_templates/")}  # fmt: skip


def diff_templates(old: Snapshot | None, new: Snapshot, limits: RenderLimits | None = None) -> list[ChangeRecord]:
    """Changes of the chat templates in effect, plus info records for copies not in effect ([] at
    once when every file they are read from is byte-equal on both sides: nothing parsed or rendered)."""
    if old is not None and _template_files(old) == _template_files(new):
        return []
    old_sources = template_sources(old) if old is not None else []
    new_sources = template_sources(new)
    old_eff, new_eff = _effective(old_sources), _effective(new_sources)
    old_tokens = special_tokens_of(old) if old is not None else {}
    new_tokens = special_tokens_of(new)
    records: list[ChangeRecord] = []
    for name in sorted(set(old_eff) | set(new_eff)):
        a, b = old_eff.get(name), new_eff.get(name)
        if a is None and b is not None:
            records.append(_appeared(b, new_tokens, limits))
        elif b is None and a is not None:
            records.append(_gone(a, old_tokens, limits))
        elif a is not None and b is not None and (a.text != b.text or old_tokens != new_tokens):
            record = _compare(a, b, old_tokens, new_tokens, limits)
            if record is not None:
                records.append(record)
    effective = {id(s) for s in (*old_eff.values(), *new_eff.values())}
    old_loc = {(s.file, s.name): s for s in old_sources}
    new_loc = {(s.file, s.name): s for s in new_sources}
    for loc in sorted(set(old_loc) | set(new_loc)):
        a, b = old_loc.get(loc), new_loc.get(loc)
        if (a is not None and id(a) in effective) or (b is not None and id(b) in effective):
            continue
        if a is not None and b is not None and a.text == b.text:
            continue
        state = "added" if a is None else "removed" if b is None else "changed"
        in_effect = new_eff.get(loc[1])
        records.append(make_change(
            Kind.CHAT_TEMPLATE, Severity.INFO, file=loc[0], key=None, old=a.text if a else None,
            new=b.text if b else None, direction=UPDATE, template=loc[1],
            summary=f"copy of chat template in {loc[0]} {state} (not in effect; "
            f"{'no template' if in_effect is None else in_effect.file} is used)",
        ))  # fmt: skip
    return records
