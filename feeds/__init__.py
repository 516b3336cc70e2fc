"""The web app: history pages, feeds, the OSV API, badges and the JSON API."""
