"""Inline SVG line charts, generated on the server (no JavaScript): a value per revision.

Round y ticks from zero, x labels thinned so that they never overlap, and a legend that carries
each series' latest value (a reader should not have to hover a point to read the current figure).
Drawn in a 960-unit viewBox and scaled to the container's width (no sideways scrolling on a phone;
text at its nominal size in the ~1000px column of a desktop page).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["Series", "line_chart", "nice_ticks"]

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563")
_W = 960
_LEFT, _RIGHT, _TOP = 84, 24, 34
_PLOT_H = 180
_INSET = 36  # the first and last points sit this far inside the plot, so their labels fit
_CHAR_W = 7.2  # average advance of a 12px sans-serif glyph, for laying labels out without a browser
_LABEL_GAP = 16
_LEGEND_ROW = 20


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]  # one per x label; None where unknown


def nice_ticks(hi: float, target: int = 4) -> list[float]:
    """Round tick values from 0 up to at least `hi` (steps of 1, 2 or 5 × 10^k)."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / target
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    count = math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def _tidy(label: str) -> str:
    """`400.00 GB` → `400 GB`, `2.50 B` → `2.5 B` (tick labels are round numbers)."""
    return re.sub(r"(\d)\.(\d*?)0+(?=\D|$)", lambda m: m.group(1) + (f".{m.group(2)}" if m.group(2) else ""), label)


def _text_w(text: str) -> float:
    return len(text) * _CHAR_W


def _legend_rows(entries: Sequence[str]) -> list[list[tuple[int, float]]]:
    """(series index, x) per legend entry, wrapped into rows that fit the chart's width."""
    rows: list[list[tuple[int, float]]] = [[]]
    x = 8.0
    for index, text in enumerate(entries):
        width = 16 + _text_w(text) + 20
        if rows[-1] and x + width > _W - 8:
            rows.append([])
            x = 8.0
        rows[-1].append((index, x))
        x += width
    return rows


def line_chart(
    title: str, x_labels: Sequence[str], series: Sequence[Series], fmt: Callable[[float], str]
) -> Markup:
    """An accessible SVG chart of `series` over `x_labels`; an empty Markup when nothing is known."""
    known = [v for s in series for v in s.values if v is not None]
    if not known or not x_labels:
        return Markup("")
    ticks = nice_ticks(max(max(known), 0.0))
    lo, hi = 0.0, ticks[-1]
    n = len(x_labels)
    plot_w = _W - _LEFT - _RIGHT
    legend_text = [
        f"{s.name}: {fmt(latest)}" if (latest := next((v for v in reversed(s.values) if v is not None), None))
        is not None else s.name
        for s in series
    ]
    rows = _legend_rows(legend_text)
    axis_y = _TOP + _PLOT_H
    height = axis_y + 28 + len(rows) * _LEGEND_ROW + 4

    def x_at(i: int) -> float:
        span = plot_w - 2 * _INSET
        return _LEFT + _INSET + (span * i / (n - 1) if n > 1 else span / 2)

    def y_at(v: float) -> float:
        return axis_y - (v - lo) * _PLOT_H / (hi - lo)

    parts = [
        Markup('<svg class="chart" viewBox="0 0 {w} {h}" width="100%" preserveAspectRatio="xMidYMid meet" '
               'role="img" aria-label="{t}" '
               'xmlns="http://www.w3.org/2000/svg">').format(w=_W, h=height, t=title),
        Markup('<title>{}</title>').format(title),
        Markup('<text x="8" y="20" class="chart-title">{}</text>').format(title),
    ]
    for value in ticks:
        y = y_at(value)
        parts.append(Markup('<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" class="grid"/>').format(
            _LEFT, y, _W - _RIGHT, y))
        parts.append(Markup('<text x="{}" y="{:.1f}" class="axis" text-anchor="end">{}</text>').format(
            _LEFT - 8, y + 4, _tidy(fmt(value))))
    widest = max(_text_w(label) for label in x_labels) + _LABEL_GAP
    spacing = (plot_w - 2 * _INSET) / (n - 1) if n > 1 else plot_w
    step = max(1, math.ceil(widest / spacing))
    shown = list(range(n - 1, -1, -step))  # the newest revision always has its label
    for i in sorted(shown):
        parts.append(Markup('<text x="{:.1f}" y="{}" class="axis" text-anchor="middle">{}</text>').format(
            x_at(i), axis_y + 18, x_labels[i]))
    for index, s in enumerate(series):
        color = _PALETTE[index % len(_PALETTE)]
        points = [(x_at(i), y_at(v), v, i) for i, v in enumerate(s.values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
            parts.append(Markup('<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>').format(
                path, color))
        for x, y, v, i in points:
            parts.append(Markup(
                '<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"><title>{} @ {}: {}</title></circle>'
            ).format(x, y, color, s.name, x_labels[i], fmt(v)))
    for row_no, row in enumerate(rows):
        y = axis_y + 30 + row_no * _LEGEND_ROW
        for index, x in row:
            color = _PALETTE[index % len(_PALETTE)]
            parts.append(Markup('<rect x="{:.1f}" y="{}" width="12" height="12" rx="2" fill="{}"/>').format(
                x, y, color))
            parts.append(Markup('<text x="{:.1f}" y="{}" class="legend">{}</text>').format(
                x + 16, y + 10, legend_text[index]))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)
