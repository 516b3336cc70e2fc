"""The web app: history pages, feeds, the OSV API, badges and the JSON API."""

if __name__ != "hubwatch.feeds":  # this folder is on sys.path as the repo root; one name only
    raise ImportError(f"import hubwatch.feeds, not {__name__}: the folder feeds/ is installed as hubwatch.feeds")

from hubwatch.feeds.app import create_app

__all__ = ["create_app"]
