"""`hubwatch check --format sarif`: SARIF 2.1.0 for code scanning, one result per failing or affected pin.

One rule per advisory kind (the kind of the pin's worst advisory names its result's rule), plus two
for what only `--strict` fails (an unknown pin, a commit dropped from the main line). A result sits on
the revision string itself, its columns counted in UTF-16 code units (`utf16CodeUnits`, SARIF's
default and what code scanning and editors count); its level is `error` when the pin fails the gate,
`warning` when an open advisory on it is below `--fail-on`, `note` when every advisory on it is
acknowledged. Its `partialFingerprints` come from the file, the model repo and the pinned text
(formats.fingerprints), never the line, so a closed alert stays closed. A pin with a revision to move
to carries a `fix` replacing the revision with the suggested commit. Validated against the OASIS
schema packaged beside this module (sarif-schema-2.1.0.json; its provenance in
sarif-schema-2.1.0.SOURCE.txt).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from hubwatch import __version__
from hubwatch.domain.records import Kind
from hubwatch.pincheck.formats import CheckedRun, advisory_url, compare_link, fingerprints, md_code, md_text, pin_label
from hubwatch.pincheck.report import PinReport, worst_first

__all__ = ["FINGERPRINT_KEY", "KIND_HELP", "SCHEMA_URI", "sarif_log", "sarif_schema", "to_sarif"]

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "hubwatchPin/v1"

# What each change kind means for a team pinned before or after it (the design's vocabulary).
KIND_HELP: dict[str, str] = {
    "architecture": "The model's architecture changed (model type, layer sizes, heads, experts, vocabulary size).",
    "context": "The context settings changed (max positions, rope scaling, sliding window, sequence length).",
    "special_tokens": "Special tokens changed (bos/eos/pad/unk ids or strings, add_bos/add_eos): generation may "
                      "stop or start differently.",
    "tokenizer": "The tokenizer changed: the same text may encode to other ids.",
    "chat_template": "The chat template changed: the prompt the model sees for a conversation is different.",
    "generation_defaults": "Generation defaults changed (temperature, top_p, max_new_tokens, …).",
    "dtype": "The weights' dtype changed.",
    "weights": "Weights were re-uploaded or their tensors, shards or index changed.",
    "custom_code": "The repo runs custom code (auto_map, code files) with trust_remote_code.",
    "pickle": "The repo holds pickle files (e.g. pytorch_model.bin), which run code when loaded.",
    "license": "The licence changed.",
    "card": "The model card's metadata changed (gating, base model, …).",
    "files": "Files were added or removed.",
    "config": "The configuration changed.",
    "metadata": "Metadata only (transformers_version, _name_or_path, formatting).",
    "schema": "A dataset's columns changed (added, removed, renamed, retyped, ClassLabel names reordered).",
    "splits": "A dataset's splits changed (added, removed, row counts or bytes; a grown test split risks "
              "contamination).",
    "data_files": "A dataset's data files changed (added, removed, re-uploaded with other content, format, total size).",
    "subsets": "A dataset's configs changed (added, removed, the default config, data_files patterns).",
}
_UNKNOWN = ("unknown-pin", "A pinned commit hubwatch does not know (never seen, ambiguous, or computed at run "
                           "time); --strict fails it.")
_DROPPED = ("dropped-commit", "A pinned commit a force-push or squash upstream dropped from the main line; the hub "
                              "may stop serving it. --strict fails it.")
_OTHER = ("advisory", "An advisory of a kind this hubwatch does not name.")


def sarif_schema() -> dict[str, Any]:
    """The SARIF 2.1.0 JSON schema (OASIS, errata 01), packaged as data."""
    text = resources.files("hubwatch.pincheck").joinpath("sarif-schema-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _rule_of(report: PinReport) -> tuple[str, str]:
    open_hits = worst_first([h for h in report.hits if not h.ignored]) or worst_first(report.hits)
    if open_hits:
        kind = open_hits[0].kinds[0] if open_hits[0].kinds else ""
        return (kind, KIND_HELP[kind]) if kind in KIND_HELP else _OTHER
    return _UNKNOWN if report.status == "unknown" else _DROPPED


def _level(run: CheckedRun, report: PinReport) -> str:
    if run.verdict(report).fails:
        return "error"
    return "warning" if any(not h.ignored for h in report.hits) else "note"


def _rule(rule_id: str, help_text: str, web_url: str | None) -> dict[str, Any]:
    """A rule: its help, and with a web app known, its link: the index of the models whose changes are
    of this kind (`/?kind=`); each result links its advisories' own pages."""
    markdown = (f"{help_text}\n\nEach result names the advisories on the pin, worst first, and the revision to "
                "move to; each advisory's page on the hubwatch web app says what changed, which revisions it "
                "affects and what moving resolves. Run `hubwatch check PATH` locally for the same report.")
    rule: dict[str, Any] = {
        "id": f"hubwatch/{rule_id}", "name": "".join(p.capitalize() for p in rule_id.replace("-", "_").split("_")),
        "shortDescription": {"text": help_text.split(":")[0].rstrip(".")},
        "fullDescription": {"text": help_text},
        "help": {"text": help_text, "markdown": markdown},
        "properties": {"tags": ["hubwatch", "model-pin", rule_id]},
    }
    if web_url:
        rule["helpUri"] = f"{web_url.rstrip('/')}/?kind={rule_id}" if rule_id in KIND_HELP else f"{web_url.rstrip('/')}/"
    return rule


