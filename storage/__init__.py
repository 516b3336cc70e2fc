"""The store: schema (SQLModel), migrations (Alembic) and every query hubwatch makes."""
