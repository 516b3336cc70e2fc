"""`Estimate`: the typed, frozen result of estimating one revision, and its JSON as the store keeps it.

The estimator makes it (`estimate_revision`, `memory_report`); the tracker, the web app and the
CLI read its fields. `to_json` writes the stored shape (the analysis summary, then `settings`,
`memory_gb`, `selected`, `methods`, `cards`, `cost`, `assumptions`); `from_json` reads it back,
tolerantly, for estimates stored by older versions. A config the estimator could not read is an
Estimate with `error` set and no figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hubwatch.estimator.estimate_parts import (
    CardFit, Cost, MethodError, MethodMemory, Params, PeakMemory, StructureSummary, finding_from_json,
    json_str,
)
from hubwatch.estimator.frozen import frozen
from hubwatch.estimator.lints import Finding
from hubwatch.estimator.memory.settings import MemorySettings, MemorySettingsError
from hubwatch.estimator.support import Support

__all__ = ["Estimate", "Memory"]


@frozen
class Memory:
    """Memory per method at `settings` (whose seq_len is the resolved one): headline peaks and each
    method's terms, or why the method cannot run."""

    settings: MemorySettings | None
    peaks: PeakMemory
    methods: tuple[MethodMemory | MethodError, ...] = ()

    def method(self, name: str) -> MethodMemory | MethodError | None:
        return next((m for m in self.methods if m.method == name), None)

    @property
    def selected(self) -> MethodMemory | MethodError | None:
        """The method the settings select (whose terms are shown)."""
        return None if self.settings is None else self.method(self.settings.method)

    def to_json(self) -> dict[str, Any]:
        selected = self.selected
        out: dict[str, Any] = {"settings": None if self.settings is None else self.settings.to_json(),
                               "memory_gb": self.peaks.to_json()}
        if selected is not None:
            out["selected"] = ({"method": selected.method, "error": selected.error}
                               if isinstance(selected, MethodError) else selected.to_json())
        out["methods"] = {m.method: {"error": m.error} if isinstance(m, MethodError) else m.to_json()
                          for m in self.methods}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Memory:
        settings = None
        raw = data.get("settings")
        if isinstance(raw, dict):
            try:
                settings = MemorySettings.from_json(raw)
            except (MemorySettingsError, TypeError):  # settings of another estimator version
                settings = None
        raw_methods = data.get("methods")
        methods = tuple(m for name, body in raw_methods.items() if (m := MethodMemory.from_json(str(name), body)))\
            if isinstance(raw_methods, Mapping) else ()
        return cls(settings, PeakMemory.from_json(data.get("memory_gb")), methods)


@frozen
class Estimate:
    """One revision's estimate: parameters, findings and structure (when made from an analysis),
    memory per method, card fits and cost (when memory was estimated), or the error that stopped it."""

    estimator_version: str | None
    params: Params | None = None
    memory: Memory | None = None
    cards: tuple[CardFit, ...] = ()
    cost: Cost | None = None
    findings: tuple[Finding, ...] = ()
    assumptions: tuple[str, ...] = ()
    model: str | None = None
    revision: str | None = None
    family: str | None = None
    custom_code: bool | None = None
    structure: StructureSummary | None = None
    notes: tuple[str, ...] = ()
    error: str | None = None

    @classmethod
    def failed(cls, estimator_version: str | None, error: str, key: str = "") -> Estimate:
        """No figures: `error` says why; params.support is `unsupported`, naming the `key` that stopped it."""
        return cls(estimator_version, params=Params(None, support=Support.unsupported(error, key)), error=error)

    def analysis_json(self) -> dict[str, Any]:
        """The analysis summary as stored (empty when the estimate was made from a bare spec)."""
        if self.params is None:
            return {}
        return {"model": self.model, "revision": self.revision, "family": self.family, "custom_code": self.custom_code,
                "params": self.params.to_json(), "findings": [f.to_json() for f in self.findings],
                "notes": list(self.notes)}

    def memory_json(self) -> dict[str, Any]:
        """The memory report: settings, memory per method, cards, cost and assumptions (empty without memory)."""
        if self.memory is None:
            return {}
        return {**self.memory.to_json(), "cards": [c.to_json() for c in self.cards],
                "cost": None if self.cost is None else self.cost.to_json(), "assumptions": list(self.assumptions)}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.error} if self.error is not None else self.analysis_json()
        if self.error is not None and self.params is not None and self.params.support is not None:
            out["params"] = {"support": self.params.support.to_json()}
        if self.estimator_version is not None:
            out["estimator_version"] = self.estimator_version
        if self.error is None:
            if self.structure is not None:
                out["structure"] = self.structure.to_json()
            out.update(self.memory_json())
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Estimate | None:
        """The Estimate stored as `data` (None for None or a value that is not a JSON object)."""
        if not isinstance(data, Mapping):
            return None
        version = json_str(data.get("estimator_version"))
        if "error" in data:
            raw = data.get("params")
            support = Support.from_json(raw.get("support")) if isinstance(raw, Mapping) else None
            return cls.failed(version, str(data["error"]), support.key if support is not None else "")
        memory = Memory.from_json(data) if any(k in data for k in ("settings", "memory_gb", "methods")) else None
        findings = data.get("findings")
        notes = data.get("notes")
        custom = data.get("custom_code")
        rows = data.get("cards")
        assumptions = data.get("assumptions")
        return cls(
            estimator_version=version,
            params=Params.from_json(data.get("params")),
            memory=memory,
            cards=tuple(c for row in rows if (c := CardFit.from_json(row))) if isinstance(rows, list) else (),
            cost=Cost.from_json(data.get("cost")),
            findings=tuple(f for raw in findings if (f := finding_from_json(raw))) if isinstance(findings, list) else (),
            assumptions=tuple(a for a in assumptions if isinstance(a, str)) if isinstance(assumptions, list) else (),
            model=json_str(data.get("model")),
            revision=json_str(data.get("revision")),
            family=json_str(data.get("family")),
            custom_code=custom if isinstance(custom, bool) else None,
            structure=StructureSummary.from_json(data.get("structure")),
            notes=tuple(n for n in notes if isinstance(n, str)) if isinstance(notes, list) else (),
        )
