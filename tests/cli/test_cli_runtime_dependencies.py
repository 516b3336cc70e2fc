"""Every third-party package the installed code imports is a pinned runtime dependency; the
bench-only packages (torch, transformers, peft, bitsandbytes, accelerate) are never imported by it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("hubwatch", "tracker", "estimator", "storage", "feeds")
BENCH_ONLY = {"torch", "transformers", "peft", "bitsandbytes", "accelerate"}


def top_level_imports() -> dict[str, set[str]]:
    """Top-level module name → the runtime files importing it (at any depth: lazy imports count)."""
    found: dict[str, set[str]] = {}
    for part in RUNTIME:
        for path in sorted((ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def pinned() -> dict[str, str]:
    """Normalised distribution name → pinned version, from [project] dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out: dict[str, str] = {}
    for spec in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==([^;\s]+)(\s*;.+)?", spec.strip())
        assert match, f"runtime dependency {spec!r} is not pinned with =="
        out[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[3]
    return out


def test_every_third_party_import_is_a_pinned_runtime_dependency() -> None:
    distributions = packages_distributions()
    deps = pinned()
    missing = []
    for module, files in sorted(top_level_imports().items()):
        if module in sys.stdlib_module_names or module == "hubwatch" or module == "__future__":
            continue
        names = {re.sub(r"[-_.]+", "-", d).lower() for d in distributions.get(module, [])}
        if not names & deps.keys():
            missing.append(f"{module} ({', '.join(sorted(names)) or 'not installed'}) in {sorted(files)[0]}")
    assert not missing, "imported at run time but not pinned in pyproject.toml: " + "; ".join(missing)


def test_bench_only_packages_are_not_imported_at_run_time() -> None:
    found = {m: sorted(f) for m, f in top_level_imports().items() if m in BENCH_ONLY}
    assert not found, found


def test_the_scan_sees_lazy_imports() -> None:
    imports = top_level_imports()
    assert "tracker/hub_errors.py" in imports["httpx2"]  # imported inside a function
    assert "yaml" in imports and "sqlalchemy" in imports


def test_the_web_server_runs_on_the_c_event_loop_and_http_parser() -> None:
    """uvicorn takes uvloop and httptools when they are installed (both pinned runtime dependencies):
    the event loop that moves every answer and answers /healthz spends a fraction of the CPU h11 and
    asyncio's own loop do."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    assert {"uvloop", "httptools"} <= pinned().keys()
    assert AutoHTTPProtocol is HttpToolsProtocol
    factory = uvicorn.Config(app=lambda scope, receive, send: None).get_loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.split(".")[0] == "uvloop"
    finally:
        loop.close()
