"""Alembic migrations of the hubwatch store (applied by hubwatch.storage.migrate)."""
