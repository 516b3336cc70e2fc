"""An update raised at a commit a force-push dropped is withdrawn (no revision upstream brings it),
and published again when upstream pushes the commit back (issue 31: "a rewound head is flagged
forever"). Through the emulator and the real huggingface_hub client, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tracker_polling import poll_once

from hubwatch.advisories.pin_standing import standing_at
from hubwatch.advisories.rewound import OFF_MAIN_LINE
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.domain.records import AdvisoryRecord, RepoId

QWEN = RepoId.parse("Qwen/Qwen-7B")  # v3 extends the context: an update (fixed at v3)
OTHER = "cd" * 20


def _root(root: Path, source: Path, versions: list[str], extra: str | None = None) -> Path:
    """`root` serving Qwen-7B with only `versions` (renumbered), and with `extra` a new commit on top
    (v3's content again under the sha OTHER)."""
    folder = root / source.name
    folder.mkdir(parents=True)
    rows = (source / "HISTORY.tsv").read_text().splitlines()
    by_version = {r.split("\t")[0]: r for r in rows[1:]}
    out = [rows[0]]
    for i, version in enumerate(versions, start=1):
        shutil.copytree(source / version, folder / f"v{i}")
        out.append(f"v{i}\t" + by_version[version].split("\t", 1)[1])
    if extra is not None:
        n = len(versions) + 1
        shutil.copytree(source / extra, folder / f"v{n}")
        out.append(f"v{n}\t2023-12-02\t{OTHER}\tagain")
    (folder / "HISTORY.tsv").write_text("\n".join(out) + "\n")
    return root


def _update(store: Any) -> AdvisoryRecord:
    (record,) = [a for a in store.advisories.records(QWEN) if a.id.endswith("-fix")]
    return record


def _web(store: Any) -> TestClient:
    return TestClient(create_app(Settings(database_url="sqlite://", public_url="https://hw.example"), store))


def test_a_rewound_update_is_withdrawn_and_published_again_when_it_returns(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    source = data_dir / "histories" / "Qwen__Qwen-7B"
    sim = hubsim_factory(root=_root(tmp_path / "a", source, ["v1", "v2", "v3"]), at=None)
    poll_once(sim, store, QWEN)
    v1, v2, v3 = (e.revision.sha for e in store.history(QWEN))
    update = _update(store)
    assert update.revision_sha == v3 and update.withdrawn is None
    assert [a.id for a in standing_at(store, QWEN, v2).lacks] == [update.id]  # before: v2 lacks it
    with _web(store) as web:
        assert web.get(f"/badges/{QWEN}.json").json()["message"].startswith("latest: medium")  # v3's update
    sim.stop()

    # Upstream force-pushes back to v2: no revision on the main line brings the update any more.
    rewound = hubsim_factory(root=_root(tmp_path / "b", source, ["v1", "v2"]), at=None)
    poll_once(rewound, store, QWEN)
    assert store.head(QWEN).sha == v2 and store.revisions.off_main_branch(QWEN) == {v3}
    gone = _update(store)
    assert gone.withdrawn is not None and gone.modified > update.modified
    assert gone.osv["database_specific"]["withdrawn_because"] == OFF_MAIN_LINE
    assert "no longer on it" in gone.osv["details"]
    standing = standing_at(store, QWEN, v2)
    assert standing.lacks == () and standing.suggested is None  # the pin on the rewound head is clean
    with _web(store) as web:
        assert "-fix" not in str(web.post("/v1/query", json={"commit": v2}).json())
        badge = web.get(f"/badges/{QWEN}/revisions/{v2}.json").json()
        assert badge["message"] == "1 hazard ≥ low"  # custom code since v1; nothing it "lacks"
        # the repo badge tells the main line's latest change, not the dropped v3's context update
        assert web.get(f"/badges/{QWEN}.json").json()["message"] == "latest: info · 1 advisory"  # v1's, not v3's medium
        served = web.get(f"/v1/vulns/{gone.id}").json()
        assert served["withdrawn"] and served["database_specific"]["withdrawn_because"] == OFF_MAIN_LINE
    # A pin still on the dropped v3 keeps the hazard v1 brought (hazards are not withdrawn).
    assert [a.id for a in standing_at(store, QWEN, v3).carries] == [a.id for a in standing_at(store, QWEN, v2).carries]
    poll_once(rewound, store, QWEN)
    assert _update(store).modified == gone.modified  # a repeated poll writes nothing
    rewound.stop()

    # Upstream pushes v3 back: the update is published again, as it was.
    back = hubsim_factory(root=_root(tmp_path / "c", source, ["v1", "v2", "v3"]), at=None)
    poll_once(back, store, QWEN)
    assert store.head(QWEN).sha == v3 and store.revisions.off_main_branch(QWEN) == set()
    again = _update(store)
    assert again.withdrawn is None and "withdrawn" not in again.osv
    assert "withdrawn_because" not in again.osv["database_specific"]
    assert again.osv["details"] == update.osv["details"] and again.modified > gone.modified
    assert [a.id for a in standing_at(store, QWEN, v2).lacks] == [update.id]


def test_a_new_commit_on_top_of_a_dropped_one_brings_its_update_back(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    source = data_dir / "histories" / "Qwen__Qwen-7B"
    sim = hubsim_factory(root=_root(tmp_path / "a", source, ["v1", "v2", "v3"]), at=None)
    poll_once(sim, store, QWEN)
    v3 = store.head(QWEN).sha
    sim.stop()
    rewound = hubsim_factory(root=_root(tmp_path / "b", source, ["v1", "v2"]), at=None)
    poll_once(rewound, store, QWEN)
    assert _update(store).withdrawn is not None
    rewound.stop()
    # Upstream puts v3 back with a new commit on top of it: v3 is an ancestor of the head again.
    forward = hubsim_factory(root=_root(tmp_path / "c", source, ["v1", "v2", "v3"], extra="v3"), at=None)
    poll_once(forward, store, QWEN)
    assert store.head(QWEN).sha == OTHER and v3 not in store.revisions.off_main_branch(QWEN)
    assert _update(store).withdrawn is None


def test_the_model_page_names_the_recorded_head_after_a_rewind(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    source = data_dir / "histories" / "Qwen__Qwen-7B"
    sim = hubsim_factory(root=_root(tmp_path / "a", source, ["v1", "v2", "v3"]), at=None)
    poll_once(sim, store, QWEN)
    _, v2, v3 = (e.revision.sha for e in store.history(QWEN))
    sim.stop()
    rewound = hubsim_factory(root=_root(tmp_path / "b", source, ["v1", "v2"]), at=None)
    poll_once(rewound, store, QWEN)
    with _web(store) as web:
        html = web.get(f"/models/{QWEN}").text
        markdown = web.get(f"/models/{QWEN}.md").text
        state = web.get(f"/api/v1/models/{QWEN}").json()
    headline = html[html.index("Latest revision"):][:900]
    assert v2[:7] in headline and v3[:7] not in headline.split("</p>")[0]
    assert "not on the main line" not in headline  # the head is on it, by definition
    assert "not on the main line" not in markdown and f"/revisions/{v2}" in markdown
    assert state["head_sha"] == v2
