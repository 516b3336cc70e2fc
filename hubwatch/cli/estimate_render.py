"""Readable tables for `hubwatch estimate`: the analysis (family, parameters, structure, findings) and memory.

The tables read the typed entries (`EstimateEntry`: an Analysis and an Estimate), never JSON keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hubwatch.cli.estimate_entry import EstimateEntry, FailedEntry
from hubwatch.estimator.estimate_parts import CARD_METHODS, Cost, MethodError, MethodMemory, PeakMemory
from hubwatch.estimator.support import Support
from hubwatch.estimator.verdict import Verdict, estimate_verdicts, support_words

if TYPE_CHECKING:
    from hubwatch.cli.estimate_dataset import DatasetChoice

__all__ = ["render"]

_LEVEL_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


def _count(value: int | None) -> str:
    if value is None:
        return "—"
    return f"{value:,} ({value / 1e9:.2f} B)" if value >= 10**8 else f"{value:,} ({value / 1e6:.1f} M)"


def _gb(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _support(support: Support) -> str:
    """params.support for people, in words with its bound: modelled in green, the others in yellow."""
    words = support_words(support)
    text = escape(words.text if words is not None else support.line)
    return f"[green]{text}[/green]" if support.level == "modelled" else f"[yellow]{text}[/yellow]"


def _label(target: str) -> str:
    """A short column heading: the folder of a config path, the folder or file name, or org/name."""
    parts = [p for p in target.replace("\\", "/").split("/") if p]
    if len(parts) > 1 and parts[-1] == "config.json":
        parts = parts[:-1]
    if len(parts) <= 2 and not target.startswith(("/", ".", "~")):
        return "/".join(parts) or target  # org/name, or a short relative path
    return parts[-1] if parts else target


def _side_by_side(title: str, ok: list[EstimateEntry]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("", style="bold", no_wrap=True)
    for entry in ok:
        table.add_column(escape(_label(entry.target)), justify="right", overflow="fold")
    return table


def _overview(ok: list[EstimateEntry]) -> Table:
    table = _side_by_side("Model", ok)

    def row(label: str, cells: list[str]) -> None:
        table.add_row(label, *cells)

    analyses = [e.analysis for e in ok]
    row("target", [escape(e.target) for e in ok])
    row("model", [escape(str(a.model)) for a in analyses])
    if any(a.revision for a in analyses):
        row("revision", [str(a.revision or "—") for a in analyses])
    row("family", [a.family + (" [yellow](generic estimate: unknown architecture)[/yellow]" if a.family == "unknown"
                               or any(n.startswith("unknown architecture") for n in a.notes) else "")
                   for a in analyses])
    row("model type", [escape(str(a.spec.model_type or "—")) for a in analyses])
    row("custom code", ["[yellow]yes (auto_map)[/yellow]" if a.custom_code else "no" for a in analyses])
    row("parameters (derived)", [_count(a.params.derived) + "\n" + _support(a.params.support) for a in analyses])
    row("checkpoint", [_count(a.params.checkpoint) for a in analyses])
    row("delta", ["—" if a.params.delta_pct is None else f"{a.params.delta_pct:+.2f} %" for a in analyses])
    if any(a.params.explanation for a in analyses):
        row("  why", [escape(a.params.explanation or "—") for a in analyses])
    if any(a.params.active != a.params.derived for a in analyses):
        row("active per token", [_count(a.params.active) for a in analyses])
    row("layers", [str(a.structure.layers) for a in analyses])
    row("input shape", [" × ".join(map(str, a.structure.input_shape)) or "—" for a in analyses])
    row("forward pass", ["[green]ok[/green]" if a.structure.forward_pass_ok else
                         "[red]fails: " + escape("; ".join(a.structure.failures)) + "[/red]" for a in analyses])
    findings = []
    for a in analyses:
        levels = [f.level for f in a.findings]
        parts = [f"{levels.count(level)} {level}" for level in ("error", "warning", "info") if level in levels]
        findings.append(", ".join(parts) or "none")
    row("findings", findings)
    if any(a.notes for a in analyses):
        row("notes", ["\n".join(escape(n) for n in a.notes) or "—" for a in analyses])
    return table


def _components(ok: list[EstimateEntry]) -> Table:
    table = _side_by_side("Parameters by component", ok)
    names: list[str] = []
    for e in ok:
        names += [n for n in e.analysis.params.by_component if n not in names]
    for name in names:
        cells = []
        for e in ok:
            value, total = e.analysis.params.by_component.get(name), e.analysis.params.derived
            cells.append("—" if value is None else f"{value:,} ({100 * value / total:.1f} %)" if total else f"{value:,}")
        table.add_row(name.replace("_", " "), *cells)
    table.add_row("[bold]total[/bold]", *[f"[bold]{e.analysis.params.derived:,}[/bold]" for e in ok])
    return table


def _findings(ok: list[EstimateEntry]) -> Table | None:
    several = len(ok) > 1
    rows = [(e.target, f) for e in ok for f in sorted(e.analysis.findings, key=lambda f: _LEVEL_ORDER.get(f.level, 3))]
    if not rows:
        return None
    table = Table(title="Findings", title_justify="left", show_lines=True)
    if several:
        table.add_column("target", overflow="fold", max_width=28)
    for name in ("level", "rule", "message", "fix"):
        table.add_column(name, overflow="fold", no_wrap=name == "level")
    for target, f in rows:
        style = _LEVEL_STYLE.get(f.level, "")
        cells = [f"[{style}]{f.level}[/{style}]" if style else f.level, escape(f.rule), escape(f.message),
                 escape(f.fix)]
        table.add_row(*([escape(_label(target))] if several else []), *cells)
    return table


def _nodes(entry: EstimateEntry) -> Table:
    nodes = entry.analysis.structure.nodes
    table = Table(title=f"Layer graph — {escape(entry.target)} ({len(nodes)} nodes, batch excluded)",
                  title_justify="left")
    for name in ("name", "type", "output shape"):
        table.add_column(name, overflow="fold")
    for node in nodes:
        table.add_row(escape(node.name), escape(node.type), " × ".join(map(str, node.output_shape)))
    return table


def _selected(entry: EstimateEntry) -> MethodMemory | None:
    memory = entry.estimate.memory
    selected = None if memory is None else memory.selected
    return None if selected is None or isinstance(selected, MethodError) else selected


def _memory(ok: list[EstimateEntry], method: str, batch: int, lora_rank: int, serve_dtype: str) -> Table:
    table = _side_by_side(f"Memory (GB, peak allocated) — method {method}, batch {batch}", ok)
    peaks = [e.estimate.memory.peaks if e.estimate.memory else PeakMemory() for e in ok]
    selected = [_selected(e) for e in ok]
    settings = [e.estimate.memory.settings if e.estimate.memory else None for e in ok]
    rows: list[tuple[str, list[str]]] = [
        ("seq len", [str(s.seq_len if s else None) for s in settings]),
        ("stack", [s.stack if s else "—" for s in settings]),
        ("full fine-tune", [_gb(p.full_finetune) for p in peaks]),
        (f"LoRA r={lora_rank}", [_gb(p.lora) for p in peaks]),
        (f"QLoRA r={lora_rank}", [_gb(p.qlora) for p in peaks]),
        (f"serve weights ({serve_dtype})", [_gb(p.serve_weights) for p in peaks]),
        ("KV cache", [_gb(p.kv_cache) for p in peaks]),
    ]
    term_names: list[str] = []
    for sel in selected:
        term_names += [t for t, _ in (sel.terms if sel else ()) if t not in term_names]
    rows.append((f"[cyan]{method} peak[/cyan]", [_gb(sel.peak_gb if sel else None) for sel in selected]))
    for term in term_names:
        values = [dict(sel.terms).get(term) if sel else None for sel in selected]
        if any(v for v in values):
            rows.append((f"  {term.replace('_', ' ')}", [_gb(v) for v in values]))
    rows.append(("  needs (× headroom + overhead)", [_gb(sel.required_gb if sel else None) for sel in selected]))
    if any(sel and sel.host_gb for sel in selected):
        rows.append(("  host memory (paged, offloaded)", [_gb(sel.host_gb if sel else None) for sel in selected]))
    verdicts = [{v.card: v for v in estimate_verdicts(e.estimate)} for e in ok]
    for i, card in enumerate(ok[0].estimate.cards):
        cells = []
        for e, by_card in zip(ok, verdicts):
            fit = e.estimate.cards[i]
            cell = " / ".join("—" if (n := fit.batch(m)) is None else str(n) for m, _ in CARD_METHODS)
            cells.append(cell + _misfit(by_card.get(fit.name), method))
        rows.append((f"{card.name} {card.memory_gb or 0:g} GB: batch F/L/Q/S", cells))
    rows.append(("cost", [_cost_text(e.estimate.cost) for e in ok]))
    for label, cells in rows:
        table.add_row(label, *cells)
    return table


def _misfit(verdict: Verdict | None, method: str) -> str:
    """Under a card's batches: why the selected method does not fit it at the settings (the term that breaks it)."""
    if verdict is None or verdict.fits:
        return ""
    return f"\n[red]{escape(method)} at batch {verdict.batch} does not fit[/red]: {escape(verdict.reason)}"