def _message(run: CheckedRun, report: PinReport) -> dict[str, str]:
    """The result's message: plain text (what code scanning shows), and Markdown with every text that
    came from an advisory record or a file escaped."""
    verdict = run.verdict(report)
    label = pin_label(report.pin)
    lines = [f"{label} {report.status}: {verdict.text()}"]
    md = [f"**{md_text(label)}** {report.status}: {md_text(verdict.text())}", ""]
    for h in worst_first(report.hits):
        severity = h.severity.value if h.severity else "unknown severity"
        tail = " (acknowledged)" if h.ignored else ""
        lines.append(f"{severity} {h.direction or 'advisory'} {h.id}: {h.summary}{tail}")
        url = advisory_url(run.web_url, h.id)
        name = f"[{md_text(h.id)}](<{url}>)" if url else md_text(h.id)
        md.append(f"- {severity} {h.direction or 'advisory'} {name}: {md_text(h.summary)}{tail}")
    if report.suggestion is not None:
        resolves = f"resolves {', '.join(report.suggestion.resolves)}" if report.suggestion.resolves else ""
        lines.append(f"move to {report.suggestion.commit}" + (f" ({resolves})" if resolves else ""))
        link = compare_link(run.web_url, report)
        md.append(f"\nmove to {md_code(report.suggestion.commit)}" + (f" \\({md_text(resolves)}\\)" if resolves else "")
                  + (f" ([compare](<{link}>))" if link else ""))
    if report.note:
        lines.append(report.note)
        md.append(f"\n{md_text(report.note)}")
    return {"text": "\n".join(lines), "markdown": "\n".join(md).rstrip()}


def _region(run: CheckedRun, report: PinReport) -> dict[str, int]:
    where = run.region(report.pin)
    out = {"startLine": where.line}
    if where.column16 is not None and where.end_column16 is not None:
        out |= {"startColumn": where.column16, "endLine": where.line, "endColumn": where.end_column16}
    return out


def _fixes(run: CheckedRun, report: PinReport) -> list[dict[str, Any]]:
    s = report.suggestion
    where = run.region(report.pin)
    if s is None or where.column16 is None or where.end_column16 is None:
        return []
    resolves = f", resolving {', '.join(s.resolves)}" if s.resolves else ""
    return [{
        "description": {"text": f"Move {report.pin.repo} to {s.commit}{resolves}"},
        "artifactChanges": [{
            "artifactLocation": {"uri": run.uri(report.pin), "uriBaseId": "%SRCROOT%"},
            "replacements": [{
                "deletedRegion": {"startLine": where.line, "startColumn": where.column16,
                                  "endLine": where.line, "endColumn": where.end_column16},
                "insertedContent": {"text": s.commit},
            }],
        }],
    }]


def sarif_log(run: CheckedRun) -> dict[str, Any]:
    """The SARIF log of one check: a run of the `hubwatch` driver with a result per failing or affected pin."""
    prints = fingerprints(run)
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for k, r in enumerate(run.reports):
        if not (r.status == "affected" or run.verdict(r).fails):
            continue
        rule_id, help_text = _rule_of(r)
        rule = rules.setdefault(rule_id, _rule(rule_id, help_text, run.web_url))
        result: dict[str, Any] = {
            "ruleId": rule["id"], "level": _level(run, r), "message": _message(run, r),
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": run.uri(r.pin), "uriBaseId": "%SRCROOT%"},
                "region": _region(run, r)}}],
            "partialFingerprints": {FINGERPRINT_KEY: prints[k]},
            "properties": {
                "repo": r.pin.name, "revision": r.pin.revision, "status": r.status,
                "failsGate": run.verdict(r).fails, "advisories": [h.id for h in worst_first(r.hits)],
                **({"cell": r.pin.cell} if r.pin.cell is not None else {}),
            },
        }
        if fixes := _fixes(run, r):
            result["fixes"] = fixes
        results.append(result)
    ordered = sorted(rules.values(), key=lambda rule: str(rule["id"]))
    index = {str(rule["id"]): n for n, rule in enumerate(ordered)}
    for result in results:
        result["ruleIndex"] = index[result["ruleId"]]
    return {
        "$schema": SCHEMA_URI, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "hubwatch", "version": __version__, "semanticVersion": __version__,
                                "rules": ordered}},
            "columnKind": "utf16CodeUnits",
            "results": results,
            "properties": {"failOn": run.threshold.value, "strict": run.strict,
                           "failed": bool(run.failing), "pins": len(run.reports),
                           "kinds": [k.value for k in Kind if f"hubwatch/{k.value}" in index]},
        }],
    }


def to_sarif(run: CheckedRun) -> str:
    return json.dumps(sarif_log(run), indent=2, ensure_ascii=False) + "\n"
