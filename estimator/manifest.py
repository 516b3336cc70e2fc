"""The weight manifest (safetensors headers or an index's total size) and the derived-vs-checkpoint comparison."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property
from operator import attrgetter
from typing import Any

from hubwatch.estimator.config import ConfigError
from hubwatch.estimator.frozen import frozen

__all__ = ["DTYPE_BYTES", "Manifest", "Tensor", "explain_delta"]

DTYPE_BYTES: dict[str, float] = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "U16": 2, "U32": 4,
    "U64": 8, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "F8_E4M3FN": 1, "F4": 0.5, "F6_E2M3": 0.75,
    "FLOAT32": 4, "FLOAT16": 2, "BFLOAT16": 2, "FLOAT64": 8, "FLOAT8_E4M3FN": 1, "INT8": 1, "UINT8": 1,
}
_PACKED = {"U8", "I32", "U32", "I8", "F4", "UINT8", "INT8"}
_LAYER_INDEX = re.compile(r"(?:^|\.)(?:layers|h|blocks|block|layer)\.(\d+)\.")
# Tensor groups a checkpoint and the derived structure are compared by (the derived count's components).
_GROUPS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("pooler", "a pooler", re.compile(r"(?m)(?:^|\.)pooler\.")),
    ("head", "a task head (LM/MLM head or classifier)",
     re.compile(r"(?m)(?:^|\.)(?:lm_head|cls|classifier|score|qa_outputs|output_projection|generator_lm_head|"
                r"discriminator_predictions|seq_relationship)(?:\.|$)")),
)


@frozen
class Tensor:
    """One stored tensor: its name, dtype and shape."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@frozen
class Manifest:
    """What a checkpoint stores: its tensors (from headers) or only its byte size (from an index)."""

    tensors: tuple[Tensor, ...] = ()
    total_size: int | None = None
    dtype: str | None = None

    @classmethod
    def from_safetensors_headers(cls, headers: Mapping[str, Mapping[str, Any]]) -> Manifest:
        """{file: safetensors header} (each header: tensor → {dtype, shape, data_offsets}; __metadata__ skipped)."""
        if not isinstance(headers, Mapping):
            raise ConfigError("manifest", "expected {file: header}")
        tensors: list[Tensor] = []
        for file, header in headers.items():
            if not isinstance(header, Mapping):
                raise ConfigError(f"manifest.{file}", "expected a safetensors header object")
            for name, info in header.items():
                if name == "__metadata__":
                    continue
                if not isinstance(info, Mapping):
                    raise ConfigError(f"manifest.{file}.{name}", "expected {dtype, shape}")
                dtype, shape = info.get("dtype"), info.get("shape")
                if not isinstance(dtype, str) or not isinstance(shape, (list, tuple)) or not all(
                        isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape):
                    raise ConfigError(f"manifest.{file}.{name}", "dtype must be a string and shape whole numbers ≥ 0")
                tensors.append(Tensor(str(name), dtype.upper(), tuple(shape)))
        return cls(tensors=tuple(tensors))

    @classmethod
    def from_weights_json(cls, weights: Mapping[str, Mapping[str, Any]]) -> Manifest:
        """The hub emulator's weights.json: {file: {tensor: {dtype, shape}}} (the same shape as headers)."""
        return cls.from_safetensors_headers(weights)

    @classmethod
    def from_index(cls, index: Mapping[str, Any], dtype: str | None = None) -> Manifest:
        """A `*.safetensors.index.json`: metadata.total_size in bytes; the count needs the storage dtype."""
        if not isinstance(index, Mapping):
            raise ConfigError("index", "expected a JSON object")
        meta = index.get("metadata")
        size = meta.get("total_size") if isinstance(meta, Mapping) else None
        if isinstance(size, float) and size.is_integer():
            size = int(size)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ConfigError("index.metadata.total_size", "missing or not a whole number of bytes")
        names = index.get("weight_map")
        tensors = tuple(Tensor(str(n), "", ()) for n in names) if isinstance(names, Mapping) else ()
        return cls(tensors=tensors, total_size=size, dtype=dtype.upper() if isinstance(dtype, str) else None)

    @property
    def has_shapes(self) -> bool:
        return any(t.dtype for t in self.tensors)

    def params(self, fallback_dtype: str | None = None) -> int | None:
        """Scalar count of the checkpoint (exact from headers; from bytes ÷ dtype size for an index)."""
        if self.has_shapes:
            return sum(t.numel for t in self.tensors)
        dtype = (self.dtype or fallback_dtype or "").upper()
        dtype = {"FLOAT32": "F32", "FLOAT16": "F16", "BFLOAT16": "BF16"}.get(dtype, dtype)
        if self.total_size is None or dtype not in DTYPE_BYTES:
            return None
        return int(self.total_size / DTYPE_BYTES[dtype])

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(sorted({t.dtype for t in self.tensors if t.dtype}))

    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tensors)

    def matching(self, pattern: re.Pattern[str]) -> list[Tensor]:
        """The tensors whose name `pattern` finds (`pattern.search(name)`), in order. `pattern` must
        be multiline (`(?m)`) and match no newline: the names are searched as one text, a line each,
        so a checkpoint of thousands of tensors costs one scan in C, not a search per name."""
        text = self._joined_names
        if text is None:  # a name holds a newline: one search a name
            return [t for t in self.tensors if pattern.search(t.name)]
        lines: list[int] = []
        line, at = 0, 0
        for found in pattern.finditer(text):
            line += text.count("\n", at, found.start())
            at = found.start()
            if not lines or lines[-1] != line:  # a name matched twice counts once
                lines.append(line)
        return [self.tensors[i] for i in lines]

    @cached_property
    def _joined_names(self) -> str | None:
        """The tensors' names, a line each (None when a name holds a newline)."""
        text = "\n".join(map(attrgetter("name"), self.tensors))
        return text if text.count("\n") == max(len(self.tensors) - 1, 0) else None


