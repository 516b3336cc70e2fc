"""Readable tables for `hubwatch estimate`: the analysis (family, parameters, structure, findings) and memory."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["render"]

Entry = dict[str, Any]
_LEVEL_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


def _count(value: int | None) -> str:
    if value is None:
        return "—"
    return f"{value:,} ({value / 1e9:.2f} B)" if value >= 10**8 else f"{value:,} ({value / 1e6:.1f} M)"


def _gb(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _label(target: str) -> str:
    """A short column heading: the folder of a config path, the folder or file name, or org/name."""
    parts = [p for p in target.replace("\\", "/").split("/") if p]
    if len(parts) > 1 and parts[-1] == "config.json":
        parts = parts[:-1]
    if len(parts) <= 2 and not target.startswith(("/", ".", "~")):
        return "/".join(parts) or target  # org/name, or a short relative path
    return parts[-1] if parts else target


def _side_by_side(title: str, ok: list[Entry]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("", style="bold", no_wrap=True)
    for entry in ok:
        table.add_column(escape(_label(entry["target"])), justify="right", overflow="fold")
    return table


def _overview(ok: list[Entry]) -> Table:
    table = _side_by_side("Model", ok)

    def row(label: str, cells: list[str]) -> None:
        table.add_row(label, *cells)

    row("target", [escape(e["target"]) for e in ok])
    row("model", [escape(str(e["model"])) for e in ok])
    if any(e.get("revision") for e in ok):
        row("revision", [str(e.get("revision") or "—") for e in ok])
    row("family", [e["family"] + (" [yellow](generic estimate: unknown architecture)[/yellow]" if e["family"] == "unknown"
                                  or any(n.startswith("unknown architecture") for n in e.get("notes") or []) else "")
                   for e in ok])
    row("model type", [escape(str(e.get("model_type") or "—")) for e in ok])
    row("custom code", ["[yellow]yes (auto_map)[/yellow]" if e["custom_code"] else "no" for e in ok])
    row("parameters (derived)", [_count(e["params"]["derived"]) for e in ok])
    row("checkpoint", [_count(e["params"]["checkpoint"]) for e in ok])
    row("delta", ["—" if e["params"]["delta_pct"] is None else f"{e['params']['delta_pct']:+.2f} %" for e in ok])
    if any(e["params"].get("explanation") for e in ok):
        row("  why", [escape(e["params"].get("explanation") or "—") for e in ok])
    if any(e["params"]["active"] != e["params"]["derived"] for e in ok):
        row("active per token", [_count(e["params"]["active"]) for e in ok])
    row("layers", [str(e["structure"]["layers"]) for e in ok])
    row("input shape", [" × ".join(map(str, e["structure"].get("input_shape") or [])) or "—" for e in ok])
    row("forward pass", ["[green]ok[/green]" if e["structure"]["forward_pass_ok"] else
                         "[red]fails: " + escape("; ".join(e["structure"].get("failures") or [])) + "[/red]"
                         for e in ok])
    findings = []
    for e in ok:
        levels = [f["level"] for f in e["findings"]]
        parts = [f"{levels.count(level)} {level}" for level in ("error", "warning", "info") if level in levels]
        findings.append(", ".join(parts) or "none")
    row("findings", findings)
    if any(e.get("notes") for e in ok):
        row("notes", ["\n".join(escape(n) for n in e.get("notes") or []) or "—" for e in ok])
    return table


def _components(ok: list[Entry]) -> Table:
    table = _side_by_side("Parameters by component", ok)
    names: list[str] = []
    for e in ok:
        names += [n for n in e["params"]["by_component"] if n not in names]
    for name in names:
        cells = []
        for e in ok:
            value, total = e["params"]["by_component"].get(name), e["params"]["derived"]
            cells.append("—" if value is None else f"{value:,} ({100 * value / total:.1f} %)" if total else f"{value:,}")
        table.add_row(name.replace("_", " "), *cells)
    table.add_row("[bold]total[/bold]", *[f"[bold]{e['params']['derived']:,}[/bold]" for e in ok])
    return table


def _findings(ok: list[Entry]) -> Table | None:
    several = len(ok) > 1
    rows = [(e["target"], f) for e in ok for f in sorted(e["findings"], key=lambda f: _LEVEL_ORDER.get(f["level"], 3))]
    if not rows:
        return None
    table = Table(title="Findings", title_justify="left", show_lines=True)
    if several:
        table.add_column("target", overflow="fold", max_width=28)
    for name in ("level", "rule", "message", "fix"):
        table.add_column(name, overflow="fold", no_wrap=name == "level")
    for target, f in rows:
        style = _LEVEL_STYLE.get(f["level"], "")
        cells = [f"[{style}]{f['level']}[/{style}]" if style else f["level"], escape(f["rule"]),
                 escape(f["message"]), escape(f["fix"])]
        table.add_row(*([escape(_label(target))] if several else []), *cells)
    return table


def _nodes(entry: Entry) -> Table:
    nodes = entry["structure"]["nodes"]
    table = Table(title=f"Layer graph — {escape(entry['target'])} ({len(nodes)} nodes, batch excluded)",
                  title_justify="left")
    for name in ("name", "type", "output shape"):
        table.add_column(name, overflow="fold")
    for node in nodes:
        table.add_row(escape(node["name"]), escape(node["type"]), " × ".join(map(str, node["output_shape"])))
    return table


def _memory(ok: list[Entry], method: str, batch: int, lora_rank: int, serve_dtype: str) -> Table:
    table = _side_by_side(f"Memory (GB, peak allocated) — method {method}, batch {batch}", ok)
    rows: list[tuple[str, list[str]]] = [
        ("seq len", [str(e["settings"]["seq_len"]) for e in ok]),
        ("full fine-tune", [_gb(e["memory_gb"]["full_finetune"]) for e in ok]),
        (f"LoRA r={lora_rank}", [_gb(e["memory_gb"]["lora"]) for e in ok]),
        (f"QLoRA r={lora_rank}", [_gb(e["memory_gb"]["qlora"]) for e in ok]),
        (f"serve weights ({serve_dtype})", [_gb(e["memory_gb"]["serve_weights"]) for e in ok]),
        ("KV cache", [_gb(e["memory_gb"]["kv_cache"]) for e in ok]),
    ]
    term_names: list[str] = []
    for e in ok:
        term_names += [t for t in e["selected"]["terms"] if t not in term_names]
    rows.append((f"[cyan]{method} peak[/cyan]", [_gb(e["selected"]["peak_gb"]) for e in ok]))
    for term in term_names:
        values = [e["selected"]["terms"].get(term) for e in ok]
        if any(v for v in values):
            rows.append((f"  {term.replace('_', ' ')}", [_gb(v) for v in values]))
    rows.append(("  needs (× headroom + overhead)", [_gb(e["selected"]["required_gb"]) for e in ok]))
    for i, card in enumerate(ok[0]["cards"]):
        cells = []
        for e in ok:
            row = e["cards"][i]
            cells.append(" / ".join("—" if row[k] is None else str(row[k]) for k in
                                    ("full_finetune_batch", "lora_batch", "qlora_batch", "serve_batch")))
        rows.append((f"{card['name']} {card['memory_gb']:g} GB: batch F/L/Q/S", cells))
    rows.append(("cost", [_cost_text(e.get("cost")) for e in ok]))
    for label, cells in rows:
        table.add_row(label, *cells)
    return table


def _cost_text(cost: dict[str, Any] | None) -> str:
    if not cost:
        return "—"
    money = "" if cost.get("usd") is None else f", ${cost['usd']:,.2f}"
    return f"{cost['hours']:.2f} h on {cost['cards']}× {cost['card']}{money}"


def render(console: Console, entries: list[Entry], *, method: str, batch: int, lora_rank: int, serve_dtype: str,
           nodes: bool = False) -> None:
    """Print the entries of `estimate` side by side (failed targets as one error line each, at the end)."""
    ok = [e for e in entries if "error" not in e]
    if ok:
        console.print(_overview(ok))
        console.print(_components(ok))
        console.print(_memory(ok, method, batch, lora_rank, serve_dtype))
        table = _findings(ok)
        if table is None:
            console.print("Findings: none")
        else:
            console.print(table)
        if nodes:
            for entry in ok:
                console.print(_nodes(entry))
    for entry in entries:
        if "error" in entry:
            message = entry["error"] if entry["target"] in entry["error"] else f"{entry['target']}: {entry['error']}"
            console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
