"""Hostile upstream JSON and YAML: size, nesting and alias limits in parsing, the diff, the estimator and downloads."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from huggingface_hub import HfApi
from tracker_polling import copy_history

from hubwatch.domain.records import FileRecord, RepoId, Severity
from hubwatch.diff import diff_snapshots
from hubwatch.tracker.errors import InvalidContent
from hubwatch.tracker.estimating import estimate_snapshot
from hubwatch.tracker.hub import HubClient
from hubwatch.domain.remote_data import MAX_JSON_DEPTH, RemoteJsonError, load_remote_json, load_remote_yaml
from hubwatch.domain.snapshot import Snapshot

LLAMA = RepoId.parse("meta-llama/Llama-2-7b-hf")
QWEN = RepoId.parse("Qwen/Qwen-7B")


def nested(depth: int) -> bytes:
    """A config.json whose `a` holds lists nested `depth` deep."""
    return ('{"model_type": "llama", "a": ' + "[" * depth + "]" * depth + "}").encode()


def config_snapshot(sha: str, raw: bytes) -> Snapshot:
    files = {"config.json": FileRecord("config.json", len(raw), sha, None)}
    return Snapshot(sha=sha, files=files, contents={"config.json": raw})


def test_ordinary_documents_parse_as_json_does() -> None:
    doc = {"model": {"vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}, "x": [1.5, None, True]}
    assert load_remote_json(json.dumps(doc).encode()) == doc
    assert load_remote_json(b"\xef\xbb\xbf" + json.dumps(doc).encode()) == doc  # a UTF-8 BOM is allowed
    assert load_remote_json(nested(MAX_JSON_DEPTH - 1))["model_type"] == "llama"  # object + lists = the limit


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH, 900, 100_000])
def test_deep_nesting_is_refused_without_recursing(depth: int) -> None:
    with pytest.raises(RemoteJsonError, match="nested deeper than"):
        load_remote_json(nested(depth))


def _depth_and_values(value: Any) -> tuple[int, int]:
    """Containers nested (0 for a scalar) and values held by all of them, counted recursively."""
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return 0, 0
    inner = [_depth_and_values(child) for child in children]
    return 1 + max((d for d, _ in inner), default=0), len(children) + sum(n for _, n in inner)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
                     max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.integers(1, 8), st.integers(0, 60))
def test_the_limits_refuse_exactly_the_documents_past_them(doc: Any, max_depth: int, max_values: int) -> None:
    """Whatever mixes of objects, arrays and scalars a file holds, it is read when its nesting and its
    number of values are within the limits, and refused otherwise."""
    depth, values = _depth_and_values(doc)
    raw = json.dumps(doc).encode()
    if depth > max_depth or values > max_values:
        with pytest.raises(RemoteJsonError, match="nested deeper than|values"):
            load_remote_json(raw, max_depth=max_depth, max_values=max_values)
    else:
        assert load_remote_json(raw, max_depth=max_depth, max_values=max_values) == doc
    if depth <= max_depth:  # no value cap: only the nesting counts
        assert load_remote_json(raw, max_depth=max_depth) == doc
    else:
        with pytest.raises(RemoteJsonError, match="nested deeper than"):
            load_remote_json(raw, max_depth=max_depth)


def test_size_and_constants_are_bounded() -> None:
    with pytest.raises(RemoteJsonError, match="more than the 10 read"):
        load_remote_json(b'{"a": "0123456789"}', max_bytes=10)
    assert load_remote_json(b'{"a": NaN}')["a"] != 0  # json's own reading by default
    with pytest.raises(RemoteJsonError, match="NaN"):
        load_remote_json(b'{"a": NaN}', reject_constants=True)


@pytest.mark.parametrize("depth", [900, 100_000])
def test_a_deeply_nested_config_is_a_finding_not_a_crash(depth: int) -> None:
    old = config_snapshot("a" * 40, b'{"model_type": "llama", "a": 1}')
    records = diff_snapshots(old, config_snapshot("b" * 40, nested(depth)))
    [broken] = [r for r in records if r.path == "config.json"]
    assert "not valid JSON" in broken.summary and "nested deeper" in broken.summary
    assert broken.severity is Severity.HIGH
    assert estimate_snapshot(config_snapshot("b" * 40, nested(depth))) is None  # no config to estimate


def test_downloads_stop_at_the_limit(hubsim_factory: Any) -> None:
    sim = hubsim_factory()
    hub = HubClient(HfApi(endpoint=sim.url), timeout_s=10, max_download_bytes=200)
    sha = hub.head(LLAMA)
    size = hub.listing(LLAMA, sha)["config.json"].size
    assert size > 200
    with pytest.raises(InvalidContent, match=f"larger than the 200 bytes.*{size} bytes listed"):
        hub.download(LLAMA, sha, "config.json", expected_size=size)
    with pytest.raises(InvalidContent, match="config.json: larger than the 200 bytes"):
        hub.download(LLAMA, sha, "config.json")  # not listed: the body is cut off as it streams
    roomy = HubClient(HfApi(endpoint=sim.url), timeout_s=10, max_download_bytes=size)
    assert json.loads(roomy.download(LLAMA, sha, "config.json", expected_size=size))["model_type"] == "llama"


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
)  # 10**9 values once the aliases are expanded, in under 400 bytes


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("x: " + "[" * 2000 + "]" * 2000, "nested deeper than"),
        ("a: &a [*a]", "nested deeper than"),  # a recursive alias
        (BOMB, "once aliases are expanded"),
    ],
)
def test_hostile_card_metadata_is_a_finding_not_a_crash(text: str, problem: str) -> None:
    with pytest.raises(RemoteJsonError, match=problem):
        load_remote_yaml(text)
    card = f"---\nlicense: mit\n{text}\n---\n# model\n".encode()
    old = Snapshot(sha="a" * 40, files={"README.md": FileRecord("README.md", 20, "a", None)},
                   contents={"README.md": b"---\nlicense: mit\n---\n# model\n"})  # fmt: skip
    new = Snapshot(sha="b" * 40, files={"README.md": FileRecord("README.md", len(card), "b", None)},
                   contents={"README.md": card})  # fmt: skip
    summaries = " | ".join(r.summary for r in diff_snapshots(old, new))
    assert "metadata block" in summaries, summaries


def test_card_yaml_reads_as_safe_load_does() -> None:
    text = "license: mit\ntags: [a, b]\nbase: &b {name: llama}\nalso: *b\nwhen: 2024-01-02\n"
    assert load_remote_yaml(text) == yaml.safe_load(text)
    assert load_remote_yaml("") is None
    with pytest.raises(yaml.YAMLError):
        load_remote_yaml("a: !!python/object:os.system [ls]")  # no Python tags, as safe_load


def test_a_safetensors_header_nested_without_end_is_invalid_content(
    hubsim_factory: Any, data_dir: Path, tmp_path: Path
) -> None:
    """The library parses safetensors headers itself: its RecursionError is translated at the adapter."""
    folder = copy_history(data_dir, tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    header = ('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "z": ' + deep + "}}").encode()
    header += b" " * (-len(header) % 8)
    (folder / "v1" / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    sim = hubsim_factory(root=tmp_path)
    hub = HubClient(HfApi(endpoint=sim.url), timeout_s=10)
    sha = hub.head(QWEN)
    with pytest.raises(InvalidContent, match="model.safetensors: nested too deeply") as info:
        hub.safetensors_header(QWEN, sha, "model.safetensors")
    assert info.value.repo_id == "Qwen/Qwen-7B" and info.value.revision == sha


def test_huge_texts_get_counts_not_a_quadratic_line_diff() -> None:
    """A card or code file of many repeated lines would keep difflib busy for minutes (the
    multiset path is what answers here: difflib would not say "no line diff")."""
    import random

    from hubwatch.diff.text import MAX_DIFF_LINES, diff_text, line_counts

    rng = random.Random(1)
    n = 5 * MAX_DIFF_LINES
    a = "\n".join(f"line {rng.randrange(150)}" for _ in range(n))
    b = a + "\nadded one\nadded two"
    assert line_counts(a, b) == (2, 0)
    assert line_counts(b, a) == (0, 2)
    assert diff_text(a, b).startswith(f"… no line diff: {n:,} → {n + 2:,} lines")
    assert line_counts("a\nb\n", "a\nc\n") == (1, 1) and "+c" in diff_text("a\nb\n", "a\nc\n")


def test_a_config_of_millions_of_values_is_a_finding_not_minutes_of_diffing() -> None:
    from hubwatch.diff.configs import MAX_DIFFED_VALUES

    huge = json.dumps({"model_type": "llama", "x": [0] * (MAX_DIFFED_VALUES + 1)}).encode()
    old = config_snapshot("a" * 40, b'{"model_type": "llama", "x": []}')
    records = diff_snapshots(old, config_snapshot("b" * 40, huge))
    [broken] = [r for r in records if r.path == "config.json"]
    assert f"more than {MAX_DIFFED_VALUES:,} values" in broken.summary and broken.severity is Severity.HIGH
    with pytest.raises(RemoteJsonError, match="more than 3 values"):
        load_remote_json(b'{"a": [1, 2], "b": 3}', max_values=3)
    assert load_remote_json(b'{"a": [1, 2]}', max_values=3) == {"a": [1, 2]}
