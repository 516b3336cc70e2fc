"""Each pin's span is exactly where its revision is written, so --fix can rewrite only that."""

from __future__ import annotations

import json
from pathlib import Path

from hubwatch.pincheck.pins import scan_path, scan_text

REV = "abcdef0123456789abcdef0123456789abcdef01"


def test_every_fixture_span_holds_its_revision(data_dir: Path) -> None:
    root = data_dir / "checkproj"
    spans = 0
    for pin in scan_path(root).pins:
        if pin.span is not None:
            spans += 1
            assert (root / pin.path).read_text(encoding="utf-8")[slice(*pin.span)] == pin.revision, pin.where
        elif pin.revision is not None:
            assert pin.dynamic, pin.where  # every literal revision has a span
    assert spans == 19  # 17 model pins and the dataset pins in src/train.py and deploy/Dockerfile


def test_a_notebook_span_survives_escapes_before_it_on_the_line() -> None:
    source = [f's = "\u00e9\\t\U0001f600"; m = X.from_pretrained("o/n", revision="{REV}")\n', f"!hf download o/n --revision {REV}\n"]
    text = json.dumps({"cells": [{"cell_type": "code", "source": source}]}, indent=2, ensure_ascii=True)
    pins, skipped = scan_text(text, "n.ipynb", "notebook")
    assert skipped == [] and len(pins) == 2
    assert all(p.span is not None and text[p.span[0]:p.span[1]] == REV for p in pins)


def test_python_spans_count_characters_not_bytes() -> None:
    text = f'x = "ééé"; AutoModel.from_pretrained("o/n", revision="{REV}")\n'
    [pin] = scan_text(text, "a.py", "python")[0]
    assert pin.span is not None and text[pin.span[0]:pin.span[1]] == REV
