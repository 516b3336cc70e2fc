"""`hubwatch watch add datasets/ORG/NAME` and `--type dataset` (issue 33)."""

from __future__ import annotations

import json

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli


def _run(env: dict[str, str], *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, list(args), env=env)


def test_watch_add_a_dataset_either_way_and_list_remove_it(database_url: str) -> None:
    env = {"HUBWATCH_DATABASE_URL": database_url, "COLUMNS": "200"}
    added = _run(env, "watch", "add", "datasets/hubwatch-test/reviews")
    assert added.exit_code == 0 and "watching datasets/hubwatch-test/reviews" in added.output, added.output
    again = _run(env, "watch", "add", "hubwatch-test/reviews", "--type", "dataset")
    assert again.exit_code == 0 and "already watching datasets/hubwatch-test/reviews" in again.output, again.output
    model = _run(env, "watch", "add", "hubwatch-test/reviews")
    assert model.exit_code == 0 and "watching hubwatch-test/reviews" in model.output
    listed = _run(env, "watch", "list", "--json")
    rows = {(r["repo"], r["type"]) for r in json.loads(listed.output)}
    assert rows == {("datasets/hubwatch-test/reviews", "dataset"), ("hubwatch-test/reviews", "model")}
    clash = _run(env, "watch", "add", "datasets/a/b", "--type", "model")
    assert clash.exit_code == 2 and "is a dataset id" in clash.output
    refused = _run(env, "watch", "add", "spaces/a/b")
    assert refused.exit_code == 2 and "not spaces" in refused.output
    removed = _run(env, "watch", "remove", "datasets/hubwatch-test/reviews")
    assert removed.exit_code == 0 and "stopped watching datasets/hubwatch-test/reviews" in removed.output
    rows = {(r["repo"], r["type"]) for r in json.loads(_run(env, "watch", "list", "--json").output)}
    assert rows == {("hubwatch-test/reviews", "model")}
