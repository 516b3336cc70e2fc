"""A base with more than 1,000 derivatives: the emulator pages its listing by 1,000 (Link rel="next")
and hubwatch reads every page through the real huggingface_hub client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from huggingface_hub import HfApi
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient

COUNT = 1_003


def _derivatives(root: Path) -> None:
    base = root / "bigfam__base" / "v1"
    base.mkdir(parents=True)
    (base / "README.md").write_text("---\nlicense: mit\n---\n# base\n")
    for n in range(COUNT):
        version = root / f"bigfam__tune-{n:04d}" / "v1"
        version.mkdir(parents=True)
        relation = "\nbase_model_relation: quantized" if n % 100 == 0 else ""
        (version / "README.md").write_text(f"---\nbase_model: bigfam/base{relation}\n---\n# tune {n}\n")


def test_more_than_a_thousand_derivatives_page_through_the_client(hubsim_factory: Any, tmp_path: Path) -> None:
    _derivatives(tmp_path)
    sim = hubsim_factory(root=tmp_path, at=None)
    api = HfApi(endpoint=sim.url, token=False)
    seen = [m.id for m in api.list_models(filter="base_model:bigfam/base", limit=COUNT + 10)]
    assert len(seen) == len(set(seen)) == COUNT  # a page holds 1,000 at most, whatever the limit asked

    hub = HubClient.from_settings(Settings(database_url="sqlite://", hub_endpoint=sim.url))
    found = hub.derivatives(RepoId.parse("bigfam/base"), ["finetune", "quantized"])
    relations = [relation for _, relation in found]
    assert len(found) == COUNT
    assert relations.count("quantized") == 11 and relations.count("finetune") == COUNT - 11
    limited = hub.derivatives(RepoId.parse("bigfam/base"), ["quantized", "finetune"], limit=1_001)
    assert len(limited) == 1_001 and [r for _, r in limited[:11]] == ["quantized"] * 11