def _cost_text(cost: Cost | None) -> str:
    if cost is None:
        return "—"
    money = "" if cost.usd is None else f", ${cost.usd:,.2f}"
    return f"{cost.hours:.2f} h on {cost.cards}× {cost.card}{money}"


def render(console: Console, entries: list[EstimateEntry | FailedEntry], *, method: str, batch: int, lora_rank: int,
           serve_dtype: str, nodes: bool = False, dataset: DatasetChoice | None = None) -> None:
    """Print the entries of `estimate` side by side (failed targets as one error line each, at the end), and
    the dataset the run is costed on, if any."""
    ok = [e for e in entries if isinstance(e, EstimateEntry)]
    if dataset is not None:
        from hubwatch.cli.estimate_dataset import dataset_table  # only with --dataset

        used = [e.estimate.memory.settings for e in ok if e.estimate.memory is not None]
        console.print(dataset_table(dataset, [s.seq_len for s in used if s is not None and s.seq_len is not None]))
    if ok:
        console.print(_overview(ok))
        console.print(_components(ok))
        console.print(_memory(ok, method, batch, lora_rank, serve_dtype))
        table = _findings(ok)
        if table is None:
            console.print("Findings: none", highlight=False)  # nothing in it to highlight: no regexes compiled
        else:
            console.print(table)
        if nodes:
            for entry in ok:
                console.print(_nodes(entry))
    for failed in entries:
        if isinstance(failed, FailedEntry):
            message = failed.error if failed.target in failed.error else f"{failed.target}: {failed.error}"
            fix = f"\n[dim]fix:[/dim] {escape(failed.fix)}" if failed.fix else ""
            console.print(f"[red]error:[/red] {escape(message)}{fix}", soft_wrap=True, highlight=False)
