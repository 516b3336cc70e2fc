"""Inline SVG line charts, generated on the server (no JavaScript): a value per revision."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["Series", "line_chart"]

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563")
_W, _H = 640, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 72, 16, 28, 40


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]  # one per x label; None where unknown


def _scale(lo: float, hi: float, value: float, out_lo: float, out_hi: float) -> float:
    if hi == lo:
        return (out_lo + out_hi) / 2
    return out_lo + (value - lo) * (out_hi - out_lo) / (hi - lo)


def line_chart(
    title: str, x_labels: Sequence[str], series: Sequence[Series], fmt: Callable[[float], str]
) -> Markup:
    """An accessible SVG chart of `series` over `x_labels`; an empty Markup when nothing is known."""
    known = [v for s in series for v in s.values if v is not None]
    if not known or not x_labels:
        return Markup("")
    lo, hi = min(0.0, min(known)), max(known)
    n = len(x_labels)
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x_at(i: int) -> float:
        return _LEFT + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y_at(v: float) -> float:
        return _TOP + plot_h - _scale(lo, hi, v, 0, plot_h)

    parts = [
        Markup('<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{t}" '
               'xmlns="http://www.w3.org/2000/svg">').format(w=_W, h=_H, t=title),
        Markup('<title>{}</title>').format(title),
        Markup('<text x="{}" y="16" class="chart-title">{}</text>').format(_LEFT, title),
    ]
    for frac in (0.0, 0.5, 1.0):
        value = lo + (hi - lo) * frac
        y = y_at(value)
        parts.append(Markup('<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" class="grid"/>').format(
            _LEFT, y, _W - _RIGHT, y))
        parts.append(Markup('<text x="{}" y="{:.1f}" class="axis" text-anchor="end">{}</text>').format(
            _LEFT - 6, y + 4, fmt(value)))
    step = max(1, n // 8)
    for i in range(0, n, step):
        parts.append(Markup('<text x="{:.1f}" y="{}" class="axis" text-anchor="middle">{}</text>').format(
            x_at(i), _H - _BOTTOM + 16, x_labels[i]))
    for index, s in enumerate(series):
        color = _PALETTE[index % len(_PALETTE)]
        points = [(x_at(i), y_at(v), v, i) for i, v in enumerate(s.values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
            parts.append(Markup('<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>').format(
                path, color))
        for x, y, v, i in points:
            parts.append(Markup(
                '<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{} @ {}: {}</title></circle>'
            ).format(x, y, color, s.name, x_labels[i], fmt(v)))
        legend_x = 8 + index * 126
        parts.append(Markup('<rect x="{}" y="{}" width="10" height="10" fill="{}"/>').format(
            legend_x, _H - 14, color))
        parts.append(Markup('<text x="{}" y="{}" class="legend">{}</text>').format(
            legend_x + 14, _H - 5, s.name))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


