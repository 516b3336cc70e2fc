"""Old ids and other spellings of a repo answer 308 to its canonical URL, for every route at once.

A repo renamed upstream keeps its history under the new id and the old id becomes an alias; ids
match case-insensitively. A request naming a repo (`{org}/{name}` in the path) by an alias or by
another spelling is answered `308 Permanent Redirect` to the same path and query under the id as
the store spells it — pages, the Markdown twin, feeds, badges and the JSON API alike. An unknown
repo is left to the route (its 404).
"""

from __future__ import annotations

from fastapi import FastAPI, Request, Response
from fastapi.responses import RedirectResponse

from hubwatch.feeds.context import get_ctx, repo_from_path
from hubwatch.feeds.errors import ApiError

__all__ = ["MovedTo", "canonical_redirect", "install_redirects"]


class MovedTo(Exception):
    """Raised by `canonical_redirect`: the repo named in the path lives at `location`."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


def canonical_redirect(request: Request) -> None:
    """A router dependency: raise MovedTo when the path names a known repo not as the store does."""
    org, name = request.path_params.get("org"), request.path_params.get("name")
    if not isinstance(org, str) or not isinstance(name, str):
        return
    try:
        asked = repo_from_path(org, name, request)  # a dataset under a `/datasets/` route: never the model
    except ApiError:
        return  # the route answers its 404
    canonical = get_ctx(request).store.canonical_id(asked)
    if canonical is None or str(canonical) == str(asked):
        return
    path = request.url.path
    old = f"/{org}/{name}"
    at = path.find(old)
    if at < 0:
        return
    location = path[:at] + f"/{canonical.hub_id}" + path[at + len(old):]
    if request.url.query:
        location += f"?{request.url.query}"
    raise MovedTo(location)


async def _on_moved(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, MovedTo)
    return RedirectResponse(exc.location, status_code=308)


def install_redirects(app: FastAPI) -> None:
    app.add_exception_handler(MovedTo, _on_moved)
