"""Revisions and their history: writing one, reading it back, force-pushes, re-derived results."""
