"""Export advisories laid out like OSV's data dumps: all.zip, GIT/all.zip, GIT/<id>.json, modified_id.csv."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from hubwatch.domain.records import AdvisoryRecord
from hubwatch.domain.times import rfc3339
from hubwatch.advisories.osv import validate_osv

__all__ = ["ECOSYSTEM", "export_files", "published_osv", "write_export"]

ECOSYSTEM = "GIT"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same records give byte-identical zips


def published_osv(record: AdvisoryRecord) -> dict[str, Any]:
    """The OSV JSON as published, the same in the export, the CLI and the web API: the stored
    record, with `id`, `modified` and (when the store says it is withdrawn) `withdrawn` filled in
    from the stored state where the record lacks them."""
    osv = dict(record.osv)
    osv.setdefault("id", record.id)
    osv.setdefault("modified", rfc3339(record.modified, f"advisory {record.id} modified"))
    if record.withdrawn is not None:
        osv.setdefault("withdrawn", rfc3339(record.withdrawn, f"advisory {record.id} withdrawn"))
    return osv


def _json_bytes(osv: Mapping[str, Any]) -> bytes:
    return (json.dumps(osv, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _zip(entries: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name])
    return buffer.getvalue()


def export_files(records: Sequence[AdvisoryRecord]) -> dict[str, bytes]:
    """Relative path → bytes of the whole export (pure; every record is validated first).

    `all.zip` and `GIT/all.zip` hold `<id>.json` per record, `GIT/<id>.json` the same files
    unpacked, `modified_id.csv` lines `<modified>,GIT/<id>` newest first (and `GIT/modified_id.csv`
    lines `<modified>,<id>`), `ecosystems.txt` the one ecosystem.
    """
    documents: dict[str, bytes] = {}
    modified: dict[str, str] = {}
    for record in records:
        osv = published_osv(record)
        validate_osv(osv)
        if record.id in documents:
            raise ValueError(f"advisory {record.id!r} appears twice in the export")
        documents[record.id] = _json_bytes(osv)
        modified[record.id] = str(osv["modified"])
    files = {f"{ECOSYSTEM}/{ident}.json": body for ident, body in documents.items()}
    by_name = {f"{ident}.json": body for ident, body in documents.items()}
    files[f"{ECOSYSTEM}/all.zip"] = _zip(by_name)
    files["all.zip"] = _zip(by_name)
    newest_first = sorted(modified, key=lambda ident: (modified[ident], ident), reverse=True)
    files["modified_id.csv"] = "".join(f"{modified[i]},{ECOSYSTEM}/{i}\n" for i in newest_first).encode()
    files[f"{ECOSYSTEM}/modified_id.csv"] = "".join(f"{modified[i]},{i}\n" for i in newest_first).encode()
    files["ecosystems.txt"] = f"{ECOSYSTEM}\n".encode()
    return files


def write_export(files: Mapping[str, bytes], root: Path) -> int:
    """Write `files` under `root`; stale `GIT/*.json` of an earlier export are removed. Returns the count."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(f"{root} exists and is not a folder: choose a folder for the export")
    eco = root / ECOSYSTEM
    eco.mkdir(parents=True, exist_ok=True)
    wanted = {Path(name).name for name in files if name.startswith(f"{ECOSYSTEM}/") and name.endswith(".json")}
    for old in eco.glob("*.json"):
        if old.name not in wanted:
            old.unlink()
    for name, body in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_bytes(body)
        temporary.replace(target)
    return len(files)
