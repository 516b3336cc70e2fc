"""Test helper: a record checked by jsonschema itself against the OSV schema the package ships.

The tracker checks each record with the compiled schema (`validate_osv`); the tests check what they
build with the reference validator, so a difference between the two cannot hide a bad record.
"""

from __future__ import annotations

from typing import Any, Mapping

from jsonschema import Draft202012Validator

from hubwatch.advisories.osv import schema

__all__ = ["assert_schema_valid", "schema_errors"]


def schema_errors(record: Mapping[str, Any]) -> list[str]:
    """jsonschema's complaints about `record` (empty when it is a valid OSV record)."""
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in Draft202012Validator(schema()).iter_errors(record)]


def assert_schema_valid(record: Mapping[str, Any]) -> None:
    errors = schema_errors(record)
    assert not errors, f"{record.get('id')!r} fails the packaged OSV schema: {errors}"
