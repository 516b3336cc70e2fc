"""The web app's routers, one per area; each route only fetches, calls a builder and returns."""
