"""Weight manifest diffs: tensors, shapes, dtypes, re-uploads, sharding, totals."""

from __future__ import annotations

from diff_histories import make_snapshot
from hubwatch.domain.records import Kind, Severity
from hubwatch.diff import diff_snapshots

A = "model-00001-of-00002.safetensors"
B = "model-00002-of-00002.safetensors"


def header(dtype: str = "BF16", vocab: int = 32000, layers: int = 2) -> dict[str, dict[str, dict[str, object]]]:
    first = {"model.embed_tokens.weight": {"dtype": dtype, "shape": [vocab, 64]}}
    second = {f"model.layers.{i}.mlp.weight": {"dtype": dtype, "shape": [64, 64]} for i in range(layers)}
    second["__metadata__"] = {"format": "pt"}  # type: ignore[assignment]
    return {A: first, B: second}


def index(headers: dict[str, dict[str, object]], total: int) -> dict[str, object]:
    weight_map = {t: f for f, h in headers.items() for t in h if not t.startswith("__")}
    return {"metadata": {"total_size": total}, "weight_map": weight_map}


def snap(dtype: str = "BF16", vocab: int = 32000, layers: int = 2, sha: str = "a", total: int = 100):  # type: ignore[no-untyped-def]
    h = header(dtype, vocab, layers)
    return make_snapshot(
        {"model.safetensors.index.json": index(h, total)},  # type: ignore[arg-type]
        listed={A: sha * 64, B: sha * 64},
        safetensors=h,
    )


def kinds(changes) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {(c.kind.value, c.severity.value) for c in changes}


def test_identical_manifest_is_no_change() -> None:
    assert diff_snapshots(snap(), snap()) == []


def test_reupload_with_identical_shapes() -> None:
    (change,) = diff_snapshots(snap(sha="a"), snap(sha="b"))
    assert (change.kind, change.severity, change.direction) == (Kind.WEIGHTS, Severity.MEDIUM, "update")  # neutral
    assert change.summary == "weights re-uploaded: 3 tensors in 2 files with identical shapes and dtypes"
    assert change.detail["files"] == [A, B]


def test_dtype_change_counts_tensors_and_bytes() -> None:
    changes = diff_snapshots(snap("F32", total=200), snap("BF16", total=100))
    dtype = next(c for c in changes if c.kind is Kind.DTYPE)
    assert dtype.severity is Severity.MEDIUM
    assert dtype.summary == "weights dtype F32 → BF16 (3 tensors)"
    params = 32000 * 64 + 2 * 64 * 64
    assert dtype.detail["totals"]["before"] == {"parameters": params, "bytes": params * 4}
    assert dtype.detail["totals"]["after"] == {"parameters": params, "bytes": params * 2}
    assert ("weights", "medium") in kinds(changes)  # total_size moved too


def test_tensors_added_and_reshaped() -> None:
    changes = diff_snapshots(snap(layers=2), snap(layers=3, vocab=32001))
    summaries = {c.summary for c in changes}
    assert "1 tensor added: model.layers.2.mlp.weight" in summaries
    assert "1 tensor reshaped: model.embed_tokens.weight [32000, 64] → [32001, 64]" in summaries
    assert all(c.severity is Severity.HIGH for c in changes if c.detail["key"] in ("tensors", "shapes"))


def test_sharding_change_without_tensor_change() -> None:
    h = header()
    merged = {"model.safetensors": {**h[A], **h[B]}}
    before = make_snapshot({"model.safetensors.index.json": index(h, 100)}, safetensors=h)  # type: ignore[arg-type]
    after = make_snapshot({}, safetensors=merged)
    (change,) = diff_snapshots(before, after)
    assert (change.kind, change.severity) == (Kind.WEIGHTS, Severity.LOW)
    assert change.summary == "weight index model.safetensors.index.json removed (was 2 shards)"
