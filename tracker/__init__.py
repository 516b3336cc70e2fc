"""The tracker: talks to the hub, snapshots revisions, diffs, classifies and writes advisories."""

__all__: list[str] = []  # the public API lives in the submodules (hub, poller, diff, advise, …)
