"""The tracker: talks to the hub, snapshots revisions, diffs, classifies and writes advisories."""
