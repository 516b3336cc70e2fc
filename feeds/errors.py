"""The one JSON error shape of the web app, `{"error": {"code", "message"}}`, and its handlers.

A browser (whose Accept names text/html) gets the same code and message as a small HTML page."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from hubwatch.storage.errors import AmbiguousRevision, DatabaseUnavailable

__all__ = ["ApiError", "bad_request", "error_body", "install_error_handlers", "not_found"]

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "bad_request",
    503: "unavailable",
}


class ApiError(Exception):
    """An error the web app answers with its JSON error shape and `status`."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _respond(
    request: Request, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    if _wants_html(request):
        templates = getattr(getattr(request.app.state, "hubwatch", None), "templates", None)
        if templates is not None:
            context = {"status": status, "code": code, "message": message}
            page = templates.get_template("error.html").render(context)
            return HTMLResponse(page, status_code=status, headers=headers)
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


async def _on_api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _respond(request, exc.status, exc.code, exc.message, exc.headers)


async def _on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such page: {request.url.path}"
    headers = dict(exc.headers) if exc.headers else None
    return _respond(request, exc.status_code, _CODES.get(exc.status_code, "error"), message, headers)


async def _on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err.get("loc", ()) if part != "body") or "request"
        problems.append(f"{where}: {err.get('msg', 'invalid')}")
    return _respond(request, 400, "bad_request", "; ".join(problems) or "invalid request")


async def _on_ambiguous(request: Request, exc: Exception) -> Response:
    return _respond(request, 400, "ambiguous_revision", f"{exc}: give more characters of the commit sha")


async def _on_unavailable(request: Request, exc: Exception) -> Response:
    return _respond(request, 503, "unavailable", f"the database is not reachable: {exc}")


def install_error_handlers(app: FastAPI) -> None:
    """Make every error the app answers use the one JSON shape."""
    app.add_exception_handler(AmbiguousRevision, _on_ambiguous)
    app.add_exception_handler(DatabaseUnavailable, _on_unavailable)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
