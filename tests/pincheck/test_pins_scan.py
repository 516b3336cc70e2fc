"""The pin scanner on the fixture code base (tests/data/checkproj) and on small snippets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubwatch.pincheck.pins import pin_kind, scan_path, scan_text

EXPECTED = {
    # (file, line, cell): (repo, revision, style, kind)
    ("configs/eval.toml", 4, None): ("acme/toml-model", "9999999", "toml", "commit"),
    ("configs/eval.toml", 8, None): ("acme/toml-inline", "aaaaaaa", "toml", "commit"),
    ("configs/serve.yaml", 4, None): ("acme/yaml-model", "6" * 40, "yaml", "commit"),
    ("configs/serve.yaml", 8, None): ("acme/yaml-tok", None, "yaml", "unpinned"),
    ("configs/serve.yaml", 10, None): ("acme/yaml-floating", "main", "yaml", "unpinned"),
    ("configs/serve.yaml", 12, None): ("acme/yaml-url", "7777777", "hf-url", "commit"),
    ("configs/train.json", 2, None): ("acme/json-model", "8" * 40, "json", "commit"),
    ("configs/train.json", 5, None): ("acme/json-nested", None, "json", "unpinned"),
    ("deploy/Dockerfile", 4, None): ("acme/docker-model", "b" * 40, "cli", "commit"),
    ("deploy/Dockerfile", 6, None): ("acme/docker-unpinned", None, "cli", "unpinned"),
    ("deploy/fetch.sh", 3, None): ("acme/sh-model", "ddddddd", "cli", "commit"),
    ("deploy/fetch.sh", 4, None): ("acme/sh-url", "eeeeeee", "hf-url", "commit"),
    ("notebooks/explore.ipynb", 3, 2): ("acme/nb-model", "abcdef0", "python", "commit"),
    ("notebooks/explore.ipynb", 1, 3): ("acme/nb-shell", "0abcdef", "cli", "commit"),
    ("src/train.py", 9, None): ("acme/llama-small", "0123456789abcdef0123456789abcdef01234567", "python", "commit"),
    ("src/train.py", 10, None): ("acme/llama-small", "89abcdef0123456789abcdef0123456789abcdef", "python", "commit"),
    ("src/train.py", 15, None): ("acme/tiny", "fedcba9", "python", "commit"),
    ("src/train.py", 16, None): ("acme/unpinned", None, "python", "unpinned"),
    ("src/train.py", 17, None): ("acme/on-main", "main", "python", "unpinned"),
    ("src/train.py", 25, None): ("acme/dyn-rev", None, "python", "dynamic"),
    ("src/train.py", 28, None): ("acme/url-model", "3" * 40, "hf-url", "commit"),
    ("src/train.py", 31, None): ("acme/pipe-model", "v1.0", "python", "ref"),
}


@pytest.fixture(scope="module")
def report(data_dir: Path):  # type: ignore[no-untyped-def]
    return scan_path(data_dir / "checkproj")


def test_every_pin_style_is_found_exactly(report) -> None:  # type: ignore[no-untyped-def]
    models = [p for p in report.pins if p.repo_type == "model"]
    found = {(p.path, p.line, p.cell): (str(p.repo), p.revision, p.style, p.kind) for p in models}
    assert found == EXPECTED
    assert len(models) == len(EXPECTED)
    # snapshot_download(repo_type="dataset") and `hf download --repo-type dataset` are dataset pins,
    # named as the hub's URLs name them
    assert [(p.where, p.name, p.revision) for p in report.pins if p.repo_type == "dataset"] == \
        [("deploy/Dockerfile:7", "datasets/acme/docker-dataset", "ccccccc"),
         ("src/train.py:18", "datasets/acme/a-dataset", "1111111")]


def test_negatives_are_not_reported(report) -> None:  # type: ignore[no-untyped-def]
    repos = {str(p.repo) for p in report.pins if p.repo_type == "model"}
    # comments, docstrings, markdown cells, f-strings, variables, datasets (never models), local paths, venvs
    assert not {r for r in repos if r.startswith("ghost/")}
    assert not repos & {"acme/a-dataset", "acme/docker-dataset", "checkpoints/run1", "acme/in-broken-file"}
    assert not any(p.revision in ("2222222", "4444444") for p in report.pins)


def test_unparseable_files_are_reported_not_fatal(report) -> None:  # type: ignore[no-untyped-def]
    assert report.skipped == (("src/broken.py", "not parseable as Python (line 1)"),)
    assert report.files_scanned == 8


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('m = X.from_pretrained(revision="abc1234", pretrained_model_name_or_path="o/n")', ("o/n", "abc1234")),
        ("X.from_pretrained(\n    'o/n',\n    revision='abc1234'\n)", ("o/n", "abc1234")),
        ('snapshot_download(repo_id="o/n", revision=None)', ("o/n", None)),
        ('R = "deadbee"\nX.from_pretrained("o/n", revision=R)', ("o/n", "deadbee")),
        ('SentenceTransformer("o/n", revision="1234567")', ("o/n", "1234567")),
        ('hf_hub_download("o/n", "f.json", **kw)', ("o/n", None)),
        ('path = "hf://models/o/n@refs%2Fpr%2F1/x.json"', ("o/n", "refs/pr/1")),
    ],
)
def test_python_variants(source: str, expected: tuple[str, str | None]) -> None:
    pins, skipped = scan_text(source, "x.py", "python")
    assert skipped == [] and [(str(p.repo), p.revision) for p in pins] == [expected]


@pytest.mark.parametrize(
    "source",
    [
        'R = "deadbee"\nR = "feedbee"\nX.from_pretrained("o/n", revision=R)',  # rebound: not a constant
        'M = "o/n"\ndef f(M):\n    return X.from_pretrained(M)',  # shadowed by a parameter
        'X.from_pretrained(get_name())',
        'print("from_pretrained(\'o/n\')")',
        'hf_hub_download(repo_id="o/n", repo_type="space")',
        'x = "hf://spaces/o/n@abc1234"',
    ],
)
def test_python_negatives(source: str) -> None:
    pins, _ = scan_text(source, "x.py", "python")
    assert [(str(p.repo), p.revision, p.dynamic) for p in pins if not p.dynamic] == []


def test_dynamic_revision_is_flagged() -> None:
    pins, _ = scan_text('X.from_pretrained("o/n", revision=os.environ["REV"])', "x.py", "python")
    assert [(str(p.repo), p.kind) for p in pins] == [("o/n", "dynamic")]


def test_yaml_that_does_not_parse_still_yields_urls() -> None:
    text = "model: a: b\nweights: hf://o/n@abc1234\n"
    pins, skipped = scan_text(text, "chart.yaml", "yaml")
    assert [(str(p.repo), p.revision, p.line) for p in pins] == [("o/n", "abc1234", 2)]
    assert skipped and "only hf:// URLs" in skipped[0][1]


def test_pin_kinds() -> None:
    assert pin_kind(None) == pin_kind("main") == pin_kind("MAIN") == "unpinned"
    assert pin_kind("abc1234") == pin_kind("a" * 40) == "commit"
    assert pin_kind("abc123") == pin_kind("v1.0") == pin_kind("ABC1234") == "ref"
    assert pin_kind("abc1234", dynamic=True) == "dynamic"


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        scan_path(tmp_path / "nope")


def test_a_single_file_can_be_scanned(data_dir: Path) -> None:
    report = scan_path(data_dir / "checkproj" / "deploy" / "Dockerfile")
    assert [(p.path, p.line, p.name) for p in report.pins] == [
        ("Dockerfile", 4, "acme/docker-model"), ("Dockerfile", 6, "acme/docker-unpinned"),
        ("Dockerfile", 7, "datasets/acme/docker-dataset"),
    ]


def test_a_notebook_nested_too_deeply_is_reported_not_fatal() -> None:
    pins, skipped = scan_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", "deep.ipynb", "notebook")
    assert pins == [] and skipped == [("deep.ipynb", "not a readable notebook (RemoteJsonError)")]