def _group_differences(manifest: Manifest, components: Mapping[str, int], tied_head: bool) -> list[str]:
    """Groups (pooler, task head) one side has and the other lacks, whatever their size."""
    out = []
    for component, label, pattern in _GROUPS:
        stored = manifest.matching(pattern)
        derived = components.get(component, 0)
        stored_n = sum(t.numel for t in stored)
        if stored and not derived and tied_head and all(t.name.startswith("lm_head.") for t in stored):
            continue  # a tied LM head saved anyway: the size-based reasons below name it
        if derived and not stored and manifest.tensors:
            out.append(f"the derived structure counts {label} ({derived:,} params) the checkpoint does not store")
        elif stored and not derived:
            size = f", {stored_n:,} params" if manifest.has_shapes else ""
            out.append(f"the checkpoint stores {label} ({stored[0].name}{' …' if len(stored) > 1 else ''}{size}) "
                       "that the config's architecture does not build")
    return out


def explain_delta(manifest: Manifest, checkpoint: int, derived: int, *, lm_head: int, tied_rows: int,
                  layers: int, towers: Mapping[str, int], components: Mapping[str, int] | None = None) -> str:
    """Why the checkpoint and the derived count differ, whatever the size of the difference: the groups
    (pooler, task head) one side has and the other lacks, then the size-based reasons; empty when both
    agree exactly and no group differs."""
    delta = checkpoint - derived
    groups = _group_differences(manifest, components or {}, tied_head=not lm_head)
    if derived and abs(delta) / derived <= 0.01:
        if groups:
            return "; ".join(groups + [f"together {delta:+,} params"])
        if delta:
            return (f"{delta:+,} params ({100.0 * delta / derived:+.3f}%): no pooler or head differs; a tensor the "
                    "structure sizes differently (a bias, a norm or a padded table)")
        return ""
    names = manifest.names()
    reasons: list[str] = list(groups)
    near = max(derived // 200, 1)
    packed = [d for d in manifest.dtypes if d in _PACKED]
    if packed:
        reasons.append(f"quantized checkpoint ({', '.join(packed)} tensors hold packed weights; scale tensors add more)")
    if lm_head and delta < 0 and abs(-delta - lm_head) <= near and not any("lm_head" in n for n in names):
        reasons.append(f"untied LM head ({lm_head:,} params) is not stored in the checkpoint (tied at load time)")
    if tied_rows and delta > 0 and abs(delta - tied_rows) <= near:
        reasons.append(f"checkpoint stores a separate output layer ({tied_rows:,}) that the config ties")
    for tower, params in towers.items():
        key = tower.split("_")[0]
        if params and names and not any(key in n for n in names) and delta < 0:
            reasons.append(f"{tower} ({params:,} params) is referenced by the config but not inlined in the checkpoint")
    indices = {int(m.group(1)) for n in names if (m := _LAYER_INDEX.search(n))}
    if layers and indices and max(indices) >= layers and delta > 0:
        reasons.append(f"checkpoint holds layers beyond the config's {layers} (e.g. next-token-prediction modules)")
    if not reasons:
        reasons.append("checkpoint holds tensors the config does not describe (task heads, adapters or buffers)"
                       if delta > 0 else "checkpoint lacks modules the architecture builds (a head or a tower)")
    return "; ".join(reasons)
