"""The level follows the evidence: a whole sub-config that no builder opened leaves a tower out of the count,
so the estimate is `unsupported`, naming that key, rather than an unbounded `approximate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubwatch.estimator import ConfigError, analyze

ZOO = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "transformers_zoo.json").read_text())["rows"]


def test_an_unread_vision_tower_is_unsupported_and_named() -> None:
    row = next(r for r in ZOO if r["architecture"] == "GitForCausalLM" and not r["overrides"])
    with pytest.raises(ConfigError) as caught:
        analyze(row["config"])
    assert "vision_config" in str(caught.value)


def test_the_same_decoder_without_the_tower_still_has_a_number() -> None:
    row = next(r for r in ZOO if r["architecture"] == "GitForCausalLM" and not r["overrides"])
    text_only = {k: v for k, v in row["config"].items() if k != "vision_config"}
    assert analyze(text_only).params.derived > 0
