"""Advisories: OSV records built from changes, their ranges, the one "as published" form, the export."""
