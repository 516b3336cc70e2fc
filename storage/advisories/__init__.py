"""Advisories: upserts, listings, and which records affect a pin (the events and interval indexes)."""
