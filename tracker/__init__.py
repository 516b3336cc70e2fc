"""The tracker: talks to the hub, snapshots revisions, diffs, classifies and writes advisories."""

if __name__ != "hubwatch.tracker":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.tracker, not {__name__}: the folder tracker/ is installed as hubwatch.tracker")

__all__: list[str] = []  # the public API lives in the submodules (hub, poller, diff, advise, …)
