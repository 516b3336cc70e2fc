"""The web app: history pages, feeds, the OSV API, badges and the JSON API."""

from hubwatch.feeds.app import create_app

__all__ = ["create_app"]
