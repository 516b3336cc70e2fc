"""The history loader and the safetensors synthesis, without a server."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import pytest

from hubwatch.hubsim import HistoryError, demo_root, load_root
from hubwatch.hubsim.repos import git_blob_sha1, load_repo
from hubwatch.hubsim.safetensors import (
    WeightsSpecError,
    parse_weights_json,
    synthesize,
)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_versions_are_ordered_by_number_not_name(tmp_path: Path) -> None:
    for n in (1, 2, 10, 9):
        _write(tmp_path / "acme__m" / f"v{n}" / "config.json", json.dumps({"n": n}))
    repo = load_repo(tmp_path / "acme__m")
    assert [c.version for c in repo.commits] == ["v1", "v2", "v9", "v10"]
    assert [json.loads(c.files["config.json"].read())["n"] for c in repo.commits] == [1, 2, 9, 10]


def test_derived_shas_and_dates_are_deterministic_and_distinct(tmp_path: Path) -> None:
    for n in (1, 2):
        _write(tmp_path / "acme__m" / f"v{n}" / "config.json", "{}")  # same content in both
    first = load_repo(tmp_path / "acme__m")
    again = load_repo(tmp_path / "acme__m")
    shas = [c.sha for c in first.commits]
    assert shas == [c.sha for c in again.commits]
    assert len(set(shas)) == 2 and all(len(s) == 40 for s in shas)
    assert first.commits[0].date < first.commits[1].date
    _write(tmp_path / "acme__m" / "v2" / "config.json", '{"changed": true}')
    assert load_repo(tmp_path / "acme__m").commits[1].sha != shas[1]


def test_history_tsv_dates_with_trailing_text_and_missing_commits(data_dir: Path) -> None:
    repo = load_repo(data_dir / "histories" / "deepseek-ai__DeepSeek-R1-Distill-Llama-8B")
    assert repo.commits[0].date.date().isoformat() == "2025-01-30"
    assert repo.commits[1].date.date().isoformat() == "2025-02-13"
    assert all(len(c.sha) == 40 for c in repo.commits)
    demo = load_repo(demo_root() / "meta-llama__Llama-2-7b-hf")
    assert demo.commits[0].sha == "637a748546bb9abca62b0684183cc362bc1ece6d"
    assert demo.commits[-1].title == "Update generation_config.json"
    assert [c.version for c in demo.commits][-3:] == ["v10", "v11", "v12"]
    # same-day commits keep their order
    assert [c.date for c in demo.commits] == sorted(c.date for c in demo.commits)


def test_all_bundled_histories_load(data_dir: Path) -> None:
    repos = load_root(data_dir / "histories")
    assert len(repos) == 21
    assert "tiiuae/falcon-7b" in repos
    f = repos["tiiuae/falcon-7b"].commits[0].files["config.json"]
    assert f.blob_id == git_blob_sha1(f.read()) and f.lfs_sha256 is None


def test_bad_history_is_reported_by_name(tmp_path: Path) -> None:
    _write(tmp_path / "acme__m" / "v1" / "config.json", "{}")
    _write(tmp_path / "acme__m" / "HISTORY.tsv", "version\tdate\tcommit\nv1\tyesterday\t\n")
    with pytest.raises(HistoryError, match="yesterday"):
        load_root(tmp_path)
    _write(tmp_path / "acme__m" / "HISTORY.tsv", "version\tdate\tcommit\nv1\t2024-01-01\tnot-a-sha\n")
    with pytest.raises(HistoryError, match="not-a-sha"):
        load_root(tmp_path)
    shutil.rmtree(tmp_path / "acme__m")
    (tmp_path / "acme__empty").mkdir()
    with pytest.raises(HistoryError, match="acme__empty"):
        load_root(tmp_path)


def test_weights_json_is_not_served_and_describes_lfs_files(data_dir: Path) -> None:
    repo = load_repo(data_dir / "hubsim" / "hubsim-test__tiny-llama")
    v1, v2, v3 = repo.commits
    assert "weights.json" not in v1.files and "model.safetensors" in v1.files
    st = v1.files["model.safetensors"]
    assert st.lfs_sha256 == hashlib.sha256(st.read()).hexdigest()  # small file: the true hash
    assert st.pointer_size is not None and st.blob_id != st.lfs_sha256
    huge = v2.files["model-00002-of-00002.safetensors"]
    assert huge.size > 4 * 10**9 and huge.lfs_sha256 is not None
    assert v3.files["pytorch_model.bin"].lfs_sha256 is not None  # *.bin is stored with LFS
    assert v1.sha == "1" * 40 and v2.sha != v3.sha


def test_synthesised_header_follows_the_format() -> None:
    f = synthesize("x.safetensors", {"__metadata__": {"format": "pt"}, "b": {"dtype": "BF16", "shape": [3, 5]},
                                     "a": {"dtype": "F32", "shape": [2]}})  # fmt: skip
    (n,) = struct.unpack("<Q", f.header[:8])
    assert len(f.header) == 8 + n and n % 8 == 0
    header = json.loads(f.header[8:])
    assert header["__metadata__"] == {"format": "pt"}
    assert header["a"]["data_offsets"] == [0, 8] and header["b"]["data_offsets"] == [8, 38]
    assert f.size == 8 + n + 38
    assert f.read(8 + n) == bytes(38)
    assert f.read(0, 7) == f.header[:8]
    assert f.parameter_counts() == {"F32": 2, "BF16": 15}


def test_big_files_are_never_materialised() -> None:
    f = synthesize("big.safetensors", {"w": {"dtype": "F32", "shape": [1 << 20, 1 << 12]}})  # 16 GiB
    assert f.size > 16 * 1024**3
    assert len(f.sha256()) == 64  # the stand-in: instant
    tail = f.read(f.size - 10)
    assert tail == bytes(10)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('{"m.safetensors": {"w": {"dtype": "F33", "shape": [1]}}}', "unknown dtype 'F33'"),
        ('{"m.safetensors": {"w": {"dtype": "F32", "shape": [-1]}}}', "tensor 'w': shape"),
        ('{"m.bin": {}}', "not a relative"),
        ('{"m.safetensors": {"__metadata__": {"a": 1}}}', "__metadata__"),
        ("[1, 2", "not valid JSON"),
    ],
)
def test_bad_weights_json_names_the_problem(spec: str, message: str) -> None:
    with pytest.raises(WeightsSpecError, match=message.replace("(", r"\(")):
        parse_weights_json(spec.encode(), "weights.json")


def test_public_interface() -> None:
    from hubwatch import hubsim

    assert sorted(hubsim.__all__) == ["FaultConfig", "HistoryError", "HubSim", "SimError", "demo_root", "load_root"]
    assert all(hasattr(hubsim, name) for name in hubsim.__all__)
    assert (demo_root() / "meta-llama__Llama-2-7b-hf" / "v12" / "config.json").is_file()
