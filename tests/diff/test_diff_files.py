"""Files, custom code and model card metadata."""

from __future__ import annotations

from diff_histories import make_snapshot
from hubwatch.domain.records import Kind, Severity
from hubwatch.diff import diff_snapshots

CONFIG = {"model_type": "llama", "hidden_size": 64}


def one(old, new):  # type: ignore[no-untyped-def]
    changes = diff_snapshots(old, new)
    assert len(changes) == 1, [c.summary for c in changes]
    return changes[0]


def test_pickle_appearing_is_high_risk_and_removal_a_fix() -> None:
    base = make_snapshot({"config.json": CONFIG})
    with_bin = make_snapshot({"config.json": CONFIG}, listed={"pytorch_model.bin": "a" * 64})
    added = one(base, with_bin)
    assert (added.kind, added.severity, added.direction, added.summary) == (
        Kind.PICKLE, Severity.HIGH, "hazard", "pytorch_model.bin added")
    removed = one(with_bin, base)
    assert (removed.kind, removed.direction) == (Kind.PICKLE, "update")
    replaced = one(with_bin, make_snapshot({"config.json": CONFIG}, listed={"pytorch_model.bin": "b" * 64}))
    assert (replaced.kind, replaced.severity) == (Kind.PICKLE, Severity.HIGH)


def test_custom_code_files() -> None:
    base = make_snapshot({"config.json": CONFIG})
    code = make_snapshot({"config.json": CONFIG, "modeling_x.py": "import os\n"})
    added = one(base, code)
    assert (added.kind, added.severity, added.direction) == (Kind.CUSTOM_CODE, Severity.HIGH, "hazard")
    assert "+import os" in added.detail["text_diff"]
    changed = one(code, make_snapshot({"config.json": CONFIG, "modeling_x.py": "import os\nos.system('x')\n"}))
    assert (changed.kind, changed.severity) == (Kind.CUSTOM_CODE, Severity.MEDIUM)
    assert changed.summary == "custom code changed: modeling_x.py (+1/-0 lines)"
    removed = one(code, base)
    assert (removed.severity, removed.direction) == (Severity.LOW, "update")


def test_auto_map_appearing_changing_disappearing() -> None:
    plain = make_snapshot({"config.json": CONFIG})
    mapped = make_snapshot({"config.json": {**CONFIG, "auto_map": {"AutoModel": "modeling_x.M"}}})
    repointed = make_snapshot({"config.json": {**CONFIG, "auto_map": {"AutoModel": "other/repo--modeling_y.M"}}})
    assert one(plain, mapped).summary == "custom code added (auto_map → {\"AutoModel\": \"modeling_x.M\"})"
    assert (one(plain, mapped).severity, one(mapped, repointed).severity, one(repointed, plain).severity) == (
        Severity.HIGH, Severity.MEDIUM, Severity.LOW)
    assert one(repointed, plain).direction == "update"


def test_exports_and_other_files() -> None:
    base = make_snapshot({"config.json": CONFIG})
    gguf = one(base, make_snapshot({"config.json": CONFIG}, listed={"model-q4.gguf": "c" * 64}))
    assert (gguf.kind, gguf.severity, gguf.summary) == (Kind.FILES, Severity.LOW, "export model-q4.gguf added")
    other = one(base, make_snapshot({"config.json": CONFIG}, listed={"LICENSE": None}))
    assert (other.kind, other.severity) == (Kind.FILES, Severity.INFO)


def card(meta: str, body: str = "# Model\n") -> str:
    return f"---\n{meta}---\n{body}"


def test_licence_direction_and_severity() -> None:
    apache = make_snapshot({"README.md": card("license: apache-2.0\n")})
    llama = make_snapshot({"README.md": card("license: llama3.1\n")})
    nc = make_snapshot({"README.md": card("license: cc-by-nc-4.0\n")})
    change = one(apache, llama)
    assert (change.kind, change.severity, change.direction) == (Kind.LICENSE, Severity.MEDIUM, "hazard")
    assert change.summary == "licence apache-2.0 → llama3.1 (more restrictive)"
    assert (one(llama, nc).severity, one(llama, nc).direction) == (Severity.HIGH, "hazard")
    assert (one(nc, apache).direction, one(nc, apache).summary) == ("update", "licence cc-by-nc-4.0 → apache-2.0 (less restrictive)")


def test_gating_base_model_and_body() -> None:
    old = make_snapshot({"README.md": card("license: mit\nbase_model: a/b\n")})
    new = make_snapshot({"README.md": card("license: mit\nbase_model: c/d\nextra_gated_prompt: accept\n")})
    found = {(c.kind.value, c.severity.value, c.summary) for c in diff_snapshots(old, new)}
    assert found == {("card", "medium", "access gating added (terms must be accepted)"),
                     ("card", "low", "card base_model a/b → c/d")}  # fmt: skip
    body = one(old, make_snapshot({"README.md": card("license: mit\nbase_model: a/b\n", "# Model\nmore\n")}))
    assert (body.kind, body.severity) == (Kind.CARD, Severity.INFO)


def test_hostile_yaml_is_a_finding_not_a_crash() -> None:
    old = make_snapshot({"README.md": card("license: mit\n")})
    new = make_snapshot({"README.md": card("license: !!python/object/apply:os.system ['id']\n")})
    changes = diff_snapshots(old, new)
    assert any("not valid YAML" in c.summary for c in changes)
