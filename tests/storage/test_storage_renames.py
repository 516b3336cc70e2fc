"""Repo ids in the store: matched in any case and through aliases after a rename; rename_repo keeps
history, leases and advisories on one row and is idempotent; 0006 merges duplicate spellings."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from hubwatch.domain.records import RepoId
from hubwatch.storage import Store
from storage_helpers import T0, advisory, change, downgrade_to, rev, upgrade_to_head

OLD = RepoId("Org", "Model")
NEW = RepoId("new-org", "Model-v2")


def _stored(store: Store, repo: RepoId) -> None:
    store.watch(repo)
    assert store.save_revision(repo, rev("r1"), [], {}, [], None, [])
    record = advisory(repo, "x_HW-1", "r2", [{"introduced": "r2"}])
    assert store.save_revision(repo, rev("r2", "r1", day=1), [], {}, [change()], None, [record])


def test_any_case_is_the_same_repo(store: Store) -> None:
    assert store.watch(OLD)
    assert not store.watch(RepoId("org", "MODEL"))
    [state] = store.repos.watched()
    assert str(state.repo) == "Org/Model"
    assert store.canonical_id(RepoId("ORG", "model")) == OLD and str(store.canonical_id(RepoId("ORG", "model"))) == "Org/Model"
    assert store.repos.rename_repo(OLD, RepoId("org", "model"), T0) is False  # a case-only respelling: no alias
    assert str(store.repos.watched()[0].repo) == "org/model" and store.repos.renames(OLD) == []


def test_rename_keeps_history_leases_and_advisories_and_is_idempotent(store: Store) -> None:
    _stored(store, OLD)
    assert store.leases.claim_due("w1", T0, 10, 60) == [OLD]
    assert store.repos.rename_repo(OLD, NEW, T0 + timedelta(hours=1))
    assert not store.repos.rename_repo(OLD, NEW, T0 + timedelta(hours=2))  # repeated: nothing new
    assert [str(s.repo) for s in store.repos.watched()] == [str(NEW)]
    for repo in (OLD, NEW, RepoId("org", "model"), RepoId("NEW-ORG", "model-V2")):
        assert [e.revision.sha for e in store.history(repo)] == [rev("r1").sha, rev("r2").sha], repo
        assert [a.id for a in store.advisories.records(repo)] == ["x_HW-1"]
        assert store.canonical_id(repo) is not None and str(store.canonical_id(repo)) == str(NEW)
    assert str(store.advisories.records(NEW)[0].repo) == str(NEW)
    # The lease taken under the old id is the same row's: renewed and released by either id.
    assert store.leases.renew(OLD, "w1", T0, 60)
    assert store.leases.release(OLD, "w1", T0 + timedelta(minutes=5))
    [rename] = store.repos.renames(NEW)
    assert (str(rename.old), str(rename.new), rename.renamed_at) == (str(OLD), str(NEW), T0 + timedelta(hours=1))
    assert [str(r.new) for r in store.repos.recent_renames(10)] == [str(NEW)]
    assert [str(r.repo) for r in store.repos.recent_renames(10, org="new-org")] == [str(NEW)]
    # Feed items keep the repo's first id (stable entry ids).
    [item] = store.repos.recent_changes(10)
    assert str(item.repo) == str(NEW) and item.origin is not None and str(item.origin) == str(OLD)
    assert store.watch(OLD) is False  # watching the old id again is the same repo
    assert len(store.repos.watched()) == 1


def test_a_chain_and_a_rename_back(store: Store) -> None:
    _stored(store, OLD)
    third = RepoId("c", "d")
    assert store.repos.rename_repo(OLD, NEW, T0)
    assert store.repos.rename_repo(NEW, third, T0 + timedelta(hours=1))
    assert sorted(str(r.old) for r in store.repos.renames(third)) == [str(OLD), str(NEW)]
    assert str(store.canonical_id(OLD)) == "c/d"
    assert store.repos.rename_repo(third, OLD, T0 + timedelta(hours=2))  # back to the first id
    assert str(store.repos.watched()[0].repo) == str(OLD)
    assert str(store.canonical_id(third)) == str(OLD) and str(store.canonical_id(NEW)) == str(OLD)
    assert str(OLD) not in {str(r.old) for r in store.repos.renames(OLD)}  # the row's own id is no alias


def test_two_rows_for_the_old_and_the_new_id_are_merged(store: Store) -> None:
    _stored(store, OLD)
    assert store.unwatch(OLD)
    store.watch(NEW)  # watched separately before the rename was seen: no history
    assert store.repos.rename_repo(OLD, NEW, T0)
    [state] = store.repos.watched()
    assert str(state.repo) == str(NEW) and state.revision_count == 2
    assert [a.id for a in store.advisories.records(OLD)] == ["x_HW-1"]


def test_migration_merges_duplicate_spellings(database_url: str) -> None:
    """0006: `Org/Model` (with history, unwatched) and `org/model` (watched, none) become one row:
    the one with history, watched; the key is unique from then on."""
    with Store.open(database_url) as store:
        engine = store.engine
        downgrade_to(engine, "0005_liveness")
        with engine.begin() as conn:
            insert = sa.text(
                "INSERT INTO repos (org, name, watched, state, failures, created_at) "
                "VALUES (:org, :name, :watched, 'new', 0, :at)"
            )
            conn.execute(insert, {"org": "org", "name": "model", "watched": True, "at": T0})
            conn.execute(insert, {"org": "Org", "name": "Model", "watched": False, "at": T0})
            conn.execute(insert, {"org": "ORG", "name": "MODEL", "watched": False, "at": T0})
            conn.execute(insert, {"org": "other", "name": "x", "watched": True, "at": T0})
            kept = conn.execute(sa.text("SELECT id FROM repos WHERE org = 'Org'")).scalar_one()
            for label, position in (("r1", 0), ("r2", 1)):
                conn.execute(
                    sa.text(
                        "INSERT INTO revisions (repo_id, sha, position, date, title, message, authors, stored_at) "
                        "VALUES (:repo, :sha, :pos, :at, 't', '', '[]', :at)"
                    ),
                    {"repo": kept, "sha": rev(label).sha, "pos": position, "at": T0},
                )
            lone = conn.execute(sa.text("SELECT id FROM repos WHERE org = 'ORG'")).scalar_one()
            conn.execute(
                sa.text("INSERT INTO poll_runs (repo_id, started_at, finished_at, outcome, new_revisions) "
                        "VALUES (:repo, :at, :at, 'ok', 0)"),
                {"repo": lone, "at": T0},
            )
        upgrade_to_head(engine)
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, org, name, key, first_id, watched FROM repos ORDER BY key")).all()
        assert [(r.id, r.org, r.name, r.key, r.first_id, bool(r.watched)) for r in rows] == [
            (kept, "Org", "Model", "org/model", "Org/Model", True),
            (rows[1].id, "other", "x", "other/x", "other/x", True),
        ]
        assert len(store.history(RepoId("org", "model"))) == 2
        assert store.watch(RepoId("ORG", "model")) is False
        # The unique key: another spelling cannot be inserted beside it.
        with engine.begin() as conn:
            try:
                with conn.begin_nested():
                    conn.execute(sa.text(
                        "INSERT INTO repos (org, name, key, first_id, watched, state, failures, created_at) "
                        "VALUES ('oRG', 'model', 'org/model', 'oRG/model', true, 'new', 0, :at)"), {"at": T0})
                raise AssertionError("a second row with the same key was accepted")
            except sa.exc.IntegrityError:
                pass
